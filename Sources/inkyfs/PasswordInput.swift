import ArgumentParser
import Foundation
import InkyCore
import InkyVault

/// Reads a vault password: from the terminal with echo off, or from stdin or `--password-file`
/// when not on a terminal; never from argv or the environment (both are visible to other users
/// through /proc). Bytes go straight from read(2) into locked memory: no String, Array or Data
/// copy of the password exists that could not be wiped.
enum PasswordInput {
    static let maxLength = 1024

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One password. `prompt` is shown only on a terminal.
    static func read(prompt: String, file: String?) throws -> SecureBytes {
        if let file {
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Failure(description: "cannot open \(file): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            return try readLine(fd)
        }
        guard isatty(STDIN_FILENO) == 1 else { return try readLine(STDIN_FILENO) }
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return try readLine(STDIN_FILENO) }
        defer { close(tty) }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        var saved = termios()
        tcgetattr(tty, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(tty, TCSAFLUSH, &silent)
        defer {
            tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        return try readLine(tty)
    }

    /// The first `count` lines of a file, one password each.
    static func lines(of file: String, count: Int) throws -> [SecureBytes] {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot open \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return try (0..<count).map { _ in try readLine(fd) }
    }

    /// A new password, asked twice on a terminal.
    static func readNew(file: String?) throws -> SecureBytes {
        let first = try read(prompt: "New vault password: ", file: file)
        guard file == nil, isatty(STDIN_FILENO) == 1 else { return first }
        let second = try read(prompt: "Repeat it: ", file: nil)
        guard first.constantTimeEquals(second) else { throw Failure(description: "the passwords differ; nothing was changed") }
        return first
    }

    /// Reads up to a newline (not kept) straight into locked memory.
    private static func readLine(_ fd: Int32) throws -> SecureBytes {
        var length = 0
        var tooLong = false
        let scratch = try SecureBytes(count: maxLength) { (buffer: UnsafeMutableRawBufferPointer) throws(Failure) in
            var byte: UInt8 = 0
            while true {
                let got = Syscall.retrying { Glibc.read(fd, &byte, 1) }
                if got <= 0 || byte == 0x0A { break }
                guard length < buffer.count else { tooLong = true; break }
                buffer[length] = byte
                length += 1
            }
            byte = 0
            if length > 0 && buffer[length - 1] == 0x0D { length -= 1 } // CRLF from a file written on Windows
        }
        if tooLong { throw Failure(description: "the password is longer than \(maxLength) bytes") }
        guard length > 0 else { throw Failure(description: "no password given") }
        return scratch.withUnsafeBytes { all in SecureBytes(count: length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[0..<length])) } }
    }
}
