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
    /// What MuPDF reads a document that is no plain file through; kept as long as the document.
    private let source: MuPDFByteSource?
    /// A read of the source failed during some call: MuPDF took it for the end of the data and
    /// may have kept what it parsed from there (a repaired cross-reference table, an object cut
    /// short), so nothing more is asked of this document; its reader opens it again.
    private(set) var isDamaged = false

    /// MuPDF's cache of decoded fonts and images; the worker's address space is 2 GiB.
    private static let storeBytes = 64 << 20

    init(path: String) throws(ComicError) {
        var opened: OpaquePointer?
        let code = MuPDFError.call { error, length in inky_pdf_open(path, Self.storeBytes, &opened, error, length) }
        handle = try Self.opened(code, opened, path: path)
        self.path = path
        source = nil
    }

    /// A PDF read through `bytes` (a vault object decrypted chunk by chunk): MuPDF seeks and reads
    /// them as it would a file, so nothing of it is copied whole, in memory or on disk. `label`
    /// names it in messages.
    init(bytes: any RandomAccessBytes, label: String) throws(ComicError) {
        let source = MuPDFByteSource(bytes)
        var opened: OpaquePointer?
        let code = MuPDFError.call { error, length in
            inky_pdf_open_source(Unmanaged.passUnretained(source).toOpaque(), { source, offset, buffer, count in
                Unmanaged<MuPDFByteSource>.fromOpaque(source!).takeUnretainedValue().read(at: offset, into: buffer!, count: count)
            }, bytes.size, Self.storeBytes, &opened, error, length)
        }
        if let failure = source.takeFailure() {
            if let opened { inky_pdf_close(opened) }
            throw failure
        }
        handle = try Self.opened(code, opened, path: label)
        path = label
        self.source = source
    }

    private static func opened(_ code: MuPDFError, _ opened: OpaquePointer?, path: String) throws(ComicError) -> OpaquePointer {
        switch code {
        case .success where opened != nil: return opened!
        case .needsPassword: throw .encrypted(path: path)
        case .failure(let message): throw .corrupted(path: path, detail: "MuPDF cannot open it: \(message)")
        default: throw .corrupted(path: path, detail: "MuPDF cannot open it")
        }
    }

    deinit { inky_pdf_close(handle) }

    func pageCount() throws(ComicError) -> Int {
        var count: Int32 = 0
        try call("counting pages") { error, length in inky_pdf_page_count(handle, &count, error, length) }
        return Int(count)
    }

    /// What page `number` (from 0) draws, found without decoding any image.
    func probe(page number: Int) throws(ComicError) -> PDFPageContent {
        var info = inky_pdf_page()
        try call("reading page \(number + 1)") { error, length in inky_pdf_probe_page(handle, Int32(number), &info, error, length) }
        return PDFPageContent(info)
    }

    /// The raw (still encoded) stream of xref object `object`.
    func rawStream(object: Int) throws(ComicError) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        // Freed whatever happens: a call that a failed read fails may still have made them.
        defer { free(data) }
        try call("reading image object \(object)") { error, size in inky_pdf_raw_stream(handle, Int32(object), &data, &length, error, size) }
        return Self.copy(data, length)
    }

    /// Page `number` rendered to an RGB PNG.
    func renderPNG(page number: Int, _ rendering: PageRendering) throws(ComicError) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        defer { free(data) }
        try call("rendering page \(number + 1)") { error, size in
            inky_pdf_render_png(handle, Int32(number), Int32(rendering.height), Int32(rendering.dpi ?? 0),
                                PageRendering.maxPixels, &data, &length, error, size)
        }
        return Self.copy(data, length)
    }

    static var version: String { String(cString: inky_pdf_version()) }

    /// One shim call on the document: refused once the document is damaged, and failed by a read
    /// of the source that failed during it, whatever MuPDF made of that.
    private func call(_ doing: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(ComicError) {
        if isDamaged { throw .corrupted(path: path, detail: "\(doing): an earlier read of the document failed") }
        let result = MuPDFError.call(body)
        if let failure = source?.takeFailure() {
            isDamaged = true
            throw failure
        }
        try check(result, doing)
    }

    private func check(_ result: MuPDFError, _ doing: String) throws(ComicError) {
        switch result {
        case .success: return
        case .needsPassword: throw .encrypted(path: path)
        case .failure(let message): throw .corrupted(path: path, detail: "\(doing): \(message)")
        }
    }

    /// Bytes the shim malloc'd, as a Swift array (the caller frees them).
    private static func copy(_ data: UnsafeMutablePointer<UInt8>?, _ length: Int) -> [UInt8] {
        guard let data else { return [] }
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

/// The bytes of a document that is no plain file, as the shim's source stream reads them, and the
/// first of those reads that failed: MuPDF takes a failed read for the end of the data and carries
/// on (a truncated image, a repaired table), so the failure is kept here and each call checks it.
final class MuPDFByteSource {
    private let bytes: any RandomAccessBytes
    private var failure: ComicError?

    init(_ bytes: any RandomAccessBytes) { self.bytes = bytes }

    /// For the C stream: bytes read at `offset`, 0 at the end, -1 on failure (kept for `takeFailure`).
    func read(at offset: Int64, into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int64 {
        do throws(ComicError) {
            return Int64(try bytes.read(at: offset, into: buffer, count: count))
        } catch {
            if failure == nil { failure = error }
            return -1
        }
    }

    /// The first failure since the last call, and forgets it.
    func takeFailure() -> ComicError? {
        defer { failure = nil }
        return failure
    }
}
