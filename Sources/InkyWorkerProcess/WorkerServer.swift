import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyArchive
import InkyCore
import InkyWorker
import InkyImage
import InkyVault

/// The loop of a worker process (`inkyfs-worker`): reads requests from fd 3, parses archives
/// with InkyArchive, streams answers back. A hostile archive that crashes or hangs the parser
/// takes only this process down; the daemon's watchdog and respawn handle the rest.
public enum WorkerServer {
    /// Applies the worker's resource limits, then serves until the daemon closes the socket.
    /// Every comic comes as a descriptor the daemon opened, with its request (`RequestFiles`):
    /// the worker opens nothing by name. With `images`, the image library starts before the
    /// filter (it loads its format modules, which the filter's world may not reach): a mount that
    /// converts pages passes it. With `library` (a mount's worker), it confines itself
    /// (`Landlock`) to reading the system's libraries and nothing else, before the seccomp filter;
    /// with `dropRoot` too (a root mount's), it first becomes nobody with no capability (`PrivilegeDrop`).
    public static func run(socket: Int32 = 3, limits: WorkerLimits = WorkerLimits(), library: String? = nil,
                           images: Bool = false, dropRoot: Bool = false) -> Never {
        nameTheTimeZone()
        ProcessHardening.makeNonDumpable()
        ProcessHardening.forbidNewPrivileges()
        ProcessHardening.releaseLargeBuffersEagerly()
        limits.apply()
        // A root mount's worker becomes nobody, without any capability (the daemon opens the
        // comics), while it still has a single thread (capabilities are set per thread; later
        // threads inherit them). The command line's workers run as their user and are left as they are.
        if library != nil, dropRoot, case .failed(let step, let error) = PrivilegeDrop.dropRoot() {
            FileHandle.standardError.write(Data("inkyfs worker: cannot drop root (step \(step)): \(error); it may still be root\n".utf8))
        }
        exitWhenOrphaned()
        signal(SIGPIPE, SIG_IGN)
        let channel = FrameChannel(fd: socket, acceptsDescriptors: true)
        if images {
            do throws(ImageError) { try ImageConverter.start() } catch {
                FileHandle.standardError.write(Data("inkyfs worker: \(error); pages are served as they are\n".utf8))
            }
        }
        // A mount's worker reads the comics it is given and may open no file of the library, nor
        // any other but the system's libraries; the command line's workers are not confined.
        if library != nil, case .failed(let error) = Landlock.confine(readable: []) {
            FileHandle.standardError.write(Data("inkyfs worker: cannot confine to the system's libraries (Landlock): \(error)\n".utf8))
        }
        // Last: from here on the worker can only decode (SeccompFilter says what that leaves).
        if !SeccompFilter.install() {
            FileHandle.standardError.write(Data("inkyfs worker: no seccomp filter on this system; running without\n".utf8))
        }
        var session = WorkerSession()
        while true {
            let frame: WorkerFrame
            do throws(FrameChannel.Failure) {
                frame = try channel.receive(timeout: nil)
            } catch {
                exit(0) // the daemon went away
            }
            let request: WorkerRequest? = switch frame {
            case .binary(let bytes): WorkerCodec.request(binary: bytes)
            case .message(let json): WorkerCodec.request(json: json)
            case .data: nil
            }
            guard let request else { exit(2) }
            if case .useKey(let path) = request {
                guard let key = receiveKey(on: channel) else { exit(2) }
                session.keys[path] = key
                #if DEBUG
                CompromisedWorkerProbe.kept(key, for: path, holding: session.keys.count)
                #endif
                continue
            }
            // The files it reads, in the frame after it (nothing else may come there).
            guard let files = receiveFiles(on: channel) else { exit(2) }
            do throws(FrameChannel.Failure) {
                try session.handle(request, files: files, on: channel)
            } catch {
                exit(0)
            }
            // A key serves the one request it came with: the next brings its own.
            session.dropKeys()
            // CPU time is a lifetime limit: retire before reaching it so no request dies of it.
            if limits.cpuSecondsUsed() > limits.cpuSeconds / 2 { exit(0) }
        }
    }
}

