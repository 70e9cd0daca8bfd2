internal import CVips

/// A grayscale profile's JPEG page decoded to its luma channel alone by libjpeg-turbo, shrunk by
/// its scaled IDCT as it decodes (Sources/Shims/CVips/jpeg_gray.h): about a third of the CPU of
/// decoding colour at full size, converting and resizing (scripts/bench --only convert). Only
/// where the result is the one libvips' own path would give: an upright (EXIF orientation 1)
/// YCbCr or gray JPEG that decodes without a warning; any other page goes the usual way.
enum GrayJPEG {
    static func luma(_ raw: UnsafeRawBufferPointer, of source: VipsImageHandle, fit: ImageSize, maxPixels: Int64) -> VipsImageHandle? {
        guard source.loader.hasPrefix("jpegload"), inky_vips_orientation(source.pointer) <= 1 else { return nil }
        var out: UnsafeMutablePointer<VipsImage>?
        var message = [CChar](repeating: 0, count: 200)
        let width = Int32(clamping: fit.width), height = Int32(clamping: fit.height)
        // A failure here is not the page's verdict: libvips' path gives the error a caller sees.
        guard inky_jpeg_gray(raw.baseAddress, raw.count, maxPixels, width, height, &out, &message, message.count) == 0,
              let out else { return nil }
        return VipsImageHandle(out)
    }
}
