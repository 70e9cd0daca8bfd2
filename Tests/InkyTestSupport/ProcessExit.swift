import Foundation

extension Process {
    /// Waits for the child and returns its exit status (or 128 + signal).
    ///
    /// Foundation notices a child's exit when its end of a socket Foundation gave it closes, so
    /// `waitUntilExit` waits forever when the child left that socket to a background process.
    /// Reaping the child ourselves instead made Foundation keep the `Process`, and its pipes,
    /// for the rest of the run (two descriptors per command: thousands in one test run). So:
    /// wait for the exit without reaping (`WNOWAIT`), let Foundation reap and let go, and reap
    /// ourselves only if it has not noticed within half a second.
    public func waitForExit() -> Int32 {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        let deadline = Date().addingTimeInterval(0.5)
        while isRunning && Date() < deadline { usleep(1_000) }
        if !isRunning {
            waitUntilExit() // returns at once now; it is what releases the pipes
            return terminationReason == .uncaughtSignal ? 128 + terminationStatus : terminationStatus
        }
        var status: Int32 = 0
        while true {
            let reaped = waitpid(processIdentifier, &status, 0)
            if reaped == processIdentifier { break }
            if reaped < 0 && errno == EINTR { continue }
            // ECHILD: Foundation reaped it meanwhile, and says so in a moment.
            let noticed = Date().addingTimeInterval(1)
            while isRunning && Date() < noticed { usleep(1_000) }
            return isRunning ? -1 : terminationReason == .uncaughtSignal ? 128 + terminationStatus : terminationStatus
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
