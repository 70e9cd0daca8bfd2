import Foundation
import InkyCore
import InkyVault

/// A small pool of worker processes that parse and decode archives for the daemon.
///
/// A comic's requests prefer the worker that served it last (its reader keeps a solid stream's
/// position); any idle worker will do otherwise. A worker that crashes, sends garbage, or makes
/// no progress for `timeout` seconds is killed, the comic's request fails with `.parserFailed`,
/// and a fresh worker replaces it on demand. Thread-safe; callers block while they wait.
// @unchecked: idle WorkerProcesses (not Sendable) pass between callers under `condition`, which callers wait on.
public final class WorkerPool: @unchecked Sendable {
    private let configuration: Configuration
    private let condition = NSCondition()
    private var idle: [WorkerProcess] = []
    /// Signalled by `beginShutdown()`, reaped by `shutdown()`.
    private var stopping: [WorkerProcess] = []
    /// Exited, not reaped: `shutdown(reaping: false)`.
    private var exited: [WorkerProcess] = []
    private var running = 0
    private var lastWorker: [String: pid_t] = [:]
    /// Workers started before the last `retireAll()` are stopped at their next check-in.
    private var epoch = 0
    private var epochs: [pid_t: Int] = [:]
    private var vaultWorkers = VaultWorkerRoster()
    /// Workers starting in the background for no comic yet (a vault's, at unlock), by whether
    /// their output is discarded: a request they fit waits for one rather than start its own.
    private var startingAhead: [Bool: Int] = [:]
    /// Stored ZIP pages read here, of library files and of vault objects (`read`).
    let storedPages: StoredPageReader
    let vaultPages = VaultStoredPageReader()
    /// Where workers' stderr goes when `Configuration.workerOutput` says.
    private let output: WorkerOutput?

    /// Worker processes holding a vault object's key right now (each holds one): the copies of
    /// keys outside the daemon's own memory, for `inkyfs vault debug`. 0 after a lock.
    public var workersHoldingKeys: Int { condition.withLock { vaultWorkers.count } }

    /// Stored pages of vault comics decrypted here, without a worker, since the start.
    public var vaultPagesDecryptedHere: Int { vaultPages.pagesServed }

    /// Stops every worker (idle ones and busy vault ones now, other busy ones when their request
    /// ends), so no worker keeps a reader, a decrypted chunk or a key of what came before: the
    /// vault's lock. The pool's own readers of vault objects go too.
    public func retireAll() {
        vaultPages.dropAll()
        let stopped = condition.withLock {
            epoch += 1
            let workers = idle
            idle.removeAll()
            running -= workers.count
            lastWorker.removeAll()
            workers.forEach(forget)
            vaultWorkers.killBusy()
            return workers
        }
        Self.end(stopped)
    }

    /// `root`: `configuration.libraryRoot` opened already (a mount's, shared with its library), else opened here.
    public init(_ configuration: Configuration, root: LibraryRoot? = nil) {
        precondition(root == nil || root?.path == configuration.libraryRoot, "the library opened is not the pool's")
        self.configuration = configuration
        storedPages = StoredPageReader(root: root ?? configuration.libraryRoot.map { LibraryRoot(path: $0, cachedFolders: 16) })
        output = configuration.discardWorkerOutput ? nil : configuration.workerOutput.flatMap(WorkerOutput.init)
    }

