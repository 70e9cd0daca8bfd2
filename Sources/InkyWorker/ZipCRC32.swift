internal import CCRC32
import InkyCore

/// ZIP's CRC-32 at memory speed where the CPU folds with PCLMULQDQ (about 4x zlib's table
/// code on this machine), else `CRC32`'s tables. The daemon checks every stored page it reads
/// from an archive with it, so its cost is paid on every page of a sequential read.
enum ZipCRC32 {
    private static let folding = inkyfs_crc32_simd_available() != 0

    /// `continuing`: the checksum of the bytes before these (0 for none), so a range can be
    /// checked piece by piece as it arrives.
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard folding, bytes.count >= 64, let base = bytes.baseAddress else { return CRC32.checksum(bytes, continuing: crc) }
        let folded = bytes.count & ~15
        let running = ~inkyfs_crc32_simd(base.assumingMemoryBound(to: UInt8.self), folded, ~crc)
        return CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[folded...]), continuing: running)
    }
}
