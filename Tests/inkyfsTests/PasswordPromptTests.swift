import Foundation
import InkyTestSupport
import XCTest

/// The password prompt on a real terminal (a pty from Python's `pty` module): echo is off before
/// the prompt is written and back after Ctrl-C, SIGTERM or Ctrl-Z; the prompt names the vault; the
/// process is non-dumpable with no core files while it waits; a very short new password warns.
final class PasswordPromptTests: XCTestCase {
    private var folder: URL!
    private var vault: String { folder.appendingPathComponent("vault").path }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("password-prompt")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3")
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    /// Runs `script` (Python, with `inkyfs`, `vault`, `Child` and the helpers defined) and returns its lines.
    private func drive(_ script: String, as user: TestUser? = nil) throws -> [String] {
        let prelude = """
            import os, pty, select, signal, sys, time, termios
            inkyfs, vault = sys.argv[1], sys.argv[2]
            class Child:
                def __init__(self, argv):
                    self.pid, self.fd = pty.fork()
                    if self.pid == 0:
                        os.execv(argv[0], argv)
                    self.seen = b""
                def expect(self, text):
                    while text.encode() not in self.seen:
                        ready, _, _ = select.select([self.fd], [], [], 30)
                        if not ready: raise SystemExit("timed out waiting for " + repr(text) + " in " + repr(self.seen))
                        self.seen += os.read(self.fd, 4096)
                def send(self, text): os.write(self.fd, text.encode())
                def kill(self, number): os.kill(self.pid, number)
                def wait(self):
                    while True:
                        try:
                            ready, _, _ = select.select([self.fd], [], [], 30)
                            chunk = os.read(self.fd, 4096) if ready else b""
                        except OSError:
                            chunk = b""
                        if not chunk: break
                        self.seen += chunk
                    return os.waitpid(self.pid, 0)[1]
            def echo(child): return bool(termios.tcgetattr(child.fd)[3] & termios.ECHO)
            def state(pid): return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
            def until(condition):
                for _ in range(1500):
                    if condition(): return True
                    time.sleep(0.02)
                return False

            """
        let file = folder.appendingPathComponent("drive.py")
        try (prelude + script).write(to: file, atomically: true, encoding: .utf8)
        let result = try CommandRunner.capture("/usr/bin/python3", [file.path, CommandRunner.binaryForOtherUsers.path, vault])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    func testEchoIsOffBeforeThePromptAndBackAfterCtrlCOrSIGTERM() throws {
        for signal in ["SIGINT", "SIGTERM"] {
            let lines = try drive("""
                child = Child([inkyfs, "vault", "list", "--vault", vault])
                child.expect("Password for the vault at " + vault + ": ")
                print("echo at prompt", echo(child))
                limits = open(f"/proc/{child.pid}/limits").read()
                print("core", [line.split()[4:6] for line in limits.splitlines() if line.startswith("Max core file size")][0])
                child.send("half-typ")
                child.kill(signal.\(signal))
                child.wait()
                print("echo after", echo(child))
                print("typed shown", b"half-typ" in child.seen)
                """)
            XCTAssertEqual(lines, ["echo at prompt False", "core ['0', '0']", "echo after True", "typed shown False"], signal)
        }
    }

    /// Ctrl-Z typed on the terminal of an interactive shell with job control (dash, which leaves
    /// the terminal's modes to the job), then `fg`.
    func testCtrlZGivesTheEchoBackWhileStoppedAndTakesItAgainOnFg() throws {
        let lines = try drive("""
            shell = Child(["/bin/dash", "-i"])
            shell.send("PS1='READY> '\\n")
            shell.expect("READY> ")
            shell.send(inkyfs + " vault list --vault " + vault + "\\n")
            shell.expect("Password for the vault at " + vault + ": ")
            command = [int(p) for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/stat")
                       and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(shell.pid)][0]
            shell.send("\\x1a")
            print("stopped", until(lambda: state(command) == "T"))
            print("echo while stopped", echo(shell))
            shell.send("fg\\n")
            print("silent again", until(lambda: state(command) != "T" and not echo(shell)))
            os.kill(command, signal.SIGTERM)
            print("echo after", until(lambda: echo(shell)))
            shell.kill(signal.SIGKILL)
            shell.wait()
            """)
        XCTAssertEqual(lines, ["stopped True", "echo while stopped True", "silent again True", "echo after True"])
    }

    /// Another user's view of the prompting process: non-dumpable, its /proc files are root's.
    func testTheProcessIsNonDumpableWhileItWaitsForThePassword() throws {
        guard let user = try TestUser.make() else { throw XCTSkip("needs root to make a second user") }
        defer { user.remove() }
        let lines = try drive("""
            child = Child(["/usr/sbin/runuser", "-u", "\(user.name)", "--", inkyfs, "vault", "list", "--vault", vault])
            child.expect("Password for the vault at " + vault + ": ")
            def prompting():
                kids = [int(p) for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/stat")
                        and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(child.pid)]
                return kids[0] if kids else None
            until(lambda: prompting() is not None)
            pid = prompting()
            print("runs as the user", open(f"/proc/{pid}/status").read().split("Uid:")[1].split()[0] != "0")
            print("mem owner", os.stat(f"/proc/{pid}/mem").st_uid)
            child.kill(signal.SIGTERM)
            child.wait()
            """)
        XCTAssertEqual(lines, ["runs as the user True", "mem owner 0"])
    }

    func testAVeryShortNewPasswordWarns() throws {
        let short = folder.appendingPathComponent("short")
        try "abc\n".write(to: short, atomically: true, encoding: .utf8)
        let created = try CommandRunner.inkyfs(["vault", "init", "--vault", vault, "--password-file", short.path])
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(created.stderr, "inkyfs: warning: a password of 3 characters is quick to guess for anyone who copies the vault folder;"
                       + " use 10 or more, or several words\n")
    }
}
