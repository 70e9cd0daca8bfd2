import Foundation
import InkyCore

/// The worker protocol's listing path in binary (frame kind 3): the `.list` request and the
/// `.listing`, `.failure`, `.progress` and `.done` replies. Decoding their JSON was about 15% of
/// inkyfs's CPU in a cold first mount; the listing now travels as `ListingCodec`'s own bytes,
/// not base64 inside JSON. Page reads and the other requests stay JSON (kind 1).
///
/// Everything from a worker is untrusted (a hostile archive may have subverted it): every
/// count is checked against the bytes left before anything is allocated, text is valid UTF-8 of
/// at most `maxText` bytes, tags and flags outside their sets are refused, integers that do not
/// fit are refused, and bytes after the message are refused. A message that fails any of it is
/// nil, which the pool treats as any malformed frame (the worker is killed, `parserFailed`).
/// Each message has one wire form: a binary-coded case arriving as JSON is refused too.
///
/// Message: `[UInt8 tag][fields]`. Request tags: 1 list. Reply tags: 1 listing, 2 failure,
/// 3 progress, 4 done.
package enum WorkerCodec {
    /// The longest text field read (a path, an error's detail, a metadata field): far above
    /// what an honest worker sends (PATH_MAX; metadata already cut to a few hundred characters).
    package static let maxText = 64 << 10

    // MARK: Which messages are binary

    package static func isBinary(_ request: WorkerRequest) -> Bool {
        if case .list = request { return true }
        return false
    }

    package static func isBinary(_ reply: WorkerReply) -> Bool {
        switch reply {
        case .listing, .failure, .progress, .done: true
        case .pageStart, .pageEnd, .pageFailed: false
        }
    }

    // MARK: Frames

    /// The frame that carries `request`: binary when it has a binary form, JSON otherwise.
    package static func frame(_ request: WorkerRequest) -> [UInt8] {
        guard case .list(let path, let limits) = request else { return WorkerFrame.encode(request) }
        var out = BinaryWriter(prefix: WorkerFrame.header(length: 0, kind: WorkerFrame.binaryKind))
        out.byte(1)
        out.string(path)
        out.limits(limits)
        return sealed(out)
    }

    package static func frame(_ reply: WorkerReply) -> [UInt8] {
        var out = BinaryWriter(prefix: WorkerFrame.header(length: 0, kind: WorkerFrame.binaryKind))
        switch reply {
        case .listing(let wire, let identity):
            out.byte(1)
            out.identity(identity)
            ListingCodec.encode(wire.listing, into: &out)
            out.optional(wire.listing.metadata) { out, metadata in out.metadata(metadata) }
        case .failure(let error):
            out.byte(2)
            out.error(error)
        case .progress: out.byte(3)
        case .done: out.byte(4)
        case .pageStart, .pageEnd, .pageFailed: return WorkerFrame.encode(reply)
        }
        return sealed(out)
    }

    /// The header's length filled in. A message over `WorkerFrame.maxLength` is still sent
    /// whole: the daemon refuses its header, as it did the JSON form.
    private static func sealed(_ out: BinaryWriter) -> [UInt8] {
        var bytes = out.bytes
        let length = UInt32(truncatingIfNeeded: bytes.count - 5)
        for index in 0..<4 { bytes[index] = UInt8(truncatingIfNeeded: length >> UInt32(8 * index)) }
        return bytes
    }

    // MARK: Decoding

    package static func request(json: Data) -> WorkerRequest? {
        guard let request = try? JSONDecoder().decode(WorkerRequest.self, from: json), !isBinary(request) else { return nil }
        return request
    }

    package static func reply(json: Data) -> WorkerReply? {
        guard let reply = try? JSONDecoder().decode(WorkerReply.self, from: json), !isBinary(reply) else { return nil }
        return reply
    }

    package static func request(binary bytes: [UInt8]) -> WorkerRequest? {
        var input = BinaryReader(bytes)
        guard input.byte() == 1, let path = input.string(maxBytes: maxText), let limits = input.limits(), input.isAtEnd else { return nil }
        return .list(path: path, limits: limits)
    }

    /// The metadata is cleaned again here (`sanitized()`), whatever the worker did.
    package static func reply(binary bytes: [UInt8]) -> WorkerReply? {
        var input = BinaryReader(bytes)
        let reply: WorkerReply
        switch input.byte() {
        case 1:
            guard let identity = input.identity(), var listing = ListingCodec.decode(from: &input),
                  let metadata = input.optional({ $0.metadata() }) else { return nil }
            listing.metadata = metadata?.sanitized()
            reply = .listing(WireListing(listing), identity: identity)
        case 2:
            guard let error = input.error() else { return nil }
            reply = .failure(error)
        case 3: reply = .progress
        case 4: reply = .done
        default: return nil
        }
        return input.isAtEnd ? reply : nil
    }
}

// MARK: Fields

extension BinaryWriter {
    /// Fixed width: a request's limits are eight numbers and the rendering settings.
    package mutating func limits(_ limits: ComicLimits) {
        for value in [Int64(limits.maxPages), limits.maxPageBytes, limits.maxComicBytes, limits.maxCompressionRatio,
                      limits.ratioCheckAfterBytes, Int64(limits.maxNameBytes), Int64(limits.maxEntries), Int64(limits.maxHeaderErrors)] {
            fixed64(UInt64(bitPattern: value))
        }
        rendering(limits.rendering)
    }

