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
    private var running = 0
    private var lastWorker: [String: pid_t] = [:]
    /// Workers started before the last `retireAll()` are stopped at their next check-in.
    private var epoch = 0
    private var epochs: [pid_t: Int] = [:]
    private var _keyProvider: (@Sendable (String) -> SecureBytes?)?
    /// Workers that were sent a vault object's key and are still running.
    private var keyedWorkers: Set<pid_t> = []
    private let storedPages: StoredPageReader
    private let vaultPages = VaultStoredPageReader()
    /// Where workers' stderr goes when `Configuration.workerOutput` says.
    private let output: WorkerOutput?

    /// Gives the key of a vault object by its path (nil for ordinary archives). Set while a
    /// vault is unlocked; a worker is sent a key only for the object it is asked about.
    public var keyProvider: (@Sendable (String) -> SecureBytes?)? {
        get { condition.withLock { _keyProvider } }
        set {
            condition.withLock { _keyProvider = newValue }
            // Readers opened with keys of before (unlock, lock) are not used again.
            vaultPages.dropAll()
        }
    }

    /// Worker processes holding a vault object's key right now (each holds one): the copies of
    /// keys outside the daemon's own memory, for `inkyfs vault debug`. 0 after a lock.
    public var workersHoldingKeys: Int { condition.withLock { keyedWorkers.count } }

    /// Stored pages of vault comics decrypted here, without a worker, since the start.
    public var vaultPagesDecryptedHere: Int { vaultPages.pagesServed }

    /// Stops every worker (idle ones now, busy ones when their request ends), so no worker
    /// keeps a reader, a decrypted chunk or a key of what came before: the vault's lock. The
    /// pool's own readers of vault objects go too.
    public func retireAll() {
        vaultPages.dropAll()
        let stopped = condition.withLock {
            epoch += 1
            let workers = idle
            idle.removeAll()
            running -= workers.count
            lastWorker.removeAll()
            workers.forEach(forget)
            return workers
        }
        for worker in stopped { worker.terminate() }
    }

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        storedPages = StoredPageReader(root: configuration.libraryRoot.map(LibraryRoot.init(path:)))
        output = configuration.discardWorkerOutput ? nil : configuration.workerOutput.flatMap(WorkerOutput.init)
    }

    /// Lists a comic in a worker.
    public func list(_ path: String, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
        var result: Result<(ComicListing, FileIdentity), ComicError>?
        try exchange(path: path, request: .list(path: path, limits: limits)) { reply, _ throws(ComicError) in
            switch reply {
            case .progress: return false
            case .listing(let wire, let identity):
                // Checked again here: a hijacked worker's names and sizes must not trap the daemon.
                let breach = wire.listing.breach(of: limits, fileSize: identity.size)
                result = breach.map { .failure(.parserFailed(path: path, detail: "the worker's listing is impossible: \($0)")) }
                    ?? .success((wire.listing, identity))
            case .failure(let error): result = .failure(error)
            default: throw .parserFailed(path: path, detail: "the worker answered out of turn")
            }
            return true
        }
        guard let result else { throw .parserFailed(path: path, detail: "the worker gave no listing") }
        return try result.get()
    }

    /// Streams entries of a comic; `deliver` gets each entry's complete bytes or its error,
    /// in the order the worker finishes them.
    /// Stored ZIP members are read here without a worker (`storedPage`).
    public func read(_ path: String, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                     deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
        var decoded: [EntryRequest] = []
        for entry in entries {
            if let stored = entry.stored, let result = storedPage(path, identity: identity, entry: entry, stored: stored, limits: limits) {
                deliver(entry.source, result)
            } else {
                decoded.append(entry)
            }
        }
        guard !decoded.isEmpty else { return }
        var collector = PageCollector(path: path, entries: decoded, renderedLimit: limits.maxPageBytes)
        try exchange(path: path, request: .read(path: path, identity: identity, entries: decoded, limits: limits)) { reply, data throws(ComicError) in
            try collector.accept(reply: reply, data: data, deliver: deliver)
        }
        if let failure = collector.requestFailure { throw failure }
    }

    /// A stored ZIP member read here: a vault object's by decrypting its range of the plaintext,
    /// a library file's with one `pread`; nil leaves it to a worker. A path with neither an idle
    /// reader nor a key is read as a plain file: after a lock that may be a vault object read
    /// late, whose ciphertext then fails the CRC-32 (and the library discards any vault page
    /// whose read began before the lock).
    private func storedPage(_ path: String, identity: FileIdentity, entry: EntryRequest, stored: StoredData,
                            limits: ComicLimits) -> Result<[UInt8], ComicError>? {
        switch vaultPages.read(path, identity: identity, entry: entry, stored: stored, limits: limits, key: { keyProvider?(path) }) {
        case .read(let result): return result
        case .toWorker: return nil
        case .notVaultObject: return storedPages.read(path, identity: identity, entry: entry, stored: stored, limits: limits)
        }
    }

    /// The ComicInfo.xml bytes, nil when the comic has none.
    public func comicInfo(_ path: String, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
        var collector = PageCollector(path: path, entries: [EntryRequest(source: .comicInfo, size: limits.maxPageBytes, name: "ComicInfo.xml")])
        var bytes: [UInt8]?
        try exchange(path: path, request: .comicInfo(path: path, identity: identity, limits: limits)) { reply, data throws(ComicError) in
            try collector.accept(reply: reply, data: data) { _, result in bytes = try? result.get() }
        }
        if let failure = collector.requestFailure { throw failure }
        return bytes
    }

    /// Sends one request and feeds replies (and data chunks, as `reply == nil`) to `handle`
    /// until it returns true (finished). `handle` throws only for protocol violations, after
    /// which the worker cannot be trusted and is stopped. Worker failures become `.parserFailed`.
    func exchange(path: String, request: WorkerRequest,
                          handle: (WorkerReply?, UnsafeRawBufferPointer?) throws(ComicError) -> Bool) throws(ComicError) {
        let key = keyProvider?(path)
        let worker = try checkOut(for: path, vault: key != nil)
        var healthy = false
        defer { checkIn(worker, healthy: healthy, for: path) }
        var violation: ComicError?
        do throws(FrameChannel.Failure) {
            if let key {
                keyed(worker, path)
                try worker.send(.useKey(path: path))
                // Straight from locked memory: no frame is built around a copy of the key.
                try key.withUnsafeBytes { (raw) throws(FrameChannel.Failure) in try worker.send(data: raw) }
            }
            try worker.send(request)
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
            worker.terminate()
            throw .parserFailed(path: path, detail: "timed out: the archive parser made no progress for \(Int(configuration.timeout)) s")
        } catch {
            let ending = worker.ending(grace: error == .closed ? 0.5 : 0)
            if ending.killedFromOutside, case .read = request {
                // Not the archive's doing: this read fails, the comic stays readable.
                throw .io(path: path, errno: EIO, detail: "the worker reading it was killed from outside (SIGKILL); reading again starts a new one")
            }
            throw .parserFailed(path: path, detail: error == .malformed ? "the worker sent garbage and was stopped" : "the worker \(ending)")
        }
        worker.terminate()
        throw violation ?? .parserFailed(path: path, detail: "the worker broke the protocol")
    }

    /// A worker for `path`: never one that was given another vault object's key (a compromised
    /// worker keeps what it was sent, so it must never be sent a second comic's key, nor see a
    /// library comic after a vault one); such a worker is stopped when room is needed. A vault
    /// object gets a worker whose stderr goes nowhere: a decoder's message may quote a name from
    /// inside the comic, and the daemon's log is a plaintext file.
    private func checkOut(for path: String, vault: Bool) throws(ComicError) -> WorkerProcess {
        condition.lock()
        defer { condition.unlock() }
        let quiet = configuration.discardWorkerOutput || (vault && Self.vaultWorkersAreQuiet)
        let fits = { (worker: WorkerProcess) in
            worker.vaultObject == path || (worker.vaultObject == nil && (!vault || worker.isQuiet == quiet))
        }
        while true {
            if let preferred = lastWorker[path], let index = idle.firstIndex(where: { $0.pid == preferred && fits($0) }) {
                return idle.remove(at: index)
            }
            if let index = idle.lastIndex(where: fits) { return idle.remove(at: index) }
            if running == configuration.maxWorkers, let index = idle.firstIndex(where: { !fits($0) }) {
                let other = idle.remove(at: index)
                running -= 1
                forget(other)
                other.terminate()
            }
            if running < configuration.maxWorkers {
                running += 1
                do throws(ComicError) {
                    let worker = try WorkerProcess(executable: configuration.executable, arguments: configuration.spawnArguments,
                                                   quiet: quiet, output: output?.descriptor)
                    epochs[worker.pid] = epoch
                    return worker
                } catch {
                    running -= 1
                    // Told as this comic's error (its ERROR.txt, its index entry), not the executable's.
                    throw error.relabeled(path)
                }
            }
            condition.wait()
        }
    }

    /// Vault workers' stderr goes to /dev/null, except under the debug-build compromised-worker
    /// hook, whose report is that stderr.
    private static var vaultWorkersAreQuiet: Bool {
        #if DEBUG
        return !CompromisedWorkerProbe.isEnabled
        #else
        return true
        #endif
    }

    /// Counts `worker` among those holding a vault key (`workersHoldingKeys`) from now on.
    private func keyed(_ worker: WorkerProcess, _ path: String) {
        condition.withLock {
            worker.vaultObject = path
            keyedWorkers.insert(worker.pid)
        }
    }

    /// A worker that is being stopped (the caller holds the lock).
    private func forget(_ worker: WorkerProcess) {
        epochs[worker.pid] = nil
        keyedWorkers.remove(worker.pid)
    }

    private func checkIn(_ worker: WorkerProcess, healthy: Bool, for path: String?) {
        condition.lock()
        let current = epochs[worker.pid] == epoch
        if !current || !healthy { forget(worker) }
        if healthy && !current {
            running -= 1
            condition.signal()
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
        condition.signal()
        condition.unlock()
    }

    /// Starts up to `count` workers in the background, so the first comic a reader opens does
    /// not wait for a process to start (about 20 ms for our binary).
    public func warmUp(_ count: Int) {
        DispatchQueue.global(qos: .utility).async { [self] in
            for _ in 0..<min(count, configuration.maxWorkers) {
                let started = condition.withLock {
                    guard running < configuration.maxWorkers else { return false }
                    running += 1
                    return true
                }
                guard started else { return }
                do throws(ComicError) {
                    let worker = try WorkerProcess(executable: configuration.executable, arguments: configuration.spawnArguments,
                                                   quiet: configuration.discardWorkerOutput, output: output?.descriptor)
                    condition.withLock { epochs[worker.pid] = epoch }
                    checkIn(worker, healthy: true, for: nil)
                } catch {
                    condition.withLock { running -= 1 }
                    return
                }
            }
        }
    }

    /// Stops every idle worker (busy ones stop when their request ends and the pool is gone).
    public func shutdown() {
        storedPages.closeAll()
        vaultPages.dropAll()
        condition.lock()
        let workers = idle
        idle.removeAll()
        running -= workers.count
        workers.forEach(forget)
        condition.unlock()
        for worker in workers { worker.terminate() }
        output?.close()
    }
}

