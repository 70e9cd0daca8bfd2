import Foundation
import XCTest
@testable import InkyVault
import Synchronization

final class VaultFacadeTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var vault: String { directory.child("vault") }
    private var paths: VaultPaths { VaultPaths(root: vault) }
    private let fm = FileManager.default

    override func setUp() { directory = TemporaryDirectory("facade") }
    override func tearDown() { directory = nil }

    private func makeSource(_ name: String, _ bytes: [UInt8]) throws -> String {
        let folder = directory.child("sources")
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try writeBytes(bytes, to: folder + "/" + name)
        return folder + "/" + name
    }

    private func makeVault() throws -> UnlockedVault {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        return try Vault.unlock(at: vault, password: password("pw"))
    }

    func testCreateLaysOutTheDirectoryAndRefusesNonEmptyOnes() throws {
        try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: vault)),
                       ["vault.key", "vault.key.prev", "manifest.bin", "manifest.bin.prev", "objects", "orphans"])
        XCTAssertThrowsError(try Vault.create(at: vault, password: password("pw"), kdf: fastKDF)) {
            XCTAssertEqual($0 as? VaultError, .vaultAlreadyExists(path: self.vault))
        }
        let empty = directory.child("empty")
        try fm.createDirectory(atPath: empty, withIntermediateDirectories: false)
        XCTAssertNoThrow(try Vault.create(at: empty, password: password("pw"), kdf: fastKDF), "an empty directory is fine")
        let nested = directory.child("a/b/vault")
        XCTAssertNoThrow(try Vault.create(at: nested, password: password("pw"), kdf: fastKDF), "parents are created")
        XCTAssertNoThrow(try Vault.unlock(at: nested, password: password("pw")).lock())
        XCTAssertThrowsError(try Vault.unlock(at: directory.child("nothing"), password: password("pw"))) {
            XCTAssertEqual($0 as? VaultError, .notAVault(path: self.directory.child("nothing")))
        }
    }

    func testAddReadRemoveRoundTrip() throws {
        let unlocked = try makeVault()
        let content = patternBytes(count: 200_000, seed: 5)
        let source = try makeSource("Issue 1.cbz", content)
        let entry = try unlocked.add(file: source, displayPath: "Series/Issue 1.cbz")
        XCTAssertEqual(entry.size, 200_000)
        XCTAssertEqual(entry.sha256, try sha256Hex(content))
        XCTAssertEqual(entry.originalFileName, "Issue 1.cbz")
        XCTAssertEqual(entry.displayPath, "Series/Issue 1.cbz")
        XCTAssertTrue(VaultEntry.isValidName(entry.name))
        XCTAssertEqual(entry.dateAdded.timeIntervalSince1970.truncatingRemainder(dividingBy: 1), 0)
        XCTAssertEqual(try readBytes(source), content, "the source is the caller's to delete")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: paths.objects), [entry.name], "no temporary files left")
        XCTAssertEqual(try VaultObjectHeader.read(path: unlocked.objectPath(for: entry)).fileID, entry.fileID)

        XCTAssertEqual(try readAll(try unlocked.reader(for: entry)), content)
        // The daemon's path: header → file id → object key, reader from (path, key) alone.
        let header = try VaultObjectHeader.read(path: unlocked.objectPath(for: entry))
        let key = try unlocked.keys().objectKey(fileID: header.fileID)
        XCTAssertEqual(try readAll(try VaultObjectReader(path: unlocked.objectPath(for: entry), key: key)), content)

        // Persisted: lock, unlock again.
        unlocked.lock()
        let again = try Vault.unlock(at: vault, password: password("pw"))
        XCTAssertEqual(try again.entries, [entry])
        XCTAssertTrue(again.unlockReport.isClean, "\(again.unlockReport)")

        let out = directory.child("out")
        try fm.createDirectory(atPath: out, withIntermediateDirectories: false)
        let extracted = try again.remove(name: entry.name, to: out)
        XCTAssertEqual(extracted, out + "/Issue 1.cbz")
        XCTAssertEqual(try readBytes(extracted), content)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: out), ["Issue 1.cbz"], "no temporary files left")
        XCTAssertEqual(try again.entries, [])
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: paths.objects), [], "the object is deleted last")
        XCTAssertThrowsError(try again.remove(name: entry.name, to: out)) {
            XCTAssertEqual($0 as? VaultError, .noSuchEntry(name: entry.name))
        }
        XCTAssertThrowsError(try again.reader(for: entry)) {
            XCTAssertEqual($0 as? VaultError, .noSuchEntry(name: entry.name))
        }
    }

    func testEmptyFilesRoundTrip() throws {
        let unlocked = try makeVault()
        let entry = try unlocked.add(file: makeSource("empty.cbz", []), displayPath: "empty.cbz")
        XCTAssertEqual(entry.size, 0)
        XCTAssertEqual(try unlocked.reader(for: entry).read(at: 0, count: 10), [])
        let out = directory.child("out")
        try fm.createDirectory(atPath: out, withIntermediateDirectories: false)
        XCTAssertEqual(try readBytes(try unlocked.remove(name: entry.name, to: out)), [])
    }

    func testCollidingNamesAreNumberedBeforeTheExtension() throws {
        let unlocked = try makeVault()
        let source = try makeSource("Issue 1.cbz", [1, 2, 3])
        let paths = try (0..<3).map { _ in try unlocked.add(file: source, displayPath: "Series/Issue 1.cbz").displayPath }
        XCTAssertEqual(paths, ["Series/Issue 1.cbz", "Series/Issue 1 (1).cbz", "Series/Issue 1 (2).cbz"])
        XCTAssertEqual(try unlocked.add(file: source, displayPath: "Series").displayPath, "Series (1)",
                       "a comic may not take a folder's name")
        XCTAssertEqual(try unlocked.add(file: source, displayPath: "Other/.hidden").displayPath, "Other/.hidden")
        XCTAssertEqual(try unlocked.add(file: source, displayPath: "Other/.hidden").displayPath, "Other/.hidden (1)")
        let objectsBefore = try fm.contentsOfDirectory(atPath: self.paths.objects).count
        XCTAssertThrowsError(try unlocked.add(file: source, displayPath: "Series/Issue 1.cbz/inside.cbz")) {
            guard case .invalidDisplayPath? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: self.paths.objects).count, objectsBefore,
                       "refused before any object was written")

        // Extraction: an existing file of that name is never overwritten.
        let out = directory.child("out")
        try fm.createDirectory(atPath: out, withIntermediateDirectories: false)
        try writeBytes([9, 9], to: out + "/Issue 1.cbz")
        let names = try unlocked.entries.prefix(2).map { try unlocked.remove(name: $0.name, to: out) }
        XCTAssertEqual(names, [out + "/Issue 1 (1).cbz", out + "/Issue 1 (2).cbz"])
        XCTAssertEqual(try readBytes(out + "/Issue 1.cbz"), [9, 9])
        XCTAssertEqual(try readBytes(out + "/Issue 1 (2).cbz"), [1, 2, 3])
    }

    func testInvalidDisplayPathsAndSourcesLeaveNoTrace() throws {
        let unlocked = try makeVault()
        let source = try makeSource("a.cbz", [1])
        for bad in ["", "/abs.cbz", "../a.cbz", "a/../b.cbz", "a//b.cbz", "a/./b.cbz", "a/", "./a.cbz",
                    String(repeating: "x", count: 256), "nul\u{0}.cbz"] {
            XCTAssertThrowsError(try unlocked.add(file: source, displayPath: bad), bad) {
                guard case .invalidDisplayPath? = $0 as? VaultError else { return XCTFail("\(bad): \($0)") }
            }
        }
        XCTAssertThrowsError(try unlocked.add(file: directory.child("sources"), displayPath: "dir.cbz")) {
            guard case .sourceChanged? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try unlocked.add(file: directory.child("missing.cbz"), displayPath: "m.cbz")) {
            guard case .io? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: paths.objects), [])
        XCTAssertEqual(try unlocked.entries, [])
    }

    func testOrphansAreMovedNeverDeletedAndMissingObjectsReported() throws {
        let unlocked = try makeVault()
        let kept = try unlocked.add(file: makeSource("a.cbz", [1]), displayPath: "a.cbz")
        let lost = try unlocked.add(file: makeSource("b.cbz", [2]), displayPath: "b.cbz")
        unlocked.lock()
        let stray = String(repeating: "cd", count: 16)
        try writeBytes([7, 7, 7], to: paths.object(named: stray))
        try writeBytes([8], to: paths.orphans + "/" + stray)  // an earlier orphan of the same name
        let temporary = "." + String(repeating: "ef", count: 16) + ".inkyfs-tmp-0123456789abcdef"  // as an add names one
        try writeBytes([5], to: paths.objects + "/" + temporary)
        try writeBytes([6], to: paths.objects + "/.x.inkyfs-tmp-0123456789abcdef")  // no name an add makes
        try fm.removeItem(atPath: paths.object(named: lost.name))

        let again = try Vault.unlock(at: vault, password: password("pw"))
        XCTAssertEqual(Set(again.unlockReport.movedToOrphans), [stray, temporary])
        XCTAssertEqual(again.unlockReport.foreignInObjects, [".x.inkyfs-tmp-0123456789abcdef"])
        XCTAssertEqual(again.unlockReport.missingObjects, [lost.name])
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: paths.objects).sorted(), [".x.inkyfs-tmp-0123456789abcdef", kept.name])
        XCTAssertEqual(try readBytes(paths.orphans + "/" + stray), [8], "the earlier orphan is untouched")
        XCTAssertEqual(try readBytes(paths.orphans + "/" + stray + " (1)"), [7, 7, 7], "moved, renamed, intact")
        XCTAssertEqual(try readBytes(paths.orphans + "/" + temporary), [5])
    }

    func testAnAddWhoseManifestSaveFailsLeavesAnOrphanAndTheSource() throws {
        // The object is durable before the manifest is written. Make the manifest save fail
        // (a directory where manifest.bin.prev must go) and check what is left.
        let unlocked = try makeVault()
        try fm.removeItem(atPath: paths.previousManifest)
        try fm.createDirectory(atPath: paths.previousManifest + "/blocker", withIntermediateDirectories: true)
        let source = try makeSource("a.cbz", [4, 5, 6])
        XCTAssertThrowsError(try unlocked.add(file: source, displayPath: "a.cbz")) {
            guard case .io? = $0 as? VaultError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try unlocked.entries, [], "not in the manifest")
        let objects = try fm.contentsOfDirectory(atPath: paths.objects)
        XCTAssertEqual(objects.count, 1, "but the object was fully written")
        XCTAssertEqual(try readBytes(source), [4, 5, 6])
        unlocked.lock()
        try fm.removeItem(atPath: paths.previousManifest)
        let again = try Vault.unlock(at: vault, password: password("pw"))
        XCTAssertEqual(again.unlockReport.movedToOrphans, objects, "swept into orphans/ at the next unlock")
    }

    func testARemoveWhoseManifestSaveFailsKeepsTheComicInTheVault() throws {
        let unlocked = try makeVault()
        let entry = try unlocked.add(file: makeSource("a.cbz", [4, 5, 6]), displayPath: "a.cbz")
        try fm.removeItem(atPath: paths.previousManifest)
        try fm.createDirectory(atPath: paths.previousManifest + "/blocker", withIntermediateDirectories: true)
        let out = directory.child("out")
        try fm.createDirectory(atPath: out, withIntermediateDirectories: false)
        XCTAssertThrowsError(try unlocked.remove(name: entry.name, to: out)) {
            // The save's first step, keeping the current manifest as .prev, meets the directory in its place.
            XCTAssertEqual($0 as? VaultError, .io(path: self.paths.previousManifest, operation: "rename", errno: .EISDIR))
        }
        XCTAssertEqual(try readBytes(out + "/a.cbz"), [4, 5, 6], "extracted and durable before the manifest step")
        XCTAssertEqual(try unlocked.entries, [entry], "still listed")
        XCTAssertTrue(fm.fileExists(atPath: paths.object(named: entry.name)), "and still stored")
    }

    func testPasswordChangeRewrapsOnly() throws {
        let unlocked = try makeVault()
        let entry = try unlocked.add(file: makeSource("a.cbz", [1, 2]), displayPath: "a.cbz")
        let objectBytes = try readBytes(paths.object(named: entry.name))
        let manifestBytes = try readBytes(paths.manifest)
        XCTAssertThrowsError(try unlocked.changePassword(old: password("not it"), new: password("new"))) {
            XCTAssertEqual($0 as? VaultError, .wrongPassword)
        }
        try unlocked.changePassword(old: password("pw"), new: password("new"), kdf: .pbkdf2SHA256(iterations: 2_000))
        XCTAssertEqual(try readBytes(paths.object(named: entry.name)), objectBytes, "objects are not re-encrypted")
        XCTAssertEqual(try readBytes(paths.manifest), manifestBytes, "nor is the manifest")
        guard case .success(let file) = VaultKeyFile.parse(try readBytes(paths.keyFile)) else { return XCTFail() }
        XCTAssertEqual(file.kdf, .pbkdf2SHA256(iterations: 2_000), "the cost can be raised on change")
        // Changing twice in one session: the second needs the new password.
        try unlocked.changePassword(old: password("new"), new: password("newer"))
        unlocked.lock()
        XCTAssertThrowsError(try Vault.unlock(at: vault, password: password("pw"))) {
            XCTAssertEqual($0 as? VaultError, .wrongPassword)
        }
        let again = try Vault.unlock(at: vault, password: password("newer"))
        XCTAssertEqual(try readAll(try again.reader(for: entry)), [1, 2])
    }

    func testLockForgetsEverythingAndReleasesTheDirectory() throws {
        let unlocked = try makeVault()
        let entry = try unlocked.add(file: makeSource("a.cbz", [1]), displayPath: "a.cbz")
        XCTAssertThrowsError(try Vault.unlock(at: vault, password: password("pw")), "one unlocked instance at a time") {
            XCTAssertEqual($0 as? VaultError, .vaultBusy(path: self.vault))
        }
        XCTAssertFalse(unlocked.isLocked)
        unlocked.lock()
        XCTAssertTrue(unlocked.isLocked)
        for (what, call) in [
            ("entries", { _ = try unlocked.entries }),
            ("keys", { _ = try unlocked.keys() }),
            ("reader", { _ = try unlocked.reader(for: entry) }),
            ("add", { try unlocked.add(file: self.makeSource("b.cbz", [2]), displayPath: "b.cbz") }),
            ("remove", { try unlocked.remove(name: entry.name, to: self.directory.path) }),
            ("changePassword", { try unlocked.changePassword(old: password("pw"), new: password("x")) }),
        ] as [(String, () throws -> Void)] {
            XCTAssertThrowsError(try call(), what) { XCTAssertEqual($0 as? VaultError, .locked, what) }
        }
        let again = try Vault.unlock(at: vault, password: password("pw"))
        XCTAssertEqual(try again.entries, [entry])
    }

    func testReaderRefusesAnObjectThatIsNotTheEntrys() throws {
        let unlocked = try makeVault()
        let a = try unlocked.add(file: makeSource("a.cbz", [1, 1, 1]), displayPath: "a.cbz")
        let b = try unlocked.add(file: makeSource("b.cbz", [2, 2, 2]), displayPath: "b.cbz")
        // Swap the two object files: each entry's key no longer fits its object.
        let aPath = unlocked.objectPath(for: a), bPath = unlocked.objectPath(for: b)
        let aBytes = try readBytes(aPath)
        try writeBytes(try readBytes(bPath), to: aPath)
        try writeBytes(aBytes, to: bPath)
        XCTAssertThrowsError(try unlocked.reader(for: a)) { XCTAssertTrue(($0 as? VaultError)?.isObjectRejection == true) }
        let out = directory.child("out")
        try fm.createDirectory(atPath: out, withIntermediateDirectories: false)
        XCTAssertThrowsError(try unlocked.remove(name: b.name, to: out)) {
            XCTAssertEqual($0 as? VaultError, .objectNotAuthentic(path: bPath, chunk: 0), "b's key does not open a's object")
        }
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: out), [], "nothing extracted from a swapped object")
    }
}

