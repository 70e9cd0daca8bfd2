import Foundation
import InkyCore

/// Converted pages kept on disk between mounts (`~/.cache/inkyfs/pages/`, `--page-cache-size`):
/// a page a worker converted (`--pages jpeg`, `--fit`, `--grayscale`...) is served from here next
/// time without opening the archive. A file is named by a hash of its comic (path and generation,
/// as its cover is) and a hash of its `Key`, and starts with a header holding that name again, the
/// page's length and its CRC-32 (so `purge` finds every page of one comic by name): a truncated,
/// damaged or
/// misplaced file is removed and the page converted again, never served. Stored and capped as a
/// `BoundedFileDirectory`, written on a queue of its own (never on a reply's path).
public final class ConvertedPageCache: Sendable {
    /// One converted page of one library comic. There is no key for a vault comic: its pages
    /// are converted in memory only and no name of it may reach the disk.
    struct Key: Hashable, Sendable {
        let name: String

        /// `rendering`: the settings the comic's listing was converted with, all of them
        /// (page numbers and bytes both follow from them: a split page is a page of the listing).
        init?(_ comic: ComicRef, identity: FileIdentity, index: Int, rendering: PageRendering) {
            guard case .library(let path) = comic, let settings = Self.fingerprint(rendering) else { return nil }
            var bytes = Array(path.utf8) + [0]
            withUnsafeBytes(of: identity.generation.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: Int64(index).littleEndian) { bytes += $0 }
            name = BoundedFileDirectory.comicName(path: path, identity: identity) + "-"
                + BoundedFileDirectory.hashedName(of: bytes + settings)
        }

        /// Every setting, in a stable order: a setting added to `PageRendering` is part of the key.
        private static func fingerprint(_ rendering: PageRendering) -> [UInt8]? {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return (try? encoder.encode(rendering)).map(Array.init)
        }
    }

    /// Shared with `ResumePages`: one folder, one cap, one order of eviction for both.
    let files: BoundedFileDirectory
    private let writes = DispatchQueue(label: "inkyfs.page-cache", qos: .utility)

    /// "INKYPG2\n", the key's name (65 characters: comic, "-", page), the page's length (8 bytes)
    /// and CRC-32 (4), little-endian. (Files of the first format, named by the page alone, are
    /// never looked up again and age out.)
    private static let magic = Array("INKYPG2\n".utf8)
    private static let nameLength = 65
    private static let headerSize = magic.count + nameLength + 8 + 4

    public init(directory: String = XDGDirectories.cache + "/pages", capacity: Int64 = 2 << 30) {
        files = BoundedFileDirectory(directory: directory, capacity: capacity, suffix: ".page", slack: capacity / 20)
    }

    public var directory: String { files.directory }
    public var capacity: Int64 { files.capacity }
    /// Bytes of the pages on disk (what the cap bounds).
    public var size: Int64 { files.size }

    /// Whether a listing's page is one a worker converts, so one worth keeping here: the
    /// listing was converted and the page is not served as its archive's bytes.
    static func holds(_ page: Page, of listing: ComicListing) -> Bool {
        guard let conversion = listing.rendering?.conversion, conversion.isActive, page.storedData == nil else { return false }
        let source = EntryPath.components(of: page.sourcePath).last ?? page.sourcePath
        return conversion.convertsEveryPage
            || EntryPath.lowercasedExtension(of: source) != EntryPath.lowercasedExtension(of: page.name)
            // A spread's half or a strip is encoded even where the format stays (`--split-spreads` alone).
            || page.piece != nil
    }

    /// The page's bytes when a whole, undamaged copy is here (of `size` bytes, when known);
    /// a bad copy is removed.
    func page(_ key: Key, size: Int64?) -> [UInt8]? {
        guard let file = files.read(key.name + ".page") else { return nil }
        guard let bytes = Self.unwrap(file, name: key.name), size.map({ $0 == Int64(bytes.count) }) ?? true else {
            files.remove(key.name + ".page")
            return nil
        }
        return bytes
    }

    /// Stores a page later, on the cache's own queue.
    func store(_ key: Key, _ bytes: [UInt8]) {
        writes.async { [files] in files.write(key.name + ".page", Self.wrap(bytes, name: key.name)) }
    }

    /// Removes every converted page of the library comic `path` with `identity`, whatever the
    /// settings it was converted with; how many went. `vault add` calls it.
    @discardableResult
    public func purge(path: String, identity: FileIdentity) -> Int {
        files.remove(prefixed: BoundedFileDirectory.comicName(path: path, identity: identity) + "-")
    }

    /// Waits for the stores queued so far (tests, the end of a mount).
    public func finishWrites() { writes.sync {} }

    /// The header's length and CRC-32 are the page's as served; a page padded to its size budget
    /// (`PaddedImage`) is kept without its padding (a 1264x1680 gray page: ~280 KB of its ~800) and
    /// padded again when read.
    static func wrap(_ bytes: [UInt8], name: String) -> [UInt8] {
        let kept = PaddedImage.stripped(bytes) ?? bytes
        var file = magic + Array(name.utf8)
        file.reserveCapacity(headerSize + kept.count)
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { file += $0 }
        withUnsafeBytes(of: CRC32.checksum(bytes).littleEndian) { file += $0 }
        return file + kept
    }

    static func unwrap(_ file: [UInt8], name: String) -> [UInt8]? {
        guard file.count >= headerSize, file.starts(with: magic),
              file[magic.count..<magic.count + nameLength].elementsEqual(name.utf8) else { return nil }
        let length = file.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: magic.count + nameLength, as: UInt64.self)) }
        let crc = file.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: magic.count + nameLength + 8, as: UInt32.self)) }
        // At most a page budget's padding is put back (a damaged length must not make a huge page).
        let body = UInt64(file.count - headerSize)
        guard length >= body, length - body <= 64 << 20, let bytes = PaddedImage.padded(Array(file[headerSize...]), to: Int(length)) else { return nil }
        return CRC32.checksum(bytes) == crc ? bytes : nil
    }
}
