import Foundation

/// Builds test archives on the fly with Python's zipfile/tarfile and the 7z tool, including
/// hostile ones no well-behaved archiver writes (traversal names, lying sizes, bombs).
public enum ArchiveMaker {
    /// A scratch folder removed by the caller (`try? FileManager.default.removeItem`). One still
    /// empty when the test process exits goes then (`ScratchFolders`): XCTest makes every test
    /// case of the bundle before it filters, so a folder made as a property's initial value is
    /// made for tests that never run, and their tearDown never removes it. Each lane of a suite
    /// run left hundreds in /tmp.
    /// `removedAtExit`: gone whole at the exit, for one a test may read after what uses it stopped.
    public static func temporaryDirectory(_ label: String = "inkyfs-test", removedAtExit: Bool = false) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        ScratchFolders.made(url.path, removedWhole: removedAtExit)
        return url
    }

    /// Deterministic, incompressible bytes (xorshift): a stand-in for JPEG data.
    public static func noise(count: Int, seed: UInt64) -> [UInt8] {
        // Odd and different for every seed (xorshift needs a state other than 0): `seed | 1`
        // gave seeds 4 and 5 the same bytes, and a test comparing them could not fail.
        var state = seed &* 2 &+ 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// A ZIP with the given members (name → bytes), in this order.
    /// `compression`: "stored" or "deflated".
    public static func zip(at url: URL, members: [(String, [UInt8])], compression: String = "stored", password: String? = nil) throws {
        try zip(at: url, members: members.map { ($0.0, $0.1, deflated: compression != "stored") })
    }

    /// A ZIP written by Python's zipfile with `members` in this order, each stored or deflated as
    /// its flag says (an archive of both kinds is as real ones are).
    public static func zip(at url: URL, members: [(String, [UInt8], deflated: Bool)]) throws {
        let dir = temporaryDirectory("members")
        defer { try? FileManager.default.removeItem(at: dir) }
        var list: [[String]] = []
        for (index, member) in members.enumerated() {
            let file = dir.appendingPathComponent("m\(index)")
            try Data(member.1).write(to: file)
            list.append([member.0, file.path, member.deflated ? "deflated" : "stored"])
        }
        let manifest = dir.appendingPathComponent("list.json")
        try JSONSerialization.data(withJSONObject: list).write(to: manifest)
        try python("""
            import json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                for name, path, how in json.load(open(sys.argv[2])):
                    info = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED if how == "deflated" else zipfile.ZIP_STORED
                    z.writestr(info, open(path, "rb").read())
            """, arguments: [url.path, manifest.path])
    }

    /// Runs a Python 3 program; throws with its stderr when it fails.
    public static func python(_ program: String, arguments: [String]) throws {
        try run("/usr/bin/python3", ["-c", program] + arguments)
    }

    /// Runs a tool; throws with its stderr when it fails.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws -> String {
        let result = try CommandRunner.capture(executable, arguments, in: directory)
        guard result.status == 0 else {
            throw ToolFailure(command: ([executable] + arguments).joined(separator: " "), status: result.status, stderr: result.stderr)
        }
        return result.stdout
    }

    public struct ToolFailure: Error, CustomStringConvertible {
        public let command: String
        public let status: Int32
        public let stderr: String
        public var description: String { "\(command) exited \(status): \(stderr)" }
    }
}
