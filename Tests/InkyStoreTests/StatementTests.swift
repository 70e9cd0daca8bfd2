import XCTest
import InkyStore

final class StatementTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws {
        database = try Database()
        try database.execute("""
            CREATE TABLE page (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                size REAL,
                data BLOB,
                note TEXT
            );
            """)
    }

    func testInsertWithBoundParametersAndReadBack() throws {
        let name = "it's \"quoted\" — ünïcödé 漫画 🎉; DROP TABLE page; --"
        let data: [UInt8] = [0x00, 0xFF, 0x00, 0x00, 0x7F, 0x00]
        let insert = try database.prepare("INSERT INTO page (name, size, data, note) VALUES (?, ?, ?, ?)")
        try insert.bind([name, 12.5, data, nil])
        XCTAssertFalse(try insert.step())
        XCTAssertEqual(database.changes, 1)
        XCTAssertEqual(database.lastInsertRowID, 1)

        let query = try database.prepare("SELECT id, name, size, data, note FROM page WHERE name = :name")
        try query.bind(name, named: ":name")
        XCTAssertTrue(try query.step())
        XCTAssertEqual(query.columnCount, 5)
        XCTAssertEqual(query.columnName(at: 1), "name")
        XCTAssertEqual(query.int64(at: 0), 1)
        XCTAssertEqual(query.text(at: 1), name)
        XCTAssertEqual(query.double(at: 2), 12.5)
        XCTAssertEqual(query.blob(at: 3), data)
        XCTAssertTrue(query.isNull(at: 4))
        XCTAssertNil(query.text(at: 4))
        XCTAssertEqual(query.value(at: 3), .blob(data))
        XCTAssertEqual(query.value(at: 4), .null)
        XCTAssertFalse(try query.step(), "exactly one row")

        // The blob really is stored as 6 bytes, NULs included, not cut at the first one.
        let length = try database.prepare("SELECT length(data), typeof(data) FROM page")
        XCTAssertTrue(try length.step())
        XCTAssertEqual(length.int64(at: 0), 6)
        XCTAssertEqual(length.text(at: 1), "blob")
        // And the would-be injection stayed a value: the table is still there.
        XCTAssertEqual(try count(), 1)
    }

    func testEmptyTextAndEmptyBlobAreNotNull() throws {
        let insert = try database.prepare("INSERT INTO page (name, data) VALUES (?, ?)")
        try insert.bind("", at: 1)
        try insert.bind([UInt8](), at: 2)
        try insert.step()
        let query = try database.prepare("SELECT name, data, typeof(data) FROM page")
        XCTAssertTrue(try query.step())
        XCTAssertEqual(query.text(at: 0), "")
        XCTAssertEqual(query.blob(at: 1), [])
        XCTAssertEqual(query.text(at: 2), "blob")
    }

    func testTextWithEmbeddedNULRoundTrips() throws {
        let insert = try database.prepare("INSERT INTO page (name) VALUES (?)")
        try insert.bind("a\u{0}b", at: 1)
        try insert.step()
        let query = try database.prepare("SELECT name, length(CAST(name AS BLOB)) FROM page")
        XCTAssertTrue(try query.step())
        XCTAssertEqual(query.text(at: 0), "a\u{0}b")
        XCTAssertEqual(query.int64(at: 1), 3)
    }

    func testResetAndRebindRunsTheStatementAgain() throws {
        let insert = try database.prepare("INSERT INTO page (name, size) VALUES (?, ?)")
        for index in 0..<5 {
            insert.reset()
            try insert.bind(["page \(index)", Double(index)])
            try insert.step()
        }
        XCTAssertEqual(try count(), 5)
        let sum = try database.prepare("SELECT sum(size), max(id) FROM page")
        XCTAssertTrue(try sum.step())
        XCTAssertEqual(sum.double(at: 0), 10)
        XCTAssertEqual(sum.int64(at: 1), 5)
        XCTAssertEqual(database.lastInsertRowID, 5)
    }

    func testUniqueViolationReportsConstraintCodeAndSQL() throws {
        let sql = "INSERT INTO page (name) VALUES (?)"
        let insert = try database.prepare(sql)
        try insert.bind("same", at: 1)
        try insert.step()
        insert.reset()
        XCTAssertThrowsError(try insert.step()) { error in
            guard let error = error as? SQLiteError else { return XCTFail("not a SQLiteError: \(error)") }
            XCTAssertEqual(error.code, .constraint)
            XCTAssertEqual(error.extendedCode, 2067, "SQLITE_CONSTRAINT_UNIQUE")
            XCTAssertEqual(error.sql, sql)
            XCTAssertTrue(error.message.contains("UNIQUE constraint failed: page.name"), error.message)
            XCTAssertTrue(error.description.contains(sql), error.description)
        }
    }

    func testNotNullViolationThroughExecuteNamesTheFailingStatement() {
        XCTAssertThrowsError(try database.execute("""
            INSERT INTO page (name) VALUES ('fine');
            INSERT INTO page (name) VALUES (NULL);
            """)) { error in
            guard let error = error as? SQLiteError else { return XCTFail("not a SQLiteError: \(error)") }
            XCTAssertEqual(error.code, .constraint)
            XCTAssertEqual(error.sql, "INSERT INTO page (name) VALUES (NULL);")
        }
    }

    func testSyntaxErrorIsReportedWhenPreparing() {
        XCTAssertThrowsError(try database.prepare("SELEC name FROM page")) { error in
            guard let error = error as? SQLiteError else { return XCTFail("not a SQLiteError: \(error)") }
            XCTAssertEqual(error.code, .error)
            XCTAssertEqual(error.sql, "SELEC name FROM page")
            XCTAssertTrue(error.message.contains("syntax error"), error.message)
        }
    }

    func testPrepareRefusesASecondStatementButAllowsTrailingComments() throws {
        XCTAssertThrowsError(try database.prepare("SELECT 1; DELETE FROM page")) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .misuse)
        }
        let statement = try database.prepare("SELECT 1; -- just a comment\n")
        XCTAssertTrue(try statement.step())
        XCTAssertEqual(statement.int64(at: 0), 1)
    }

    func testBindingErrors() throws {
        let insert = try database.prepare("INSERT INTO page (name) VALUES (:name)")
        XCTAssertThrowsError(try insert.bind("x", named: ":missing")) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .range)
        }
        XCTAssertThrowsError(try insert.bind("x", at: 2)) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .range)
        }
        XCTAssertThrowsError(try insert.bind(["x", "y"])) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .range)
        }
    }

    func testStatementKeepsItsDatabaseAlive() throws {
        let statement = try Database().prepare("SELECT 40 + 2")
        XCTAssertTrue(try statement.step())
        XCTAssertEqual(statement.int64(at: 0), 42)
    }

    func testIntegerExtremesAndBooleans() throws {
        try database.execute("CREATE TABLE numbers (value INTEGER)")
        let insert = try database.prepare("INSERT INTO numbers VALUES (?)")
        for value: any SQLiteBindable in [Int64.max, Int64.min, true, 0] {
            insert.reset()
            try insert.bind(value, at: 1)
            try insert.step()
        }
        let query = try database.prepare("SELECT value FROM numbers ORDER BY rowid")
        var values: [Int64] = []
        while try query.step() { values.append(query.int64(at: 0)) }
        XCTAssertEqual(values, [Int64.max, Int64.min, 1, 0])
    }

    private func count() throws -> Int64 {
        let statement = try database.prepare("SELECT count(*) FROM page")
        XCTAssertTrue(try statement.step())
        return statement.int64(at: 0)
    }
}
