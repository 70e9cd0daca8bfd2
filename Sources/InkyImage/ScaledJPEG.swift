internal import CInkyVips
internal import CInkyScaledJPEG

/// A JPEG page decoded by libjpeg-turbo at the scale the box needs, and for a grayscale profile
/// as its luma channel alone (Sources/CInkyScaledJPEG/jpeg_scaled.c): half of libvips' thumbnail
/// for a cover, a third for a gray device page (scripts/bench --only convert, --only cbz). Only
/// where the result is the one libvips' own path would give: an upright (EXIF orientation 1)
/// YCbCr or gray JPEG that decodes without a warning; any other page goes the usual way.
enum ScaledJPEG {
    static func decode(_ raw: UnsafeRawBufferPointer, of source: VipsImageHandle, fit: ImageSize, gray: Bool,
                       maxPixels: Int64) -> VipsImageHandle? {
        guard source.loader.hasPrefix("jpegload"), inky_vips_orientation(source.pointer) <= 1 else { return nil }
        var out: UnsafeMutablePointer<VipsImage>?
        var message = [CChar](repeating: 0, count: 200)
        let width = Int32(clamping: fit.width), height = Int32(clamping: fit.height)
        // A failure here is not the page's verdict: libvips' path gives the error a caller sees.
        guard inky_jpeg_scaled(raw.baseAddress, raw.count, maxPixels, width, height, gray ? 1 : 0, &out, &message, message.count) == 0,
              let out else { return nil }
        return VipsImageHandle(out)
    }
}
