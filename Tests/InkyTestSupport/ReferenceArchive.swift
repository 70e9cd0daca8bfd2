import Foundation

/// An archive's members as programs that are not inkyfs read them, so a test compares what the
/// mount serves with an independent oracle rather than with inkyfs's own reader: Python's
/// `zipfile` for ZIPs and `tarfile` for TARs (plain, gzip, bzip2, xz), 7-Zip (`7z x -so`) for 7z, and bsdtar for RAR (no
/// RAR decoder other than libarchive's is installed here; inkyfs reads RAR4 with libunarr, so for
/// RAR4 libarchive is a second implementation).
public enum ReferenceArchive {
    public enum Kind: String { case zip, tar, sevenZip, rar }

    /// The container kind by its magic bytes (a `.cbr` that is really a ZIP is a ZIP), nil for
    /// anything else.
    public static func kind(of archive: String) -> Kind? {
        guard let handle = FileHandle(forReadingAtPath: archive) else { return nil }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if head.starts(with: [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return .sevenZip }
        if head.starts(with: Array("Rar!\u{1A}\u{07}".utf8)) { return .rar }
        if head.count >= 262, head[257..<262].elementsEqual("ustar".utf8) { return .tar }
        // A compressed tar (CBT): Python's tarfile opens gzip, bzip2 and xz itself.
        if head.starts(with: [0x1F, 0x8B]) || head.starts(with: Array("BZh".utf8)) || head.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) {
            return .tar
        }
        return nil
    }

    /// The bytes of member `entry` of `archive`, as the reference program for its kind extracts them.
    public static func member(_ entry: String, of archive: String) throws -> [UInt8] {
        switch kind(of: archive) {
        case .zip:
            return try bytes(of: "/usr/bin/python3", ["-c", """
                import sys, zipfile
                sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))
                """, archive, entry])
        case .tar:
            return try bytes(of: "/usr/bin/python3", ["-c", """
                import sys, tarfile
                with tarfile.open(sys.argv[1]) as t:
                    sys.stdout.buffer.write(t.extractfile(sys.argv[2]).read())
                """, archive, entry])
        case .sevenZip:
            // -spd: the name is a name, not a wildcard.
            return try bytes(of: "/usr/bin/7z", ["x", "-so", "-spd", "-bd", "--", archive, entry])
        case .rar:
            return try bytes(of: "/usr/bin/bsdtar", ["-xOf", archive, entry])
        case nil:
            throw Failure(description: "\(archive): not a ZIP, TAR, 7z or RAR by its magic bytes")
        }
    }

    /// Every member of a ZIP, name → bytes, as Python's `zipfile` reads it (checking each CRC).
    public static func zipMembers(_ archive: String) throws -> [String: [UInt8]] {
        let json = try bytes(of: "/usr/bin/python3", ["-c", """
            import base64, json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            json.dump({i.filename: base64.b64encode(z.read(i)).decode() for i in z.infolist() if not i.is_dir()}, sys.stdout)
            """, archive])
        let object = try JSONSerialization.jsonObject(with: Data(json)) as? [String: String] ?? [:]
        return object.compactMapValues { Data(base64Encoded: $0).map { [UInt8]($0) } }
    }

    /// A program's whole stdout as bytes; throws with its stderr when it exits non-zero or says nothing.
    public static func bytes(of executable: String, _ arguments: [String]) throws -> [UInt8] {
        let (status, out, errorText) = try CommandRunner.captureBytes(executable, arguments)
        guard status == 0 else {
            throw Failure(description: "\(executable) \(arguments.suffix(2).joined(separator: " ")) exited \(status): \(errorText)")
        }
        return out
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }
}
