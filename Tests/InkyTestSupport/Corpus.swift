import Foundation
import XCTest

/// Where the shared test material lives: `../shared/corpus` beside the checkout.
public enum Corpus {
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// `INKYFS_TEST_CORPUS` points elsewhere (a folder that does not exist runs the suite as a
    /// checkout without `../shared` would: every corpus test must then skip, saying why).
    public static let root = ProcessInfo.processInfo.environment["INKYFS_TEST_CORPUS"].map { URL(fileURLWithPath: $0) }
        ?? packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")

    /// Skips the test, saying why, when the shared corpus (or `relative` in it) is not there.
    public static func skipUnlessPresent(_ relative: String = "") throws {
        let path = relative.isEmpty ? root.path : path(relative)
        guard FileManager.default.fileExists(atPath: path) else {
            throw XCTSkip("the shared corpus is missing (\(path)): put ../shared beside the checkout to run this test")
        }
    }
    public static let fixtures = packageRoot.appendingPathComponent("Fixtures/Library")

    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
    public static func fixture(_ relative: String) -> String { fixtures.appendingPathComponent(relative).path }

    /// Files on which libarchive 3.6.2 itself crashes or never returns (corpus MANIFEST,
    /// "Must-know findings"). They must never be opened in the test process; the mount
    /// reads them in isolated workers.
    public static let knownHostile: Set<String> = [
        "libarchive-tests/test_read_format_rar5_data_ready_pointer_leak.rar",
        "libarchive-tests/test_read_format_rar5_dirdata.rar",
        "libarchive-tests/test_read_format_rar5_bad_window_sz_in_mltarc_file.rar",
        "rarfile-tests/rar5-dups.rar",
        "rarfile-tests/rar5-evil-symlink-traversal.rar",
    ]

    /// `manifest.json` entries.
    public struct Entry: Decodable, Sendable {
        public let path: String
        public let size: Int
        public let expected: Expected
        let libarchive: Observed

        /// The format libarchive 3.6.2 reported, nil when it found none.
        public var libarchiveFormat: String? { libarchive.format }

        enum CodingKeys: String, CodingKey {
            case path, size, expected
            case libarchive = "libarchive_3_6_2"
        }
    }

    struct Observed: Decodable, Sendable {
        let format: String?
    }

    public struct Expected: Decodable, Sendable {
        public let status: String
        public let pages: [ExpectedPage]
    }

    public struct ExpectedPage: Decodable, Sendable {
        public let entry: String
        public let sha256: String?
        public let size: Int?
    }

    public static let manifest: [Entry] = {
        struct File: Decodable { let files: [Entry] }
        let url = root.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode(File.self, from: data).files) ?? []
    }()
}
