/// scrypt cost settings, stored beside each vault's salt so a vault made today still opens
/// after the defaults are raised.
public struct ScryptParameters: Codable, Sendable, Equatable {
    /// CPU/memory cost N: a power of two greater than 1. Memory use is about 128·r·N bytes.
    public var n: UInt64
    /// Block size r.
    public var r: UInt64
    /// Parallelisation p (OpenSSL computes the lanes one after another, so time grows with p).
    public var p: UInt64
    /// Upper bound on the memory scrypt may use, in bytes: derivation fails rather than
    /// exceeding it. Parameters read from a vault header are attacker-controlled, so the
    /// vault should clamp this (and N) before use, or a forged header could ask for
    /// gigabytes.
    public var maxMemory: UInt64

    public init(n: UInt64, r: UInt64, p: UInt64, maxMemory: UInt64 = 64 << 20) {
        self.n = n
        self.r = r
        self.p = p
        self.maxMemory = maxMemory
    }

    /// N = 2^15, r = 8, p = 1: 32 MiB of memory and about 0.1 s per unlock on the project's
    /// 2-core x86_64 machine (measured: 88–121 ms with OpenSSL 3.0.22, see PasswordKDF).
    /// That is imperceptible for a person unlocking a vault yet makes each guess of an
    /// offline attacker cost the same memory and time. `maxMemory` is 64 MiB because
    /// OpenSSL needs a little over 128·r·N = 32 MiB and its own default ceiling is
    /// exactly 32 MiB, which would reject these very parameters.
    public static let `default` = ScryptParameters(n: 1 << 15, r: 8, p: 1, maxMemory: 64 << 20)
}