    /// Sends one request and feeds replies (and data chunks, as `reply == nil`) to `handle`
    /// until it returns true (finished). `handle` throws only for protocol violations, after
    /// which the worker cannot be trusted and is stopped. Worker failures become `.parserFailed`.
    /// A vault object's request is sent with its key, to a worker of that object only (`checkOut`).
    func exchange(_ source: ComicSource, request: WorkerRequest,
                  handle: (WorkerReply?, UnsafeRawBufferPointer?) throws(ComicError) -> Bool) throws(ComicError) {
        let path = source.path
        if case .vaultObject(_, let key) = source, key.isRevoked { throw Self.locked(path) }
        let decodes = switch request { case .read, .cover: true; default: false }
        let files = try RequestFiles.open(for: request, isVaultObject: source.isVaultObject, root: storedPages.root) // workers open nothing
        let worker = try checkOut(for: path, vault: source.isVaultObject, decodes: decodes,
                                  images: configuration.loadsImages(vault: source.isVaultObject, for: request))
        var healthy = false
        defer { checkIn(worker, healthy: healthy, for: path) }
        var violation: ComicError?
        do throws(FrameChannel.Failure) {
            if case .vaultObject(_, let key) = source, try !Self.send(key, for: path, to: worker) {
                // Locked since: nothing is asked, and the worker (lock stops them all) goes.
                violation = Self.locked(path)
            } else {
                try worker.send(request, files: files)
            }
            var finished = false
            var malformed = false
            while !finished && violation == nil && !malformed {
                try worker.receive(timeout: configuration.timeout) { frame in
                    var reply: WorkerReply?
                    var data: UnsafeRawBufferPointer?
                    switch frame {
                    case .binary(let bytes): reply = WorkerCodec.reply(binary: bytes)
                    case .message(let json): reply = WorkerCodec.reply(json: json)
                    case .data(let bytes): data = bytes
                    }
                    if reply == nil && data == nil {
                        malformed = true
                        return
                    }
                    do throws(ComicError) {
                        finished = try handle(reply, data)
                    } catch {
                        violation = error
                    }
                }
            }
            if malformed { throw .malformed }
            if finished {
                healthy = true
                return
            }
        } catch .timedOut {
            let locked = willReap(worker)
            worker.terminate()
            if locked { throw Self.locked(path) }
            throw .parserFailed(path: path, detail: "timed out: the archive parser made no progress for \(Int(configuration.timeout)) s")
        } catch {
            let locked = willReap(worker)
            let ending = worker.ending(grace: error == .closed ? 0.5 : 0)
            if locked { throw Self.locked(path) }
            if ending.killedFromOutside, case .read = request {
                // Not the archive's doing: this read fails, the comic stays readable.
                throw .io(path: path, errno: EIO, detail: "the worker reading it was killed from outside (SIGKILL); reading again starts a new one")
            }
            throw .parserFailed(path: path, detail: error == .malformed ? "the worker sent garbage and was stopped" : "the worker \(ending)")
        }
        _ = willReap(worker)
        worker.terminate()
        throw violation ?? .parserFailed(path: path, detail: "the worker broke the protocol")
    }

    /// Before a busy worker is reaped (`VaultWorkerRoster.willReap`). True if a lock killed it.
    private func willReap(_ worker: WorkerProcess) -> Bool {
        condition.withLock { vaultWorkers.willReap(worker.pid) }
    }

    /// A worker for `path`: never one that was given another vault object's key (a compromised
    /// worker keeps what it was sent, so it must never be sent a second comic's key, nor see a
    /// library comic after a vault one); such a worker is stopped when room is needed. A vault
    /// object gets a worker whose stderr goes nowhere: a decoder's message may quote a name from
    /// inside the comic, and the daemon's log is a plaintext file.
    ///
    /// A vault object keeps the workers it was given while there is room, so switching between
    /// vault comics starts none: each goes back to its own. While its own worker is busy, a
    /// request waits for it (a page's decode, milliseconds) instead of starting one in its place
    /// (a process and its sandbox, 40-180 ms), or of stopping another comic's; a second worker
    /// for it starts beside, in the background, only in a free slot (`vaultWorkersPerObject`),
    /// and only for a request that `decodes` pages (a listing or a ComicInfo.xml takes its own
    /// worker milliseconds, less than a start: the vault's views list every comic as the
    /// reader lists the first, and each second worker started for that was never used).
    /// A request that needs `images` gets a worker that loaded the image library.
    private func checkOut(for path: String, vault: Bool, decodes: Bool, images: Bool) throws(ComicError) -> WorkerProcess {
        condition.lock()
        defer { condition.unlock() }
        let quiet = configuration.discardWorkerOutput || (vault && VaultWorkerRoster.areQuiet)
        let fits = { (worker: WorkerProcess) in
            (!images || worker.hasImages)
                && (worker.vaultObject == path || (worker.vaultObject == nil && (!vault || worker.isQuiet == quiet)))
        }
        while true {
            if let preferred = lastWorker[path], let index = idle.firstIndex(where: { $0.pid == preferred && fits($0) }) {
                return claim(idle.remove(at: index), for: path, vault: vault)
            }
            // Its own before a fresh one, which another comic may need.
            if vault, let index = idle.lastIndex(where: { $0.vaultObject == path }) { return idle.remove(at: index) }
            if let index = idle.lastIndex(where: fits) { return claim(idle.remove(at: index), for: path, vault: vault) }
            if vault, vaultWorkers.workers(of: path) > 0 {
                if decodes, running < configuration.maxWorkers, vaultWorkers.workers(of: path) < vaultWorkersPerObject {
                    startInBackground(quiet: quiet, for: path)
                }
                condition.wait()
                continue
            }
            // One started ahead is nearly ready (a vault's first listing comes right after the
            // unlock that started them): starting another for this request costs a process start
            // (40-180 ms of CPU) and waits as long.
            if (vault ? startingAhead[quiet] ?? 0 : startingAhead.values.reduce(0, +)) > 0 {
                condition.wait()
                continue
            }
            if running == configuration.maxWorkers, let index = leastNeededIdle(notFitting: fits) {
                let other = idle.remove(at: index)
                running -= 1
                forget(other)
                other.terminate()
            }
            if running < configuration.maxWorkers {
                running += 1
                do throws(ComicError) {
                    let worker = try spawn(quiet: quiet, images: images)
                    epochs[worker.pid] = epoch
                    return claim(worker, for: path, vault: vault)
                } catch {
                    running -= 1
                    // Told as this comic's error (its ERROR.txt, its index entry), not the executable's.
                    throw error.relabeled(path)
                }
            }
            condition.wait()
        }
    }

