import Foundation
import InkyTestSupport
import XCTest

/// The reader at `/` in a real headless Chromium, driven over the DevTools protocol (Python's
/// websocket client): it opens where the reading state says, turns pages by key, click and
/// swipe, fetches the next pages ahead without counting them as read, and the pages it shows
/// are recorded as read. Screenshots go to the test's temporary folder, named in the log.
final class BrowserReaderTests: XCTestCase {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    func testTheReaderTurnsPagesByKeyClickAndSwipeAndResumes() throws {
        guard let chromium = Self.chromium else { throw XCTSkip("chromium is not installed (scripts/setup)") }
        guard (try? CommandRunner.capture("/usr/bin/python3", ["-c", "import websocket"]).status) == 0 else {
            throw XCTSkip("python3-websocket is not installed (scripts/setup)")
        }
        let server = try ServedLibrary(library: Corpus.fixtures)
        defer { XCTAssertEqual(server.stop(), 0, server.logText) }
        let shots = ArchiveMaker.temporaryDirectory("reader-screenshots", removedAtExit: true)
        let comic = "Moon%20Tales/Moon%20Tales%2001.cb7"
        // Read at pages 3 and 4 (0-based 2, 3; one page alone is no reading yet): the reading
        // state then stands at 4.
        XCTAssertEqual(try server.get("/read?path=\(comic)&page=3").status, 200)
        XCTAssertEqual(try server.get("/opds/comic/page?path=\(comic)&page=2").status, 200)
        XCTAssertEqual(try server.get("/opds/comic/page?path=\(comic)&page=3").status, 200)
        let result = try CommandRunner.capture("/usr/bin/python3", ["-c", Self.driver, chromium, server.base, comic, shots.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let steps = result.stdout.split(separator: "\n").map(String.init)
        print("screenshots of the reader: \(shots.path)")
        // Resumed at page 4; → 5; → 6; a click on the left half ← 5; a swipe to the left → 6.
        XCTAssertEqual(steps, ["open 4 / 10 loaded", "ArrowRight 5 / 10 loaded", "ArrowRight 6 / 10 loaded",
                               "click-left 5 / 10 loaded", "swipe-left 6 / 10 loaded"], result.stderr)
        for number in 0..<steps.count {
            XCTAssertTrue(FileManager.default.fileExists(atPath: shots.appendingPathComponent("step-\(number).png").path))
        }
        // The last page shown is where the reader is; the pages fetched ahead (7, 8) are not counted.
        let feed = try XCTUnwrap(FeedReader(try server.get("/opds/folders?path=Moon%20Tales").body))
        let stream = try XCTUnwrap(feed.entries.first { $0.title == "Moon Tales #1" }?.link("http://vaemendis.net/opds-pse/stream"))
        XCTAssertEqual(stream.attributes["pse:lastRead"], "5")
    }

    /// Prints one line per step: what it did, the position shown, and whether the page image
    /// has loaded (decoded, with a width). Saves a screenshot per step.
    static let driver = #"""
        import json, os, subprocess, sys, tempfile, time, urllib.request, websocket
        chromium, base, comic, shots = sys.argv[1:5]
        profile = tempfile.mkdtemp()
        browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                                    "--user-data-dir=" + profile, "--window-size=600,900", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            port_file = os.path.join(profile, "DevToolsActivePort")
            deadline = time.time() + 30
            while not os.path.exists(port_file) or not open(port_file).read().strip():
                if time.time() > deadline: sys.exit("chromium did not start")
                time.sleep(0.1)
            port = open(port_file).read().split()[0]
            pages = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port))
            socket = websocket.create_connection([p for p in pages if p["type"] == "page"][0]["webSocketDebuggerUrl"], timeout=30)
            counter = [0]
            def call(method, **params):
                counter[0] += 1
                socket.send(json.dumps({"id": counter[0], "method": method, "params": params}))
                while True:
                    message = json.loads(socket.recv())
                    if message.get("id") == counter[0]:
                        if "error" in message: sys.exit("%s: %s" % (method, message["error"]))
                        return message.get("result", {})
            def evaluate(expression):
                return call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")
            def settle(step):
                deadline = time.time() + 20
                state = "page image not loaded"
                while time.time() < deadline:
                    if evaluate("document.getElementById('page').complete && document.getElementById('page').naturalWidth > 0"):
                        state = "loaded"
                        break
                    time.sleep(0.05)
                shot = call("Page.captureScreenshot", format="png")["data"]
                import base64
                open(os.path.join(shots, "step-%d.png" % settle.count), "wb").write(base64.b64decode(shot))
                settle.count += 1
                print(step, evaluate("document.getElementById('position').textContent"), state, flush=True)
            settle.count = 0
            call("Page.enable")
            call("Page.navigate", url=base + "/read?path=" + comic)
            deadline = time.time() + 20
            while evaluate("document.readyState") != "complete" and time.time() < deadline: time.sleep(0.05)
            settle("open")
            for _ in range(2):
                for kind in ("keyDown", "keyUp"):
                    call("Input.dispatchKeyEvent", type=kind, key="ArrowRight", code="ArrowRight", windowsVirtualKeyCode=39)
                settle("ArrowRight")
            for kind in ("mousePressed", "mouseReleased"):
                call("Input.dispatchMouseEvent", type=kind, x=40, y=300, button="left", clickCount=1)
            settle("click-left")
            call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": 450, "y": 300}])
            call("Input.dispatchTouchEvent", type="touchMove", touchPoints=[{"x": 300, "y": 305}])
            call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
            settle("swipe-left")
        finally:
            browser.kill()
            browser.wait()
        """#
}
