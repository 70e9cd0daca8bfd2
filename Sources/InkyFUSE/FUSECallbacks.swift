import Foundation
internal import CFuse3
import InkyCore
import InkyTree

/// The low-level operations table. Every callback is nonisolated C-convention code that finds
/// its state through `fuse_req_userdata`, copies what it needs out of `name`/`fi` (they live
/// only during the call) and answers through a `FUSEReply`.
enum FUSECallbacks {
    static func context(_ request: fuse_req_t?) -> FUSEContext {
        Unmanaged<FUSEContext>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    static func operations() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, connection in
            guard let connection else { return }
            inky_conn_tune(connection, 1 << 20)
            let context = Unmanaged<FUSEContext>.fromOpaque(userdata!).takeUnretainedValue()
            context.opendirOptional = inky_conn_opendir_optional(connection) != 0
            context.logDirectoryParallelism()
        }
        ops.lookup = { request, parent, name in
            let reply = FUSEReply(request!)
            let name = FUSECallbacks.takeName(name)
            let context = FUSECallbacks.context(request)
            let lookup = context.lookingUp(parent, name)
            defer { context.lookedUp(lookup) }
            switch context.filesystem.lookup(parent: NodeID(parent), name: name) {
            case .success(let attributes): reply.entry(attributes)
            case .failure(let code): reply.error(code)
            }
        }
        ops.getattr = { request, inode, _ in
            let reply = FUSEReply(request!)
            switch FUSECallbacks.context(request).filesystem.attributes(of: NodeID(inode)) {
            case .success(let attributes): reply.attributes(attributes)
            case .failure(let code): reply.error(code)
            }
        }
        // Directories need no open: each readdir lists its directory by inode (entries are
        // cached per folder and per comic generation). ENOSYS tells the kernel to stop sending
        // OPENDIR and RELEASEDIR (FUSE_CAP_NO_OPENDIR_SUPPORT), two round trips per directory
        // of a recursive listing; it then caches listings until the directory's mtime moves
        // or the directory is invalidated (library watcher, vault lock and unlock).
        ops.opendir = { request, _, info in
            let reply = FUSEReply(request!)
            if FUSECallbacks.context(request).opendirOptional { return reply.error(.ENOSYS) }
            reply.open(info!)
        }
        ops.readdir = { request, inode, size, offset, _ in
            FUSECallbacks.readDirectory(request!, inode: inode, size: size, offset: offset, plus: false)
        }
        // The kernel asks for readdirplus (FUSE_CAP_READDIRPLUS): a comic's page entries come
        // with their attributes, so `ls -l` of 400 pages is one request, not 400 lookups.
        ops.readdirplus = { request, inode, size, offset, _ in
            FUSECallbacks.readDirectory(request!, inode: inode, size: size, offset: offset, plus: true)
        }
        ops.open = { request, inode, info in
            let reply = FUSEReply(request!)
            guard !FUSECallbacks.opensForWriting(inky_fi_flags(info)) else { return reply.error(FUSECallbacks.readOnly) }
            let context = FUSECallbacks.context(request)
            switch context.filesystem.open(NodeID(inode), caller: FUSECallbacks.caller(request)) {
            case .success(let opened):
                // fh 0 means "no descriptor"; a passthrough descriptor is stored plus one.
                inky_fi_set_fh(info, opened.descriptor.map { UInt64($0) + 1 } ?? 0)
                inky_fi_set_keep_cache(info, opened.keepCache ? 1 : 0)
                // Only where such a file can still be mapped shared: image viewers map pages.
                inky_fi_set_direct_io(info, opened.directIO && context.directIOMaps ? 1 : 0)
                reply.open(info!)
            case .failure(let code):
                reply.error(code)
            }
        }
        ops.read = { request, inode, size, offset, info in
            FUSECallbacks.read(request!, inode: inode, size: size, offset: offset, handle: inky_fi_fh(info))
        }
        ops.release = { request, inode, info in
            let handle = inky_fi_fh(info)
            if handle != 0 { close(Int32(handle - 1)) }
            FUSECallbacks.context(request).filesystem.release(NodeID(inode))
            FUSEReply(request!).ok()
        }
        ops.getxattr = { request, inode, name, size in
            let reply = FUSEReply(request!)
            let name = String(cString: name!)
            // `ls -l` and file managers ask every file for security.selinux and
            // system.posix_acl_access: two round trips per file, as many as the listing itself.
            // "Namespace not supported" is the truth for everything outside user.*, and ls
            // remembers it for the whole mount after the first file instead of asking again.
            guard name.hasPrefix("user.") else { return reply.error(.EOPNOTSUPP) }
            guard let value = FUSECallbacks.context(request).filesystem.extendedAttributes(of: NodeID(inode))[name] else {
                return reply.error(.ENODATA)
            }
            if size == 0 { return reply.xattrSize(value.count) }
            guard size >= value.count else { return reply.error(.ERANGE) }
            reply.bytes(value)
        }
        ops.listxattr = { request, inode, size in
            let reply = FUSEReply(request!)
            let names: [String] = FUSECallbacks.context(request).filesystem.extendedAttributes(of: NodeID(inode)).keys.sorted()
            var list: [UInt8] = []
            for name in names { list += Array(name.utf8) + [0] }
            if size == 0 { return reply.xattrSize(list.count) }
            guard size >= list.count else { return reply.error(.ERANGE) }
            reply.bytes(list)
        }
        ops.readlink = { request, inode in
            let reply = FUSEReply(request!)
            switch FUSECallbacks.context(request).filesystem.readLink(NodeID(inode)) {
            case .success(let target): reply.link(target)
            case .failure(let code): reply.error(code)
            }
        }
        // The kernel dropped its references. Node numbers are computed from what a node stands
        // for and stay valid for the mount's life (`MountedFilesystem.lookup`): nothing is kept
        // per reference, so nothing is freed.
        ops.forget = { request, _, _ in fuse_reply_none(request) }
        ops.forget_multi = { request, _, _ in fuse_reply_none(request) }
        ops.statfs = { request, _ in
            let reply = FUSEReply(request!)
            var info = statvfs()
            if statvfs(FUSECallbacks.context(request).filesystem.sourcePath, &info) != 0 { return reply.error(.current) }
            reply.statfs(info)
        }
        addWrites(to: &ops)
        return ops
    }

    static func readDirectory(_ request: fuse_req_t, inode: fuse_ino_t, size: Int, offset: off_t, plus: Bool) {
        let reply = FUSEReply(request)
        let context = context(request)
        let filesystem = context.filesystem
        // (Entries added since that last reply may or may not be listed: readdir(3) allows both.)
        if context.isPastEnd(inode, offset: Int(offset)) { return reply.bytes([UInt8]()) }
        context.listing(inode)
        if plus, offset == 0, size != context.listingReplies.replySize { context.listingReplies.replySize = size }
        if plus, offset == 0, context.listingReplies.isReady(inode),
           let ready = context.listingReplies.take(inode, stamp: filesystem.listingStamp(of: NodeID(inode))), ready.bytes.count <= size {
            let busy = context.beingLookedUp(in: inode)
            if !ready.remembered.contains(where: { busy($0.name) }) {
                context.listed(inode, toEnd: ready.next)
                reply.bytes(ready.bytes)
                context.parentRelisting.listed(inode, entries: nil, parent: filesystem.parent(of: NodeID(inode)), cache: filesystem.kernelCache)
                return
            }
        }
        switch filesystem.directoryEntries(of: NodeID(inode)) {
        case .success(let entries):
            let busy = context.beingLookedUp(in: inode)
            let parent = filesystem.parent(of: NodeID(inode))
            let filled = DirectoryBuffer.fill(request: request, directory: NodeID(inode), parent: parent,
                                              entries: entries, offset: Int(offset), size: size,
                                              attributes: plus ? { busy($0.name) ? nil : filesystem.attributesWithoutListing(of: $0) } : nil)
            context.listed(inode, toEnd: filled.next == entries.count + 2 && filled.next > offset ? filled.next : nil)
            reply.bytes(filled.bytes)
            guard offset == 0 else { return }
            let refetched = context.parentRelisting.listed(inode, entries: entries.count, parent: parent, cache: filesystem.kernelCache)
            // `ls -l` and file managers look up every comic next: list them in parallel now.
            if !refetched { filesystem.directoryListed(NodeID(inode)) }
        case .failure(let code):
            context.listed(inode, toEnd: nil)
            reply.error(code)
        }
    }

    /// Replies inline on a cache hit (the completion runs before `read` returns); a miss
    /// replies later from the comic's fetch thread.
    static func read(_ request: fuse_req_t, inode: fuse_ino_t, size: Int, offset: off_t, handle: UInt64) {
        let reply = FUSEReply(request)
        let descriptor: Int32? = handle == 0 ? nil : Int32(handle - 1)
        let completion: @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void = { result in
            switch result {
            case .success(let bytes): reply.bytes(bytes)
            case .failure(let code): reply.error(code)
            }
        }
        context(request).filesystem.read(NodeID(inode), offset: Int64(offset), size: size, descriptor: descriptor,
                                         caller: caller(request), completion: completion)
    }

    /// Who the kernel says made the request (the library tells a person reading by it).
    static func caller(_ request: fuse_req_t?) -> Caller {
        guard let context = fuse_req_ctx(request)?.pointee else { return Caller(pid: 0, uid: UInt32.max) }
        return Caller(pid: context.pid, uid: context.uid)
    }
}

