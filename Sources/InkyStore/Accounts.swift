import Foundation
import InkyCore

/// An account of `inkyfs serve` as stored: its name and the slow hash its password is checked
/// against (made and checked by InkyVault's `AccountKey`; this file only keeps the bytes).
public struct StoredAccount: Sendable, Equatable {
    public var name: String
    /// How `hash` was made; today always `AccountNames.kdf`.
    public var kdf: String
    public var iterations: Int
    public var salt: [UInt8]
    public var hash: [UInt8]
    public var createdAt: Date

    public init(name: String, kdf: String = AccountNames.kdf, iterations: Int, salt: [UInt8], hash: [UInt8], createdAt: Date = Date()) {
        self.name = name
        self.kdf = kdf
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
        self.createdAt = createdAt
    }
}

/// Which account names are accepted: what both HTTP Basic (no colon in a user name) and
/// KOReader's sync server (no colon, not empty) can carry, printable, at most 64 bytes.
public enum AccountNames {
    public static let kdf = "pbkdf2-sha256"
    public static let maxLength = 64

    /// Nil when `name` is acceptable, else why not, in words for the user.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "an account name cannot be empty" }
        if name.utf8.count > maxLength { return "an account name has at most \(maxLength) bytes" }
        if name.contains(":") { return "an account name cannot contain ':' (HTTP Basic and KOReader's sync both split on it)" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) {
            return "an account name cannot contain spaces or control characters"
        }
        return nil
    }
}

extension StateDatabase {
    /// Adds `account`; false (and nothing changed) when one of that name exists.
    public func addAccount(_ account: StoredAccount) throws(SQLiteError) -> Bool {
        try changesRows("INSERT OR IGNORE INTO accounts (name, kdf, iterations, salt, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                        [account.name, account.kdf, account.iterations, account.salt, account.hash, account.createdAt.timeIntervalSince1970])
    }

    /// Removes the account `name`; whether there was one.
    public func removeAccount(_ name: String) throws(SQLiteError) -> Bool {
        try changesRows("DELETE FROM accounts WHERE name = ?", [name])
    }

    /// The account `name`, read afresh each time: one removed by `inkyfs account remove` while
    /// a server runs is refused from its next request on.
    public func account(_ name: String) throws(SQLiteError) -> StoredAccount? {
        try accounts(where: "WHERE name = ?", name).first
    }

    /// Every account, by name.
    public func accounts() throws(SQLiteError) -> [StoredAccount] {
        try accounts(where: "ORDER BY name", nil)
    }

    /// Replaces the stored hash of `name` with `account`'s, if it is still `previous` (a login
    /// that raised an old account's iterations to today's default); whether it was replaced.
    public func replaceAccountKey(_ account: StoredAccount, previous: [UInt8]) throws(SQLiteError) -> Bool {
        try changesRows("UPDATE accounts SET kdf = ?, iterations = ?, salt = ?, hash = ? WHERE name = ? AND hash = ?",
                        [account.kdf, account.iterations, account.salt, account.hash, account.name, previous])
    }

    /// Whether any account exists: with none, a server on loopback asks for no login.
    public func hasAccounts() throws(SQLiteError) -> Bool {
        try withStatement("SELECT EXISTS (SELECT 1 FROM accounts)") { query throws(SQLiteError) in
            _ = try query.step()
            return query.int64(at: 0) != 0
        }
    }

    private func accounts(where clause: String, _ name: String?) throws(SQLiteError) -> [StoredAccount] {
        try withStatement("SELECT name, kdf, iterations, salt, hash, created_at FROM accounts \(clause)") { query throws(SQLiteError) in
            if let name { try query.bind(name, at: 1) }
            var found: [StoredAccount] = []
            while try query.step() {
                found.append(StoredAccount(name: query.text(at: 0) ?? "", kdf: query.text(at: 1) ?? "", iterations: Int(query.int64(at: 2)),
                                           salt: query.blob(at: 3) ?? [], hash: query.blob(at: 4) ?? [],
                                           createdAt: Date(timeIntervalSince1970: query.double(at: 5))))
            }
            return found
        }
    }
}