/// Reassembles streamed entries and checks them against what was asked: a subverted worker
/// cannot make the daemon keep more bytes than the listing promised.
struct PageCollector {
    let path: String
    let sizes: [PageSource: Int64]
    /// The whole request failed (the file changed, the archive would not open); `.done` follows.
    private(set) var requestFailure: ComicError?
    private var current: (source: PageSource, size: Int64, bytes: [UInt8])?

    /// An entry asked for with an unknown size (a page rendered on demand) may be up to
    /// `renderedLimit` bytes; the worker's `pageStart` says how many it has.
    init(path: String, entries: [EntryRequest], renderedLimit: Int64 = 0) {
        self.path = path
        sizes = Dictionary(entries.map { ($0.source, $0.size < 0 ? renderedLimit : $0.size) }, uniquingKeysWith: { first, _ in first })
    }

    /// Returns true when the exchange is finished.
    /// `data` is only borrowed: it is copied into the page being assembled.
    mutating func accept(reply: WorkerReply?, data: UnsafeRawBufferPointer?,
                         deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) -> Bool {
        if let data {
            guard current != nil, Int64(current!.bytes.count + data.count) <= current!.size else {
                throw .parserFailed(path: path, detail: "the worker sent data it was not asked for")
            }
            current!.bytes.append(contentsOf: data)   // in place: the reserved page buffer, no copy of it
            return false
        }
        switch reply {
        case .pageStart(let source, let size)?:
            guard let limit = sizes[source], size >= 0, size <= limit else {
                throw .parserFailed(path: path, detail: "the worker started an entry it was not asked for")
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(size))
            current = (source, size, bytes)
        case .pageEnd(let source)?:
            guard let page = current, page.source == source, Int64(page.bytes.count) == page.size else {
                throw .parserFailed(path: path, detail: "the worker ended an entry with the wrong size")
            }
            current = nil
            deliver(source, .success(page.bytes))
        case .pageFailed(let source, let error)?:
            current = nil
            deliver(source, .failure(error))
        case .failure(let error)?:
            current = nil
            requestFailure = error
        case .done?:
            return true
        case .progress?:
            return false
        case .listing?, nil:
            throw .parserFailed(path: path, detail: "the worker answered out of turn")
        }
        return false
    }
}
