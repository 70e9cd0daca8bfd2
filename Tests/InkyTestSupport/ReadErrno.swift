import Foundation

/// The errno that reading a whole file through the kernel ends with (open, then read(2) to the
/// end), 0 when it all read. Foundation's readers wrap the errno in an error whose shape differs
/// between platforms and versions; a test that promises EIO or ENOENT compares this number.
public func readErrno(_ path: String) -> Int32 {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return errno }
    defer { close(fd) }
    return readErrno(descriptor: fd)
}

/// The errno that reading an open descriptor to its end ends with, 0 when it all read.
public func readErrno(descriptor fd: Int32) -> Int32 {
    var buffer = [UInt8](repeating: 0, count: 1 << 17)
    while true {
        let got = read(fd, &buffer, buffer.count)
        if got == 0 { return 0 }
        if got < 0 {
            if errno == EINTR { continue }
            return errno
        }
    }
}

/// An errno with its name, for failure messages ("5 EIO" reads better than "5").
public func errnoName(_ code: Int32) -> String {
    code == 0 ? "0 (no error)" : "\(code) \(String(cString: strerror(code)))"
}
