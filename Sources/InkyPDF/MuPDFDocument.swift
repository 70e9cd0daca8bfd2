internal import CInkyPDF
import Glibc
import InkyCore

/// One PDF open in MuPDF: owns the context and the document and frees both in `deinit`.
/// Every MuPDF call goes through the shim, whose C functions catch MuPDF's longjmp errors and
/// return codes, so no error ever unwinds through Swift. Not thread-safe: a MuPDF context
/// belongs to one thread at a time, like every `ComicReader`.
final class MuPDFDocument {
    let path: String
    private let handle: OpaquePointer

    /// MuPDF's cache of decoded fonts and images; the worker's address space is 2 GiB.
    private static let storeBytes = 64 << 20

    init(path: String) throws(ComicError) {
        self.path = path
        var opened: OpaquePointer?
        let code = MuPDFError.call { error, length in inky_pdf_open(path, Self.storeBytes, &opened, error, length) }
        switch code {
        case .success where opened != nil: handle = opened!
        case .needsPassword: throw .encrypted(path: path)
        case .failure(let message): throw .corrupted(path: path, detail: "MuPDF cannot open it: \(message)")
        default: throw .corrupted(path: path, detail: "MuPDF cannot open it")
        }
    }

    deinit { inky_pdf_close(handle) }

    func pageCount() throws(ComicError) -> Int {
        var count: Int32 = 0
        try check(MuPDFError.call { error, length in inky_pdf_page_count(handle, &count, error, length) }, "counting pages")
        return Int(count)
    }

    /// What page `number` (from 0) draws, found without decoding any image.
    func probe(page number: Int) throws(ComicError) -> PDFPageContent {
        var info = inky_pdf_page()
        try check(MuPDFError.call { error, length in inky_pdf_probe_page(handle, Int32(number), &info, error, length) },
                  "reading page \(number + 1)")
        return PDFPageContent(info)
    }

    /// The raw (still encoded) stream of xref object `object`.
    func rawStream(object: Int) throws(ComicError) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        try check(MuPDFError.call { error, size in inky_pdf_raw_stream(handle, Int32(object), &data, &length, error, size) },
                  "reading image object \(object)")
        return Self.take(data, length)
    }

    /// Page `number` rendered to an RGB PNG.
    func renderPNG(page number: Int, _ rendering: PageRendering) throws(ComicError) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        try check(MuPDFError.call { error, size in
            inky_pdf_render_png(handle, Int32(number), Int32(rendering.height), Int32(rendering.dpi ?? 0),
                                PageRendering.maxPixels, &data, &length, error, size)
        }, "rendering page \(number + 1)")
        return Self.take(data, length)
    }

    static var version: String { String(cString: inky_pdf_version()) }

    private func check(_ result: MuPDFError, _ doing: String) throws(ComicError) {
        switch result {
        case .success: return
        case .needsPassword: throw .encrypted(path: path)
        case .failure(let message): throw .corrupted(path: path, detail: "\(doing): \(message)")
        }
    }

    /// Moves bytes the shim malloc'd into a Swift array and frees them.
    private static func take(_ data: UnsafeMutablePointer<UInt8>?, _ length: Int) -> [UInt8] {
        guard let data else { return [] }
        defer { free(data) }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}

/// A shim call's outcome, with MuPDF's message.
enum MuPDFError {
    case success
    case needsPassword
    case failure(String)

    /// Calls `body` with an error buffer and turns its return code into a case.
    static func call(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> MuPDFError {
        var buffer = [CChar](repeating: 0, count: 512)
        let code = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        switch code {
        case Int32(INKY_PDF_OK): return .success
        case Int32(INKY_PDF_NEEDS_PASSWORD): return .needsPassword
        default:
            let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(message.isEmpty ? "unknown MuPDF error" : message)
        }
    }
}
