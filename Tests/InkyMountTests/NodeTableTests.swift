import InkyCore
import InkyTree
import XCTest
import InkyLibrary
@testable import InkyMount

/// Inode numbers decode back to their nodes without a table, and a vault number is never given
/// to another comic after a lock: a name the kernel still held would lead to the wrong comic.
final class NodeTableTests: XCTestCase {
    func testNumbersDecodeToTheirNodes() {
        let table = NodeTable(root: .folder(""))
        let nodes: [Node] = [.folder("A"), .file("A/notes.txt"), .comic(.library("A/1.cbz")),
                             .page(comic: .library("A/1.cbz"), generation: 0xBEF, index: 399),
                             .comicInfo(comic: .library("A/1.cbz"), generation: 7), .errorText(comic: .library("A/1.cbz"), generation: 7),
                             .link("A/elsewhere"), .vaultFolder("Shelf"), .comic(.vault("0a1b")),
                             .page(comic: .vault("0a1b"), generation: 3, index: 2)]
        let ids = nodes.map(table.id(for:))
        XCTAssertEqual(Set(ids).count, nodes.count, "every node its own number")
        XCTAssertEqual(table.id(for: .folder("")), NodeTable.rootID)
        for (node, id) in zip(nodes, ids) { XCTAssertEqual(table.node(id), node) }
        XCTAssertTrue(table.isVaultFile(table.id(for: .page(comic: .vault("0a1b"), generation: 3, index: 2))))
        // Library nodes are the base tree's, vault nodes the vault view's (its root is `Vault/`).
        XCTAssertTrue(ids.filter { table.node($0)?.isVault == false }.allSatisfy { ViewSlot(of: $0) == .base })
        XCTAssertTrue(ids.filter { table.node($0)?.isVault == true }.allSatisfy { ViewSlot(of: $0) == ViewSlot(255) })
        XCTAssertEqual(table.id(for: .vaultFolder("")), ViewSlot(255).rootID)
        XCTAssertEqual(table.node(ViewSlot(255).rootID), .vaultFolder(""))
        XCTAssertFalse(table.isVaultFile(table.id(for: .page(comic: .library("A/1.cbz"), generation: 3, index: 2))))
    }

    func testAVaultNumberDecodesOnlyInTheVaultsSlot() {
        let table = NodeTable(root: .folder(""))
        table.setVaultSlot(ViewSlot(2))
        let page = table.id(for: .page(comic: .vault("0a1b"), generation: 3, index: 2))
        XCTAssertEqual(ViewSlot(of: page), ViewSlot(2))
        let elsewhere = ViewSlot(3).id(ViewSlot(2).local(page))
        XCTAssertNil(table.node(elsewhere), "the same local number in another view's slot is not a vault page")
        XCTAssertNil(table.node(ViewSlot.base.id(ViewSlot(2).local(page))), "nor a library node")
    }

    func testVaultNumbersAreNeverHandedOutAgainAfterALock() {
        let table = NodeTable(root: .folder(""))
        let before = [table.id(for: .comic(.vault("aaaa"))), table.id(for: .comic(.vault("bbbb"))), table.id(for: .vaultFolder("Shelf"))]
        let forgotten = table.dropVault()
        XCTAssertEqual(Set(forgotten).intersection(before).count, 3, "every vault number is forgotten at lock")
        XCTAssertTrue(forgotten.contains(table.id(for: .vaultFolder(""))), "and Vault/'s listing, whose number stays")
        XCTAssertNil(table.node(before[0]), "a number from before the lock names nothing")
        // Looked up in the other order after the unlock: still none of the old numbers.
        let after = [table.id(for: .comic(.vault("bbbb"))), table.id(for: .comic(.vault("aaaa"))), table.id(for: .vaultFolder("Shelf"))]
        XCTAssertTrue(Set(after).isDisjoint(with: before), "\(before) then \(after)")
        XCTAssertNil(table.node(before[1]))
    }

    /// A listing's numbers in one go are each node's own: comics' files in runs, interleaved, of
    /// the vault, with the root; first while their paths are new to the table, then known (a folder
    /// listed again, where each comic's path is looked up once for all its files).
    func testNumbersInOneGoAreEachNodesOwn() {
        func files(_ comic: ComicRef, generation: Int) -> [Node] {
            [.errorText(comic: comic, generation: generation), .comicInfo(comic: comic, generation: generation),
             .comicDesktop(comic: comic, generation: generation)] + (comic == .vault("0a1b") ? [] : [.comicFile(comic: comic, generation: generation)])
                + (0..<3).map { .page(comic: comic, generation: generation, index: $0) }
        }
        let one = ComicRef.library("A/1.cbz"), two = ComicRef.library("A/2.cbz")
        let nodes: [Node] = [.folder(""), .folder("A"), .comic(one)] + files(one, generation: 5) + files(two, generation: 5)
            + [.page(comic: one, generation: 6, index: 0), .page(comic: two, generation: 5, index: 7), .link("A/elsewhere"),
               .folderCover("A"), .comic(.vault("0a1b"))] + files(.vault("0a1b"), generation: 2)
        for round in ["new", "known"] {
            let table = NodeTable(root: .folder(""))
            if round == "known" { _ = nodes.map(table.id(for:)) }
            let ids = table.ids(for: nodes)
            XCTAssertEqual(ids, nodes.map(table.id(for:)), round)
            XCTAssertEqual(Set(ids).count, nodes.count, "\(round): every node its own number")
            for (node, id) in zip(nodes, ids) { XCTAssertEqual(table.node(id), node, round) }
        }
    }
}
