/// Sizes written to disk are rounded up so that a size says little: an object's exact size would
/// name a known release of a comic, the manifest's growth the length of the last name added.
///
/// Padmé (Nikitin et al., "Reducing Metadata Leakage from Encrypted Files and Communication
/// with PURBs", PETS 2019): a length L is rounded up so that only the top ⌊log₂ E⌋ + 1 bits of
/// its exponent E = ⌊log₂ L⌋ matter, the rest of its mantissa zeroed. Overhead is at most 12.5 %
/// for tiny lengths and 3.1 % from 64 KiB to 4 GiB (every comic), and an L leaks O(log log L) bits
/// instead of O(log L): a 5,000,000-byte and a 5,001,024-byte comic both become 5,111,808 bytes.
enum VaultPadding {
    static func padme(_ length: UInt64) -> UInt64 {
        guard length > 1 else { return length }
        let exponent = 63 - length.leadingZeroBitCount
        let exponentBits = 64 - UInt64(exponent).leadingZeroBitCount
        let dropped = exponent - exponentBits
        let mask = (UInt64(1) << UInt64(dropped)) - 1
        return (length + mask) & ~mask
    }

    /// Bytes an object's stream holds after the comic: zeros, then the comic's size (8 bytes BE)
    /// as the last bytes, inside the encryption.
    static let objectTrailerLength: UInt64 = 8

    /// The whole stream of a version 2 object for a comic of `contentSize` bytes.
    static func objectStreamSize(contentSize: UInt64) -> UInt64 {
        padme(contentSize + objectTrailerLength)
    }

    /// The manifest's plaintext (generation, JSON, spaces) is at least this long, so a vault of
    /// a few comics does not tell their names' lengths from a few bytes of difference.
    static let manifestMinimum: UInt64 = 4096

    static func manifestPlaintextSize(_ length: UInt64) -> UInt64 {
        max(manifestMinimum, padme(length))
    }
}