    /// After a vault comic is listed: a second worker for it starts beside, in a free slot, when
    /// it has pages a worker decodes (the daemon reads stored ones itself), so its pages decode
    /// two at a time from the first read on and switching to it later starts none. A comic of
    /// stored pages gets none: its listing's worker is all it needs.
    func startDecoding(_ path: String, listing: ComicListing) {
        guard listing.pages.contains(where: { $0.storedData == nil }) else { return }
        condition.withLock {
            // Only a vault object has workers of its own (the one that listed it, at least).
            guard vaultWorkers.workers(of: path) == 1, running < configuration.maxWorkers else { return }
            startInBackground(quiet: configuration.discardWorkerOutput || VaultWorkerRoster.areQuiet, for: path)
        }
    }

    /// A vault object's worker is its own from the moment it is handed out (the caller holds the lock).
    private func claim(_ worker: WorkerProcess, for path: String, vault: Bool) -> WorkerProcess {
        if vault, worker.vaultObject == nil {
            worker.vaultObject = path
            vaultWorkers.claim(worker.pid, for: path)
        }
        return worker
    }

    /// At most this many workers read one vault object: its pages decode side by side, one
    /// waiting for the disk while another decodes (two, on two CPUs, read a cold deflated comic
    /// 25% slower than four), and one slot stays free for another comic, which then starts its
    /// first worker without stopping one.
    private var vaultWorkersPerObject: Int { max(1, configuration.maxWorkers - 1) }

    /// The idle worker to stop for a request none fits: one that holds no key, else one of an
    /// object that has another worker, else the one idle longest (the caller holds the lock).
    private func leastNeededIdle(notFitting fits: (WorkerProcess) -> Bool) -> Int? {
        let candidates = idle.indices.filter { !fits(idle[$0]) }
        let rank = { (index: Int) -> Int in
            guard let object = self.idle[index].vaultObject else { return 0 }
            return self.vaultWorkers.workers(of: object) > 1 ? 1 : 2
        }
        return candidates.min { rank($0) < rank($1) }   // ties: the first, idle longest
    }

