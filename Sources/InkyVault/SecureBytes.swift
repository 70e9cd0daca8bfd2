#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CCrypto
import Synchronization

/// Key material in memory this class owns for its whole life.
///
/// Why not `[UInt8]`: an array can be copied, reallocated or left in freed heap by the
/// runtime at any time, so a vault key held in one would linger after the vault locks.
/// Here the bytes live in pages we allocate ourselves, `mlock`ed so they are never written
/// to swap, excluded from core dumps where the OS allows it, and wiped with
/// `OPENSSL_cleanse` (which the compiler may not optimise away, unlike a plain memset)
/// before being freed in deinit. Dropping the last reference is how a key is destroyed.
///
/// The contents never change after init, so sharing across threads is safe: hence the
/// `@unchecked Sendable`. There is deliberately no `==` (it would invite non-constant-time
/// comparisons) and `description` never shows the bytes.
public final class SecureBytes: @unchecked Sendable {
    public let count: Int
    private let storage: UnsafeMutableRawPointer
    private let allocatedBytes: Int
    /// False when `mlock` was refused (RLIMIT_MEMLOCK exhausted, say): the key still works,
    /// it just could be swapped. Surfaced so `inkyfs doctor` can warn about it.
    public let isLocked: Bool

    /// Fills `count` fresh bytes through `initializer`, which writes straight into locked
    /// memory, so derived keys never pass through an ordinary buffer first.
    /// If it throws, the partial contents are wiped before the error propagates.
    public init<E: Error>(
        count: Int,
        initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) {
        precondition(count >= 0, "SecureBytes count must not be negative")
        // Whole pages: mlock and madvise work on pages, and a key must not share its page
        // with unrelated heap data that would be unlocked and dumped along with it.
        let page = Self.pageSize
        allocatedBytes = max(page, (count + page - 1) / page * page)
        storage = UnsafeMutableRawPointer.allocate(byteCount: allocatedBytes, alignment: page)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: allocatedBytes)
        isLocked = mlock(storage, allocatedBytes) == 0
        Self.excludeFromCoreDumps(storage, allocatedBytes)
        self.count = count
        Self.live.add(1, ordering: .relaxed)
        try initializer(UnsafeMutableRawBufferPointer(start: storage, count: count))
    }

    /// How many key buffers exist right now. Each is cleansed when it goes, so 0 after a
    /// lock means no key byte is left in this process (the daemon's debug report shows it).
    public static var liveCount: Int { live.load(ordering: .relaxed) }
    private static let live = Atomic<Int>(0)

    /// Copies `bytes` in. Wiping the caller's array is the caller's business (and, for
    /// a Swift array, only best effort: earlier copies may exist).
    public convenience init(copying bytes: [UInt8]) {
        self.init(count: bytes.count) { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.copyBytes(from: bytes)
        }
    }

    /// `count` bytes from the OpenSSL CSPRNG, e.g. a fresh vault key.
    public convenience init(randomCount count: Int) throws(CryptoError) {
        try self.init(count: count) { (buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) in
            try RandomBytes.fill(buffer)
        }
    }

    deinit {
        Self.live.subtract(1, ordering: .relaxed)
        OPENSSL_cleanse(storage, allocatedBytes)
        if isLocked { munlock(storage, allocatedBytes) }
        storage.deallocate()
    }

    /// Read access for the duration of `body`; do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// Constant-time comparison (CRYPTO_memcmp), for checking a derived key against a
    /// stored one without leaking how many leading bytes matched.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return count == 0 || CRYPTO_memcmp(storage, other.storage, count) == 0
    }

    private static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()

    private static func excludeFromCoreDumps(_ pointer: UnsafeMutableRawPointer, _ length: Int) {
        #if os(Linux)
        _ = madvise(pointer, length, MADV_DONTDUMP)
        #endif
    }
}

extension SecureBytes: CustomStringConvertible {
    public var description: String { "SecureBytes(\(count) bytes)" }
}