    package mutating func identity(_ identity: FileIdentity) {
        fixed64(UInt64(bitPattern: identity.size))
        fixed64(UInt64(bitPattern: identity.modifiedNanoseconds))
        fixed64(identity.inode)
    }

    package mutating func text(_ text: String) { string(text, maxBytes: WorkerCodec.maxText) }

    package mutating func optionalText(_ value: String?) { optional(value) { out, text in out.text(text) } }

    package mutating func optionalNumber(_ value: Int?) { optional(value) { out, number in out.signed(Int64(number)) } }

    package mutating func error(_ error: ComicError) {
        switch error {
        case .notAComicArchive(let path): byte(0); text(path)
        case .unsupportedFormat(let path, let format): byte(1); text(path); text(format)
        case .corrupted(let path, let detail): byte(2); text(path); text(detail)
        case .encrypted(let path): byte(3); text(path)
        case .noPages(let path): byte(4); text(path)
        case .pageTooLarge(let path, let entry, let limit): byte(5); text(path); text(entry); signed(limit)
        case .limitExceeded(let path, let detail): byte(6); text(path); text(detail)
        case .io(let path, let code, let detail): byte(7); text(path); signed(Int64(code)); text(detail)
        case .parserFailed(let path, let detail): byte(8); text(path); text(detail)
        }
    }

    package mutating func metadata(_ metadata: ComicMetadata) {
        let source: UInt8 = switch metadata.source {
        case .comicInfo: 0
        case .coMet: 1
        case .comicBookInfo: 2
        case .fileName: 3
        }
        byte(source)
        optionalText(metadata.series)
        optionalText(metadata.number)
        optionalNumber(metadata.volume)
        optionalText(metadata.title)
        optionalText(metadata.publisher)
        optionalNumber(metadata.year)
        optionalNumber(metadata.month)
        let arcs = metadata.arcs.prefix(ComicMetadata.maxArcs)
        varint(UInt64(arcs.count))
        for arc in arcs {
            text(arc.name)
            optionalText(arc.number)
        }
        optionalNumber(metadata.pageCount)
        optionalText(metadata.language)
        optionalText(metadata.manga)
    }
}

extension BinaryReader {
    package mutating func limits() -> ComicLimits? {
        var values: [Int64] = []
        for _ in 0..<8 {
            guard let value = fixed64() else { return nil }
            values.append(Int64(bitPattern: value))
        }
        guard let rendering = rendering() else { return nil }
        // Int is 64 bits on every platform inkyfs builds for.
        return ComicLimits(maxPages: Int(values[0]), maxPageBytes: values[1], maxComicBytes: values[2], maxCompressionRatio: values[3],
                           ratioCheckAfterBytes: values[4], maxNameBytes: Int(values[5]), maxEntries: Int(values[6]),
                           maxHeaderErrors: Int(values[7]), rendering: rendering)
    }

    package mutating func identity() -> FileIdentity? {
        guard let size = fixed64(), let modified = fixed64(), let inode = fixed64() else { return nil }
        return FileIdentity(size: Int64(bitPattern: size), modifiedNanoseconds: Int64(bitPattern: modified), inode: inode)
    }

    package mutating func text() -> String? { string(maxBytes: WorkerCodec.maxText) }

    package mutating func optionalText() -> String?? { optional { $0.text() } }

    package mutating func optionalNumber() -> Int?? { optional { $0.signed().flatMap { Int(exactly: $0) } } }

    package mutating func error() -> ComicError? {
        let tag = byte()
        guard let path = text() else { return nil }
        switch tag {
        case 0: return .notAComicArchive(path: path)
        case 1: return text().map { .unsupportedFormat(path: path, format: $0) }
        case 2: return text().map { .corrupted(path: path, detail: $0) }
        case 3: return .encrypted(path: path)
        case 4: return .noPages(path: path)
        case 5:
            guard let entry = text(), let limit = signed() else { return nil }
            return .pageTooLarge(path: path, entry: entry, limit: limit)
        case 6: return text().map { .limitExceeded(path: path, detail: $0) }
        case 7:
            guard let code = signed().flatMap({ Int32(exactly: $0) }), let detail = text() else { return nil }
            return .io(path: path, errno: code, detail: detail)
        case 8: return text().map { .parserFailed(path: path, detail: $0) }
        default: return nil
        }
    }

    package mutating func metadata() -> ComicMetadata? {
        let sources: [ComicMetadata.Source] = [.comicInfo, .coMet, .comicBookInfo, .fileName]
        guard let tag = byte(), Int(tag) < sources.count, let series = optionalText(), let number = optionalText(),
              let volume = optionalNumber(), let title = optionalText(), let publisher = optionalText(), let year = optionalNumber(),
              let month = optionalNumber(), let arcCount = count(), arcCount <= ComicMetadata.maxArcs else { return nil }
        var arcs: [ComicMetadata.Arc] = []
        for _ in 0..<arcCount {
            guard let name = text(), let arcNumber = optionalText() else { return nil }
            arcs.append(ComicMetadata.Arc(name: name, number: arcNumber))
        }
        guard let pageCount = optionalNumber(), let language = optionalText(), let manga = optionalText() else { return nil }
        return ComicMetadata(source: sources[Int(tag)], series: series, number: number, volume: volume, title: title,
                             publisher: publisher, year: year, month: month, arcs: arcs, pageCount: pageCount,
                             language: language, manga: manga)
    }
}
