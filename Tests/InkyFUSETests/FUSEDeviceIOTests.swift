import CFuse3
import CInkyFuseDevice
import Foundation
import XCTest

/// The session's device I/O (`FUSESession.deviceIO`, shim.h) on pipes standing in for
/// /dev/fuse: an INIT exchange as the kernel and libfuse 3.14 make it, byte for byte. Through
/// a real mount the kernel's side shows in MountParallelDirectoryTests.
final class FUSEDeviceIOTests: XCTestCase {
    private let initUnique: UInt64 = 2
    /// What libfuse 3.14 replies to this kernel (strace): no FUSE_PARALLEL_DIROPS.
    private let libfuseFlags: UInt32 = 0x4040_b029

    private var watch = inky_dirops_watch()

    private func pipePair() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        addTeardownBlock { close(ends[0]); close(ends[1]) }
        return (ends[0], ends[1])
    }

    private func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    /// The kernel's INIT request, offering `flags`, read through the wrapper.
    private func readInit(flags: UInt32, opcode: UInt32 = 26) {
        var header = fuse_in_header()
        header.len = UInt32(MemoryLayout<fuse_in_header>.size + MemoryLayout<fuse_init_in>.size)
        header.opcode = opcode
        header.unique = initUnique
        var body = fuse_init_in()
        (body.major, body.minor, body.max_readahead, body.flags) = (7, 45, 131_072, flags)
        let request = bytes(header) + bytes(body)
        let device = pipePair()
        XCTAssertEqual(write(device.write, request, request.count), request.count)
        var buffer = [UInt8](repeating: 0, count: 4096)
        XCTAssertEqual(inky_read_watching_init(device.read, &buffer, buffer.count, &watch, nil), request.count)
        XCTAssertEqual(Array(buffer[0..<request.count]), request, "the request reaches libfuse as the kernel sent it")
    }

    /// A reply (header, then `argument`) written through the wrapper; what the kernel would read.
    private func sendReply(unique: UInt64, error: Int32 = 0, argument: [UInt8]) -> [UInt8] {
        var header = fuse_out_header()
        header.len = UInt32(MemoryLayout<fuse_out_header>.size + argument.count)
        header.error = error
        header.unique = unique
        var head = bytes(header)
        var body = argument
        let device = pipePair()
        let written = head.withUnsafeMutableBytes { headBytes in
            body.withUnsafeMutableBytes { bodyBytes in
                var vectors = [iovec(iov_base: headBytes.baseAddress, iov_len: headBytes.count),
                               iovec(iov_base: bodyBytes.baseAddress, iov_len: bodyBytes.count)]
                return inky_writev_granting_dirops(device.write, &vectors, Int32(vectors.count), &watch)
            }
        }
        XCTAssertEqual(written, head.count + body.count)
        var sent = [UInt8](repeating: 0, count: 4096)
        let got = read(device.read, &sent, sent.count)
        XCTAssertEqual(body, argument, "libfuse's own argument is left as it was")
        return Array(sent[0..<max(got, 0)])
    }

    private func initReply(flags: UInt32) -> [UInt8] {
        var reply = fuse_init_out()
        (reply.major, reply.minor, reply.max_readahead, reply.flags, reply.max_write) = (7, 38, 1 << 20, flags, 131_072)
        return bytes(reply)
    }

    private func header(unique: UInt64, length: Int) -> [UInt8] {
        var header = fuse_out_header()
        header.len = UInt32(MemoryLayout<fuse_out_header>.size + length)
        header.unique = unique
        return bytes(header)
    }

    func testTheFlagTheKernelOffersIsAddedToTheInitReplyAndNothingElseChanges() {
        readInit(flags: 0x73ff_fffb)
        XCTAssertEqual(inky_dirops_state(&watch), Int32(INKY_DIROPS_REPLY_PENDING))
        XCTAssertEqual(sendReply(unique: initUnique, argument: initReply(flags: libfuseFlags)),
                       header(unique: initUnique, length: MemoryLayout<fuse_init_out>.size) + initReply(flags: libfuseFlags | 0x40000))
        XCTAssertEqual(inky_dirops_state(&watch), Int32(INKY_DIROPS_GRANTED))
        let later = initReply(flags: libfuseFlags)
        XCTAssertEqual(sendReply(unique: initUnique, argument: later), header(unique: initUnique, length: later.count) + later,
                       "once granted, every write goes out as libfuse made it")
    }

    func testWithoutTheKernelsOfferTheInitReplyGoesOutUntouched() {
        readInit(flags: 0x73ff_fffb & ~UInt32(0x40000))
        XCTAssertEqual(inky_dirops_state(&watch), Int32(INKY_DIROPS_NOT_OFFERED))
        let reply = initReply(flags: libfuseFlags)
        XCTAssertEqual(sendReply(unique: initUnique, argument: reply), header(unique: initUnique, length: reply.count) + reply)
    }

    func testOnlyTheReplyToInitIsTouched() {
        readInit(flags: 0x73ff_fffb)
        let notice = initReply(flags: 7)
        XCTAssertEqual(sendReply(unique: 0, argument: notice), header(unique: 0, length: notice.count) + notice, "a notice (unique 0)")
        XCTAssertEqual(inky_dirops_state(&watch), Int32(INKY_DIROPS_REPLY_PENDING))
        var failed = fuse_out_header()
        (failed.len, failed.error, failed.unique) = (UInt32(MemoryLayout<fuse_out_header>.size), -EPROTO, initUnique)
        XCTAssertEqual(sendReply(unique: initUnique, error: -EPROTO, argument: []), bytes(failed))
        XCTAssertEqual(inky_dirops_state(&watch), Int32(INKY_DIROPS_REPLY_UNPATCHED), "an error reply to INIT is left alone")
    }

    func testARequestOtherThanInitIsNotTakenForIt() {
        readInit(flags: 0x73ff_fffb, opcode: 1)
        XCTAssertEqual(inky_dirops_state(&watch), Int32(INKY_DIROPS_AWAITING_INIT))
    }

    /// libfuse tells EAGAIN, EINTR, ENOENT and ENODEV apart by errno after the call.
    func testErrorsReachLibfuseWithTheSyscallsErrno() {
        let device = pipePair()
        XCTAssertEqual(fcntl(device.read, F_SETFL, O_NONBLOCK), 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        errno = 0
        XCTAssertEqual(inky_read_watching_init(device.read, &buffer, buffer.count, &watch, nil), -1)
        XCTAssertEqual(errno, EAGAIN)
        errno = 0
        XCTAssertEqual(inky_read_watching_init(-1, &buffer, buffer.count, &watch, nil), -1)
        XCTAssertEqual(errno, EBADF)
        readInit(flags: 0x73ff_fffb)
        var head = header(unique: initUnique, length: 0)
        errno = 0
        let written = head.withUnsafeMutableBytes { raw in
            var vectors = [iovec(iov_base: raw.baseAddress, iov_len: raw.count)]
            return inky_writev_granting_dirops(-1, &vectors, 1, &watch)
        }
        XCTAssertEqual(written, -1)
        XCTAssertEqual(errno, EBADF)
    }
}