extension WorkerServer {
    /// libarchive turns every ZIP member's DOS time into a `time_t` with `mktime`, twice per
    /// member (central directory and local header), and glibc's `mktime`, when TZ is unset,
    /// stats /etc/localtime on every call to see whether the zone changed: 32 `stat`s for a
    /// 16-page comic, a sixth of a worker's listing CPU. Naming the same zone file in TZ makes
    /// glibc read it once. Before any thread but this one runs (setenv is not thread-safe).
    static func nameTheTimeZone() {
        if getenv("TZ") == nil { setenv("TZ", ":/etc/localtime", 1) }
    }

    /// The 32-byte key frame, copied from the channel's buffer into locked memory and wiped there.
    static func receiveKey(on channel: FrameChannel) -> SecureBytes? {
        var key: SecureBytes?
        try? channel.receive(timeout: 5) { frame in
            guard case .data(let bytes) = frame else { return }
            if bytes.count == 32 { key = SecureBytes(count: 32) { $0.copyMemory(from: bytes) } }
            UnsafeMutableRawBufferPointer(mutating: bytes).initializeMemory(as: UInt8.self, repeating: 0)
        }
        return key
    }

    /// The frame of descriptors that follows a request (`RequestFiles`); nil for anything else.
    static func receiveFiles(on channel: FrameChannel) -> RequestFiles? {
        var files: RequestFiles?
        try? channel.receive(timeout: 5) { frame in
            guard case .data(let bytes) = frame else { return }
            files = RequestFiles.decode(bytes, descriptors: channel.takeDescriptors())
        }
        channel.takeDescriptors().forEach { close($0) }
        return files
    }

    /// Exits as soon as the daemon is gone, even while a decoder spins. PR_SET_PDEATHSIG is
    /// no use here: it fires when the *thread* that spawned us ends, and workers are spawned
    /// from short-lived threads (a dispatch queue's, a FUSE thread beyond the idle count).
    static func exitWhenOrphaned() {
        let parent = getppid()
        let watcher = Thread {
            while true {
                sleep(1)
                if getppid() != parent { _exit(0) }
            }
        }
        watcher.name = "inkyfs.orphan-watch"
        watcher.start()
    }
}

/// Sends replies; remembers the first failure (the daemon went away) and drops the rest, so
/// request handling only ever deals with `ComicError`.
final class ReplySink {
    private let channel: FrameChannel
    private(set) var failure: FrameChannel.Failure?

    init(_ channel: FrameChannel) { self.channel = channel }

    func send(_ reply: WorkerReply) { send(WorkerCodec.frame(reply)) }

    /// A data frame sent straight from `data` (no frame built around a copy of it).
    func send(data: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        do throws(FrameChannel.Failure) { try channel.sendData(data) } catch { failure = error }
    }

    private func send(_ frame: [UInt8]) {
        guard failure == nil else { return }
        do throws(FrameChannel.Failure) { try channel.send(frame) } catch { failure = error }
    }
}

/// Sends `.progress` at most once a second while a request decodes.
final class HeartbeatTarget {
    var sink: ReplySink?
    private var last = DispatchTime.now()

    func beat() {
        let now = DispatchTime.now()
        guard let sink, now.uptimeNanoseconds - last.uptimeNanoseconds > 1_000_000_000 else { return }
        last = now
        sink.send(.progress)
    }
}

/// Open readers kept between requests, so a solid stream continues where it stopped.
struct WorkerSession {
    /// Keyed by the limits too: a reader made for one page conversion (a server's fit to a
    /// reader's width) never serves a request with another.
    private var readers: [(path: String, identity: FileIdentity, limits: ComicLimits, reader: any ComicReader)] = []
    /// Keys of vault objects this worker was given for the current request, by object path.
    var keys: [String: SecureBytes] = [:]

