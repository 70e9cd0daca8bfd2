import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import InkyWorker

/// The worker protocol as the daemon receives it from a worker that a hostile archive may
/// have subverted: the input is written into a socketpair and read back frame by frame by
/// the real `FrameChannel`, each message decoded as the pool decodes a `WorkerReply` (and as
/// a worker decodes a `WorkerRequest`), JSON and `WorkerCodec`'s binary messages alike.
/// Whatever decodes must re-encode to the same value.
/// Needs `@testable`: FrameChannel is internal to InkyWorker (scripts/dev/fuzz builds debug,
/// where SwiftPM compiles with testing enabled).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzWorkerFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // Larger inputs would block on the socket buffer; scripts/dev/fuzz passes -max_len below this.
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
        case .data(let bytes), .binary(let bytes): precondition(bytes.count <= WorkerFrame.maxLength)
        case .message(let json): precondition(json.count <= WorkerFrame.maxLength)
        }
        roundTrip(frame, json: WorkerCodec.reply(json:), binary: WorkerCodec.reply(binary:), encode: WorkerCodec.frame)
        roundTrip(frame, json: WorkerCodec.request(json:), binary: WorkerCodec.request(binary:), encode: WorkerCodec.frame)
    }
    return 0
}

/// Decodes a message frame as the receiving side does; what decodes is sent again as its
/// sender would send it (`encode`, whichever wire form that picks) and must decode to the same value.
private func roundTrip<Message: Equatable>(_ frame: WorkerFrame, json: (Data) -> Message?, binary: ([UInt8]) -> Message?,
                                           encode: (Message) -> [UInt8]) {
    func decode(_ frame: WorkerFrame) -> Message? {
        switch frame {
        case .message(let bytes): json(bytes)
        case .binary(let bytes): binary(bytes)
        case .data: nil
        }
    }
    guard let message = decode(frame) else { return }
    let sent = encode(message)
    let again = decode(sent[4] == WorkerFrame.binaryKind ? .binary(Array(sent.dropFirst(5))) : .message(Data(sent.dropFirst(5))))
    precondition(again == message, "\(Message.self) does not survive a round trip")
}
