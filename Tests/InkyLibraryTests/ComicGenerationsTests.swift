import InkyCore
import XCTest
@testable import InkyLibrary

/// A changed comic never gets a generation (so page inode numbers) the kernel may still hold for
/// it, even when the new file's hash shares the old one's low bits.
final class ComicGenerationsTests: XCTestCase {
    private let comic = ComicRef.library("Series/Issue 1.cbz")
    private let old = FileIdentity(size: 1_000, modifiedNanoseconds: 1_700_000_000_000_000_000, inode: 42)

    /// Another file (same size and inode, another mtime) whose hash has `identity`'s low 12
    /// bits: what page numbers carried before, so it gave the old pages' numbers to the new file.
    private func colliding(with identity: FileIdentity) -> FileIdentity {
        var other = identity
        repeat { other.modifiedNanoseconds += 1 } while other.generation & 0xFFF != identity.generation & 0xFFF
        return other
    }

    private func seen(_ identity: FileIdentity, _ generation: Int) -> ComicGenerations.Seen {
        ComicGenerations.Seen(hash: identity.generation, generation: generation)
    }

    func testAComicFirstSeenIsNumberedFromItsFileSoEveryMountAgrees() {
        let first = ComicGenerations().generation(for: comic, identity: old, current: nil)
        XCTAssertEqual(first, Int(old.generation & 0x7FF))
        XCTAssertEqual(ComicGenerations().generation(for: comic, identity: old, current: nil), first)
    }

    func testAChangedFileWhoseHashCollidesGetsAnotherGeneration() {
        let generations = ComicGenerations()
        let before = generations.generation(for: comic, identity: old, current: nil)
        let new = colliding(with: old)
        let after = generations.generation(for: comic, identity: new, current: seen(old, before))
        XCTAssertNotEqual(after, before)
        XCTAssertNotEqual(after & ComicGenerations.changedBit, 0, "changes are numbered apart from first sights")
        // And again: the third file differs from both before it.
        let third = generations.generation(for: comic, identity: colliding(with: new), current: seen(new, after))
        XCTAssertFalse([before, after].contains(third))
    }

    func testTheSameFileComingBackGetsItsEarlierGeneration() {
        let generations = ComicGenerations()
        let first = generations.generation(for: comic, identity: old, current: nil)
        let new = colliding(with: old)
        let second = generations.generation(for: comic, identity: new, current: seen(old, first))
        XCTAssertEqual(generations.generation(for: comic, identity: old, current: seen(new, second)), first)
    }

    /// A state dropped (the file vanished, or the memory budget) while the kernel still held its
    /// pages: the comic seen again is numbered as a change, unless it is the same file.
    func testADroppedComicIsRememberedPastItsState() {
        let generations = ComicGenerations()
        let first = generations.generation(for: comic, identity: old, current: nil)
        generations.dropped(comic, seen(old, first))
        XCTAssertEqual(generations.generation(for: comic, identity: old, current: nil), first)
        let again = generations.generation(for: comic, identity: colliding(with: old), current: nil)
        XCTAssertNotEqual(again, first)
    }

    func testOnlyTheMostRecentlyDroppedComicsAreRemembered() {
        let generations = ComicGenerations(limit: 8)
        let first = generations.generation(for: comic, identity: old, current: nil)
        generations.dropped(comic, seen(old, first))
        for number in 0..<8 {
            let other = ComicRef.library("Other \(number).cbz")
            generations.dropped(other, seen(old, generations.generation(for: other, identity: old, current: nil)))
        }
        let new = colliding(with: old)
        XCTAssertEqual(generations.generation(for: comic, identity: new, current: nil), Int(new.generation & 0x7FF),
                       "forgotten: numbered as first seen")
    }

    /// No vault name is kept past the vault's states (lock drops them all).
    func testDroppedVaultComicsAreNotKept() {
        let generations = ComicGenerations()
        let vaultComic = ComicRef.vault("3f2a")
        let first = generations.generation(for: vaultComic, identity: old, current: nil)
        generations.dropped(vaultComic, seen(old, first))
        let new = colliding(with: old)
        XCTAssertEqual(generations.generation(for: vaultComic, identity: new, current: nil), Int(new.generation & 0x7FF))
    }
}
