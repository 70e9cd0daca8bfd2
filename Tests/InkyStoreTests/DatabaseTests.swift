import Foundation
import XCTest
import InkyStore

final class DatabaseTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("inkystore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func testTransactionRollsBackWhenBodyThrows() throws {
        struct Abort: Error, Equatable {}
        let database = try Database()
        try database.execute("CREATE TABLE t (value INTEGER)")
        XCTAssertThrowsError(try database.transaction {
            try database.execute("INSERT INTO t VALUES (1)")
            try database.execute("INSERT INTO t VALUES (2)")
            throw Abort()
        }) { XCTAssertEqual($0 as? Abort, Abort(), "the body's own error comes back unchanged") }
        XCTAssertEqual(try rowCount(database, "t"), 0)

        // The connection is usable again afterwards: no transaction was left open.
        let inserted = try database.transaction { () throws -> Int64 in
            try database.execute("INSERT INTO t VALUES (3)")
            return database.lastInsertRowID
        }
        XCTAssertEqual(inserted, 1)
        XCTAssertEqual(try rowCount(database, "t"), 1)
    }

    func testTransactionRollsBackWhenAStatementFails() throws {
        let database = try Database()
        try database.execute("CREATE TABLE t (value INTEGER NOT NULL)")
        XCTAssertThrowsError(try database.transaction {
            try database.execute("INSERT INTO t VALUES (1)")
            try database.execute("INSERT INTO t VALUES (NULL)")
        }) { XCTAssertEqual(($0 as? SQLiteError)?.code, .constraint) }
        XCTAssertEqual(try rowCount(database, "t"), 0)
    }

    func testNestedTransactionIsRefused() throws {
        let database = try Database()
        XCTAssertThrowsError(try database.transaction {
            try database.transaction {}
        }) { XCTAssertEqual(($0 as? SQLiteError)?.code, .error) }
    }

    func testUserVersionGetAndSet() throws {
        let database = try Database()
        XCTAssertEqual(try database.userVersion(), 0)
        try database.setUserVersion(7)
        XCTAssertEqual(try database.userVersion(), 7)
    }

    func testWALOnAFileDatabaseReportsWALAndPersists() throws {
        let path = directory.appendingPathComponent("state.sqlite").path
        do {
            let database = try Database(path: path)
            XCTAssertEqual(try database.journalMode(), .delete)
            XCTAssertEqual(try database.journalMode(.wal), .wal)
            try database.execute("CREATE TABLE t (value); INSERT INTO t VALUES (1);")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"))
        }
        let reopened = try Database(path: path)
        XCTAssertEqual(try reopened.journalMode(), .wal)
        XCTAssertEqual(try rowCount(reopened, "t"), 1)
    }

    func testInMemoryDatabaseCannotUseWAL() throws {
        XCTAssertEqual(try Database().journalMode(.wal), .memory)
    }

    func testTwoConnectionsSeeCommittedDataAndBusyTimeoutWaitsThenFails() throws {
        let path = directory.appendingPathComponent("shared.sqlite").path
        let writer = try Database(path: path)
        try writer.journalMode(.wal)
        try writer.execute("CREATE TABLE t (value)")
        let other = try Database(path: path)
        other.setBusyTimeout(.milliseconds(100))

        try writer.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
        let clock = ContinuousClock()
        let start = clock.now
        XCTAssertThrowsError(try other.execute("BEGIN IMMEDIATE")) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .busy)
        }
        XCTAssertGreaterThanOrEqual(clock.now - start, .milliseconds(90), "waited for the busy timeout")
        XCTAssertEqual(try rowCount(other, "t"), 0, "WAL reader sees only committed rows")
        try writer.execute("COMMIT")
        XCTAssertEqual(try rowCount(other, "t"), 1)
    }

    func testForeignKeysAreEnforced() throws {
        let database = try Database()
        try database.execute("""
            CREATE TABLE comic (id INTEGER PRIMARY KEY);
            CREATE TABLE page (comic INTEGER NOT NULL REFERENCES comic(id));
            """)
        XCTAssertThrowsError(try database.execute("INSERT INTO page VALUES (99)")) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .constraint)
        }
    }

    func testOpeningAnUnreachablePathFails() {
        XCTAssertThrowsError(try Database(path: directory.appendingPathComponent("missing/dir/db.sqlite").path)) {
            XCTAssertEqual(($0 as? SQLiteError)?.code, .cannotOpen)
        }
    }

    func testSQLiteVersionIsReported() {
        XCTAssertTrue(SQLiteVersion.version.hasPrefix("3."), SQLiteVersion.version)
    }

    private func rowCount(_ database: Database, _ table: String) throws -> Int64 {
        let statement = try database.prepare("SELECT count(*) FROM \(table)")
        XCTAssertTrue(try statement.step())
        return statement.int64(at: 0)
    }
}
