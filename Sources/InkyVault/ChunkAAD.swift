/// The associated data of one chunk: the object's full header ‖ chunk index (UInt64 BE)
/// ‖ last-chunk flag (1 byte: 1 for the final chunk, else 0). 65 bytes.
///
/// Each part stops one attack: the header ties the chunk to this object (its file id,
/// size and parameters), the index to its position (no reordering or duplication), the
/// flag to being or not being the end (no truncation at a chunk boundary, no appended
/// chunk, even if an attacker could also rewrite the size).
///
/// One buffer per reader or writer, rewritten in place per chunk: no allocation per chunk.
struct ChunkAAD {
    private(set) var bytes: [UInt8]
    private let indexOffset: Int

    init(header: [UInt8]) {
        bytes = header + [UInt8](repeating: 0, count: 9)
        indexOffset = header.count
    }

    mutating func set(chunk index: UInt64, isLast: Bool) {
        var value = index.bigEndian
        withUnsafeBytes(of: &value) { field in
            for i in 0..<8 { bytes[indexOffset + i] = field[i] }
        }
        bytes[indexOffset + 8] = isLast ? 1 : 0
    }
}
