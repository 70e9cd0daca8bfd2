internal import CLZMA
import InkyCore

/// A raw liblzma decoder for one 7z coder chain. Owns every liblzma pointer: the stream and the
/// filters' options live as long as it does and are freed in deinit.
final class LZMADecoder {
    /// liblzma's own estimate of what a chain needs; above this the folder is refused (a worker
    /// has 2 GiB of address space).
    static let memoryLimit: UInt64 = 1 << 30

    private let stream: UnsafeMutablePointer<lzma_stream>
    private let filters: UnsafeMutablePointer<lzma_filter>
    private var options: [UnsafeMutableRawPointer] = []
    private let path: String

    /// `chain` in 7z's (and liblzma's) order, the LZMA coder last; `unpackSize` bounds the
    /// dictionary: no valid stream refers further back than what it has produced.
    init(chain: [SevenZipMethod], unpackSize: Int64, path: String) throws(ComicError) {
        self.path = path
        stream = .allocate(capacity: 1)
        stream.initialize(to: inky_lzma_stream_init())
        filters = .allocate(capacity: chain.count + 1)
        let dictionaryCap = UInt32(clamping: max(unpackSize, 4_096))
        for (index, method) in chain.enumerated() {
            filters[index] = filter(method, dictionaryCap: dictionaryCap, unpackSize: unpackSize)
        }
        filters[chain.count] = lzma_filter(id: inky_lzma_vli_unknown(), options: nil)
        let usage = lzma_raw_decoder_memusage(filters)
        if usage == UInt64.max { throw .unsupportedFormat(path: path, format: "7z coder chain liblzma refuses") }
        if usage > Self.memoryLimit {
            throw .limitExceeded(path: path, detail: "a 7z folder needs \(ByteCountText.format(Int64(clamping: usage))) to decode")
        }
        guard lzma_raw_decoder(stream, filters) == LZMA_OK else { throw .corrupted(path: path, detail: "liblzma cannot start this 7z folder") }
    }

    deinit {
        lzma_end(stream)
        stream.deallocate()
        filters.deallocate()
        for option in options { option.deallocate() }
    }

    /// True when liblzma can decode `chain` at all (without allocating it).
    static func accepts(_ chain: [SevenZipMethod]) -> Bool {
        guard let decoder = try? LZMADecoder(chain: chain, unpackSize: 4_096, path: "") else { return false }
        _ = decoder
        return true
    }

    /// Decodes from `input` into at most `count` bytes at `output`; the decoder never runs
    /// ahead of the output it is given, so damage is found only where its bytes are asked for.
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> (consumed: Int, produced: Int, ended: Bool) {
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_in = input.count
        stream.pointee.next_out = output.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = count
        let result = lzma_code(stream, LZMA_RUN)
        let consumed = input.count - stream.pointee.avail_in
        let produced = count - stream.pointee.avail_out
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        switch result {
        case LZMA_OK: return (consumed, produced, false)
        case LZMA_STREAM_END: return (consumed, produced, true)
        case LZMA_MEM_ERROR, LZMA_MEMLIMIT_ERROR: throw .limitExceeded(path: path, detail: "liblzma ran out of memory")
        default: throw .corrupted(path: path, detail: "7z data is damaged (liblzma error \(result.rawValue))")
        }
    }

    private func filter(_ method: SevenZipMethod, dictionaryCap: UInt32, unpackSize: Int64) -> lzma_filter {
        switch method {
        case .lzma(let properties):
            var value = Int(properties[0])
            let lc = value % 9
            value /= 9
            let dictionary = properties[1...4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let options = lzmaOptions(dictionary: min(dictionary, dictionaryCap), lc: lc, lp: value % 5, pb: value / 5)
            // 7z's LZMA streams rarely carry an end marker: told the size, liblzma ends at it, and
            // a branch filter before it then lets go of the last bytes it holds back.
            let lzma = options.assumingMemoryBound(to: lzma_options_lzma.self)
            lzma.pointee.ext_flags = inky_lzma_lzma1ext_allow_eopm()
            lzma.pointee.ext_size_low = UInt32(truncatingIfNeeded: UInt64(unpackSize))
            lzma.pointee.ext_size_high = UInt32(truncatingIfNeeded: UInt64(unpackSize) >> 32)
            return lzma_filter(id: inky_lzma_filter_lzma1ext(), options: options)
        case .lzma2(let byte):
            let dictionary = byte == 40 ? UInt32.max : (2 | UInt32(byte & 1)) << (UInt32(byte) / 2 + 11)
            return lzma_filter(id: inky_lzma_filter_lzma2(), options: lzmaOptions(dictionary: min(dictionary, dictionaryCap), lc: 3, lp: 0, pb: 2))
        case .delta(let distance):
            let delta = UnsafeMutablePointer<lzma_options_delta>.allocate(capacity: 1)
            delta.initialize(to: lzma_options_delta())
            delta.pointee.type = LZMA_DELTA_TYPE_BYTE
            delta.pointee.dist = distance
            options.append(UnsafeMutableRawPointer(delta))
            return lzma_filter(id: inky_lzma_filter_delta(), options: UnsafeMutableRawPointer(delta))
        case .branch(let kind):
            let id = switch kind {
            case .x86: inky_lzma_filter_x86()
            case .powerPC: inky_lzma_filter_powerpc()
            case .ia64: inky_lzma_filter_ia64()
            case .arm: inky_lzma_filter_arm()
            case .armThumb: inky_lzma_filter_armthumb()
            case .sparc: inky_lzma_filter_sparc()
            }
            return lzma_filter(id: id, options: nil)
        case .copy:
            // Never in a chain given here (SevenZipFolder.isDecodable); liblzma refuses the ID.
            return lzma_filter(id: inky_lzma_vli_unknown() - 1, options: nil)
        }
    }

    private func lzmaOptions(dictionary: UInt32, lc: Int, lp: Int, pb: Int) -> UnsafeMutableRawPointer {
        let lzma = UnsafeMutablePointer<lzma_options_lzma>.allocate(capacity: 1)
        lzma.initialize(to: lzma_options_lzma())
        _ = lzma_lzma_preset(lzma, 6)
        lzma.pointee.dict_size = max(dictionary, 4_096)
        lzma.pointee.lc = UInt32(lc)
        lzma.pointee.lp = UInt32(lp)
        lzma.pointee.pb = UInt32(pb)
        options.append(UnsafeMutableRawPointer(lzma))
        return UnsafeMutableRawPointer(lzma)
    }
}
