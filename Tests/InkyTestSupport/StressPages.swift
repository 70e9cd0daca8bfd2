/// Page bytes for stress comics as a pure function of (comic, version, page): a test can write
/// version after version of an archive and still check any slice of any read against the
/// version it may have come from, without keeping every version in memory.
public enum StressPages {
    public static func pageCount(comic: Int, version: Int) -> Int {
        3 + Int(mix(seed(comic, version, 0xFFFFF)) % 8)
    }

    public static func size(comic: Int, version: Int, page: Int) -> Int {
        20_000 + Int(mix(seed(comic, version, page) ^ 0x5A5A) % 230_000)
    }

    /// Bytes `range` of the page (counter-based, so a slice costs only its length).
    public static func bytes(comic: Int, version: Int, page: Int, range: Range<Int>) -> [UInt8] {
        let base = seed(comic, version, page)
        var out = [UInt8]()
        out.reserveCapacity(range.count)
        var word = range.lowerBound >> 3
        var value = mix(base &+ UInt64(word))
        for index in range {
            if index >> 3 != word {
                word = index >> 3
                value = mix(base &+ UInt64(word))
            }
            out.append(UInt8(truncatingIfNeeded: value >> UInt64((index & 7) * 8)))
        }
        return out
    }

    public static func page(comic: Int, version: Int, page: Int) -> [UInt8] {
        bytes(comic: comic, version: version, page: page, range: 0..<size(comic: comic, version: version, page: page))
    }

    /// The archive members of one version: p01.jpg, p02.jpg, … (mounted as 001.jpg, 002.jpg, …).
    public static func members(comic: Int, version: Int) -> [(String, [UInt8])] {
        (0..<pageCount(comic: comic, version: version)).map { page in
            (pageName(page), Self.page(comic: comic, version: version, page: page))
        }
    }

    private static func pageName(_ page: Int) -> String {
        "p" + (page < 9 ? "0" : "") + String(page + 1) + ".jpg"
    }

    private static func seed(_ comic: Int, _ version: Int, _ page: Int) -> UInt64 {
        UInt64(comic) << 44 ^ UInt64(version) << 22 ^ UInt64(page) &* 0x9E37_79B9
    }

    /// splitmix64's finalizer.
    private static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
