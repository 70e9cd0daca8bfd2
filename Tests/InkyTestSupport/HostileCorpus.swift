import Foundation

/// The generated hostile comics (`scripts/dev/make-hostile-corpus`): bombs, traversal names, links
/// and devices, odd names, damaged, encrypted and misnamed archives. Built once per version of
/// the generator (`generatorVersion`) into `.cache/` (git-ignored; the 5 GiB entry alone costs
/// ~15 s of deflate).
public enum HostileCorpus {
    /// Every traversal, link and absolute name in the corpus aims here.
    public static let canary = "/tmp/inkyfs-hostile-canary"

    public struct Manifest: Decodable {
        public let canary: String
        /// Path under `comics/` (latin-1 text of its bytes) → what may be shown.
        public let comics: [String: Expectation]
    }

    public struct Expectation: Decodable {
        /// "error": only ERROR.txt; "any": ERROR.txt or safely served pages.
        public let expect: String
        public let why: String
        public let contains: [String]?
        public let pages: [String]?
        /// Pages that must fail with EIO (bombs that look fine on paper).
        public let eio: [String]?
    }

    /// The folder holding `comics/` and `manifest.json`, generated if missing.
    public static func build() throws -> URL {
        let script = Corpus.packageRoot.appendingPathComponent("scripts/dev/make-hostile-corpus")
        let folder = Corpus.packageRoot.appendingPathComponent(".cache/hostile-corpus-\(try generatorVersion())")
        if !FileManager.default.fileExists(atPath: folder.appendingPathComponent("manifest.json").path) {
            try CacheEntry.make(folder) { part in _ = try ArchiveMaker.run("/usr/bin/python3", [script.path, part.path, canary]) }
        }
        return folder
    }

    /// The generator's version: a SHA-256 over the script and every file of the package it
    /// imports, `hostilecorpus/` (sorted, each by name and content), so a change in any module
    /// builds the corpus anew, not only a change in the script. `dev`: the folder holding both.
    public static func generatorVersion(in dev: URL = Corpus.packageRoot.appendingPathComponent("scripts/dev")) throws -> String {
        let package = dev.appendingPathComponent("hostilecorpus")
        // Files only: the __pycache__ folder Python leaves there changes with every run.
        let modules = try FileManager.default.contentsOfDirectory(atPath: package.path).sorted().filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: package.appendingPathComponent(name).path, isDirectory: &isFolder) && !isFolder.boolValue
        }
        var summary = ""
        for name in ["make-hostile-corpus"] + modules.map({ "hostilecorpus/" + $0 }) {
            summary += "\(name) \(Digest.sha256Hex(try readFile(dev.appendingPathComponent(name).path)))\n"
        }
        return String(Digest.sha256Hex(Array(summary.utf8)).prefix(12))
    }

    public static func manifest(in folder: URL) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }
}

/// What `scripts/dev/read-every-file` saw under a mount. Names are latin-1 text of their bytes.
public struct TreeReadReport: Decodable {
    public struct File: Decodable {
        public let path: String
        public let status: String
        public let error: String?
        public let sha256: String?
        public let size: Int?
        public let seconds: Double?
        public let forbidden: [String]?
        public let text: String?
        /// A symlink's target, as `readlink` gives it.
        public let target: String?
    }

    public struct Failure: Decodable {
        public let after: String?
        public let path: String?
        public let error: String
    }

    public let files: [File]
    public let dirs: [String: [String]]
    public let dir_errors: [Failure]
    public let root_failures: [Failure]
    public let batches: Int
    public let elapsed: Double
    public let peak_rss_kib: Int

    /// Reads every file under `root`, each read in a child process with a deadline.
    public static func read(_ root: URL, daemon: Int32, timeout: Int = 30, forbid: [String]) throws -> TreeReadReport {
        let script = Corpus.packageRoot.appendingPathComponent("scripts/dev/read-every-file").path
        let output = try ArchiveMaker.run("/usr/bin/python3", [script, root.path, "--pid", "\(daemon)", "--timeout", "\(timeout)"]
                                          + forbid.flatMap { ["--forbid", $0] })
        return try JSONDecoder().decode(TreeReadReport.self, from: Data(output.utf8))
    }

    public var filesByPath: [String: File] { Dictionary(files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first }) }
}

extension String {
    /// The bytes a latin-1 report name stands for.
    public var latin1Bytes: [UInt8] { unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } }

    /// Latin-1 text of some bytes, as the report spells names.
    public init(latin1 bytes: [UInt8]) { self = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })) }
}
