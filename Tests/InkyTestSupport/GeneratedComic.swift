import Foundation

/// Comics of generated pages in every container inkyfs reads, written by real tools
/// (`Tests/Tools/make-comic.py`: Python's zipfile and tarfile, p7zip's `7z`, and a stored RAR5
/// writer, as Debian has no `rar`), members in the order given.
public enum GeneratedComic {
    public enum Container: String, CaseIterable, Sendable {
        case zipStored = "zip-stored", zipDeflated = "zip-deflated", rar5, sevenZipSolid = "7z-solid"
        case sevenZipCopy = "7z-copy", tar, folder

        public var fileExtension: String {
            switch self {
            case .zipStored, .zipDeflated: "cbz"
            case .rar5: "cbr"
            case .sevenZipSolid, .sevenZipCopy: "cb7"
            case .tar: "cbt"
            case .folder: ""
            }
        }

        /// The comic's file (or folder) name in a library, and the directory the mount shows.
        public func fileName(_ stem: String) -> String { fileExtension.isEmpty ? stem : "\(stem).\(fileExtension)" }
    }

    /// A comic to write: its members (name → bytes, in archive order), container and path.
    public struct Job {
        public let members: [(String, [UInt8])]
        public let container: Container
        public let url: URL

        public init(_ members: [(String, [UInt8])], as container: Container, to url: URL) {
            self.members = members
            self.container = container
            self.url = url
        }
    }

    /// Writes `members` (name → bytes, in archive order) as `container` at `url`.
    public static func write(_ members: [(String, [UInt8])], as container: Container, to url: URL) throws {
        try write([Job(members, as: container, to: url)])
    }

    /// Writes many comics with one run of the tool.
    public static func write(_ jobs: [Job]) throws {
        let scratch = ArchiveMaker.temporaryDirectory("comic-jobs")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Bytes travel as latin-1 text: one code point per byte, which JSON carries exactly.
        let list: [[String: Any]] = jobs.map { job in
            ["kind": job.container.rawValue, "out": job.url.path,
             "members": job.members.map { [$0.0, String(String.UnicodeScalarView($0.1.map { Unicode.Scalar($0) }))] }]
        }
        let file = scratch.appendingPathComponent("jobs.json")
        try JSONSerialization.data(withJSONObject: list).write(to: file)
        let tool = Corpus.packageRoot.appendingPathComponent("Tests/Tools/make-comic.py")
        try ArchiveMaker.run("/usr/bin/python3", [tool.path, file.path])
    }

    /// Page `number`'s bytes: its number and a newline, so the pages of a comic read in order
    /// with `cat` are the numbers in order, one a line, and a page out of place shows which.
    public static func page(_ number: Int) -> [UInt8] { Array("\(number)\n".utf8) }

    /// How a sequence's numbers are written.
    public enum Padding: String, CaseIterable, Sendable {
        /// `1.png` … `5000.png`
        case unpadded
        /// `0001.png` … `5000.png`, to the width of the largest
        case padded
        /// Each number padded to a width of its own (0 to 3 extra zeros), cycling.
        case mixed

        public func name(_ number: Int, of count: Int, prefix: String = "", ext: String = "png") -> String {
            let digits: String
            switch self {
            case .unpadded: digits = String(number)
            case .padded: digits = String(repeating: "0", count: String(count).count - String(number).count) + String(number)
            case .mixed: digits = String(repeating: "0", count: number % 4) + String(number)
            }
            return "\(prefix)\(digits).\(ext)"
        }
    }

    /// Pages 1...count named with `padding`, in a shuffled order fixed by `seed`.
    public static func sequence(_ count: Int, padding: Padding, prefix: String = "", seed: UInt64) -> [(String, [UInt8])] {
        var generator = SeededGenerator(seed: seed)
        return (1...count).map { (padding.name($0, of: count, prefix: prefix), page($0)) }.shuffled(using: &generator)
    }
}

/// xorshift64: the same shuffle on every run, so a failure can be reproduced.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed | 1 }

    public mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
