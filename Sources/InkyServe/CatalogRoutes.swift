import Foundation
import Hummingbird
import InkyCore
import InkyLibrary

/// The catalog's feeds over HTTP: `/opds` and what it links to, and the OpenSearch description.
enum CatalogRoutes {
    static func install(on router: Router<ServeContext>, catalog: OPDSCatalog) {
        router.get("/opds") { _, _ in feed(await OffLoop.run { catalog.root() }) }
        router.get("/opds/folders") { request, _ in
            let query = QueryValues(request.uri.query)
            let path = query["path"] ?? ""
            let page = query.integer("page", min: 1) ?? 1
            guard let made = await OffLoop.run({ catalog.folder(path, page: page) }) else { throw notFound("no such folder") }
            return feed(made)
        }
        router.get("/opds/view") { request, _ in
            let query = QueryValues(request.uri.query)
            guard let kind = query["kind"].flatMap(MetadataViewKind.init(rawValue:)) else { throw notFound("no such view") }
            let folder = query["folder"], page = query.integer("page", min: 1) ?? 1
            guard let made = await OffLoop.run({ catalog.view(kind, folder: folder, page: page) }) else { throw notFound("no such folder") }
            return feed(made)
        }
        router.get("/opds/continue") { request, _ in
            let page = QueryValues(request.uri.query).integer("page", min: 1) ?? 1
            return feed(await OffLoop.run { catalog.continueReading(page: page) })
        }
        router.get("/opds/search") { request, _ in
            let query = QueryValues(request.uri.query)
            guard let text = query["q"], !text.isEmpty, text.count <= 200 else {
                throw HTTPError(.badRequest, message: "search needs q=WORDS (at most 200 characters)")
            }
            let page = query.integer("page", min: 1) ?? 1
            return feed(await OffLoop.run { catalog.search(text, page: page) })
        }
        router.get("/opds/search.xml") { _, _ in
            let description = """
                <?xml version="1.0" encoding="UTF-8"?>
                <OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">
                  <ShortName>inkyfs</ShortName>
                  <Description>Comics by series, title or file name</Description>
                  <InputEncoding>UTF-8</InputEncoding>
                  <OutputEncoding>UTF-8</OutputEncoding>
                  <Url type="\(AtomFeed.Kind.acquisition.mediaType)" template="\(OPDSPaths.search)?q={searchTerms}"/>
                </OpenSearchDescription>

                """
            return Response(status: .ok, headers: [.contentType: "application/opensearchdescription+xml; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: description)))
        }
    }

    private static func feed(_ feed: AtomFeed) -> Response {
        Response(status: .ok, headers: [.contentType: feed.kind.mediaType + ";charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: feed.xml)))
    }

    static func notFound(_ message: String) -> HTTPError { HTTPError(.notFound, message: message) }
}

extension Errno {
    /// The one place the library core's errors become HTTP statuses: what is not there (or a
    /// page past the end) 404, what the server may not read 403, a comic that changed while it
    /// was being served 412 (ask again), anything else a failure of this server, 500.
    var httpError: HTTPError {
        switch self {
        case .ENOENT, .ERANGE, .ENOTDIR, .EISDIR, .ELOOP: HTTPError(.notFound, message: "not found")
        case .EACCES: HTTPError(.forbidden, message: "the server may not read this comic")
        case .ESTALE: HTTPError(.preconditionFailed, message: "the comic changed on disk: ask again")
        default: HTTPError(.internalServerError, message: "cannot read the comic: \(self)")
        }
    }
}
