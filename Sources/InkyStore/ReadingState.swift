import Foundation
import InkyCore

/// Where a reader is in a comic: the last page read, the pages seen, when.
public struct ReadingProgress: Sendable, Equatable, Codable {
    public var path: String
    public var pageCount: Int
    /// 0-based.
    public var lastPage: Int
    public var pagesSeen: Set<Int>
    public var updatedAt: Date
    public var bookmarks: [Int]

    /// A comic read through is finished: its last page seen, and at least three quarters of its
    /// pages (a reader may skip ads and letters pages; touching the last page is not reading
    /// the comic). `inkyfs progress set` to the last page sees every page before it.
    public var isFinished: Bool {
        guard pageCount > 0, pagesSeen.contains(pageCount - 1) else { return false }
        return pagesSeen.count(where: { $0 >= 0 && $0 < pageCount }) * 4 >= pageCount * 3
    }
    public var percent: Int { pageCount == 0 ? 0 : (lastPage + 1) * 100 / pageCount }

    public init(path: String, pageCount: Int, lastPage: Int, pagesSeen: Set<Int>, updatedAt: Date, bookmarks: [Int] = []) {
        self.path = path
        self.pageCount = pageCount
        self.lastPage = lastPage
        self.pagesSeen = pagesSeen
        self.updatedAt = updatedAt
        self.bookmarks = bookmarks
    }
}

extension StateDatabase {
    /// Records that page `page` (0-based) of `file` was read now.
    public func recordRead(_ file: LibraryFile, page: Int, pageCount: Int, at date: Date = Date()) {
        recordReads(file, pages: [page], pageCount: pageCount, at: date)
    }

    /// Records that `pages` (0-based, in the order read; the last one is where the reader stands)
    /// of `file` were read now: one read and one write of the pages seen, however many pages.
    public func recordReads(_ file: LibraryFile, pages: [Int], pageCount: Int, at date: Date = Date()) {
        guard let page = pages.last else { return }
        let path = file.path
        _ = try? withDatabase { database throws(SQLiteError) in
            var seen = PagesSeen()
            let query = try database.prepare("SELECT pages_seen FROM reading WHERE path = ?")
            try query.bind(path, at: 1)
            if try query.step(), let text = query.text(at: 0) { seen = PagesSeen(json: text) }
            for page in pages { seen.insert(page) }
            let encoded = seen.json
            let upsert = try database.prepare("""
                INSERT INTO reading (path, page_count, last_page, pages_seen, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET page_count = excluded.page_count, last_page = excluded.last_page,
                    pages_seen = excluded.pages_seen, updated_at = excluded.updated_at
                """)
            try upsert.bind([path, pageCount, page, encoded, date.timeIntervalSince1970])
            try upsert.step()
        }
    }

    /// Comics with reading state, most recent first; finished ones only with `includeFinished`.
    public func progress(includeFinished: Bool = false) -> [ReadingProgress] {
        let rows = readingRows(where: "", [])
        let marks = allBookmarks()
        return rows.filter { includeFinished || !$0.isFinished }.map { row in
            var row = row
            row.bookmarks = marks[row.path] ?? []
            return row
        }
    }

    /// The reading state of these comics only (finished ones too, no bookmarks): a feed of 50
    /// comics asked for every row and decoded each one's pages seen (10 ms per 1,500 in progress).
    public func progress(of paths: [String]) -> [String: ReadingProgress] {
        var found: [String: ReadingProgress] = [:]
        for chunk in stride(from: 0, to: paths.count, by: 500).map({ paths[$0..<min(paths.count, $0 + 500)] }) {
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in readingRows(where: "WHERE path IN (\(marks))", chunk.map { $0 as (any SQLiteBindable)? }) { found[row.path] = row }
        }
        return found
    }

    private func readingRows(where condition: String, _ values: [(any SQLiteBindable)?]) -> [ReadingProgress] {
        (try? withDatabase { database throws(SQLiteError) -> [ReadingProgress] in
            let query = try database.prepare("SELECT path, page_count, last_page, pages_seen, updated_at FROM reading \(condition) ORDER BY updated_at DESC, path")
            try query.bind(values)
            var rows: [ReadingProgress] = []
            while try query.step() {
                let seen = (try? JSONDecoder().decode(Set<Int>.self, from: Data((query.text(at: 3) ?? "[]").utf8))) ?? []
                rows.append(ReadingProgress(path: query.text(at: 0) ?? "", pageCount: Int(query.int64(at: 1)),
                                            lastPage: Int(query.int64(at: 2)), pagesSeen: seen,
                                            updatedAt: Date(timeIntervalSince1970: query.double(at: 4))))
            }
            return rows
        }) ?? []
    }

    public func addBookmark(_ path: String, page: Int) throws(SQLiteError) {
        try withDatabase { database throws(SQLiteError) in
            let statement = try database.prepare("INSERT OR IGNORE INTO bookmarks (path, page, created_at) VALUES (?, ?, ?)")
            try statement.bind([path, page, Date().timeIntervalSince1970])
            try statement.step()
        }
    }

    /// Removes one bookmark, or all of the comic's with `page == nil`; returns how many went.
    @discardableResult
    public func removeBookmark(_ path: String, page: Int?) throws(SQLiteError) -> Int {
        try withDatabase { database throws(SQLiteError) in
            let statement = try database.prepare(page == nil ? "DELETE FROM bookmarks WHERE path = ?" : "DELETE FROM bookmarks WHERE path = ? AND page = ?")
            try statement.bind(path, at: 1)
            if let page { try statement.bind(page, at: 2) }
            try statement.step()
            return database.changes
        }
    }

    public func bookmarks(_ path: String) -> [Int] { allBookmarks()[path] ?? [] }

    /// Every comic's bookmarks (0-based pages), read or not.
    public func allBookmarks() -> [String: [Int]] {
        (try? withDatabase { database throws(SQLiteError) -> [String: [Int]] in
            let query = try database.prepare("SELECT path, page FROM bookmarks ORDER BY path, page")
            var marks: [String: [Int]] = [:]
            while try query.step() { marks[query.text(at: 0) ?? "", default: []].append(Int(query.int64(at: 1))) }
            return marks
        }) ?? [:]
    }
}
