import Foundation
import InkyCore
import Synchronization

/// Hands out the 12-bit generation a comic's page inode numbers carry, so that a comic that
/// changes under the mount never gets a generation the kernel may still hold for it.
///
/// Why not just the identity's hash: the kernel keeps a page's directory entry, and the bytes it
/// read (`keep_cache`), until the change handler's invalidation lands, which runs in the
/// background. A new file whose hash had the same 12 low bits as the old one's gave its pages
/// the old pages' numbers, and a reader that opened the page meanwhile got the old file's cached
/// bytes mixed with the new file's (1 change in 4,096; the churn stress test hit it once).
///
/// So generations come in two halves:
/// - a comic first seen in this daemon gets the low 11 bits of its hash (top bit clear): an
///   unchanged file has the same page numbers in every mount;
/// - a comic seen to change gets the next number of a counter (top bit set), which it shares
///   with no earlier generation of itself until 2,048 changes later, long after the kernel was
///   told to forget.
/// The same file coming back (renamed away and back) gets its earlier generation again, so a
/// reader holding one of its pages reads on. Comics whose state was dropped (vanished, or out of
/// the memory budget) are remembered here, the most recent `limit` of them, since the kernel
/// may still hold their pages.
final class ComicGenerations: Sendable {
    static let firstSeenMask: UInt64 = 0x7FF
    static let changedBit = 0x800

    struct Seen: Equatable, Sendable {
        var hash: UInt64
        var generation: Int
    }

    private let limit: Int
    private struct State {
        var earlier: [ComicRef: (seen: [Seen], stamp: UInt64)] = [:]
        var clock: UInt64 = 0
        var nextChanged = 0
    }
    private let state = Mutex(State())

    /// Each remembered comic keeps this many of its generations.
    private static let perComic = 4

    init(limit: Int = 1024) { self.limit = limit }

    /// The generation for `comic` now at `identity`; `current` is what its state holds (nil for
    /// a state just made).
    func generation(for comic: ComicRef, identity: FileIdentity, current: Seen?) -> Int {
        let hash = identity.generation
        return state.withLock { state in
            let before = (current.map { [$0] } ?? []) + (state.earlier[comic]?.seen ?? [])
            if let current { remember(current, of: comic, in: &state) }
            if let same = before.first(where: { $0.hash == hash }) { return same.generation }
            if before.isEmpty { return Int(hash & Self.firstSeenMask) }
            return Self.next(avoiding: before, in: &state)
        }
    }

    /// A generation `comic` has not had, for content that changed under an unchanged identity (a
    /// page of a folder comic rewritten in place moves none of the folder's size, mtime, inode).
    func renewed(for comic: ComicRef, current: Seen) -> Int {
        state.withLock { state in
            let before = [current] + (state.earlier[comic]?.seen ?? [])
            remember(current, of: comic, in: &state)
            return Self.next(avoiding: before, in: &state)
        }
    }

    /// The counter's next generation that none of `before` has.
    private static func next(avoiding before: [Seen], in state: inout State) -> Int {
        var generation: Int
        repeat {
            generation = changedBit | (state.nextChanged & Int(firstSeenMask))
            state.nextChanged += 1
        } while before.contains(where: { $0.generation == generation })
        return generation
    }

    /// Keeps the generation of a comic whose state is being dropped.
    func dropped(_ comic: ComicRef, _ seen: Seen) {
        state.withLock { state in remember(seen, of: comic, in: &state) }
    }

    /// Keeps the generation of `state`, being dropped (its file vanished, or the memory budget).
    func dropped(_ state: ComicState) {
        if let seen = state.lastSeen { dropped(state.comic, seen) }
    }

    /// Vault comics are not kept: no vault name may outlive the unlock, and lock makes the
    /// kernel forget every vault entry before anything of the vault is shown again.
    private func remember(_ seen: Seen, of comic: ComicRef, in state: inout State) {
        guard !comic.isVault else { return }
        state.clock += 1
        var list = state.earlier[comic]?.seen ?? []
        list.removeAll { $0 == seen }
        list.insert(seen, at: 0)
        state.earlier[comic] = (Array(list.prefix(Self.perComic)), state.clock)
        // Trimmed to half when full: one sort per limit/2 comics remembered.
        guard state.earlier.count > limit else { return }
        let keep = Set(state.earlier.sorted { $0.value.stamp > $1.value.stamp }.prefix(limit / 2).map(\.key))
        state.earlier = state.earlier.filter { keep.contains($0.key) }
    }
}