    /// Forgets the keys given with the request. The readers opened with them stay (each holds its
    /// key): dropped, a solid archive's stream was decoded from the start again at every request
    /// (reading one whole decoded it once per page) and a ZIP's central directory parsed again for
    /// every page. Kept, a key stays in this worker no longer than the worker serves its object: the
    /// pool sends a worker given a key no other comic (it stops it instead) and stops every keyed
    /// worker at lock.
    mutating func dropKeys() { keys.removeAll() }
    private static let keptReaders = 4
    /// Where progress frames go during the current request.
    private let heartbeatTarget = HeartbeatTarget()
    private var heartbeat: () -> Void { { [heartbeatTarget] in heartbeatTarget.beat() } }

    init() {}

    mutating func handle(_ request: WorkerRequest, files: RequestFiles, on channel: FrameChannel) throws(FrameChannel.Failure) {
        let sink = ReplySink(channel)
        heartbeatTarget.sink = sink
        defer { heartbeatTarget.sink = nil }
        WorkerFault.inject(for: request)
        if case .list(let path, _) = request, let report = WorkerFault.probe(path) {
            sink.send(.failure(.corrupted(path: path, detail: report)))
            if let failure = sink.failure { throw failure }
            return
        }
        switch request {
        case .list(let path, let limits):
            do throws(ComicError) {
                // Listed afresh, never from a kept reader: a folder of images whose page was
                // rewritten in place keeps its identity, and its kept reader the old sizes.
                readers.removeAll { $0.path == path }
                let (identity, reader) = try open(path, files: files, expected: nil, limits: limits)
                var listing = reader.listing
                // A vault object's path is random hex: its tags alone, for the vault's own views
                // (kept in the daemon's memory, never in the index).
                listing.metadata = keys[path] == nil ? ListingMetadata.read(from: reader, path: path) : ListingMetadata.tags(from: reader)
                sink.send(.listing(WireListing(WorkerFault.tamper(listing, path: path)), identity: identity))
            } catch {
                sink.send(.failure(error))
            }
        case .read(let path, let identity, let entries, let limits):
            do throws(ComicError) {
                let reader = try open(path, files: files, expected: identity, limits: limits).1
                for entry in entries {
                    let page = entry.page
                    if page.isSizeKnown {
                        stream(entry.source, size: entry.size, to: sink) { chunkSink throws(ComicError) in
                            try reader.read(page, into: chunkSink)
                        }
                    } else {
                        streamRendered(page, of: reader, to: sink)
                    }
                }
            } catch {
                sink.send(.failure(error))
            }
            sink.send(.done)
        case .useKey:
            break // handled by the loop, which reads the key frame that follows
        case .comicInfo(let path, let identity, let limits):
            do throws(ComicError) {
                let reader = try open(path, files: files, expected: identity, limits: limits).1
                if let bytes = try reader.readComicInfo() {
                    stream(.comicInfo, size: Int64(bytes.count), to: sink) { chunkSink in
                        bytes.withUnsafeBytes { chunkSink($0) }
                    }
                }
            } catch {
                sink.send(.failure(error))
            }
            sink.send(.done)
        case .cover(let path, let identity, let entry, let height, let limits):
            do throws(ComicError) {
                let reader = try open(path, files: files, expected: identity, limits: limits).1
                let cover = try CoverMaker.cover(of: entry.page, in: reader, height: height, limits: limits)
                stream(entry.source, size: Int64(cover.count), to: sink) { chunkSink in
                    cover.withUnsafeBytes { chunkSink($0) }
                }
            } catch {
                sink.send(.failure(error))
            }
            sink.send(.done)
        }
        if let failure = sink.failure { throw failure }
    }

