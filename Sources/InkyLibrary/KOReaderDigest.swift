import Foundation
import InkyCore
import InkyVault

/// KOReader's name for a document: `util.partialMD5` (frontend/util.lua), an MD5 over samples
/// of 1 KiB read at offsets `bit.lshift(1024, 2*i)` for i = -1 … 10, stopping at the first
/// sample that is empty (at or past the end; a short last sample counts). LuaJIT's shifts take
/// the count modulo 32 and work on 32 bits, so i = -1 shifts 1024 by 30 and yields 0: the samples
/// start at 0, 1 KiB, 4 KiB, 16 KiB … 1 GiB. The sync plugin (`getFileDigest`) sends this as
/// `document`, lowercase hex.
public enum KOReaderDigest {
    public static let sampleLength = 1024
    public static let offsets: [Int64] = [0] + (0...10).map { Int64(1024) << (2 * $0) }

    /// The digest of a file of `size` bytes whose bytes `read(offset, length)` gives; nil when
    /// a read fails or comes back short.
    public static func digest(size: Int64, read: (Int64, Int) -> [UInt8]?) -> String? {
        var samples: [[UInt8]] = []
        for offset in offsets where offset < size {
            let length = Int(min(Int64(sampleLength), size - offset))
            guard let sample = read(offset, length), sample.count == length else { return nil }
            samples.append(sample)
        }
        return try? MD5.hex(samples)
    }

    /// The digest of an open file, read with pread.
    public static func digest(descriptor: Int32, size: Int64) -> String? {
        digest(size: size) { offset, length in
            var buffer = [UInt8](repeating: 0, count: length)
            var done = 0
            while done < length {
                let got = buffer.withUnsafeMutableBytes { bytes in
                    Syscall.retrying { pread(descriptor, bytes.baseAddress! + done, length - done, off_t(offset) + off_t(done)) }
                }
                guard got > 0 else { return nil }
                done += got
            }
            return buffer
        }
    }
}
