import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// Descriptors sent over a Unix socket (SCM_RIGHTS), with the layout of glibc's CMSG macros spelt
/// out (Swift sees none of them). On a stream socket the descriptors travel with the first byte of
/// the send that carried them, to whichever `recvmsg` reads that byte; one `recvmsg` takes those of
/// one send at most, so a reader that reads with `receive` misses none.
enum SocketRights {
    /// CMSG_ALIGN: lengths are rounded up to a `size_t`.
    private static func aligned(_ length: Int) -> Int { (length + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1) }
    private static var headerLength: Int { aligned(MemoryLayout<cmsghdr>.size) }

    /// CMSG_SPACE for `count` descriptors.
    static func space(_ count: Int) -> Int { headerLength + aligned(count * MemoryLayout<Int32>.size) }

    /// `sendmsg` of `bytes` with `descriptors` attached (none: a plain send); bytes sent or -1 (errno set).
    static func send(_ socket: Int32, _ bytes: UnsafeRawBufferPointer, descriptors: [Int32]) -> Int {
        let control = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, space(descriptors.count)), alignment: 8)
        defer { control.deallocate() }
        control.initializeMemory(as: UInt8.self, repeating: 0)
        var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            var message = msghdr()
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            if !descriptors.isEmpty {
                let header = control.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
                header.pointee.cmsg_len = headerLength + descriptors.count * MemoryLayout<Int32>.size
                header.pointee.cmsg_level = SOL_SOCKET
                header.pointee.cmsg_type = Int32(SCM_RIGHTS)
                descriptors.withUnsafeBytes { (control.baseAddress! + headerLength).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                message.msg_control = control.baseAddress
                message.msg_controllen = space(descriptors.count)
            }
            return Syscall.retrying { sendmsg(socket, &message, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// `recvmsg` into `buffer`, keeping the descriptors that came with the bytes (close-on-exec)
    /// up to what `control` holds; any more, cut off by the kernel, are closed by it.
    static func receive(_ socket: Int32, _ buffer: UnsafeMutableRawBufferPointer, flags: Int32,
                        control: UnsafeMutableRawBufferPointer) -> (Int, [Int32]) {
        var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            var message = msghdr()
            message.msg_iov = vectorPointer
            message.msg_iovlen = 1
            message.msg_control = control.baseAddress
            message.msg_controllen = control.count
            let got = Syscall.retrying { recvmsg(socket, &message, flags | Int32(MSG_CMSG_CLOEXEC)) }
            guard got >= 0 else { return (got, []) }
            var descriptors: [Int32] = []
            var offset = 0
            // CMSG_FIRSTHDR / CMSG_NXTHDR over what the kernel filled in.
            while offset + headerLength <= message.msg_controllen {
                let header = (control.baseAddress! + offset).assumingMemoryBound(to: cmsghdr.self).pointee
                guard header.cmsg_len >= headerLength, offset + header.cmsg_len <= message.msg_controllen else { break }
                if header.cmsg_level == SOL_SOCKET && header.cmsg_type == Int32(SCM_RIGHTS) {
                    let count = (header.cmsg_len - headerLength) / MemoryLayout<Int32>.size
                    for index in 0..<count {
                        descriptors.append((control.baseAddress! + offset + headerLength + index * MemoryLayout<Int32>.size).loadUnaligned(as: Int32.self))
                    }
                }
                offset += aligned(header.cmsg_len)
            }
            return (got, descriptors)
        }
    }
}
