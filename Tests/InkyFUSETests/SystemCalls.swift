import Foundation
import InkyTestSupport

/// System calls made directly, so a test sees the exact errno the kernel returns.
enum SystemCall {
    /// The errno of a call that returns -1 on failure; 0 when it succeeded.
    static func errnoOf(_ call: () -> Int32) -> Int32 {
        errno = 0
        return call() == -1 ? errno : 0
    }

    static func errnoOf(_ call: () -> Int) -> Int32 {
        errno = 0
        return call() == -1 ? errno : 0
    }

    /// The errno of open(2); a descriptor it returns is closed at once.
    static func openErrno(_ path: String, _ flags: Int32) -> Int32 {
        errno = 0
        let fd = open(path, flags, 0o644)
        if fd >= 0 {
            close(fd)
            return 0
        }
        return errno
    }

    // Glibc's Swift module leaves out <sys/xattr.h> and the GNU fallocate: looked up by name.
    private static func symbol<Function>(_ name: String, _ type: Function.Type) -> Function {
        unsafeBitCast(dlsym(nil, name)!, to: type)
    }

    static let setxattr = symbol("setxattr", (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32).self)
    static let lsetxattr = symbol("lsetxattr", (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32).self)
    static let fsetxattr = symbol("fsetxattr", (@convention(c) (Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32).self)
    static let removexattr = symbol("removexattr", (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32).self)
    static let fremovexattr = symbol("fremovexattr", (@convention(c) (Int32, UnsafePointer<CChar>) -> Int32).self)
    static let getxattr = symbol("getxattr", (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int).self)
    static let listxattr = symbol("listxattr", (@convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>?, Int) -> Int).self)
    static let fallocate = symbol("fallocate", (@convention(c) (Int32, Int32, Int, Int) -> Int32).self)

    /// getxattr as bytes, or the errno.
    static func extendedAttribute(_ path: String, _ name: String, capacity: Int = 4096) -> Result<[UInt8], ErrorNumber> {
        var buffer = [UInt8](repeating: 0, count: capacity)
        errno = 0
        let got = buffer.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, capacity) }
        return got < 0 ? .failure(ErrorNumber(errno)) : .success(Array(buffer[0..<got]))
    }

    /// listxattr's names, or the errno.
    static func extendedAttributeNames(_ path: String) -> Result<[String], ErrorNumber> {
        var buffer = [CChar](repeating: 0, count: 4096)
        errno = 0
        let got = listxattr(path, &buffer, buffer.count)
        guard got >= 0 else { return .failure(ErrorNumber(errno)) }
        return .success(buffer[0..<got].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) })
    }

    /// `.` and `..` and every other entry of a directory with its d_ino, as readdir(3) gives them.
    static func directoryEntries(_ path: String) -> [(name: String, inode: UInt64)] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var entries: [(String, UInt64)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            entries.append((name, UInt64(entry.pointee.d_ino)))
        }
        return entries
    }

    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }
}

/// An errno as a test failure message reads it.
struct ErrorNumber: Error, Equatable, CustomStringConvertible {
    let code: Int32
    init(_ code: Int32) { self.code = code }
    var description: String { code == 0 ? "success" : "\(String(cString: strerror(code))) (\(code))" }
}

/// Everything a reader can see of a tree: names, kinds, modes, sizes, link counts and content
/// digests (symlinks by target). Two equal snapshots mean nothing visible changed.
enum TreeSnapshot {
    static func of(_ root: String, includeTimes: Bool) -> [String: String] {
        var result: [String: String] = [:]
        func visit(_ relative: String) {
            let path = relative.isEmpty ? root : root + "/" + relative
            guard let info = SystemCall.status(path) else {
                result[relative] = "unreadable: \(ErrorNumber(errno))"
                return
            }
            var line = "mode \(String(info.st_mode, radix: 8)) size \(info.st_size) links \(info.st_nlink) uid \(info.st_uid)"
            if includeTimes { line += " mtime \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) ino \(info.st_ino)" }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                result[relative] = line
                for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                    visit(relative.isEmpty ? name : relative + "/" + name)
                }
            case S_IFLNK:
                result[relative] = line + " -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
            default:
                let digest = (try? readFile(path)).map(Digest.sha256Hex) ?? "unreadable"
                result[relative] = line + " sha256 " + digest
            }
        }
        visit("")
        return result
    }
}
