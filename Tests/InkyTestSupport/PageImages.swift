import Foundation

/// Page images in every format comics carry, written by real encoders: Pillow (JPEG, PNG, WebP,
/// TIFF, BMP, GIF), the `vips` tool (AVIF, HEIF, JPEG 2000, lossless JPEG XL) and libjxl's
/// `cjxl` (a JPEG XL made from a JPEG, which keeps what rebuilds that JPEG). Inspected with Pillow.
public enum PageImages {
    public enum Format: String, CaseIterable, Sendable {
        case jpeg = "jpg", png, webp, tiff = "tif", bmp, gif, avif, heif = "heic", jpeg2000 = "jp2"
        case jxlLossless = "jxl", jxlFromJPEG = "from-jpeg.jxl"

        public var fileExtension: String { self == .jxlFromJPEG ? "jxl" : rawValue }
    }

    /// A picture `width`×`height` in colour (a gradient with detail, as a scan has), in `format`.
    public static func make(_ format: Format, width: Int, height: Int, alpha: Bool = false) throws -> [UInt8] {
        let dir = ArchiveMaker.temporaryDirectory("page-image")
        defer { try? FileManager.default.removeItem(at: dir) }
        let pillowSource = dir.appendingPathComponent("source.png")
        try ArchiveMaker.python("""
            import sys
            from PIL import Image
            w, h, alpha = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
            across = Image.linear_gradient("L").rotate(90).resize((w, h))
            down = Image.linear_gradient("L").resize((w, h))
            detail = Image.effect_noise((w, h), 60)
            bands = [across, down, detail] + ([Image.linear_gradient("L").resize((w, h))] if alpha else [])
            Image.merge("RGBA" if alpha else "RGB", bands).save(sys.argv[1])
            """, arguments: [pillowSource.path, "\(width)", "\(height)", alpha ? "1" : "0"])
        let out = dir.appendingPathComponent("page.\(format.fileExtension)")
        switch format {
        case .jpeg, .png, .webp, .tiff, .bmp, .gif:
            try ArchiveMaker.python("""
                import sys
                from PIL import Image
                Image.open(sys.argv[1]).save(sys.argv[2])
                """, arguments: [pillowSource.path, out.path])
        case .avif, .heif, .jpeg2000, .jxlLossless:
            let options = format == .jxlLossless ? "[lossless]" : ""
            try ArchiveMaker.run("/usr/bin/vips", ["copy", pillowSource.path, out.path + options])
        case .jxlFromJPEG:
            let jpeg = dir.appendingPathComponent("source.jpg")
            try Data(make(.jpeg, width: width, height: height, alpha: alpha)).write(to: jpeg)
            try ArchiveMaker.run("/usr/bin/cjxl", [jpeg.path, out.path, "--lossless_jpeg=1", "--quiet"])
        }
        return Array(try Data(contentsOf: out))
    }

    /// A JPEG stored `width`×`height` whose EXIF says to turn it (`orientation` 6: a quarter
    /// turn clockwise), as phone scans are.
    public static func jpeg(width: Int, height: Int, orientation: Int) throws -> [UInt8] {
        let dir = ArchiveMaker.temporaryDirectory("page-image")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("turned.jpg")
        try ArchiveMaker.python("""
            import sys
            from PIL import Image
            w, h, orientation = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
            image = Image.merge("RGB", [Image.linear_gradient("L").resize((w, h))] * 2 + [Image.effect_noise((w, h), 60)])
            exif = Image.Exif()
            exif[0x0112] = orientation
            image.save(sys.argv[1], exif=exif)
            """, arguments: [out.path, "\(width)", "\(height)", "\(orientation)"])
        return Array(try Data(contentsOf: out))
    }

    /// The JPEG a `jxlFromJPEG` page of that size was made from (Pillow writes it the same every time).
    public static func sourceJPEG(width: Int, height: Int) throws -> [UInt8] { try make(.jpeg, width: width, height: height) }

    /// A PNG declaring `width`×`height` pixels with a few rows of data: a decompression bomb's header.
    public static func bombPNG(width: Int = 100_000, height: Int = 100_000) throws -> [UInt8] {
        let dir = ArchiveMaker.temporaryDirectory("png-bomb")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("bomb.png")
        try ArchiveMaker.python("""
            import struct, sys, zlib
            w, h = int(sys.argv[2]), int(sys.argv[3])
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            rows = zlib.compress(b"".join(b"\\0" + bytes(w) for _ in range(4)), 9)
            png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
            open(sys.argv[1], "wb").write(png)
            """, arguments: [out.path, "\(width)", "\(height)"])
        return Array(try Data(contentsOf: out))
    }

    /// What Pillow makes of an image file: its format ("JPEG", "PNG"), size and mode ("L" is gray).
    public struct Inspection: Equatable, Sendable, CustomStringConvertible {
        public var format: String
        public var width: Int
        public var height: Int
        public var mode: String
        public var isGray: Bool { mode == "L" || mode == "LA" || mode == "1" }
        public var description: String { "\(format) \(width)x\(height) \(mode)" }
    }

    /// Decodes every file fully (Pillow's `load`, not just the header); one Python run for all.
    public static func inspect(_ files: [URL]) throws -> [Inspection] {
        let output = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image
            for path in sys.argv[1:]:
                image = Image.open(path)
                image.load()
                print(image.format, image.size[0], image.size[1], image.mode)
            """] + files.map(\.path))
        return output.split(separator: "\n").map { line in
            let fields = line.split(separator: " ").map(String.init)
            return Inspection(format: fields[0], width: Int(fields[1]) ?? -1, height: Int(fields[2]) ?? -1, mode: fields[3])
        }
    }

    public static func inspect(_ bytes: [UInt8]) throws -> Inspection {
        let dir = ArchiveMaker.temporaryDirectory("inspect")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("image")
        try Data(bytes).write(to: file)
        return try inspect([file])[0]
    }
}
