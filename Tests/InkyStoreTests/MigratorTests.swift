import XCTest
import InkyStore

final class MigratorTests: XCTestCase {
    private let v1 = (version: 1, sql: "CREATE TABLE comic (id INTEGER PRIMARY KEY, path TEXT NOT NULL);")
    private let v2 = (version: 2, sql: """
        ALTER TABLE comic ADD COLUMN pages INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX comic_path ON comic (path);
        """)

    func testAppliesEachVersionOnceAndRerunningIsANoOp() throws {
        let database = try Database()
        let migrator = Migrator([v1, v2])
        XCTAssertEqual(migrator.latestVersion, 2)
        XCTAssertEqual(try migrator.migrate(database), [1, 2])
        XCTAssertEqual(try database.userVersion(), 2)
        try database.execute("INSERT INTO comic (path, pages) VALUES ('a.cbz', 12)")

        // Re-running would fail loudly if it re-applied anything ("table comic already exists").
        XCTAssertEqual(try migrator.migrate(database), [])
        XCTAssertEqual(try Migrator([v1, v2]).migrate(database), [])
        XCTAssertEqual(try database.userVersion(), 2)
        let rows = try database.prepare("SELECT count(*) FROM comic")
        XCTAssertTrue(try rows.step())
        XCTAssertEqual(rows.int64(at: 0), 1, "data survives a re-run")
    }

    func testLaterVersionsApplyOnTopOfEarlierOnes() throws {
        let database = try Database()
        XCTAssertEqual(try Migrator([v1]).migrate(database), [1])
        XCTAssertEqual(try Migrator([v1, v2]).migrate(database), [2])
        let columns = try database.prepare("SELECT pages FROM comic")
        XCTAssertEqual(columns.columnName(at: 0), "pages")
    }

    func testAFailingMigrationRollsBackAndKeepsTheEarlierVersion() throws {
        let database = try Database()
        let broken = (version: 2, sql: "CREATE TABLE extra (x); CREATE TABLE comic (oops);")
        XCTAssertThrowsError(try Migrator([v1, broken]).migrate(database)) { error in
            XCTAssertEqual((error as? SQLiteError)?.code, .error)
            XCTAssertEqual((error as? SQLiteError)?.sql, "CREATE TABLE comic (oops);")
        }
        XCTAssertEqual(try database.userVersion(), 1)
        let extra = try database.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'extra'")
        XCTAssertTrue(try extra.step())
        XCTAssertEqual(extra.int64(at: 0), 0, "the half-applied step left nothing behind")
        // Fixed, it applies from where it stopped.
        XCTAssertEqual(try Migrator([v1, v2]).migrate(database), [2])
    }

    func testNewerDatabaseIsLeftAlone() throws {
        let database = try Database()
        try database.setUserVersion(5)
        XCTAssertEqual(try Migrator([v1, v2]).migrate(database), [])
        XCTAssertEqual(try database.userVersion(), 5)
    }
}
