import Foundation

/// A POSIX error number as a Swift error (Foundation's POSIXErrorCode is no `Error` on Linux).
/// This is what the filesystem layer answers the kernel with.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The current `errno`, defaulting to EIO if it was somehow 0.
    public static var current: Errno { Errno(errno == 0 ? Foundation.EIO : errno) }

    public static let ENOENT = Errno(Foundation.ENOENT)
    public static let ENOTDIR = Errno(Foundation.ENOTDIR)
    public static let EISDIR = Errno(Foundation.EISDIR)
    public static let ESTALE = Errno(Foundation.ESTALE)
    public static let EIO = Errno(Foundation.EIO)
    public static let EBADF = Errno(Foundation.EBADF)
    public static let ENODATA = Errno(Foundation.ENODATA)
    public static let EOPNOTSUPP = Errno(Foundation.EOPNOTSUPP)
    public static let ERANGE = Errno(Foundation.ERANGE)
    public static let EROFS = Errno(Foundation.EROFS)
    public static let EACCES = Errno(Foundation.EACCES)
    public static let ENOSYS = Errno(Foundation.ENOSYS)
    public static let EINVAL = Errno(Foundation.EINVAL)
    public static let ELOOP = Errno(Foundation.ELOOP)

    public var description: String { String(cString: strerror(code)) }
}

extension ComicError {
    /// What the kernel is answered when serving a comic's file fails: the one place that maps
    /// comic errors to error numbers. An archive replaced or deleted since it was listed is what
    /// a reader expects of a file that changed or vanished (ESTALE makes the kernel look the name
    /// up again); a file the daemon may not read is EACCES; everything else, a damaged archive
    /// included, is an I/O error of that file.
    public var errno: Errno {
        switch self {
        case .io(_, ESTALE, _): .ESTALE
        case .io(_, ENOENT, _): .ENOENT
        case .io(_, EACCES, _), .io(_, EPERM, _): .EACCES
        default: .EIO
        }
    }
}
