import Foundation
import InkyCore

extension ControlClient {
    /// How long `unlock` waits on its own for the daemon's throttle before giving up.
    public static let longestPasswordWait = 60.0

    /// Unlocks the vault of the mount at `mountpoint`. After wrong passwords the daemon hears
    /// none for a while (`throttled`, with how long): that wait is sat out here, as a login
    /// does, when it is at most `longestPasswordWait`; `waiting` hears each one before it starts.
    public static func unlock(_ mountpoint: String, password: UnsafeRawBufferPointer, acceptingRollback: Bool,
                              waiting: (Double) -> Void) throws(ControlError) -> ControlReply {
        let request: ControlRequest = acceptingRollback ? .unlockAcceptingRollback : .unlock
        while true {
            let reply = try send(request, to: mountpoint, password: password)
            guard reply.outcome == .throttled, let wait = reply.retryAfter, wait <= longestPasswordWait else { return reply }
            waiting(wait)
            Thread.sleep(forTimeInterval: wait + 0.05)
        }
    }
}
