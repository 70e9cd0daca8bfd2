/// Why an image could not be converted. The caller serves the page's original bytes instead.
public enum ImageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The header declares more pixels than allowed: refused before a pixel is decoded.
    case tooManyPixels(width: Int, height: Int, limit: Int64)
    /// No loader recognises the bytes, or decoding failed (libvips' or libjxl's words).
    case undecodable(String)
    /// Encoding the result failed, or it would pass the byte limit.
    case unencodable(String)
    /// The image library could not start (its modules, its type system).
    case unavailable(String)

    public var description: String {
        switch self {
        case .tooManyPixels(let width, let height, let limit):
            "\(width)×\(height) pixels, more than the limit of \(limit)"
        case .undecodable(let detail): "cannot decode: \(detail)"
        case .unencodable(let detail): "cannot encode: \(detail)"
        case .unavailable(let detail): "no image library: \(detail)"
        }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` with the body's typed error kept (the standard one rethrows `any Error`).
    func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws(ImageError) -> T) throws(ImageError) -> T {
        let result: Result<T, ImageError> = withUnsafeBytes { raw in
            do throws(ImageError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
