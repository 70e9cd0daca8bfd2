import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CLinux
import InkyCore

/// A worker's filesystem confinement (Landlock), applied before the seccomp filter: from then on
/// it may read files and list folders beneath `readable` only (the library, the vault's objects),
/// whatever its uid, even root's. A parser taken over by a hostile archive then cannot open
/// `/etc/shadow`, a user's files, or `/proc/<daemon>/mem` (Landlock also forbids ptrace access to
/// processes outside the worker's domain), though seccomp still lets it call `openat` read-only.
public enum Landlock {
    public enum Outcome: Equatable, Sendable {
        /// Confined, with this Landlock ABI.
        case confined(abi: Int32)
        /// The kernel has no Landlock: seccomp alone.
        case unavailable
        case failed(Errno)
    }

    /// What a worker reads of the system after it starts: shared libraries and data (`/usr`, `/lib`
    /// is a link into it), the loader's cache, and ImageMagick's configuration, which libvips'
    /// magick loader reads (with its coder modules) at the first page of a format it handles.
    /// Nothing there is private; `/etc` as a whole, home folders and `/proc` stay closed.
    public static var systemReadable: [String] {
        let magick = ((try? FileManager.default.contentsOfDirectory(atPath: "/etc")) ?? [])
            .filter { $0.hasPrefix("ImageMagick") }.map { "/etc/" + $0 }
        return ["/usr", "/etc/ld.so.cache"] + magick
    }

    /// Confines this process (every thread it starts later) to reading beneath `readable` and
    /// `systemReadable`. Paths that cannot be opened are left out (then nothing beneath them can be read).
    public static func confine(readable: [String]) -> Outcome {
        let folders = (readable + systemReadable).map { open($0, 0o10_000_000 /* O_PATH */ | O_CLOEXEC) }.filter { $0 >= 0 }
        defer { folders.forEach { close($0) } }
        let result = folders.withUnsafeBufferPointer { inky_landlock_confine($0.baseAddress, Int32($0.count)) }
        if result > 0 { return .confined(abi: result) }
        return result == 0 ? .unavailable : .failed(Errno(-result))
    }
}
