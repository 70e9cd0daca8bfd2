import Foundation
import Hummingbird
import InkyCore
import InkyLibrary

/// A reader in the browser, for any device without an OPDS app: plain pages made on the
/// server (no framework, no build step), the library's folders with covers, and a comic page by
/// page: arrow keys, a click on either half, a swipe; the next pages preloaded; reopened where
/// the reading state says it was left (the same state the mount and OPDS clients keep).
enum WebReader {
    static func install(on router: Router<ServeContext>, reader: LibraryReader) {
        router.get("/") { _, _ in html(await OffLoop.run { home(reader) }) }
        router.get("/browse") { request, _ in
            let path = QueryValues(request.uri.query)["path"] ?? ""
            guard let page = await OffLoop.run({ folder(reader, path) }) else { throw CatalogRoutes.notFound("no such folder") }
            return html(page)
        }
        router.get("/read") { request, _ in
            let query = QueryValues(request.uri.query)
            guard let path = query["path"] else { throw CatalogRoutes.notFound("no comic named") }
            let start = query.integer("page")
            guard let page = await OffLoop.run({ comic(reader, path, start: start) }) else { throw CatalogRoutes.notFound("no such comic") }
            return html(page)
        }
    }

    private static func html(_ body: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func home(_ reader: LibraryReader) -> String {
        let reading = reader.inProgress().prefix(12)
        var body = ""
        if !reading.isEmpty {
            body += "<h2>Continue Reading</h2><ul class=\"grid\">"
            for (comic, progress) in reading {
                guard case .success(let description) = reader.describe(comic) else { continue }
                body += card(description, note: "page \(progress.lastPage + 1) of \(progress.pageCount)")
            }
            body += "</ul>"
        }
        return page(title: "inkyfs", trail: [], body: body + (listing(reader, "") ?? ""))
    }

    private static func folder(_ reader: LibraryReader, _ path: String) -> String? {
        guard let items = listing(reader, path) else { return nil }
        var trail: [(String, String)] = []
        var walked = ""
        for part in path.split(separator: "/") {
            walked += (walked.isEmpty ? "" : "/") + part
            trail.append((String(part), OPDSPaths.link("/browse", [("path", walked)])))
        }
        return page(title: trail.last?.0 ?? "inkyfs", trail: trail, body: items)
    }

    /// A folder's sub-folders and comics as cards; nil for no such folder.
    private static func listing(_ reader: LibraryReader, _ path: String) -> String? {
        guard case .success(let entries) = reader.folder(path) else { return nil }
        var out = path.isEmpty ? "<h2>Library</h2>" : ""
        out += "<ul class=\"grid\">"
        for entry in entries {
            switch entry {
            case .folder(let name, let folder):
                out += "<li class=\"folder\"><a href=\"\(attribute(OPDSPaths.link("/browse", [("path", folder)])))\">"
                    + "<span class=\"icon\"></span><span class=\"name\">\(text(name))</span></a></li>"
            case .comic(let name, let comic):
                guard case .library(let path) = comic else { continue }
                // Described only when listed: a folder's cover images load lazily.
                let cover = OPDSPaths.link(OPDSPaths.thumbnail, [("path", path)])
                out += "<li><a href=\"\(attribute(OPDSPaths.link("/read", [("path", path)])))\">"
                    + "<img loading=\"lazy\" alt=\"\" onerror=\"this.style.visibility='hidden'\" src=\"\(attribute(cover))\">"
                    + "<span class=\"name\">\(text(name))</span></a></li>"
            }
        }
        return out + "</ul>"
    }

    private static func card(_ description: LibraryReader.Description, note: String) -> String {
        let cover = OPDSPaths.link(OPDSPaths.thumbnail, [("path", description.path)])
        return "<li><a href=\"\(attribute(OPDSPaths.link("/read", [("path", description.path)])))\"><img loading=\"lazy\" alt=\"\" "
            + "src=\"\(attribute(cover))\"><span class=\"name\">\(text(OPDSEntries.title(description)))</span>"
            + "<span class=\"note\">\(text(note))</span></a></li>"
    }

    /// The reader: one page, the controls, and what the script needs as JSON.
    private static func comic(_ reader: LibraryReader, _ path: String, start: Int?) -> String? {
        guard let comic = reader.comic(at: path), case .success(let description) = reader.describe(comic) else { return nil }
        let folder = parent(of: path)
        let back = OPDSPaths.link("/browse", folder.isEmpty ? [] : [("path", folder)])
        guard description.problem == nil else {
            return page(title: description.name, trail: [], body: "<p class=\"problem\">\(text(description.problem ?? ""))</p>"
                        + "<p><a href=\"\(attribute(back))\">Back</a></p>")
        }
        let count = description.pages.count
        let resumed = start ?? reader.progress(of: [comic])[comic].map { $0.isFinished ? 0 : $0.lastPage } ?? 0
        let current = min(max(0, resumed), count - 1)
        let rightToLeft = description.metadata?.manga?.lowercased() == "yesandrighttoleft"
        let settings: [String: String] = ["path": path, "back": back, "pages": OPDSPaths.page, "reader": "/read"]
        let json = (try? JSONEncoder().encode(settings)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let first = OPDSPaths.link(OPDSPaths.page, [("path", path), ("page", String(current))])
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(text(OPDSEntries.title(description)))</title><style>\(style)</style></head>
            <body class="reader">
            <img id="page" src="\(attribute(first))" alt="Page \(current + 1) of \(count)">
            <nav><a id="back" href="\(attribute(back))">&#8592; \(text(description.name))</a>
            <a id="previous" href="#">&#8249;</a><span id="position">\(current + 1) / \(count)</span><a id="next" href="#">&#8250;</a></nav>
            <script>const comic = \(json.replacingOccurrences(of: "</", with: "<\\/")); comic.count = \(count); comic.page = \(current); comic.rtl = \(rightToLeft);
            \(script)</script>
            </body></html>

            """
    }

    private static func parent(of path: String) -> String {
        path.split(separator: "/").dropLast().joined(separator: "/")
    }

    private static func page(title: String, trail: [(String, String)], body: String) -> String {
        let crumbs = ([("Library", "/")] + trail).map { "<a href=\"\(attribute($0.1))\">\(text($0.0))</a>" }.joined(separator: " &#8250; ")
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(text(title))</title><style>\(style)</style></head>
            <body><header>\(crumbs)<a class="opds" href="/opds">OPDS</a></header>
            <main>\(body)</main></body></html>

            """
    }

    private static func text(_ value: String) -> String { AtomFeed.escape(value) }
    private static func attribute(_ value: String) -> String { AtomFeed.escape(value) }
}