    /// Starts a fresh worker in a free slot without waiting for it: it joins the idle ones,
    /// where the request that wanted it (or any that fits) takes it.
    private func startInBackground(quiet: Bool, for path: String?) {
        running += 1
        if let path { vaultWorkers.startBegan(for: path) } else { startingAhead[quiet, default: 0] += 1 }
        let started = epoch
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            // Only the vault's workers start this way.
            let worker = try? spawn(quiet: quiet, images: configuration.loadsImages(vault: true))
            condition.withLock {
                if let path {
                    vaultWorkers.startEnded(for: path)
                } else {
                    startingAhead[quiet, default: 1] -= 1
                }
                if let worker { epochs[worker.pid] = started }
            }
            if let worker {
                checkIn(worker, healthy: true, for: nil)
            } else {
                condition.withLock { running -= 1 }
                condition.broadcast()
            }
        }
    }

    /// As a vault is unlocked: workers for its comics started ahead, in free slots, so the
    /// first comic opened (and the second worker of each) does not wait for a process to start.
    /// Those already idle or starting count: calling it again starts no more. `atMost` caps the
    /// count, for workers started while the password is derived (each CPU they take is one
    /// the derivation waits for).
    public func warmUpVaultWorkers(atMost limit: Int = .max) {
        condition.withLock {
            let quiet = configuration.discardWorkerOutput || VaultWorkerRoster.areQuiet
            let spare = idle.filter { $0.vaultObject == nil && $0.isQuiet == quiet }.count + (startingAhead[quiet] ?? 0)
            let ahead = min(vaultWorkersPerObject, ProcessInfo.processInfo.activeProcessorCount, limit)
            for _ in spare..<max(spare, ahead) where running < configuration.maxWorkers {
                startInBackground(quiet: quiet, for: nil)
            }
        }
    }

    private func spawn(quiet: Bool, images: Bool) throws(ComicError) -> WorkerProcess {
        try WorkerProcess(executable: configuration.executable, arguments: configuration.spawnArguments(images: images),
                          images: images, quiet: quiet, output: output?.descriptor)
    }

    /// A worker that is being stopped (the caller holds the lock).
    private func forget(_ worker: WorkerProcess) {
        epochs[worker.pid] = nil
        vaultWorkers.forget(worker.pid)
    }

    private func checkIn(_ worker: WorkerProcess, healthy: Bool, for path: String?) {
        condition.lock()
        let current = epochs[worker.pid] == epoch
        if !current || !healthy { forget(worker) }
        if healthy && !current {
            running -= 1
            condition.broadcast()
            condition.unlock()
            worker.terminate()
            return
        }
        if healthy {
            idle.append(worker)
            if let path { lastWorker[path] = worker.pid }
            if lastWorker.count > 4096 { lastWorker.removeAll() }
        } else {
            running -= 1
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Starts up to `count` workers in the background: the first comic opened waits for no start.
    public func warmUp(_ count: Int) {
        DispatchQueue.global(qos: .utility).async { [self] in
            for _ in 0..<count { guard startIdle() else { return } }
        }
    }

    /// Starts one worker on this thread (a spawn, under a millisecond), idle for the next request; false if full or failed.
    public func startIdle() -> Bool {
        let room = condition.withLock { () -> Bool in
            guard running < configuration.maxWorkers else { return false }
            running += 1
            return true
        }
        guard room else { return false }
        guard let worker = try? spawn(quiet: configuration.discardWorkerOutput, images: configuration.loadsImages(vault: false)) else {
            condition.withLock { running -= 1 }
            return false
        }
        condition.withLock { epochs[worker.pid] = epoch }
        checkIn(worker, healthy: true, for: nil)
        return true
    }

    /// Signals every idle worker to end and returns at once: they give back their memory while
    /// the caller finishes its own work (a daemon's last writes); `shutdown()` reaps them.
    public func beginShutdown() {
        let workers = takeIdle()
        workers.forEach { $0.signalEnd() }
        condition.withLock { stopping += workers }
    }

    /// Stops every idle worker and those `beginShutdown()` signalled, and waits until they are
    /// gone (busy ones stop when their request ends and the pool is gone). `reaping: false`, for
    /// a process that ends right after: waits until they have exited and leaves them unreaped
    /// (`WorkerProcess.awaitExit`), kept here so that nothing reaps them before the process ends.
    public func shutdown(reaping: Bool = true) {
        storedPages.closeAll()
        vaultPages.dropAll()
        let workers = takeIdle() + condition.withLock { () -> [WorkerProcess] in
            defer { stopping.removeAll() }
            return stopping
        }
        if reaping {
            Self.end(workers)
        } else {
            workers.forEach { $0.signalEnd() }
            workers.forEach { $0.awaitExit() }
            condition.withLock { exited += workers }
        }
        output?.close()
    }

    private func takeIdle() -> [WorkerProcess] {
        condition.withLock {
            let workers = idle
            idle.removeAll()
            running -= workers.count
            workers.forEach(forget)
            return workers
        }
    }

    /// All signalled first, then each reaped: they end side by side, not one after another
    /// (each takes a few ms to give its memory back).
    private static func end(_ workers: [WorkerProcess]) {
        for worker in workers { worker.signalEnd() }
        for worker in workers { worker.terminate() }
    }
}
