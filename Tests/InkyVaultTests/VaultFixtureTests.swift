import Foundation
import XCTest
@testable import InkyVault

/// Known answers: the committed Fixtures/Vault opens with the production code, opens with
/// an independent implementation (Python + `cryptography`, written from
/// docs/vault-format.md alone), and is exactly what the generator produces today.
final class VaultFixtureTests: XCTestCase {
    private let fm = FileManager.default
    private var scratches: [TemporaryDirectory] = []

    func testProductionCodeDecryptsTheFixture() throws {
        try decryptWithProductionCode(VaultFixture.committedDirectory)
    }

    func testProductionCodeDecryptsTheVersionOneFixtureAndMigratesItOnWrite() throws {
        let vault = try decryptWithProductionCode(VaultFixture.versionOneDirectory)
        let unlocked = try Vault.unlock(at: vault, password: password(VaultFixture.password), environment: Self.environment(vault))
        defer { unlocked.lock() }
        let source = vault + "-new.cbz"
        try writeBytes(Array("new".utf8), to: source)
        let added = try unlocked.add(file: source, displayPath: "New.cbz")
        XCTAssertEqual(try readBytes(vault + "/manifest.bin")[8..<10], [0, 2], "the manifest is written as version 2")
        XCTAssertEqual(try readBytes(unlocked.objectPath(for: added))[8..<10], [0, 2], "new objects too")
        for entry in try unlocked.entries {
            XCTAssertEqual(try readBytes(unlocked.objectPath(for: entry))[8..<10], [0, 2], "\(entry.displayPath) was migrated")
        }
        XCTAssertEqual(try unlocked.entries.map(\.displayPath), VaultFixture.comics.map(\.displayPath) + ["New.cbz"])
        for (entry, comic) in zip(try unlocked.entries, VaultFixture.comics) {
            XCTAssertEqual(try readAll(try unlocked.reader(for: entry)), comic.content, "\(comic.displayPath) after migration")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault + "/orphans"), [], "nothing left behind")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault + "/objects").count, 3, "the old objects are gone")
    }

    /// Its own rollback records: the fixture's master key is the same in every checkout.
    private static func environment(_ vault: String) -> VaultEnvironment {
        VaultEnvironment(randomness: .system, now: { Date() }, rollbackRecords: VaultRollbackRecords(directory: vault + "-records"))
    }

    /// Opens a copy of `fixture` and checks every comic; returns the copy.
    @discardableResult
    private func decryptWithProductionCode(_ fixture: String) throws -> String {
        // Work on a copy: unlocking creates orphans/ and may move things.
        let scratch = TemporaryDirectory("fixture-copy")
        scratches.append(scratch)
        let vault = scratch.child("vault")
        try fm.copyItem(atPath: fixture, toPath: vault)
        let unlocked = try Vault.unlock(at: vault, password: password(VaultFixture.password), environment: Self.environment(vault))
        defer { unlocked.lock() }
        XCTAssertTrue(unlocked.unlockReport.isClean, "\(unlocked.unlockReport)")
        let entries = try unlocked.entries
        XCTAssertEqual(entries.map(\.displayPath), VaultFixture.comics.map(\.displayPath))
        XCTAssertEqual(entries.map(\.originalFileName), VaultFixture.comics.map(\.sourceName))
        XCTAssertEqual(entries.map(\.size), VaultFixture.comics.map { UInt64($0.content.count) })
        XCTAssertEqual(entries.map(\.sha256), VaultFixture.comics.map(\.sha256))
        XCTAssertEqual(entries.map(\.dateAdded), [VaultFixture.dateAdded, VaultFixture.dateAdded])
        for (entry, comic) in zip(entries, VaultFixture.comics) {
            let content = try readAll(try unlocked.reader(for: entry))
            XCTAssertEqual(content, comic.content, comic.displayPath)
            XCTAssertEqual(try sha256Hex(content), comic.sha256)
        }
        return vault
    }

    func testIndependentPythonImplementationDecryptsTheFixture() throws {
        try decryptWithPython(VaultFixture.committedDirectory, version: 2)
    }

    func testIndependentPythonImplementationDecryptsTheVersionOneFixture() throws {
        try decryptWithPython(VaultFixture.versionOneDirectory, version: 1)
    }

    private func decryptWithPython(_ fixture: String, version: Int) throws {
        let python = "/usr/bin/python3"
        // Debian package python3-cryptography, installed by scripts/setup (Debian 12 ships
        // 38.0.4, which this test was written against). Missing, it fails: a skipped
        // cross-check would let a format drift pass unnoticed.
        guard run(python, ["-c", "import cryptography"]).status == 0 else {
            return XCTFail("\(python) has no `cryptography` module: run scripts/setup (apt-get install python3-cryptography)")
        }
        let scratch = TemporaryDirectory("fixture-python")
        let script = scratch.child("vault_decrypt.py")
        try Self.pythonDecryptor.write(toFile: script, atomically: true, encoding: .utf8)
        let result = run(python, [script, fixture, VaultFixture.password])
        XCTAssertEqual(result.status, 0, "python failed:\n\(result.error)")
        let output = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [String: Any]
        XCTAssertEqual(output["generation"] as? Int, 3, "create, then two adds")
        XCTAssertEqual(output["version"] as? Int, version)
        let entries = output["entries"] as! [[String: Any]]
        XCTAssertEqual(entries.count, VaultFixture.comics.count)
        for (entry, comic) in zip(entries, VaultFixture.comics) {
            XCTAssertEqual(entry["displayPath"] as? String, comic.displayPath)
            XCTAssertEqual(entry["plaintextSha256"] as? String, comic.sha256, "decrypted independently")
            XCTAssertEqual(entry["manifestSha256"] as? String, comic.sha256)
            XCTAssertEqual(entry["size"] as? Int, comic.content.count)
            let stream = version == 1 ? comic.content.count : Int(VaultPadding.objectStreamSize(contentSize: UInt64(comic.content.count)))
            XCTAssertEqual(entry["chunks"] as? Int, max(1, (stream + 65_535) / 65_536))
        }
        // The independent implementation must also refuse damage, or it proves nothing.
        let copy = scratch.child("vault")
        try fm.copyItem(atPath: fixture, toPath: copy)
        let object = try fm.contentsOfDirectory(atPath: copy + "/objects").sorted().first!
        var bytes = try readBytes(copy + "/objects/" + object)
        bytes[bytes.count - 20] ^= 1
        try writeBytes(bytes, to: copy + "/objects/" + object)
        XCTAssertNotEqual(run(python, [script, copy, VaultFixture.password]).status, 0, "python accepted a bad chunk")
        XCTAssertNotEqual(run(python, [script, fixture, "wrong"]).status, 0,
                          "python accepted a wrong password")
    }

    func testRegeneratingTheFixtureIsByteIdentical() throws {
        let scratch = TemporaryDirectory("fixture-regenerate")
        try VaultFixture.generate(at: scratch.child("vault"), scratch: scratch.path)
        let generated = try VaultFixture.files(in: scratch.child("vault"))
        if ProcessInfo.processInfo.environment["INKYFS_REGENERATE_VAULT_FIXTURE"] == "1" {
            let committed = VaultFixture.committedDirectory
            for relative in try VaultFixture.files(in: committed).keys {
                try fm.removeItem(atPath: committed + "/" + relative)
            }
            try? fm.removeItem(atPath: committed + "/objects")
            try fm.createDirectory(atPath: committed + "/objects", withIntermediateDirectories: true)
            for (relative, data) in generated { try data.write(to: URL(fileURLWithPath: committed + "/" + relative)) }
        }
        let committed = try VaultFixture.files(in: VaultFixture.committedDirectory)
        XCTAssertEqual(Set(generated.keys), Set(committed.keys))
        XCTAssertEqual(generated.keys.filter { $0.hasPrefix("objects/") }.count, 2)
        for (relative, data) in generated {
            XCTAssertEqual(data, committed[relative], "\(relative) differs: the on-disk format changed. "
                           + "If that is intended, update docs/vault-format.md and regenerate "
                           + "(INKYFS_REGENERATE_VAULT_FIXTURE=1).")
        }
        XCTAssertLessThan(generated.values.map(\.count).reduce(0, +), 200_000)
        // Same inputs, same bytes: a second run in another place agrees.
        let again = TemporaryDirectory("fixture-again")
        try VaultFixture.generate(at: again.child("vault"), scratch: again.path)
        XCTAssertEqual(try VaultFixture.files(in: again.child("vault")), generated)
    }

    private func run(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        do { try process.run() } catch { return (-1, "", "\(error)") }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// Written from docs/vault-format.md, sharing no code with the Swift implementation.
    /// Prints JSON with each entry's plaintext SHA-256 (never key material); exits
    /// non-zero on any authentication or format error.
    static let pythonDecryptor = #"""
    import hashlib, json, os, struct, sys
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    vault, password = sys.argv[1], sys.argv[2].encode("utf-8")

    def read(*parts):
        with open(os.path.join(vault, *parts), "rb") as f:
            return f.read()

    def hkdf(key, info):
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key)

    # vault.key: 82-byte header (all AAD), wrapped key + tag, SHA-256 of everything before.
    key_file = read("vault.key")
    assert len(key_file) == 162, "key file length"
    assert hashlib.sha256(key_file[:130]).digest() == key_file[130:], "key file checksum"
    magic, version, kdf_id, p0, p1, p2, wrapping = struct.unpack(">8sHHQQQH", key_file[:38])
    assert magic == b"INKYVKEY" and version == 1 and wrapping == 1, "key file header"
    salt, nonce, header = key_file[38:70], key_file[70:82], key_file[:82]
    if kdf_id == 1:
        assert p1 == 0 and p2 == 0 and 1000 <= p0 <= 100_000_000
        wrapping_key = hashlib.pbkdf2_hmac("sha256", password, salt, p0, 32)
    elif kdf_id == 2:
        wrapping_key = hashlib.scrypt(password, salt=salt, n=p0, r=p1, p=p2, maxmem=2 ** 31 - 1, dklen=32)
    else:
        raise SystemExit("unsupported KDF %d" % kdf_id)
    master = AESGCM(wrapping_key).decrypt(nonce, key_file[82:130], header)

    manifest_key = hkdf(master, b"inkyfs vault v1: manifest key")
    content_key = hkdf(master, b"inkyfs vault v1: content key")

    def padme(length):
        if length <= 1:
            return length
        exponent = length.bit_length() - 1
        mask = (1 << (exponent - exponent.bit_length())) - 1
        return (length + mask) & ~mask

    # manifest.bin, version 2: 24-byte header (all AAD) with the nonce at 12..24; the plaintext is
    # the generation (8 bytes), the JSON, then spaces up to max(4096, padme(length)).
    # Version 1: 32-byte header with the generation at 12..20 and the nonce at 20..32; JSON only.
    manifest = read("manifest.bin")
    magic, manifest_version, algorithm = struct.unpack(">8sHH", manifest[:12])
    assert magic == b"INKYVMAN" and manifest_version in (1, 2) and algorithm == 1, "manifest header"
    if manifest_version == 1:
        (generation,) = struct.unpack(">Q", manifest[12:20])
        payload = json.loads(AESGCM(manifest_key).decrypt(manifest[20:32], manifest[32:], manifest[:32]))
    else:
        plain = AESGCM(manifest_key).decrypt(manifest[12:24], manifest[24:], manifest[:24])
        assert len(plain) == max(4096, padme(len(plain.rstrip(b" ")))), "manifest padding"
        (generation,) = struct.unpack(">Q", plain[:8])
        payload = json.loads(plain[8:])
    assert payload["version"] == 1

    results = []
    for entry in payload["entries"]:
        data = read("objects", entry["name"])
        magic, version, algorithm, chunk_size = struct.unpack(">8sHHI", data[:16])
        file_id, (size,) = data[16:48], struct.unpack(">Q", data[48:56])
        assert magic == b"INKYVOBJ" and version in (1, 2) and algorithm == 1, "object header"
        assert version == manifest_version, "one format version throughout this fixture"
        # Version 2: the chunks decrypt to a stream of padme(comic + 8) bytes, ending with the
        # comic's size (8 bytes); zeros between. Version 1: the stream is the comic.
        assert file_id.hex() == entry["fileID"], "object matches manifest"
        assert size == (entry["size"] if version == 1 else padme(entry["size"] + 8)), "stream size"
        key = AESGCM(hkdf(content_key, b"inkyfs vault v1: object key" + file_id))
        chunks = max(1, -(-size // chunk_size))
        assert len(data) == 56 + chunks * 28 + size, "object file size"
        plaintext, position = bytearray(), 56
        for index in range(chunks):
            length = min(chunk_size, size - index * chunk_size)
            stored = data[position:position + 12 + length + 16]
            aad = data[:56] + struct.pack(">Q", index) + bytes([1 if index == chunks - 1 else 0])
            plaintext += key.decrypt(stored[:12], stored[12:], aad)
            position += len(stored)
        assert position == len(data)
        if version == 2:
            (content,) = struct.unpack(">Q", plaintext[-8:])
            assert content == entry["size"] and plaintext[content:-8] == bytes(size - 8 - content), "padding"
            plaintext = plaintext[:content]
        results.append({
            "displayPath": entry["displayPath"],
            "size": len(plaintext),
            "chunks": chunks,
            "plaintextSha256": hashlib.sha256(plaintext).hexdigest(),
            "manifestSha256": entry["sha256"],
        })
    print(json.dumps({"version": manifest_version, "generation": generation, "entries": results}))
    """#
}
