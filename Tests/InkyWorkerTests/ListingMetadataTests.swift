import Foundation
import XCTest
@testable import InkyWorker
@testable import InkyWorkerProcess

/// The file name a comic's metadata is read from is `NSString.lastPathComponent`'s, whatever the path.
final class ListingMetadataTests: XCTestCase {
    func testFileNameIsFoundationsLastPathComponent() {
        for path in ["/lib/Series/Issue 1.cbz", "Issue.cbz", "/a/b/", "/a//b.cbz", "/", "", "//", "a/", "/lib/Café/x\u{301}.cbz",
                     "/lib/a/\u{301}b.cbz", "/lib/a b/c (2019) [x].cbz", "///x", "x//"] {
            XCTAssertEqual(ListingMetadata.fileName(of: path), (path as NSString).lastPathComponent, path.debugDescription)
        }
    }
}
