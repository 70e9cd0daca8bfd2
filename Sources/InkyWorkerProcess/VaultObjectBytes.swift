import InkyCore
import InkyWorker
import InkyVault

/// A vault object as random-access bytes for the archive parsers: chunks are decrypted and
/// authenticated on demand; a chunk that fails authentication is a corrupted-archive error,
/// never plaintext.
final class VaultObjectBytes: RandomAccessBytes {
    private let reader: VaultObjectReader

    init(_ reader: VaultObjectReader) { self.reader = reader }

    var size: Int64 { Int64(reader.size) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        guard offset < size else { return 0 }
        do throws(VaultError) {
            return try reader.read(at: UInt64(offset), into: UnsafeMutableRawBufferPointer(start: buffer, count: count))
        } catch {
            throw .corrupted(path: reader.path, detail: "\(error)")
        }
    }

    func willNeed(_ ranges: [(offset: Int64, length: Int)]) {
        reader.willNeed(ranges.compactMap { $0.offset >= 0 ? (UInt64($0.offset), $0.length) : nil })
    }
}
