import Foundation
import XCTest

/// docs/architecture.md states which module may import which; this test holds the code to it,
/// so the page stays true: an import the table does not allow, a C shim imported by a second
/// module or not `internal`, or a file grown past 400 lines fails here.
final class ModuleRulesTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The platform's own modules, allowed everywhere.
    private let system: Set<String> = ["Foundation", "Glibc", "Darwin", "Dispatch", "Synchronization"]

    /// The table's rows: module → the modules it may import.
    private func rules() throws -> [String: Set<String>] {
        let page = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var rules: [String: Set<String>] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            let module = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let allowed = cells[cells.count - 1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            rules[module] = Set(allowed)
        }
        return rules
    }

    /// Each Swift file's imports, by module folder, subfolders included.
    private func imports() throws -> [String: [(file: String, module: String, line: String)]] {
        let sources = root.appendingPathComponent("Sources")
        var found: [String: [(String, String, String)]] = [:]
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) where module != "Shims" {
            let folder = sources.appendingPathComponent(module)
            guard let walk = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in walk where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    guard let imported = Self.importedModule(String(line)) else { continue }
                    found[module, default: []].append(("\(module)/\(file)", imported, String(line)))
                }
            }
        }
        return found
    }

    /// The module an import line names, whatever its form: attributes (`@preconcurrency`,
    /// `@_implementationOnly`, `@testable`), an access level (`internal import`), a kind
    /// (`import struct Foundation.Data`) or a submodule (`import Glibc.stdio`).
    static func importedModule(_ line: String) -> String? {
        var words = line.split(separator: " ").map(String.init)[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
        if let first = words.first, ["public", "package", "internal", "fileprivate", "private"].contains(first) { words = words.dropFirst() }
        guard words.first == "import", words.count > 1 else { return nil }
        words = words.dropFirst()
        if ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"].contains(words.first ?? ""), words.count > 1 {
            words = words.dropFirst()
        }
        return words.first.map { String($0.split(separator: ".")[0]) }
    }

    func testEveryImportFormIsRead() {
        XCTAssertEqual(Self.importedModule("@preconcurrency internal import CFuse3"), "CFuse3")
        XCTAssertEqual(Self.importedModule("@_implementationOnly import CVips"), "CVips")
        XCTAssertEqual(Self.importedModule("internal import struct InkyCore.Page"), "InkyCore")
        XCTAssertEqual(Self.importedModule("import Glibc.stdio"), "Glibc")
        XCTAssertNil(Self.importedModule("// import InkyArchive"))
        XCTAssertNil(Self.importedModule("let important = 1"))
    }

    /// The process split the page's "Processes" table states: what `inkyfs` may reach through
    /// the module rules holds no parser, image, HTTP or TLS module; the worker's holds the parsers,
    /// the server's the HTTP and TLS modules.
    func testTheUserFacingExecutableReachesNoParserOrServerModule() throws {
        let rules = try rules()
        func reach(_ module: String) -> Set<String> {
            var seen: Set<String> = [module]
            var next = [module]
            while let current = next.popLast() {
                for imported in rules[current] ?? [] where !seen.contains(imported) {
                    seen.insert(imported)
                    next.append(imported)
                }
            }
            return seen
        }
        let parsers: Set<String> = ["InkyArchive", "InkyPDF", "InkyImage", "InkyWorkerProcess", "CArchive", "CUnarr", "CLZMA", "CInkyPDF", "CInkyVips", "CInkyJxl", "CInkyScaledJPEG"]
        XCTAssertEqual(reach("inkyfs").intersection(parsers), [], "inkyfs reaches parser modules")
        XCTAssertEqual(reach("inkyfs-worker").intersection(parsers), parsers, "inkyfs-worker reaches every parser module")
        // The HTTP server is `inkyfs-serve`'s alone: every mount and its daemon start without it.
        let server: Set<String> = ["InkyServe", "InkyTLS", "CSSL", "Hummingbird", "HummingbirdCore", "NIOCore"]
        XCTAssertEqual(reach("inkyfs").intersection(server), [], "inkyfs reaches the HTTP server's modules")
        XCTAssertEqual(reach("inkyfs-serve").intersection(server), server, "inkyfs-serve reaches the HTTP server's modules")
        XCTAssertEqual(reach("inkyfs-serve").intersection(parsers), [], "inkyfs-serve reaches parser modules")
    }

    func testEveryImportIsOneTheArchitecturePageAllows() throws {
        let rules = try rules()
        let imports = try imports()
        XCTAssertEqual(Set(imports.keys), Set(rules.keys), "every module of Sources/ has a row in docs/architecture.md, and no other")
        for (module, lines) in imports {
            let allowed = (rules[module] ?? []).union(system)
            for (file, imported, _) in lines where !allowed.contains(imported) {
                XCTFail("\(file) imports \(imported): docs/architecture.md allows \(module) only \(rules[module]?.sorted() ?? [])")
            }
        }
    }

    func testTheKernelAdapterKnowsNeitherVaultNorStoreNorWorker() throws {
        let forbidden: Set<String> = ["InkyVault", "InkyStore", "InkyWorker", "InkyLibrary", "InkyDaemon"]
        for (file, imported, _) in try imports()["InkyFUSE"] ?? [] {
            XCTAssertFalse(forbidden.contains(imported), "\(file) imports \(imported)")
        }
    }

    func testEachCLibraryIsImportedInternallyByExactlyOneModule() throws {
        var users: [String: Set<String>] = [:]
        for (module, lines) in try imports() {
            for (file, imported, line) in lines where imported.first == "C" && imported.dropFirst().first?.isUppercase == true {
                users[imported, default: []].insert(module)
                XCTAssertTrue(line.hasPrefix("internal import"), "\(file): \(line) (C stays behind one Swift layer)")
            }
        }
        for (library, modules) in users {
            XCTAssertEqual(modules.count, 1, "\(library) is imported by \(modules.sorted())")
        }
    }

    /// One page a newcomer reads through: the details live in docs/internals.md.
    func testTheArchitecturePageIsOnePageWithThePathOfAPageRead() throws {
        let page = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        XCTAssertLessThanOrEqual(page.split(separator: "\n", omittingEmptySubsequences: false).count, 150)
        XCTAssertTrue(page.contains("## One page read, hop by hop"))
        for module in ["InkyFUSE", "InkyLibrary", "InkyWorker", "InkyWorkerProcess", "InkyArchive"] {
            XCTAssertTrue(page.contains("(\(module)"), "the page read names where \(module) comes in")
        }
    }

    /// The README is for a newcomer, and no file cites a tracker number where it should say what a thing
    /// is: a newcomer cannot resolve a tracker's numbers. (A comic named "Issue 7.cbz" is a name.)
    func testTheReadmeIsShortAndNoFileCitesAnIssueNumber() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertLessThanOrEqual(readme.split(separator: "\n", omittingEmptySubsequences: false).count, 150)
        let citation = try NSRegularExpression(pattern: #"\bissues? #?[0-9]|\bIssues? #[0-9]|\(Issue [0-9]+\)"#)
        for folder in ["README.md", "docs", "Sources", "Tests", "scripts", ".ci", "contrib/systemd"] {
            let base = root.appendingPathComponent(folder)
            let files = (FileManager.default.enumerator(atPath: base.path)?.allObjects as? [String])?.map { base.appendingPathComponent($0) } ?? [base]
            for file in files {
                guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let line = String(line)
                    if citation.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                        XCTFail("\(file.path):\(number + 1) cites an issue number: \(line)")
                    }
                }
            }
        }
    }

    func testNoSourceOrScriptFileIsOver400Lines() throws {
        for folder in ["Sources", "scripts"] {
            let base = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let path as String in walk {
                let url = base.appendingPathComponent(path)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                      let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
                XCTAssertLessThanOrEqual(lines, 400, "\(folder)/\(path) has \(lines) lines")
            }
        }
    }
}
