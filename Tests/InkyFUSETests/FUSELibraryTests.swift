import XCTest
@testable import InkyFUSE

final class FUSELibraryTests: XCTestCase {
    func testReportsTheLinkedLibfuse3Version() {
        XCTAssertTrue(FUSELibrary.version.hasPrefix("3."), FUSELibrary.version)
        XCTAssertGreaterThanOrEqual(FUSELibrary.versionNumber, 312)
    }
}
