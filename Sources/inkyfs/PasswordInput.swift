import ArgumentParser
import Foundation
import InkyCore
import InkyVault
import InkyWorker

/// Reads a vault password: from the terminal with echo off, or from stdin or `--password-file`
/// when not on a terminal; never from argv or the environment (both are visible to other users
/// through /proc). Bytes go straight from read(2) into locked memory: no String, Array or Data
/// copy of the password exists that could not be wiped.
enum PasswordInput {
    static let maxLength = 1024

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One password. `prompt` is shown only on a terminal. The process is made non-dumpable with
    /// no core files first: a half-typed password is in its memory.
    static func read(prompt: String, file: String?) throws -> SecureBytes {
        ProcessHardening.makeNonDumpable()
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
        return try PasswordTerminal.withoutEcho(tty, prompt: prompt) { try readLine(tty) }
    }

    /// The first `count` lines of a file, one password each.
    static func lines(of file: String, count: Int) throws -> [SecureBytes] {
        ProcessHardening.makeNonDumpable()
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot open \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return try (0..<count).map { _ in try readLine(fd) }
    }

    /// Passwords shorter than this many bytes are accepted with a warning.
    static let shortLength = 10

    /// A new password for the vault at `vault`, asked twice on a terminal; a very short one is
    /// accepted with a warning (the vault is only as strong as it).
    static func readNew(file: String?, vault: String) throws -> SecureBytes {
        try readNew(file: file, prompt: "New password for the vault at \(vault): ", exposure: "anyone who copies the vault folder")
    }

    /// A new password, asked twice on a terminal (once from a file or a pipe); one shorter than
    /// `shortLength` is accepted with a warning naming who could guess it (`exposure`).
    static func readNew(file: String?, prompt: String, exposure: String) throws -> SecureBytes {
        let first = try read(prompt: prompt, file: file)
        if first.count < shortLength {
            FileHandle.standardError.write(Data(("inkyfs: warning: a password of \(first.count) characters is quick to guess for"
                + " \(exposure); use \(shortLength) or more, or several words\n").utf8))
        }
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
