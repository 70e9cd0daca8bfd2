import Foundation
import InkyCore

/// What the daemon asks a worker.
public enum WorkerRequest: Codable, Sendable, Equatable {
    /// List a comic: answered by `.listing` or `.failure`.
    case list(path: String, limits: ComicLimits)
    /// Stream these entries in this order: each answered by `.pageStart`, data chunks and
    /// `.pageEnd`, or by `.pageFailed`; then `.done`.
    case read(path: String, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits)
    /// The ComicInfo.xml bytes: one data chunk sequence between `.pageStart`/`.pageEnd`, then `.done`.
    case comicInfo(path: String, identity: FileIdentity, limits: ComicLimits)
    /// One page made a cover: at most `height` pixels high, JPEG, decoded here and never in the
    /// daemon. Answered as one entry (`.pageStart`, chunks, `.pageEnd`, or `.pageFailed`), then `.done`.
    case cover(path: String, identity: FileIdentity, entry: EntryRequest, height: Int, limits: ComicLimits)
    /// The next frame is the 32-byte key of the vault object at `path`: later requests about
    /// that path read it decrypted. Unanswered. A worker only ever holds keys of objects it
    /// was asked about, never the vault's master key.
    case useKey(path: String)
}

/// One page to stream, with the size its listing promised (`Page.sizeAfterRendering` for a
/// page rendered on demand: the worker's `pageStart` then tells the size).
public struct EntryRequest: Codable, Sendable, Equatable {
    /// The member, and the piece of it for a cut page: the worker's replies name it again.
    public var source: PageSource
    public var size: Int64
    public var name: String
    /// Set for a stored ZIP member: the pool reads it from the file itself (`StoredPageReader`)
    /// and never sends it to a worker.
    public var stored: StoredData?

    public init(source: PageSource, size: Int64, name: String, stored: StoredData? = nil) {
        self.source = source
        self.size = size
        self.name = name
        self.stored = stored
    }

    /// A listed page, as the listing has it.
    public init(_ page: Page) {
        self.init(source: page.source, size: page.size, name: page.sourcePath, stored: page.storedData)
    }

    /// The page the worker reads for this request.
    package var page: Page {
        Page(number: 0, name: name, sourcePath: name, entryIndex: source.entry, piece: source.piece, size: size)
    }
}

extension PageSource {
    /// What the ComicInfo.xml bytes are streamed as: no listed page has a negative entry.
    package static let comicInfo = PageSource(entry: -1)
}

/// What a worker answers. Data travels in raw chunk frames between `pageStart` and `pageEnd`.
public enum WorkerReply: Codable, Sendable, Equatable {
    case listing(WireListing, identity: FileIdentity)
    case failure(ComicError)
    case pageStart(PageSource, size: Int64)
    case pageEnd(PageSource)
    case pageFailed(PageSource, ComicError)
    /// Still decoding (sent at most once a second): keeps the watchdog from killing slow work.
    case progress
    case done
}

/// The wire format: `[UInt32 length][UInt8 kind][payload]`, little-endian. Kind 1 carries a
/// JSON-encoded message, kind 2 raw page bytes, kind 3 a message in `WorkerCodec`'s binary
/// form. The reader treats every frame as untrusted (a worker decoding a hostile archive may
/// be subverted): lengths are bounded.
public enum WorkerFrame: Equatable {
    case message(Data)
    case data([UInt8])
    case binary([UInt8])

    static let binaryKind: UInt8 = 3

    /// Largest frame accepted; page data is sent in chunks far below it.
    public static let maxLength = 4 << 20
    public static let chunkSize = 1 << 20

    public static func encode<Message: Encodable>(_ message: Message) -> [UInt8] {
        // Encoding our own Codable enums cannot fail.
        let json = (try? JSONEncoder().encode(message)) ?? Data()
        return header(length: json.count, kind: 1) + Array(json)
    }

    static func header(length: Int, kind: UInt8) -> [UInt8] {
        let value = UInt32(length)
        return [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24), kind]
    }

    /// Parses a 5-byte header; nil for a kind or length no honest peer sends.
    static func parseHeader(_ bytes: [UInt8]) -> (length: Int, kind: UInt8)? {
        guard bytes.count == 5 else { return nil }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
        guard length <= maxLength, (1...binaryKind).contains(bytes[4]) else { return nil }
        return (length, bytes[4])
    }
}

/// A listing as a worker sends it: in `WorkerCodec`'s binary frame only, as `ListingCodec`'s
/// bytes and the metadata beside them (ComicListing's own JSON was a fifth of `inkyfs index`'s
/// CPU to write and to read, base64 inside JSON still a large part of a cold mount's). The
/// daemon decodes it as it decodes the index: every length checked, anything odd refused, the
/// metadata bounded and cleaned again (`sanitized()`). Its JSON form exists only because
/// `WorkerReply` is Codable for the messages that stay JSON: it refuses both ways.
public struct WireListing: Codable, Sendable, Equatable {
    public let listing: ComicListing

    public init(_ listing: ComicListing) { self.listing = listing }

    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "a listing travels in binary frames only"))
    }

    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a listing travels in binary frames only"))
    }
}
