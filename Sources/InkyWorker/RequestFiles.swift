import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// The files one worker request reads, opened by the daemon and passed to the worker as
/// descriptors (SCM_RIGHTS) in a frame that follows the request: so a worker opens nothing by
/// name, and a root mount's worker needs no capability to read a 0600 comic. The daemon opens the
/// comic as it opens everything of the library (beneath the root, never through a link); the
/// worker checks what it was given (`fstat`) against the identity the daemon listed.
///
/// The frame lists the comic first, then, for a folder of loose images, every entry of the folder
/// (kind, size and name) in the daemon's own listing; a page carries a descriptor when the request
/// reads it (a listing reads none, or all where a profile cuts pages and reads their dimensions).
package final class RequestFiles {
    package enum Kind: UInt8, Sendable {
        case comic = 0x63 // "c": the archive, PDF, vault object or folder itself
        case page = 0x70 // "p": a regular file of a folder comic, with its descriptor
        case file = 0x66 // "f": a regular file of a folder comic, not read by this request
        case symlink = 0x6C, directory = 0x64, other = 0x6F
    }

    package struct Entry: Sendable {
        package var kind: Kind
        package var size: Int64
        package var name: String
        /// Owned by the `RequestFiles` until taken; -1 without one.
        package var descriptor: Int32
    }

    package internal(set) var entries: [Entry]

    package init(entries: [Entry]) { self.entries = entries }

    deinit { for entry in entries where entry.descriptor >= 0 { close(entry.descriptor) } }

    /// The comic's descriptor, now the caller's (-1 when it was taken already).
    package func takeComic() -> Int32 { take(at: 0) }

    /// A folder comic's entries after the comic, each page's descriptor now the caller's.
    package func takeFolderEntries() -> [Entry] {
        guard entries.count > 1 else { return [] }
        let taken = entries[1...].map { $0 }
        for index in 1..<entries.count { entries[index].descriptor = -1 }
        return Array(taken)
    }

    private func take(at index: Int) -> Int32 {
        guard entries.indices.contains(index) else { return -1 }
        defer { entries[index].descriptor = -1 }
        return entries[index].descriptor
    }

    /// The descriptors in the order the frame lists them.
    package var descriptors: [Int32] { entries.compactMap { $0.descriptor >= 0 ? $0.descriptor : nil } }

    /// The frame's payload: per entry its kind, its size (8 bytes, little-endian), its name and a NUL.
    package var payload: [UInt8] {
        var bytes: [UInt8] = []
        for entry in entries {
            bytes.append(entry.kind.rawValue)
            withUnsafeBytes(of: UInt64(bitPattern: entry.size).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: entry.name.utf8)
            bytes.append(0)
        }
        return bytes
    }

    /// The files of a frame received with `descriptors`; nil (every descriptor closed) when they do
    /// not match: one per comic and page entry, in order, the comic first.
    package static func decode(_ payload: UnsafeRawBufferPointer, descriptors: [Int32]) -> RequestFiles? {
        var entries: [Entry] = []
        var rest = payload[...]
        var passed = descriptors[...]
        while !rest.isEmpty {
            guard rest.count >= 10, let kind = Kind(rawValue: rest.first!),
                  let end = rest.dropFirst(9).firstIndex(of: 0) else { break }
            let size = rest.dropFirst().prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let name = String(decoding: rest[(rest.startIndex + 9)..<end], as: UTF8.self)
            var descriptor: Int32 = -1
            if kind == .comic || kind == .page {
                guard let next = passed.popFirst() else { break }
                descriptor = next
            }
            entries.append(Entry(kind: kind, size: Int64(bitPattern: size), name: name, descriptor: descriptor))
            rest = rest[(end + 1)...]
        }
        let files = RequestFiles(entries: entries)
        guard rest.isEmpty, passed.isEmpty, entries.first?.kind == .comic,
              !entries.dropFirst().contains(where: { $0.kind == .comic }) else {
            passed.forEach { close($0) }
            return nil
        }
        return files
    }
}
