import Foundation

/// Pages whose content tells what a device profile did to them, drawn by Pillow: a spread whose
/// halves differ in colour (which half came first), a scan in a white border (was it cropped),
/// a webtoon strip of panels between white gutters (where was it cut).
public enum ProfileImages {
    /// A `width`×`height` spread, its left half red and its right half blue, as `format` ("JPEG", "PNG"...).
    public static func spread(width: Int, height: Int, format: String = "JPEG") throws -> [UInt8] {
        try draw(width, height, format, """
            image = Image.new("RGB", (w, h), (0, 0, 255))
            image.paste((255, 0, 0), (0, 0, w // 2, h))
            """)
    }

    /// A picture `width`×`height` (noise, as a scan) inside a white border `border` pixels wide.
    public static func bordered(width: Int, height: Int, border: Int) throws -> [UInt8] {
        try draw(width + 2 * border, height + 2 * border, "PNG", """
            image = Image.new("RGB", (w, h), (255, 255, 255))
            image.paste(Image.effect_noise((w - 2 * \(border), h - 2 * \(border)), 80).convert("RGB"), (\(border), \(border)))
            """)
    }

    /// A `width`-wide strip of `panels` noise panels `panelHeight` high, each followed by a white
    /// gutter `gutter` rows high.
    public static func strip(width: Int, panels: Int, panelHeight: Int, gutter: Int) throws -> [UInt8] {
        try draw(width, panels * (panelHeight + gutter), "JPEG", """
            image = Image.new("RGB", (w, h), (255, 255, 255))
            for n in range(\(panels)):
                image.paste(Image.effect_noise((w, \(panelHeight)), 80).convert("RGB"), (0, n * \(panelHeight + gutter)))
            """)
    }

    /// The mean gray level (0–255) of each file's left and right halves, decoded by Pillow.
    public static func halfLevels(_ files: [URL]) throws -> [(left: Double, right: Double)] {
        let output = try ArchiveMaker.run("/usr/bin/python3", ["-c", """
            import sys
            from PIL import Image, ImageStat
            for path in sys.argv[1:]:
                image = Image.open(path).convert("L")
                w, h = image.size
                left = ImageStat.Stat(image.crop((0, 0, w // 2, h))).mean[0]
                right = ImageStat.Stat(image.crop((w - w // 2, 0, w, h))).mean[0]
                print(left, right)
            """] + files.map(\.path))
        return output.split(separator: "\n").map { line in
            let levels = line.split(separator: " ").compactMap { Double($0) }
            return (levels.first ?? -1, levels.last ?? -1)
        }
    }

    private static func draw(_ width: Int, _ height: Int, _ format: String, _ body: String) throws -> [UInt8] {
        let dir = ArchiveMaker.temporaryDirectory("profile-image")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("page")
        let indented = body.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        try ArchiveMaker.python("""
            import sys
            from PIL import Image
            w, h = int(sys.argv[2]), int(sys.argv[3])
            def make():
            \(indented)
                return image
            make().save(sys.argv[1], sys.argv[4], **({"quality": 95} if sys.argv[4] == "JPEG" else {}))
            """, arguments: [out.path, "\(width)", "\(height)", format])
        return Array(try Data(contentsOf: out))
    }
}
