import Foundation
import XCTest

/// At the end of the run, every process the tests started and left behind (a worker, a
/// daemon, a `sleep` holding a mount) is named on stderr and killed. A leftover that kept the
/// test process's stdout or stderr open made `swift test` wait for the end of that pipe
/// forever after the tests had finished, with the runner a zombie and no word of why.
public final class LeftoverProcesses: NSObject, XCTestObservation {
    /// Touched by the fixtures that start processes; observes from the first of them on.
    public static let watching: Void = {
        XCTestObservationCenter.shared.addTestObserver(LeftoverProcesses())
    }()

    public func testBundleDidFinish(_ testBundle: Bundle) {
        let leftovers = Self.descendants(of: getpid())
        guard !leftovers.isEmpty else { return }
        let named = leftovers.map { "\($0) \(Self.command(of: $0))" }.joined(separator: ", ")
        FileHandle.standardError.write(Data("test run: processes left running, now killed: \(named)\n".utf8))
        leftovers.forEach { kill($0, SIGKILL) }
        for pid in leftovers {
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
    }

    /// Every process below `pid`, children first, through /proc's per-thread children lists.
    static func descendants(of pid: Int32) -> [Int32] {
        var found: [Int32] = [], queue = [pid]
        while let next = queue.popLast() {
            let tasks = "/proc/\(next)/task"
            let children = ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).flatMap { task in
                ((try? String(contentsOfFile: "\(tasks)/\(task)/children", encoding: .utf8)) ?? "")
                    .split(separator: " ").compactMap { Int32($0) }
            }
            // A zombie holds nothing open: only the living count.
            let living = children.filter { !Self.isZombie($0) && !found.contains($0) }
            found += living
            queue += living
        }
        return found.filter { $0 > 0 && $0 != pid }
    }

    private static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    private static func command(of pid: Int32) -> String {
        let line = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
        return String(line.replacingOccurrences(of: "\0", with: " ").prefix(120))
    }
}
