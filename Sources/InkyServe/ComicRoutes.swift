import Foundation
import Hummingbird
import InkyCore
import InkyLibrary

/// A comic's bytes over HTTP: its CBZ (the one `--as cbz` serves) with ranges and validators,
/// its cover, and its pages one by one (OPDS-PSE). A comic is named by its path in the library
/// (`?path=`), which must be one its folder shows: nothing else is reachable.
enum ComicRoutes {
    /// Bytes read from the library per step of a download.
    static let chunk = 1 << 20
    /// Widths a page may be fitted to: a client asking for less or more gets these bounds.
    static let widths = 64...8_192

    static func install(on router: Router<ServeContext>, reader: LibraryReader) {
        router.get("/opds/comic/cbz") { request, _ in try await download(request, reader) }
        router.get("/opds/comic/cover") { request, _ in try await cover(request, reader) }
        router.get("/opds/comic/thumbnail") { request, _ in try await cover(request, reader) }
        router.get("/opds/comic/page") { request, _ in try await page(request, reader) }
    }

    /// The comic `?path=` names, described (listed if need be); 404 for anything else.
    private static func described(_ request: Request, _ reader: LibraryReader) async throws -> LibraryReader.Description {
        guard let path = QueryValues(request.uri.query)["path"] else { throw CatalogRoutes.notFound("no comic named") }
        let found = await OffLoop.run { () -> Result<LibraryReader.Description, Errno> in
            guard let comic = reader.comic(at: path) else { return .failure(.ENOENT) }
            return reader.describe(comic)
        }
        switch found {
        case .success(let description):
            if let problem = description.problem { throw HTTPError(.notFound, message: "inkyfs cannot show this comic. \(problem)") }
            return description
        case .failure(let code): throw code.httpError
        }
    }

    private static func download(_ request: Request, _ reader: LibraryReader) async throws -> Response {
        let description = try await described(request, reader)
        let comic = description.comic, identity = description.identity
        let size: Int64
        switch await OffLoop.run({ reader.cbzSize(comic) }) {
        case .success(let value): size = value
        case .failure(let code): throw code.httpError
        }
        let tag = HTTPCaching.entityTag(identity, variant: "cbz")
        var headers: HTTPFields = [.eTag: tag, .lastModified: HTTPCaching.date(identity.modifiedNanoseconds),
                                   .acceptRanges: "bytes", .contentType: OPDSEntries.cbzType,
                                   .contentDisposition: disposition(description.name + ".cbz")]
        if HTTPCaching.matches(ifNoneMatch: request.headers[.ifNoneMatch], tag) { return Response(status: .notModified, headers: headers) }
        // A range of another version of the file is no range of this one: all of it then.
        let ifRange = request.headers[.ifRange]
        let range = ifRange == nil || ifRange == tag ? HTTPCaching.range(request.headers[.range], size: size) : .whole
        let bytes: ClosedRange<Int64>
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .part(let part):
            bytes = part
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"
        case .whole:
            guard size > 0 else { return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer())) }
            bytes = 0...(size - 1)
        }
        let body = ResponseBody(contentLength: Int(bytes.count)) { writer in
            var offset = bytes.lowerBound
            while offset <= bytes.upperBound {
                let want = Int(min(Int64(chunk), bytes.upperBound - offset + 1))
                let at = offset
                let read = await OffLoop.await { done in reader.readCBZ(comic, identity: identity, offset: at, size: want, completion: done) }
                // Past the head nothing can be said but by closing: a short body tells the client.
                guard case .success(let part) = read, part.count == want else { throw HTTPError(.internalServerError) }
                try await writer.write(ByteBuffer(bytes: part))
                offset += Int64(want)
            }
            try await writer.finish(nil)
        }
        return Response(status: range == .whole ? .ok : .partialContent, headers: headers, body: body)
    }

    private static func cover(_ request: Request, _ reader: LibraryReader) async throws -> Response {
        let description = try await described(request, reader)
        let tag = HTTPCaching.entityTag(description.identity, variant: "cover")
        var headers: HTTPFields = [.eTag: tag, .lastModified: HTTPCaching.date(description.identity.modifiedNanoseconds),
                                   .contentType: "image/jpeg", .cacheControl: "max-age=3600"]
        if HTTPCaching.matches(ifNoneMatch: request.headers[.ifNoneMatch], tag) { return Response(status: .notModified, headers: headers) }
        let comic = description.comic
        switch await OffLoop.run({ reader.cover(comic) }) {
        case .success(let bytes):
            headers[.contentLength] = nil
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        // A first page that does not decode makes no cover: there is none, the comic still reads.
        case .failure(.EIO): throw HTTPError(.notFound, message: "no cover: the comic's first page does not decode")
        case .failure(let code): throw code.httpError
        }
    }

    /// `?page=N` (0-based, as OPDS-PSE numbers pages) and `&width=W` (fit to W pixels wide);
    /// a `width` left as the template's `{maxWidth}` or not a number is no fit. `&ahead=1`: a
    /// page fetched before the reader turns to it, not recorded as read.
    private static func page(_ request: Request, _ reader: LibraryReader) async throws -> Response {
        let query = QueryValues(request.uri.query)
        guard let index = query.integer("page") else { throw HTTPError(.badRequest, message: "page=N (from 0) is needed") }
        let description = try await described(request, reader)
        guard index < description.pages.count else { throw HTTPError(.notFound, message: "the comic has \(description.pages.count) pages") }
        let width = query.integer("width", min: 1).map { min(max($0, widths.lowerBound), widths.upperBound) }
        let tag = HTTPCaching.entityTag(description.identity, variant: "p\(index)w\(width ?? 0)")
        var headers: HTTPFields = [.eTag: tag, .lastModified: HTTPCaching.date(description.identity.modifiedNanoseconds),
                                   .cacheControl: "max-age=3600"]
        if HTTPCaching.matches(ifNoneMatch: request.headers[.ifNoneMatch], tag) { return Response(status: .notModified, headers: headers) }
        let comic = description.comic
        let ahead = query["ahead"] == "1"
        let result = await OffLoop.await { done in
            reader.page(comic, index: index, fitWidth: width, streamable: true, recordsReading: !ahead, completion: done)
        }
        switch result {
        case .success(let image):
            headers[.contentType] = mediaType(image.fileExtension)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.bytes)))
        case .failure(let code): throw code.httpError
        }
    }

    static func mediaType(_ fileExtension: String) -> String {
        switch fileExtension {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "avif": "image/avif"
        case "jxl": "image/jxl"
        default: "application/octet-stream"
        }
    }

    /// `attachment; filename="..."` with an ASCII fallback and the UTF-8 name (RFC 6266).
    static func disposition(_ name: String) -> String {
        let ascii = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(OPDSPaths.encode(name))"
    }
}
