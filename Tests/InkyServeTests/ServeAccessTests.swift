import Foundation
import Hummingbird
import InkyCore
import InkyLibrary
import InkyServe
import InkyTestSupport
import InkyWorker
import XCTest

/// The hook accounts plug into, exercised as an implementation would use it: its middleware
/// guards every route (catalog, downloads, pages, the browser reader), its routes sit beside the
/// catalog's, and with accounts a non-loopback address is allowed.
final class ServeAccessTests: XCTestCase {
    /// Lets through only requests that carry `X-Test-Pass: yes`; serves `/extra`.
    struct Guarded: ServeAccess {
        struct Check: RouterMiddleware {
            typealias Context = ServeContext
            func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
                guard request.headers.contains(where: { $0.name.canonicalName == "x-test-pass" && $0.value == "yes" }) else { throw HTTPError(.unauthorized) }
                return try await next(request, context)
            }
        }

        var hasAccounts: Bool { true }
        func install(on router: Router<ServeContext>, reader: LibraryReader) {
            router.add(middleware: Check())
            router.get("/extra") { _, _ in reader.libraryPath }
        }
    }

    func testTheHooksMiddlewareGuardsEveryRouteAndItsRoutesAreServed() async throws {
        XCTAssertNoThrow(try Guarded().check(ListenAddress(host: "0.0.0.0", port: 8190)), "accounts allow the network")
        XCTAssertThrowsError(try NoAccounts().check(ListenAddress(host: "192.0.2.1", port: 8190))) {
            XCTAssertEqual($0 as? ServeRefusal, .openToNetwork(ListenAddress(host: "192.0.2.1", port: 8190)))
        }
        XCTAssertNoThrow(try NoAccounts().check(ListenAddress(host: "127.0.0.2", port: 8190)))

        let pool = WorkerPool(WorkerPool.Configuration(executable: CommandRunner.workerBinary.path, maxWorkers: 1, timeout: 20))
        defer { pool.shutdown() }
        let reader = LibraryReader(library: LibraryFilesystem(library: Corpus.fixtures.path, options: MountOptions(), backend: pool))
        let url = LockedBox<String?>(nil)
        let server = Task {
            try await InkyServer.run(reader: reader, address: ListenAddress(host: "127.0.0.1", port: 0), access: Guarded()) { url.value = $0 }
        }
        defer { server.cancel() }
        XCTAssertTrue(waitUntil(20) { url.value != nil })
        let base = try XCTUnwrap(url.value).replacingOccurrences(of: "/opds", with: "")
        let targets = ["/opds", "/opds/folders?path=Moon%20Tales", "/opds/comic/cbz?path=Moon%20Tales/Moon%20Tales%2002.cbt",
                       "/opds/comic/page?path=Moon%20Tales/Moon%20Tales%2002.cbt&page=0", "/", "/read?path=Moon%20Tales/Moon%20Tales%2002.cbt",
                       "/extra", "/nothing"]
        for target in targets {
            let refused = try CommandRunner.capture("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", base + target])
            XCTAssertEqual(refused.stdout, "401", target)
        }
        for (target, status) in [("/opds", "200"), ("/opds/comic/cbz?path=Moon%20Tales/Moon%20Tales%2002.cbt", "200"), ("/extra", "200"), ("/nothing", "404")] {
            let admitted = try CommandRunner.capture("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "X-Test-Pass: yes", base + target])
            XCTAssertEqual(admitted.stdout, status, target)
        }
        // A method a served path does not take: a stranger hears 401 (a 405 would name the
        // path's methods), the admitted client 405.
        for (pass, status) in [([String](), "401"), (["-H", "X-Test-Pass: yes"], "405")] {
            let asked = try CommandRunner.capture("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "DELETE"] + pass + [base + "/opds"])
            XCTAssertEqual(asked.stdout, status, "DELETE /opds \(pass)")
        }
    }
}
