internal import CLinux

/// Calls glibc has that Swift's Glibc module hides (GNU extensions, <sys/xattr.h>), for the other
/// modules of the package: the CLinux shim is imported by this module alone.
package enum HiddenCalls {
    /// accept4(2) with SOCK_CLOEXEC: a connection no spawned process inherits. -1 and errno as accept.
    package static func acceptClosingOnExec(_ listener: Int32) -> Int32 { inky_accept_cloexec(listener) }

    /// getxattr(2) into `buffer`: the value's length, or -1 and errno.
    package static func extendedAttribute(_ path: String, _ name: String, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        inky_getxattr(path, name, buffer.baseAddress, UInt(buffer.count))
    }
}
