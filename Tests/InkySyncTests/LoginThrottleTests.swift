import Foundation
import Synchronization
import XCTest
@testable import InkySync

/// Failed logins wait 0.5 s, 1 s, 2 s … (at most a minute) per address, and per account past
/// its allowance; a success clears both; waits are measured on the throttle's own clock.
final class LoginThrottleTests: XCTestCase {
    func testFailuresDoubleTheWaitUpToAMinuteAndASuccessClearsIt() {
        let now = Mutex(100.0)
        let throttle = LoginThrottle(clock: { now.withLock { $0 } })
        let keys: [LoginThrottle.Key] = [.address("192.0.2.1"), .account("kobo")]
        XCTAssertEqual(throttle.wait(keys), 0)
        XCTAssertEqual(throttle.failed(keys), 0.5)
        XCTAssertEqual(throttle.wait(keys), 0.5)
        XCTAssertEqual(throttle.wait([.address("192.0.2.2"), .account("kobo")]), 0, "another address is not held back, nor yet the account")
        XCTAssertEqual(throttle.failed(keys), 1)
        XCTAssertEqual(throttle.failed(keys), 2)
        now.withLock { $0 += 1.5 }
        XCTAssertEqual(throttle.wait(keys), 0.5)
        for _ in 0..<20 { throttle.failed(keys) }
        XCTAssertEqual(throttle.wait(keys), LoginThrottle.cap)
        throttle.succeeded(keys)
        XCTAssertEqual(throttle.wait(keys), 0)
        XCTAssertEqual(throttle.failed(keys), 0.5, "counting starts again")
    }

    func testAnAccountGuessedFromManyAddressesIsHeldBackPastItsAllowance() {
        let throttle = LoginThrottle(clock: { 0 })
        for number in 1...LoginThrottle.accountAllowance {
            throttle.failed([.address("198.51.100.\(number)"), .account("kobo")])
            XCTAssertEqual(throttle.wait([.address("203.0.113.1"), .account("kobo")]), 0, "\(number) failures")
        }
        throttle.failed([.address("198.51.100.99"), .account("kobo")])
        XCTAssertEqual(throttle.wait([.address("203.0.113.1"), .account("kobo")]), 0.5)
        XCTAssertEqual(throttle.wait([.address("203.0.113.1"), .account("other")]), 0)
    }
}