/// Packs directory entries into the kernel's readdir format, from `offset`, up to `size` bytes.
enum DirectoryBuffer {
    /// With `attributes`, the readdirplus format: an entry whose attributes come back non-nil
    /// is handed to the kernel as if looked up (the kernel counts it and will FORGET it: such
    /// entries are returned in `remembered`); the others go out with inode 0, which tells the
    /// kernel to look them up itself. `next` is the offset after the last entry that fit.
    /// `request` may be nil: libfuse 3.14 encodes entries without it (`(void)req`), which lets
    /// `FUSEListingReplies` encode a reply before its request arrives.
    static func fill(request: fuse_req_t?, directory: NodeID, parent: NodeID, entries: [DirectoryEntry], offset: Int, size: Int,
                     attributes: ((DirectoryEntry) -> NodeAttributes?)? = nil) -> (bytes: [UInt8], remembered: [DirectoryEntry], next: Int) {
        let count = entries.count + 2
        func name(_ index: Int) -> String { index == 0 ? "." : index == 1 ? ".." : entries[index - 2].name }
        // The buffer is as long as the entries that fit, not as the kernel allows (64 KiB since
        // Linux 6.14): zeroing and copying 64 KiB per comic directory cost more than its entries.
        // libfuse gives an entry's length when handed no buffer.
        var length = 0
        for index in offset..<max(offset, count) {
            var none = fuse_entry_param()
            let needed = attributes == nil ? fuse_add_direntry(request, nil, 0, name(index), &none.attr, 0)
                                            : fuse_add_direntry_plus(request, nil, 0, name(index), &none, 0)
            guard length + needed <= size else { break }
            length += needed
        }
        var buffer = [UInt8](repeating: 0, count: length)
        var remembered: [DirectoryEntry] = []
        var used = 0
        var index = offset
        while index < count {
            let listed = index < 2 ? nil : entries[index - 2]
            var counted: DirectoryEntry?
            var info = Glibc.stat()
            info.st_ino = UInt(index == 0 ? directory : index == 1 ? parent : listed!.id)
            info.st_mode = switch listed?.kind {
            case nil, .directory?: S_IFDIR
            case .regularFile?: S_IFREG
            case .symlink?: S_IFLNK
            }
            let needed = buffer.withUnsafeMutableBytes { raw in
                let start = raw.baseAddress.map { $0.advanced(by: used).assumingMemoryBound(to: CChar.self) }
                guard let attributes else {
                    return fuse_add_direntry(request, start, length - used, name(index), &info, off_t(index + 1))
                }
                var entry = fuse_entry_param()
                if let listed, let known = attributes(listed) {
                    counted = listed
                    entry.ino = fuse_ino_t(known.id)
                    entry.generation = known.generation
                    entry.attr = StatBuilder.stat(known)
                    entry.attr_timeout = known.attributeTimeout
                    entry.entry_timeout = known.entryTimeout
                } else {
                    entry.attr = info
                }
                return fuse_add_direntry_plus(request, start, length - used, name(index), &entry, off_t(index + 1))
            }
            if used + needed > length { break }
            used += needed
            index += 1
            if let counted { remembered.append(counted) }
        }
        buffer.removeLast(length - used)
        return (buffer, remembered, index)
    }
}
