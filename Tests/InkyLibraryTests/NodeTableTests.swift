import InkyCore
import InkyTree
import XCTest
@testable import InkyLibrary

/// Inode numbers decode back to their nodes without a table, and a vault number is never given
/// to another comic after a lock: a name the kernel still held would lead to the wrong comic.
final class NodeTableTests: XCTestCase {
    func testNumbersDecodeToTheirNodes() {
        let table = NodeTable(root: .folder(""))
        let nodes: [Node] = [.folder("A"), .file("A/notes.txt"), .comic(.library("A/1.cbz")),
                             .page(comic: .library("A/1.cbz"), generation: 0xBEEF, index: 399),
                             .comicInfo(comic: .library("A/1.cbz"), generation: 7), .errorText(comic: .library("A/1.cbz"), generation: 7),
                             .continueReading, .continueLink(comic: "A/1.cbz"), .vaultFolder("Shelf"), .comic(.vault("0a1b")),
                             .page(comic: .vault("0a1b"), generation: 3, index: 2)]
        let ids = nodes.map(table.id(for:))
        XCTAssertEqual(Set(ids).count, nodes.count, "every node its own number")
        XCTAssertEqual(table.id(for: .folder("")), NodeTable.rootID)
        for (node, id) in zip(nodes, ids) { XCTAssertEqual(table.node(id), node) }
        XCTAssertTrue(table.isVaultFile(table.id(for: .page(comic: .vault("0a1b"), generation: 3, index: 2))))
        XCTAssertFalse(table.isVaultFile(table.id(for: .page(comic: .library("A/1.cbz"), generation: 3, index: 2))))
    }

    func testVaultNumbersAreNeverHandedOutAgainAfterALock() {
        let table = NodeTable(root: .folder(""))
        let before = [table.id(for: .comic(.vault("aaaa"))), table.id(for: .comic(.vault("bbbb"))), table.id(for: .vaultFolder("Shelf"))]
        let forgotten = table.dropVault()
        XCTAssertEqual(Set(forgotten).intersection(before).count, 3, "every vault number is forgotten at lock")
        XCTAssertNil(table.node(before[0]), "a number from before the lock names nothing")
        // Looked up in the other order after the unlock: still none of the old numbers.
        let after = [table.id(for: .comic(.vault("bbbb"))), table.id(for: .comic(.vault("aaaa"))), table.id(for: .vaultFolder("Shelf"))]
        XCTAssertTrue(Set(after).isDisjoint(with: before), "\(before) then \(after)")
        XCTAssertNil(table.node(before[1]))
    }
}
