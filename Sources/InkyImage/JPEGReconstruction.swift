internal import CInkyJxl
import Foundation

/// A JPEG XL made from a JPEG (`cjxl` on a JPEG keeps its DCT coefficients and a `jbrd` box)
/// gives that JPEG back byte for byte through libjxl's decoder: libvips cannot, it decodes to
/// pixels. Anything else (a JPEG XL without reconstruction data) answers nil. libjxl is loaded
/// at the first page looked at (`CInkyJxl`); without it a JPEG XL is libvips' to decode.
enum JPEGReconstruction {
    /// Loads libjxl now if it can; without it a JPEG XL is decoded by libvips.
    static func load() { _ = inky_jxl_load() }

    static func isJPEGXL(_ bytes: [UInt8]) -> Bool {
        guard inky_jxl_load() == nil else { return false }
        let signature = inky_jxl_signature_check(bytes, bytes.count)
        return signature == JXL_SIG_CODESTREAM || signature == JXL_SIG_CONTAINER
    }

    static func jpeg(from bytes: [UInt8], maxPixels: Int64, maxBytes: Int) throws(ImageError) -> [UInt8]? {
        if let problem = inky_jxl_load() { throw .unavailable(String(cString: problem)) }
        guard let decoder = inky_jxl_decoder_create() else { throw .unavailable("libjxl cannot make a decoder") }
        defer { inky_jxl_decoder_destroy(decoder) }
        let events = JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_JPEG_RECONSTRUCTION.rawValue | JXL_DEC_FULL_IMAGE.rawValue
        guard inky_jxl_subscribe_events(decoder, Int32(events)) == JXL_DEC_SUCCESS else { throw .undecodable("libjxl refused its events") }
        var output = GrowingBuffer(limit: maxBytes)
        return try bytes.withBytes { raw throws(ImageError) -> [UInt8]? in
            let input = raw.bindMemory(to: UInt8.self)
            guard inky_jxl_set_input(decoder, input.baseAddress, input.count) == JXL_DEC_SUCCESS else {
                throw .undecodable("libjxl refused the input")
            }
            inky_jxl_close_input(decoder)
            var reconstructing = false
            while true {
                let status = inky_jxl_process_input(decoder)
                switch status {
                case JXL_DEC_BASIC_INFO:
                    var info = JxlBasicInfo()
                    guard inky_jxl_get_basic_info(decoder, &info) == JXL_DEC_SUCCESS else { throw .undecodable("JPEG XL header") }
                    // Checked before a coefficient is decoded, as libvips' loads are.
                    guard Int64(info.xsize) * Int64(info.ysize) <= maxPixels else {
                        throw .tooManyPixels(width: Int(info.xsize), height: Int(info.ysize), limit: maxPixels)
                    }
                case JXL_DEC_JPEG_RECONSTRUCTION:
                    reconstructing = true
                    try output.grow(from: 0)
                    _ = inky_jxl_set_jpeg_buffer(decoder, output.start, output.capacity)
                case JXL_DEC_JPEG_NEED_MORE_OUTPUT:
                    let used = output.capacity - inky_jxl_release_jpeg_buffer(decoder)
                    try output.grow(from: used)
                    _ = inky_jxl_set_jpeg_buffer(decoder, output.start + used, output.capacity - used)
                case JXL_DEC_FULL_IMAGE where reconstructing:
                    let used = output.capacity - inky_jxl_release_jpeg_buffer(decoder)
                    return Array(UnsafeBufferPointer(start: output.start, count: used))
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER, JXL_DEC_FULL_IMAGE, JXL_DEC_SUCCESS:
                    return nil // pixels only: libvips decodes it
                default:
                    throw .undecodable("libjxl status \(status.rawValue)")
                }
            }
        }
    }
}

/// The JPEG being reconstructed: doubled as libjxl asks, never past the byte limit.
private struct GrowingBuffer: ~Copyable {
    private(set) var start: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        capacity = 0
        start = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    }

    deinit { start.deallocate() }

    /// Keeps the first `used` bytes and makes room for more.
    mutating func grow(from used: Int) throws(ImageError) {
        let wanted = capacity == 0 ? 1 << 20 : capacity * 2
        guard capacity < limit else { throw .unencodable("the reconstructed JPEG passes \(limit) bytes") }
        let next = UnsafeMutablePointer<UInt8>.allocate(capacity: min(wanted, limit))
        next.update(from: start, count: used)
        start.deallocate()
        start = next
        capacity = min(wanted, limit)
    }
}
