import InkyCore
import InkyWorker
import InkyImage

/// A comic's cover, made in the worker (the daemon never decodes an image): its page shrunk on
/// load to at most `height` pixels high (never enlarged) and written as JPEG whatever the page
/// was, since file managers look for `folder.jpg`.
public enum CoverMaker {
    static func cover(of page: Page, in reader: any ComicReader, height: Int, limits: ComicLimits) throws(ComicError) -> [UInt8] {
        let source = try reader.readPage(page)
        reader.onProgress?()
        let settings = Self.settings(height: height, maxBytes: Int(clamping: limits.maxPageBytes))
        do throws(ImageError) {
            return try ImageConverter.convert(source, settings, progress: reader.onProgress).bytes
        } catch {
            throw .corrupted(path: reader.path, detail: "page \(page.entryIndex + 1) makes no cover: \(error)")
        }
    }

    /// How a cover is converted (`inkyfs-worker __convert --cover` times the same). The width is bounded
    /// too (three heights): a panorama strip must not become a huge cover.
    /// It fits `CoverSize.bytes`, the size every `folder.jpg` is listed with before it is made.
    public static func settings(height: Int, maxBytes: Int) -> ImageConversion {
        var settings = ImageConversion(fit: ImageSize(width: height * 3, height: height), output: .jpeg, jpegQuality: 80, maxBytes: maxBytes)
        settings.fitBytes = CoverSize.bytes
        return settings
    }
}