    /// Streams one entry as start, chunks, end; a decoder error becomes `pageFailed` and the
    /// daemon drops what it received of that page.
    private func stream(_ source: PageSource, size: Int64, to sink: ReplySink,
                        _ read: ((UnsafeRawBufferPointer) -> Void) throws(ComicError) -> Void) {
        sink.send(.pageStart(source, size: size))
        var pending: [UInt8] = []
        pending.reserveCapacity(WorkerFrame.chunkSize)
        do throws(ComicError) {
            try read { chunk in
                // A large chunk goes out as it is; small ones are gathered into one frame.
                if pending.isEmpty && chunk.count >= WorkerFrame.chunkSize / 4 {
                    var rest = chunk
                    while !rest.isEmpty {
                        let piece = UnsafeRawBufferPointer(rebasing: rest.prefix(WorkerFrame.chunkSize))
                        sink.send(data: piece)
                        rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(piece.count))
                    }
                    return
                }
                // Gathered frames stay at chunkSize whatever a reader hands over.
                var rest = chunk[...]
                while !rest.isEmpty {
                    let taken = rest.prefix(WorkerFrame.chunkSize - pending.count)
                    pending.append(contentsOf: taken)
                    rest = rest.dropFirst(taken.count)
                    if pending.count == WorkerFrame.chunkSize {
                        pending.withUnsafeBytes { sink.send(data: $0) }
                        pending.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !pending.isEmpty { pending.withUnsafeBytes { sink.send(data: $0) } }
            sink.send(.pageEnd(source))
        } catch {
            sink.send(.pageFailed(source, error))
        }
    }

    /// A page whose size is known only once it is rendered: rendered whole first, so that its
    /// `pageStart` can tell the daemon the size (which the daemon then keeps in its index).
    private func streamRendered(_ page: Page, of reader: any ComicReader, to sink: ReplySink) {
        let bytes: [UInt8]
        do throws(ComicError) {
            bytes = try reader.readPage(page)
        } catch {
            sink.send(.pageFailed(page.source, error))
            return
        }
        stream(page.source, size: Int64(bytes.count), to: sink) { chunkSink in
            bytes.withUnsafeBytes { chunkSink($0) }
        }
    }

    /// A reader for `path` from the descriptor the daemon passed, reused while the file keeps
    /// the identity the daemon expects (a folder's is made again: its pages come per request).
    private mutating func open(_ path: String, files: RequestFiles, expected: FileIdentity?,
                               limits: ComicLimits) throws(ComicError) -> (FileIdentity, any ComicReader) {
        // Known by what the daemon opened: a path swapped for a link since it listed it was
        // never followed (ELOOP, in the daemon), and is never read.
        let descriptor = files.takeComic()
        var handedOver = false
        defer { if descriptor >= 0, !handedOver { close(descriptor) } }
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            throw .io(path: path, errno: EBADF, detail: "the daemon passed no file")
        }
        let current = FileIdentity(info)
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        if let expected, expected != current {
            throw .io(path: path, errno: ESTALE, detail: "the file changed on disk since it was listed")
        }
        if !isFolder, let index = readers.firstIndex(where: { $0.path == path && $0.identity == current && $0.limits == limits }) {
            let kept = readers.remove(at: index)
            readers.append(kept)
            return (current, kept.reader)
        }
        readers.removeAll { $0.path == path && ($0.identity != current || isFolder) }
        var reader: any ComicReader
        handedOver = true
        if let key = keys[path] {
            // A vault object: parsed from chunks decrypted on demand, named only by its object
            // path (random hex) in any message, never by the comic's name.
            let object: VaultObjectReader
            do throws(VaultError) {
                object = try VaultObjectReader(descriptor: descriptor, path: path, key: key)
            } catch {
                throw .corrupted(path: path, detail: "vault object: \(error)")
            }
            reader = try ComicOpener.open(bytes: VaultObjectBytes(object), label: path, limits: limits)
        } else if isFolder {
            let members = files.takeFolderEntries().map { entry in
                let kind: EntryKind = switch entry.kind {
                case .page, .file: .file
                case .directory: .directory
                case .symlink: .symlink
                case .comic, .other: .other
                }
                return FolderMember(name: entry.name, kind: kind, size: entry.size, descriptor: entry.descriptor)
            }
            reader = try ComicOpener.open(folder: descriptor, members: members, label: path, limits: limits)
        } else {
            reader = try ComicOpener.open(descriptor: descriptor, label: path, limits: limits)
        }
        if limits.rendering.conversion.isActive {
            reader = ConvertingComicReader(reader, limits: limits, isPrivate: keys[path] != nil)
        }
        reader.onProgress = heartbeat
        // A folder's reader holds only this request's pages: never kept for the next.
        guard !isFolder else { return (current, reader) }
        readers.append((path, current, limits, reader))
        if readers.count > Self.keptReaders { readers.removeFirst() }
        return (current, reader)
    }
}
