import Foundation

/// `Cpus_allowed_list` of a process or thread as the kernel says it ("0-1", "3"): `proc` is
/// `/proc/<pid>`, `/proc/<pid>/task/<tid>`, `/proc/self` or `/proc/thread-self`.
public func allowedCPUs(_ proc: String = "/proc/thread-self") -> String? {
    (try? String(contentsOfFile: "\(proc)/status", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?
        .split(separator: "\t").last.map(String.init)
}

/// How many CPUs a `Cpus_allowed_list` names ("0,2-5": 5).
public func cpuCount(_ list: String) -> Int {
    list.split(separator: ",").reduce(0) { count, range in
        let ends = range.split(separator: "-").compactMap { Int($0) }
        return count + (ends.count == 2 ? ends[1] - ends[0] + 1 : ends.count)
    }
}

/// The calling thread's id (gettid(2) is not in Swift's Glibc module): /proc/thread-self is
/// "PID/task/TID".
public func currentThreadID() -> Int32? {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
        .flatMap { $0.split(separator: "/").last }.flatMap { Int32($0) }
}
