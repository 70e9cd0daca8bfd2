import Foundation
import InkyCore
import InkyStore
import InkyVault
import Synchronization
import XCTest
@testable import InkySync

/// HTTP Basic and KOReader's headers check the same stored hash; a key that passed is
/// remembered, but never past the account's removal or a new password.
final class AuthenticatorTests: XCTestCase {
    private var folder: URL!
    private var state: StateDatabase!

    override func setUp() {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("auth-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func add(_ name: String, password: String) throws {
        let made = try AccountKey.make(syncKey: AccountKey.syncKey(password: Array(password.utf8)), iterations: 1_000)
        XCTAssertTrue(try state.addAccount(StoredAccount(name: name, iterations: Int(made.iterations), salt: made.salt, hash: made.hash)))
    }

    private func basic(_ user: String, _ password: String) -> String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

    func testBasicAndSyncHeadersCheckTheSameAccount() throws {
        let authenticator = Authenticator(state: state)
        XCTAssertFalse(authenticator.hasAccounts)
        try add("kobo", password: "pass:word")
        XCTAssertTrue(authenticator.hasAccounts)
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "pass:word"), from: "a"), .granted(account: "kobo"), "a colon belongs to the password")
        // md5("pass:word"), computed by Python's hashlib: what KOReader sends as x-auth-key.
        XCTAssertEqual(authenticator.check(user: "kobo", key: "48c83cd71d44bbe192c77258b567c417", from: "b"), .granted(account: "kobo"))
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "48c83cd71d44bbe192c77258b567c417"), from: "c"), .denied,
                       "the MD5 is no password for Basic")
        for header in ["Bearer abc", "Basic !!!", "Basic " + Data("no colon".utf8).base64EncodedString()] {
            XCTAssertEqual(Authenticator(state: state).check(basic: header, from: "d"), .denied, header)
        }
    }

    func testARemovedOrChangedAccountIsRefusedAtOnce() throws {
        let authenticator = Authenticator(state: state)
        try add("kobo", password: "first")
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "first"), from: "a"), .granted(account: "kobo"))
        XCTAssertTrue(try state.removeAccount("kobo"))
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "first"), from: "a"), .denied, "remembered, yet gone")
        authenticator.throttle.succeeded([.address("a"), .account("kobo")])
        try add("kobo", password: "second")
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "first"), from: "a"), .denied, "the old password")
        authenticator.throttle.succeeded([.address("a"), .account("kobo")])
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "second"), from: "a"), .granted(account: "kobo"))
    }

    func testAnAccountBelowTodaysIterationsIsRaisedAtItsNextLogin() throws {
        try add("kobo", password: "first")
        let before = try XCTUnwrap(try state.account("kobo"))
        XCTAssertEqual(before.iterations, 1_000)
        let authenticator = Authenticator(state: state)
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "first"), from: "a"), .granted(account: "kobo"))
        let after = try XCTUnwrap(try state.account("kobo"))
        XCTAssertEqual(after.iterations, Int(AccountKey.defaultIterations))
        XCTAssertNotEqual(after.salt, before.salt)
        XCTAssertEqual(authenticator.check(basic: basic("kobo", "first"), from: "a"), .granted(account: "kobo"), "remembered under the new hash")
        XCTAssertEqual(Authenticator(state: state).check(basic: basic("kobo", "first"), from: "a"), .granted(account: "kobo"), "and checked by it")
    }

    func testConcurrentFirstLoginsAreAllAnswered() throws {
        try add("kobo", password: "first")
        let authenticator = Authenticator(state: state)
        let outcomes = Mutex<[Authenticator.Outcome]>([])
        let right = basic("kobo", "first"), wrong = basic("kobo", "wrong")
        DispatchQueue.concurrentPerform(iterations: 8) { number in
            let outcome = authenticator.check(basic: number == 7 ? wrong : right, from: "client \(number)")
            outcomes.withLock { $0.append(outcome) }
        }
        let all = outcomes.withLock { $0 }
        XCTAssertEqual(all.filter { $0 == .granted(account: "kobo") }.count, 7, "\(all)")
        XCTAssertEqual(all.filter { $0 == .denied }.count, 1, "\(all)")
    }
}
