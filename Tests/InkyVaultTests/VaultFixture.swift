import Foundation
@testable import InkyVault

/// The known-answer vault in Fixtures/Vault: everything that would be random (master key,
/// salt, nonces, file ids, object names) comes from a seeded stream, and the clock is
/// fixed, so generating it twice gives the same bytes. Anything that changes those bytes
/// changes the format, and `VaultFixtureTests` says so.
///
/// To regenerate after a deliberate format change:
///     INKYFS_REGENERATE_VAULT_FIXTURE=1 swift test --filter VaultFixtureTests
enum VaultFixture {
    static let password = "inkyfs-test-vault"
    static let seed = Array("inkyfs Fixtures/Vault, format v1".utf8)
    /// 2020-01-01T00:00:00Z, the date of every generated fixture in this repository.
    static let dateAdded = Date(timeIntervalSince1970: 1_577_836_800)
    /// Lower than the default so the test (and the Python check) stay fast; the iteration
    /// count is read from the file like any other.
    static let kdf = VaultKDF.pbkdf2SHA256(iterations: 10_000)

    struct Comic {
        let sourceName: String
        let displayPath: String
        let content: [UInt8]
        /// Pinned independently (Python: hashlib.sha256 of the same bytes).
        let sha256: String
    }

    static let comics = [
        Comic(sourceName: "Ten Bytes.cbz", displayPath: "Tiny/Ten Bytes.cbz", content: Array("0123456789".utf8),
              sha256: "84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882"),
        // 70,000 bytes = one full 64 KiB chunk and a 4,464-byte last chunk.
        Comic(sourceName: "Issue 1.cbz", displayPath: "Series/Issue 1.cbz",
              content: (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 8)) },
              sha256: "f0beda104aea1f6824c89affd6554217daca358273a29d59df2133be67fa3039"),
    ]

    static var environment: VaultEnvironment {
        VaultEnvironment(randomness: .deterministic(seed: seed), now: { dateAdded })
    }

    /// Builds the fixture vault in `vault` (which must not exist), using `scratch` for the
    /// source files. One environment for the whole run: one continuous random stream.
    static func generate(at vault: String, scratch: String) throws {
        let environment = self.environment
        try Vault.create(at: vault, password: SecureBytes(copying: Array(password.utf8)), kdf: kdf,
                         environment: environment)
        let unlocked = try Vault.unlock(at: vault, password: SecureBytes(copying: Array(password.utf8)),
                                        environment: environment)
        defer { unlocked.lock() }
        for comic in comics {
            let source = scratch + "/" + comic.sourceName
            try Data(comic.content).write(to: URL(fileURLWithPath: source))
            try unlocked.add(file: source, displayPath: comic.displayPath)
        }
    }

    /// Fixtures/Vault in this checkout.
    static var committedDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/Vault").path
    }

    /// Regular files of a vault directory, by relative path (README.md is documentation,
    /// not part of the vault).
    static func files(in directory: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return result }
        for case let relative as String in walker {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  relative != "README.md" else { continue }
            result[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return result
    }
}
