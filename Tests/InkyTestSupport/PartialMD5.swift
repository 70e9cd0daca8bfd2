import Foundation

/// KOReader's partial MD5 computed by Python's hashlib, as KOReader's own util.partialMD5 does
/// it (samples of 1 KiB at 0 and at 1024 << 2i for i = 0...10, stopping at the first empty one):
/// an implementation that shares no code with inkyfs's, for the tests to check it against.
public enum PartialMD5 {
    public static let script = """
        import hashlib, sys
        for path in sys.argv[1:]:
            digest = hashlib.md5()
            with open(path, "rb") as f:
                for i in range(-1, 11):
                    f.seek(0 if i < 0 else 1024 << (2 * i))
                    sample = f.read(1024)
                    if not sample:
                        break
                    digest.update(sample)
            print(digest.hexdigest())
        """

    /// One digest per path, in order.
    public static func python(_ paths: [String]) throws -> [String] {
        let result = try CommandRunner.capture("/usr/bin/python3", ["-c", script] + paths)
        guard result.status == 0 else { throw Failure(description: "python3 failed: \(result.stderr)") }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The golden digest of the CBZ served for Fixtures' `Moon Tales 02.cbt` when its mtime is
    /// `goldenModified`: the CBZ's bytes must not change across releases (KOReader knows a comic
    /// by it). Derived by `script` over the CBZ read through a real `--as cbz` mount.
    public static let goldenCBZ = "6ccad63a2285005fd54771cd92f76853"
    public static let goldenModified: TimeInterval = 1_600_000_000
    public static let goldenComic = "Moon Tales/Moon Tales 02.cbt"

    /// A library folder holding the golden comic alone, with its mtime set.
    public static func goldenLibrary() throws -> URL {
        let library = ArchiveMaker.temporaryDirectory("golden-lib", removedAtExit: true)
        let comic = library.appendingPathComponent("Moon Tales 02.cbt")
        try FileManager.default.copyItem(atPath: Corpus.fixture(goldenComic), toPath: comic.path)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: goldenModified)], ofItemAtPath: comic.path)
        return library
    }
}
