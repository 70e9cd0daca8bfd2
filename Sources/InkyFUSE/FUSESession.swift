import Foundation
internal import CFuse3
internal import CInkyFuseDevice
import InkyCore
import InkyTree

/// A mounted FUSE session serving a `MountedFilesystem`, multithreaded. Read-only but for the
/// one write a tree accepts (`MountedFilesystem.unlink`): the mount is not `ro` (the kernel would
/// refuse that write itself), so every other write is refused by the callbacks (`FUSEWrites`).
/// `ro` among the options (`inkyfs mount --read-only`) has the kernel refuse them all.
public final class FUSESession {
    public enum Failure: Error, CustomStringConvertible {
        /// With what libfuse said, when it said something.
        case cannotCreate(String?)
        case cannotMount(String, String?)

        public var description: String {
            switch self {
            case .cannotCreate(let reason): "libfuse refused the mount options" + (reason.map { ": \($0)" } ?? "")
            case .cannotMount(let mountpoint, let reason): "cannot mount on \(mountpoint)" + (reason.map { ": \($0)" } ?? "")
            }
        }
    }

    private let context: FUSEContext
    private let mountpoint: String
    private let options: [String]

    /// `options` are FUSE `-o` options (`allow_other`, …); `nosuid`, `nodev` and
    /// `default_permissions` (the kernel checks modes) are always added.
    public init(filesystem: any MountedFilesystem, mountpoint: String, options: [String], log: @escaping LogSink) {
        let readOnly = options.contains { $0.split(separator: ",").contains("ro") }
        context = FUSEContext(filesystem: filesystem, readOnly: readOnly, log: log)
        self.mountpoint = mountpoint
        self.options = options
    }

    /// Mounts, calls `ready` once the kernel answers, serves until unmounted or signalled.
    /// Returns 0, or the signal number after SIGTERM/SIGINT/SIGHUP: both are clean exits.
    public func run(maxThreads: Int = 16, ready: () -> Void) throws(Failure) -> Int32 {
        // Only argv[0] and real options: positional arguments crash fuse_session_new.
        let fsname = context.filesystem.sourcePath.replacingOccurrences(of: ",", with: "_")
        let optionText = (["nosuid", "nodev", "default_permissions", "fsname=\(fsname)", "subtype=inkyfs"] + options).joined(separator: ",")
        let argv = ["inkyfs", "-o", optionText].map { text in text.withCString { strdup($0) } }
        defer { argv.forEach { free($0) } }
        var cArgv = argv
        return try cArgv.withUnsafeMutableBufferPointer { buffer -> Result<Int32, Failure> in
            var args = fuse_args(argc: Int32(argv.count), argv: buffer.baseAddress, allocated: 0)
            var ops = FUSECallbacks.operations()
            let userdata = Unmanaged.passRetained(context).toOpaque()
            defer { Unmanaged<FUSEContext>.fromOpaque(userdata).release() }
            // libfuse says why it refuses on its own stderr, which a daemon in the background
            // sends to its log: kept, so the person mounting reads it on the terminal too.
            FUSEMessages.capture()
            guard let session = fuse_session_new(&args, &ops, MemoryLayout<fuse_lowlevel_ops>.size, userdata) else {
                fuse_opt_free_args(&args)
                return .failure(.cannotCreate(FUSEMessages.last()))
            }
            defer {
                fuse_session_destroy(session)
                fuse_opt_free_args(&args)
            }
            guard fuse_set_signal_handlers(session) == 0 else { return .failure(.cannotCreate(FUSEMessages.last())) }
            defer { fuse_remove_signal_handlers(session) }
            guard fuse_session_mount(session, mountpoint) == 0 else { return .failure(.cannotMount(mountpoint, FUSEMessages.last())) }
            // Waited for once unmounted (defers run last to first): its stat may wait on the device.
            let rootAttributes = MountRootAttributes()
            defer { rootAttributes.join() }
            defer { fuse_session_unmount(session) }
            var io = Self.deviceIO()
            var cpus: Int32 = 0
            if fuse_session_custom_io(session, &io, fuse_session_fd(session)) != 0 {
                context.log("parallel directory operations: off (libfuse refused the device I/O that asks for them)")
            } else {
                cpus = inky_device_readers_begin(context.deviceReaders, fuse_session_fd(session))
                context.logDeviceReaders(cpus)
            }
            let kernelCache = FUSEKernelCache(session: session, context: context)
            context.filesystem.kernelCache = kernelCache
            defer { context.filesystem.kernelCache = nil }
            ready()
            // After `ready`: the root's invalidations are held from here on whenever it runs, and
            // started first its work only competed with saying ready.
            rootAttributes.start(mountpoint: mountpoint, session: session, cache: kernelCache, log: context.log)
            // Idle threads are kept (0: libfuse's default); at most one per CPU waits on the
            // device, the rest on the readers' semaphore (fuse_device.c says why).
            return .success(inky_fuse_session_loop_mt(session, UInt32(maxThreads), 0))
        }.get()
    }
}

/// Parallel directory operations: the device I/O that asks the kernel for them, which libfuse
/// 3.14 cannot (see shim.h). Without them one lookup stuck on a hanging archive holds up every
/// lookup and listing of its folder until the worker watchdog ends it.
extension FUSESession {
    /// Installed where libfuse would read and write the device itself; the same device, the same
    /// syscalls, with the INIT exchange watched. Each wrapper's last act is the C call, so the
    /// errno libfuse reads after it is the syscall's.
    fileprivate static func deviceIO() -> fuse_custom_io {
        var io = fuse_custom_io()
        io.read = { descriptor, buffer, length, userdata in
            let context = Unmanaged<FUSEContext>.fromOpaque(userdata!).takeUnretainedValue()
            return inky_read_watching_init(descriptor, buffer, length, context.diropsWatch, context.deviceReaders)
        }
        io.writev = { descriptor, vectors, count, userdata in
            let watch = Unmanaged<FUSEContext>.fromOpaque(userdata!).takeUnretainedValue().diropsWatch
            return inky_writev_granting_dirops(descriptor, vectors, count, watch)
        }
        // Without these libfuse would stop offering splice (FUSE_CAP_SPLICE_WRITE).
        io.splice_send = { input, inputOffset, output, outputOffset, length, flags, _ in
            inky_splice(input, inputOffset, output, outputOffset, length, flags)
        }
        io.splice_receive = { input, inputOffset, output, outputOffset, length, flags, _ in
            inky_splice(input, inputOffset, output, outputOffset, length, flags)
        }
        return io
    }
}

extension FUSEContext {
    /// Said once, at mount: whether requests are answered on the CPU that made them (shim.h).
    func logDeviceReaders(_ cpus: Int32) {
        if cpus > 0 {
            log("device readers: pinned over \(cpus) CPUs, each request answered on its requester's CPU where a reader waits there")
        } else {
            log("device readers: plain blocking reads (the daemon may run on one CPU only, or the device stayed blocking)")
        }
    }

    /// Said once, at INIT (its reply not sent yet): whether lookups and listings in one folder
    /// reach the daemon side by side.
    func logDirectoryParallelism() {
        switch Int(inky_dirops_state(diropsWatch)) {
        case INKY_DIROPS_REPLY_PENDING, INKY_DIROPS_GRANTED:
            log("parallel directory operations: on (lookups and listings in one folder run side by side)")
        case INKY_DIROPS_NOT_OFFERED:
            log("parallel directory operations: off (the kernel did not offer FUSE_PARALLEL_DIROPS): lookups in one folder run one at a time")
        default:
            log("parallel directory operations: off (the INIT request was not seen)")
        }
    }
}