extension VaultFacadeTests {
    func testConcurrentAddsAndReadsFromManyThreads() throws {
        let unlocked = try makeVault()
        let sources = try (0..<8).map { try makeSource("c\($0).cbz", patternBytes(count: 70_000, seed: UInt64($0))) }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            do {
                if index < 8 {
                    try unlocked.add(file: sources[index], displayPath: "Same/Name.cbz")
                } else {
                    for entry in try unlocked.entries {
                        _ = try readAll(try unlocked.reader(for: entry))
                    }
                }
            } catch {
                failures.withLock { $0.append("\(index): \(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        let entries = try unlocked.entries
        XCTAssertEqual(entries.count, 8)
        XCTAssertEqual(Set(entries.map(\.displayPath)).count, 8, "each add got its own numbered name")
        XCTAssertEqual(Set(entries.map(\.sha256)).count, 8)
        unlocked.lock()
        XCTAssertEqual(try Vault.unlock(at: vault, password: password("pw")).entries, entries)
    }
}

final class DisplayPathTests: XCTestCase {
    func testUniqueNames() {
        let taken: Set<String> = ["Issue 1.cbz", "Issue 1 (1).cbz", "README", ".hidden", "a.tar.gz"]
        XCTAssertEqual(DisplayPath.unique("Issue 2.cbz", isTaken: taken.contains), "Issue 2.cbz")
        XCTAssertEqual(DisplayPath.unique("Issue 1.cbz", isTaken: taken.contains), "Issue 1 (2).cbz")
        XCTAssertEqual(DisplayPath.unique("README", isTaken: taken.contains), "README (1)")
        XCTAssertEqual(DisplayPath.unique(".hidden", isTaken: taken.contains), ".hidden (1)")
        XCTAssertEqual(DisplayPath.unique("a.tar.gz", isTaken: taken.contains), "a.tar (1).gz")
        XCTAssertEqual(DisplayPath.uniquePath("S/Issue 1.cbz") { $0 == "S/Issue 1.cbz" }, "S/Issue 1 (1).cbz")
    }

    func testValidation() {
        XCTAssertEqual(try DisplayPath.validate("Series/Issue 1.cbz"), "Series/Issue 1.cbz")
        XCTAssertEqual(try DisplayPath.validate("ünïcödé/…"), "ünïcödé/…")
        XCTAssertEqual(DisplayPath.folders(of: "a/b/c.cbz"), ["a", "a/b"])
        let long = String(repeating: "é", count: 128)
        let notAName = { (component: String) in "'\(component)' is not a valid file or folder name" }
        for (bad, reason) in [("", "empty"), ("/a", "must be relative"), ("a/", notAName("")), ("..", notAName("..")),
                              ("a/..", notAName("..")), ("a//b", notAName("")), (long, notAName(long))] {
            XCTAssertThrowsError(try DisplayPath.validate(bad), bad) {
                XCTAssertEqual($0 as? VaultError, .invalidDisplayPath(bad, reason: reason))
            }
        }
    }
}
