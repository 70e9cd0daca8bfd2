import Foundation
import InkyCore
import InkyWorker

/// The control socket's request parser (`inkyfs vault unlock/lock/status` to the daemon):
/// any bytes must give nil or exactly one known request, and a known request must survive
/// a round trip through the encoder the client uses.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzControl(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let frame = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    guard let request = ControlReply.parseRequest(frame) else { return 0 }
    precondition(frame.count <= 1024, "accepted a request over the 1 KiB bound")
    let encoded = WorkerFrame.encode(request).dropFirst(5)
    precondition(ControlReply.parseRequest(Array(encoded)) == request, "request does not round-trip")
    return 0
}
