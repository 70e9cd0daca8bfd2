import InkyCore

/// One 7z folder decoded as a stream: its packed bytes read from the archive as needed, its
/// decoded bytes handed out as they come. Bytes before damage are decoded exactly as from an
/// intact archive; the error surfaces only when the bytes it spoils are asked for.
final class SevenZipFolderReader {
    let index: Int
    /// Decoded bytes handed out so far: the folder's position.
    private(set) var produced: Int64 = 0
    /// Packed bytes consumed so far, for the compression-ratio check.
    private(set) var consumed: Int64 = 0
    private let folder: SevenZipFolder
    private let source: FileSource
    private let decoder: LZMADecoder?
    /// Packed bytes read and not yet decoded: `input[inputStart..<inputEnd]` (allocated on first use).
    private var input: UnsafeMutableRawPointer?
    private var inputStart = 0
    private var inputEnd = 0
    private static let inputChunk: Int64 = 256 << 10

    init(_ folder: SevenZipFolder, index: Int, source: FileSource) throws(ComicError) {
        self.index = index
        self.folder = folder
        self.source = source
        if folder.coders == [.copy] {
            guard folder.packSize == folder.unpackSize else {
                throw .corrupted(path: source.path, detail: "a stored 7z folder of \(folder.unpackSize) bytes packed in \(folder.packSize)")
            }
            decoder = nil
        } else {
            decoder = try LZMADecoder(chain: folder.coders, unpackSize: folder.unpackSize, path: source.path)
        }
    }

    deinit { input?.deallocate() }

    /// The whole folder in memory: only for a packed header, which the caller bounds.
    static func decodeWhole(_ folder: SevenZipFolder, index: Int, source: FileSource) throws(ComicError) -> [UInt8] {
        let reader = try SevenZipFolderReader(folder, index: index, source: source)
        let count = Int(folder.unpackSize)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        defer { buffer.deallocate() }
        var filled = 0
        while filled < count {
            let got = try reader.read(into: buffer + filled, count: count - filled)
            guard got > 0 else { throw reader.damaged("ends early") }
            filled += got
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: count))
    }

    /// Up to `count` of the folder's next decoded bytes; 0 only at the folder's end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        let wanted = Int(min(Int64(count), folder.unpackSize - produced))
        guard wanted > 0 else { return 0 }
        guard let decoder else {
            guard source.seek(to: folder.packOffset + produced) != nil else { throw damaged("a stored folder outside the file") }
            let got = try source.read(into: buffer, count: wanted)
            guard got > 0 else { throw damaged("the file ends inside a stored folder") }
            produced += Int64(got)
            consumed += Int64(got)
            return got
        }
        var idle = 0
        while true {
            let input = self.input ?? UnsafeMutableRawPointer.allocate(byteCount: Int(Self.inputChunk), alignment: 16)
            self.input = input
            if inputStart == inputEnd {
                let left = folder.packSize - consumed
                guard left > 0 else { throw damaged("the packed data ends after \(produced) of \(folder.unpackSize) bytes") }
                _ = source.seek(to: folder.packOffset + consumed)
                inputStart = 0
                inputEnd = try source.read(into: input, count: Int(min(left, Self.inputChunk)))
                guard inputEnd > 0 else { throw damaged("the file ends inside a packed folder") }
            }
            let pending = UnsafeRawBufferPointer(start: input + inputStart, count: inputEnd - inputStart)
            let step = try decoder.decode(pending, into: buffer, count: wanted)
            inputStart += step.consumed
            consumed += Int64(step.consumed)
            produced += Int64(step.produced)
            if step.produced > 0 { return step.produced }
            if step.ended { throw damaged("the folder's stream ends after \(produced) of \(folder.unpackSize) bytes") }
            // liblzma always progresses on fresh input or reports an error: never spin on a
            // decoder that does neither.
            idle = step.consumed > 0 ? 0 : idle + 1
            if idle > 2 { throw damaged("the decoder makes no progress") }
        }
    }

    func damaged(_ detail: String) -> ComicError {
        .corrupted(path: source.path, detail: "7z folder \(index): \(detail)")
    }
}
