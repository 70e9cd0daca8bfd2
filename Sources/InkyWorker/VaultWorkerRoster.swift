import Foundation

/// Which workers hold which vault object's key, kept under the pool's lock (it has none of its
/// own): a worker handed an object is that object's for good (a compromised worker keeps what
/// it was sent), and a lock must reach every one of them, busy or idle.
struct VaultWorkerRoster {
    /// Workers handed a vault object (and sent its key) that are still running: pid → object.
    private var objects: [pid_t: String] = [:]
    /// Workers starting in the background for an object that has one busy.
    private var starting: [String: Int] = [:]
    /// Busy workers a lock killed: their request fails as the lock's, not as an outside kill's.
    private var killedAtLock: Set<pid_t> = []

    /// Vault workers' stderr goes to /dev/null, except under the debug-build compromised-worker
    /// hook, whose report is that stderr.
    static var areQuiet: Bool {
        #if DEBUG
        return !CompromisedWorkerProbe.isEnabled
        #else
        return true
        #endif
    }

    /// Workers holding a key right now.
    var count: Int { objects.count }

    /// Workers of object `path`, busy or idle, and those starting for it.
    func workers(of path: String) -> Int {
        objects.values.reduce(0) { $0 + ($1 == path ? 1 : 0) } + (starting[path] ?? 0)
    }

    mutating func claim(_ pid: pid_t, for path: String) { objects[pid] = path }

    mutating func startBegan(for path: String) { starting[path, default: 0] += 1 }

    mutating func startEnded(for path: String) {
        starting[path, default: 1] -= 1
        if starting[path] == 0 { starting[path] = nil }
    }

    /// A worker that is being stopped.
    mutating func forget(_ pid: pid_t) {
        objects[pid] = nil
        killedAtLock.remove(pid)
    }

    /// At lock, once the idle ones are forgotten: those left are busy, each holding a key and a
    /// decoder in the middle of a page the lock discards anyway. Killed now, so no key outlives
    /// the lock in a worker and the kernel's invalidation of the vault's files waits for no
    /// decode. Each is still unreaped (`willReap` takes it out of here first), so its pid is its own.
    mutating func killBusy() {
        for pid in objects.keys where kill(pid, SIGKILL) == 0 { killedAtLock.insert(pid) }
    }

    /// Before a busy worker is reaped: it leaves the roster, so a lock signals no pid the system
    /// may give to another process. True if a lock killed it.
    mutating func willReap(_ pid: pid_t) -> Bool {
        objects[pid] = nil
        return killedAtLock.remove(pid) != nil
    }
}
