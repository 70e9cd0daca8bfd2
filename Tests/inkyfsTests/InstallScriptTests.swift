import Foundation
import InkyTestSupport
import XCTest

/// scripts/install and scripts/uninstall into a temporary prefix: the binary, a man page per
/// visible command that man renders without a warning, completions that complete, the unit.
final class InstallScriptTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private var prefix: URL!

    /// scripts/make-docs writes the man pages with swift-argument-parser's generator, which a
    /// plain `swift build` does not build: without it no install can succeed.
    override func setUpWithError() throws {
        let generator = repository.appendingPathComponent(".build/debug/generate-manual").path
        guard FileManager.default.isExecutableFile(atPath: generator) else {
            throw XCTSkip("\(generator) is not built: scripts/setup builds it (swift build --product generate-manual)")
        }
        prefix = ArchiveMaker.temporaryDirectory("prefix")
    }
    override func tearDown() { if let prefix { try? FileManager.default.removeItem(at: prefix) } }

    /// --no-build: `swift test` holds SwiftPM's lock on .build, so the script must not run swift;
    /// it installs the binary under test with the manual generator scripts/setup built.
    private func script(_ name: String, _ arguments: [String] = []) throws -> CommandRunner.Result {
        try CommandRunner.capture(repository.appendingPathComponent("scripts/\(name)").path, arguments, in: repository)
    }

    private func install() throws {
        let result = try script("install", ["--prefix", prefix.path, "--binary", CommandRunner.binary.path, "--no-build"])
        XCTAssertEqual(result.status, 0, result.stderr + result.stdout)
    }

    private func installedFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: prefix.path)
        return (enumerator?.allObjects as? [String] ?? []).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: prefix.appendingPathComponent($0).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    func testInstallPutsBinaryManPagesCompletionsAndUnitAndUninstallTakesExactlyThat() throws {
        // Something of someone else's in the same tree must survive the uninstall.
        let foreign = prefix.appendingPathComponent("share/man/man1/other.1")
        try FileManager.default.createDirectory(at: foreign.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "not ours\n".write(to: foreign, atomically: true, encoding: .utf8)
        try install()
        try install() // again over itself: the same result, nothing doubled

        let pages = ["inkyfs", "inkyfs.account", "inkyfs.account.add", "inkyfs.account.list", "inkyfs.account.remove", "inkyfs.bookmark", "inkyfs.doctor", "inkyfs.duplicates", "inkyfs.index", "inkyfs.mount", "inkyfs.pages", "inkyfs.progress",
                     "inkyfs.scan", "inkyfs.serve", "inkyfs.status", "inkyfs.unmount", "inkyfs.vault", "inkyfs.vault.add", "inkyfs.vault.init", "inkyfs.vault.list",
                     "inkyfs.vault.lock", "inkyfs.vault.passwd", "inkyfs.vault.remove", "inkyfs.vault.status", "inkyfs.vault.unlock"]
        XCTAssertEqual(installedFiles(), (["bin/inkyfs", "libexec/inkyfs/inkyfs-serve", "libexec/inkyfs/inkyfs-worker", "lib/systemd/user/inkyfs-serve@.service", "lib/systemd/user/inkyfs@.service",
                                           "share/bash-completion/completions/inkyfs",
                                           "share/fish/vendor_completions.d/inkyfs.fish", "share/inkyfs/install-manifest",
                                           "share/man/man1/other.1", "share/zsh/site-functions/_inkyfs"]
                                              + pages.map { "share/man/man1/\($0).1" }
                                              + pages.dropFirst().map { "share/man/man1/\($0.replacingOccurrences(of: ".", with: "-")).1" }).sorted(),
                       "hidden commands (vault debug, help) get no page")
        XCTAssertEqual(try Data(contentsOf: prefix.appendingPathComponent("bin/inkyfs")), try Data(contentsOf: CommandRunner.binary))
        let version = try CommandRunner.capture(prefix.appendingPathComponent("bin/inkyfs").path, ["--version"])
        XCTAssertTrue(version.stdout.hasPrefix("inkyfs "), version.stdout)
        // The installed inkyfs finds the installed worker and server (libexec beside bin), not the build's.
        XCTAssertEqual(try Data(contentsOf: prefix.appendingPathComponent("libexec/inkyfs/inkyfs-worker")), try Data(contentsOf: CommandRunner.workerBinary))
        XCTAssertEqual(try Data(contentsOf: prefix.appendingPathComponent("libexec/inkyfs/inkyfs-serve")), try Data(contentsOf: CommandRunner.serveBinary))
        let doctor = try CommandRunner.capture(prefix.appendingPathComponent("bin/inkyfs").path, ["doctor"])
        for (check, executable) in [("worker", "inkyfs-worker"), ("serve", "inkyfs-serve")] {
            let line = doctor.stdout.split(separator: "\n").first { $0.contains(" \(check) ") }.map(String.init) ?? doctor.stdout
            XCTAssertTrue(line.hasPrefix("ok") && line.hasSuffix(prefix.appendingPathComponent("libexec/inkyfs/\(executable)").path), line)
        }

        // man renders every page, with groff's warnings on, and each page is about its command. In
        // a UTF-8 locale, as a reader has: in the POSIX one (an account with no LANG) NAME's — is --.
        for page in pages {
            let rendered = try CommandRunner.capture("/usr/bin/man", ["--warnings", "-l", prefix.appendingPathComponent("share/man/man1/\(page).1").path],
                                                     environment: ["MANWIDTH": "100", "LC_ALL": "C.UTF-8"])
            XCTAssertEqual(rendered.status, 0, "\(page): \(rendered.stderr)")
            XCTAssertEqual(rendered.stderr, "", page)
            // NAME in one word, as whatis and apropos read it (inkyfs-vault-add); SYNOPSIS as typed.
            let name = page.replacingOccurrences(of: ".", with: "-"), command = page.replacingOccurrences(of: ".", with: " ")
            XCTAssertTrue(rendered.stdout.contains("NAME\n     \(name) —"), "\(page):\n\(rendered.stdout)")
            XCTAssertTrue(rendered.stdout.contains("SYNOPSIS\n     \(command) "), "\(page):\n\(rendered.stdout)")
        }
        // `man inkyfs-mount` (and man-db's `man inkyfs mount`) finds the same page through a link.
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: prefix.appendingPathComponent("share/man/man1/inkyfs-vault-add.1").path),
                       "inkyfs.vault.add.1")
        let mountPage = try CommandRunner.capture("/usr/bin/man", ["-l", prefix.appendingPathComponent("share/man/man1/inkyfs-mount.1").path]).stdout
        // `man inkyfs-mount` is the same page as `man inkyfs.mount`.
        let manpath = prefix.appendingPathComponent("share/man").path
        for (dashed, dotted) in [("inkyfs-mount", "inkyfs.mount"), ("inkyfs-vault-unlock", "inkyfs.vault.unlock")] {
            let byDash = try CommandRunner.capture("/usr/bin/man", ["--warnings", "-M", manpath, dashed], environment: ["MANWIDTH": "100"])
            XCTAssertEqual(byDash.status, 0, byDash.stderr)
            XCTAssertEqual(byDash.stdout, try CommandRunner.capture("/usr/bin/man", ["-M", manpath, dotted], environment: ["MANWIDTH": "100"]).stdout)
        }
        XCTAssertTrue(mountPage.contains("--cache-size size") && mountPage.contains("cache_size=512M"), mountPage)
        let topPage = try CommandRunner.capture("/usr/bin/man", ["-l", prefix.appendingPathComponent("share/man/man1/inkyfs.1").path]).stdout
        XCTAssertTrue(topPage.contains("inkyfs.doctor(1)") && !topPage.contains("vault.debug"), "SEE ALSO names only installed pages:\n\(topPage)")

        let unit = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/inkyfs@.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=\(prefix.path)/bin/inkyfs mount --foreground"), unit)
        XCTAssertTrue(unit.contains("Type=notify"), unit)
        let serveUnit = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/user/inkyfs-serve@.service"), encoding: .utf8)
        XCTAssertTrue(serveUnit.contains("ExecStart=\(prefix.path)/bin/inkyfs serve $INKYFS_OPTIONS %h/%I"), serveUnit)
        XCTAssertTrue(try String(contentsOf: prefix.appendingPathComponent("share/zsh/site-functions/_inkyfs"), encoding: .utf8).hasPrefix("#compdef inkyfs"))
        XCTAssertTrue(try String(contentsOf: prefix.appendingPathComponent("share/fish/vendor_completions.d/inkyfs.fish"), encoding: .utf8)
            .contains("complete -c 'inkyfs' -n '__inkyfs_should_offer_completions_for_flags_or_options \"inkyfs doctor\""))

        let removed = try script("uninstall", ["--prefix", prefix.path])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(installedFiles(), ["share/man/man1/other.1"], "only what was installed is gone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: prefix.path).sorted(), ["share"], "and the folders it created")
        XCTAssertNotEqual(try script("uninstall", ["--prefix", prefix.path]).status, 0, "a second uninstall has no manifest to follow")
    }

    /// Paths are taken relative to the caller, and a prefix that install created goes with uninstall.
    func testARelativePrefixThatInstallCreatedIsGoneAfterUninstall() throws {
        let scripts = repository.appendingPathComponent("scripts")
        let installed = try CommandRunner.capture(scripts.appendingPathComponent("install").path,
                                                  ["--prefix", "new/usr", "--binary", CommandRunner.binary.path, "--no-build"], in: prefix)
        XCTAssertEqual(installed.status, 0, installed.stderr)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: prefix.appendingPathComponent("new/usr/bin/inkyfs").path))
        let removed = try CommandRunner.capture(scripts.appendingPathComponent("uninstall").path, ["--prefix", "new/usr"], in: prefix)
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: prefix.path), [])
    }

    /// systemd's own check of the installed unit, for an instance (it needs the binary it names).
    func testTheInstalledUnitPassesSystemdAnalyzeVerify() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "no systemd-analyze on this machine")
        try install()
        for unit in ["inkyfs", "inkyfs-serve"] {
            let instance = prefix.appendingPathComponent("\(unit)@Comics.service")
            try FileManager.default.copyItem(at: prefix.appendingPathComponent("lib/systemd/user/\(unit)@.service"), to: instance)
            let verified = try CommandRunner.capture("/usr/bin/systemd-analyze", ["verify", "--man=no", instance.path])
            XCTAssertEqual(verified.status, 0, verified.stderr)
            XCTAssertEqual(verified.stderr, "", unit)
        }
    }

    /// Drives bash's completion function as bash would on <Tab>: `inkyfs va` becomes `inkyfs vault`.
    func testTheBashCompletionCompletesVaToVault() throws {
        try install()
        let completion = prefix.appendingPathComponent("share/bash-completion/completions/inkyfs").path
        let complete = { (line: String) throws -> [String] in
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map { "'\($0)'" }.joined(separator: " ")
            let script = """
                source '\(completion)'
                COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(\(words)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                _inkyfs inkyfs "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try CommandRunner.capture("/bin/bash", ["-c", script])
            XCTAssertEqual(result.status, 0, result.stderr)
            return result.stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(try complete("inkyfs va"), ["vault"])
        XCTAssertEqual(try complete("inkyfs vault un"), ["unlock"])
        XCTAssertEqual(try complete("inkyfs do"), ["doctor"])
    }
}
