import Foundation

/// Builds test PDFs from real images: JPEG and PNG pages drawn with Pillow and embedded
/// losslessly by img2pdf, vector/text pages drawn with cairo, an encrypted copy made by qpdf.
public enum PDFMaker {
    /// Page images written into `folder`: `kinds` are "jpeg-rgb", "jpeg-gray", "png-rgb", "png-gray".
    /// The PNGs have one IDAT chunk and no ancillary chunks, so a PNG rebuilt from the PDF's
    /// image stream (IHDR + the stream as IDAT + IEND) can equal the file byte for byte.
    public static func pageImages(in folder: URL, kinds: [String], width: Int = 480, height: Int = 720) throws -> [URL] {
        let files = kinds.enumerated().map { index, kind in
            folder.appendingPathComponent(String(format: "page%02d", index) + (kind.hasPrefix("jpeg") ? ".jpg" : ".png"))
        }
        try ArchiveMaker.python("""
            import io, struct, sys, zlib
            from PIL import Image, ImageDraw
            width, height = int(sys.argv[1]), int(sys.argv[2])
            def picture(seed):
                image = Image.new("RGB", (width, height))
                draw = ImageDraw.Draw(image)
                for y in range(0, height, 4):
                    draw.rectangle([0, y, width, y + 4], fill=((y + seed * 50) % 256, (y * 3) % 256, (seed * 70 + y // 3) % 256))
                for i in range(12):
                    x, y = (seed * 97 + i * 61) % width, (seed * 43 + i * 89) % height
                    draw.ellipse([x, y, x + 40 + i * 5, y + 30 + i * 7], fill=((i * 40) % 256, 255 - i * 20, (seed * 30) % 256))
                return Image.blend(image, Image.effect_noise((width, height), 30).convert("RGB"), 0.2)
            def single_idat_png(image, path):
                raw = io.BytesIO()
                image.save(raw, "PNG")
                data, chunks, at = raw.getvalue(), [], 8
                while at < len(data):
                    length, kind = struct.unpack(">I4s", data[at:at + 8])
                    chunks.append((kind, data[at + 8:at + 8 + length]))
                    at += 12 + length
                def chunk(kind, body):
                    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
                idat = b"".join(body for kind, body in chunks if kind == b"IDAT")
                ihdr = next(body for kind, body in chunks if kind == b"IHDR")
                open(path, "wb").write(data[:8] + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
            for index, (kind, path) in enumerate(zip(sys.argv[3::2], sys.argv[4::2])):
                image = picture(index)
                if kind.endswith("gray"):
                    image = image.convert("L")
                if kind.startswith("jpeg"):
                    image.save(path, "JPEG", quality=90)
                else:
                    single_idat_png(image, path)
            """, arguments: ["\(width)", "\(height)"] + zip(kinds, files).flatMap { [$0, $1.path] })
        return files
    }

    /// A PDF whose pages are exactly these images, embedded unchanged (img2pdf). With a
    /// `margin` (points) the image no longer covers its page, with a `rotation` (degrees) the
    /// page shows it turned: such pages are rendered.
    public static func imagePDF(at url: URL, images: [URL], margin: Double = 0, rotation: Int = 0) throws {
        try ArchiveMaker.python("""
            import sys, img2pdf
            margin, rotation = float(sys.argv[2]), sys.argv[3]
            options = {"layout_fun": img2pdf.get_layout_fun(border=(margin, margin))} if margin > 0 else {}
            if rotation != "0":
                options["rotation"] = img2pdf.Rotation[rotation]
            open(sys.argv[1], "wb").write(img2pdf.convert(sys.argv[4:], **options))
            """, arguments: [url.path, "\(margin)", "\(rotation)"] + images.map(\.path))
    }

    /// A PDF of `pages` pages of vector shapes and text, `width` x `height` points (cairo).
    public static func vectorPDF(at url: URL, pages: Int, width: Double = 477, height: Double = 738) throws {
        try ArchiveMaker.python("""
            import sys, cairo
            pages, width, height = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
            surface = cairo.PDFSurface(sys.argv[1], width, height)
            context = cairo.Context(surface)
            for number in range(pages):
                context.set_source_rgb(1, 1, 1); context.paint()
                context.set_source_rgb(0.1, 0.2, 0.6); context.rectangle(30, 30, width - 60, height / 3); context.fill()
                context.set_source_rgb(0, 0, 0); context.set_font_size(26)
                context.move_to(40, height / 2); context.show_text("Panel %d: words and lines" % (number + 1))
                context.set_line_width(5); context.arc(width / 2, height * 0.75, width / 5, 0, 6.283); context.stroke()
                context.show_page()
            surface.finish()
            """, arguments: [url.path, "\(pages)", "\(width)", "\(height)"])
    }

    /// The PDFs' pages one after another, in one PDF (qpdf copies streams unchanged).
    public static func concatenate(_ inputs: [URL], into url: URL) throws {
        try ArchiveMaker.run("/usr/bin/qpdf", ["--empty", "--pages"] + inputs.map(\.path) + ["--", url.path])
    }

    /// A copy that opens only with the user password (AES-256).
    public static func encrypt(_ input: URL, into url: URL, password: String = "secret") throws {
        try ArchiveMaker.run("/usr/bin/qpdf", ["--encrypt", password, password + "-owner", "256", "--", input.path, url.path])
    }

    /// Width and height of an image file as a real decoder (Pillow) reads it, after decoding all of it.
    public static func decodedSize(of path: String) throws -> (width: Int, height: Int) {
        let output = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image
            image = Image.open(sys.argv[1]); image.load()
            print(image.format, image.size[0], image.size[1])
            """, path])
        let fields = output.split(separator: " ")
        guard fields.count == 3, let width = Int(fields[1].trimmingCharacters(in: .whitespacesAndNewlines)),
              let height = Int(fields[2].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ArchiveMaker.ToolFailure(command: "decode \(path)", status: 1, stderr: output)
        }
        return (width, height)
    }
}
