import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import InkyWorker

/// The worker protocol as the daemon receives it from a worker that a hostile archive may
/// have subverted: the input is written into a socketpair and read back frame by frame by
/// the real `FrameChannel`, each message decoded as the pool decodes a `WorkerReply` (and as
/// a worker decodes a `WorkerRequest`). Whatever decodes must re-encode to the same value.
/// Needs `@testable`: FrameChannel is internal to InkyWorker (scripts/fuzz builds debug,
/// where SwiftPM compiles with testing enabled).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzWorkerFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // Larger inputs would block on the socket buffer; scripts/fuzz passes -max_len below this.
    guard let data, size <= 128 << 10 else { return 0 }
    var ends: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { fatalError("socketpair: \(errno)") }
    var sent = 0
    while sent < size {
        let result = send(ends[1], data + sent, size - sent, Int32(MSG_NOSIGNAL))
        precondition(result > 0, "send to the socketpair failed: \(errno)")
        sent += result
    }
    close(ends[1])
    let channel = FrameChannel(fd: ends[0])
    var frames = 0
    while true {
        let frame: WorkerFrame
        do throws(FrameChannel.Failure) {
            frame = try channel.receive(timeout: 1)
        } catch {
            precondition(error == .closed || error == .malformed, "unexpected failure \(error) on a closed socketpair")
            break
        }
        frames += 1
        precondition(frames <= size / 5, "more frames than 5-byte headers in the input")
        switch frame {
        case .data(let bytes):
            precondition(bytes.count <= WorkerFrame.maxLength)
        case .message(let json):
            precondition(json.count <= WorkerFrame.maxLength)
            roundTrip(WorkerReply.self, json)
            roundTrip(WorkerRequest.self, json)
        }
    }
    return 0
}

private func roundTrip<Message: Codable & Equatable>(_ type: Message.Type, _ json: Data) {
    guard let message = try? JSONDecoder().decode(type, from: json) else { return }
    let again = WorkerFrame.encode(message).dropFirst(5)
    let decoded = try? JSONDecoder().decode(type, from: Data(again))
    precondition(decoded == message, "\(type) does not survive a round trip")
}
