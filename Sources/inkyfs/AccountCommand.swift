import ArgumentParser
import Foundation
import InkyCommandLine
import InkyStore
import InkyVault

struct AccountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Add, list or remove the accounts `inkyfs serve` asks for.",
        discussion: """
            With no account, `inkyfs serve` on a loopback address asks for no login. With one or more, \
            every request needs one: HTTP Basic for OPDS readers and the browser, KOReader's own \
            headers for progress sync (in KOReader: Progress sync > Register / Login, same name and \
            password). Accounts live in the state database; a password is kept only as a slow hash \
            (PBKDF2-HMAC-SHA256, 600,000 iterations, its own salt). Every account reads and moves the \
            one reading state of this user's library, the mount's.

            Passwords are read from the terminal with no echo (asked twice), or from the first line \
            of --password-file (or stdin when not on a terminal); never from arguments.

            Examples:
              inkyfs account add kobo
              inkyfs account add kobo --password-file ~/.config/inkyfs/kobo.pass
              inkyfs account list
              inkyfs account remove kobo
            """,
        subcommands: [AccountAdd.self, AccountList.self, AccountRemove.self]
    )
}

struct AccountAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add an account (asks for its password twice).")

    @Argument(help: "The account's name: what a reader types as its user name (no ':', no spaces).")
    var name: String

    @Option(help: ArgumentHelp("Read the password from this file (first line) instead of the terminal.", valueName: "file"))
    var passwordFile: String?

    @OptionGroup var stateOptions: StateOptions

    func validate() throws {
        if let problem = AccountNames.problem(with: name) { throw ValidationError(problem) }
    }

    func run() throws {
        let state = stateOptions.open()
        // Asked before the password, so nobody types one for nothing.
        if (try? state.account(name)) != nil {
            throw CommandFailure(.refused, "an account named \(name) exists already; to change its password: "
                                 + "inkyfs account remove \(name), then add it again")
        }
        let password: SecureBytes
        do {
            password = try PasswordInput.readNew(file: passwordFile, prompt: "Password for \(name): ",
                                                 exposure: "anyone who can reach the server")
        } catch let failure as PasswordInput.Failure {
            throw CommandFailure(.refused, "\(failure.description); no account was added")
        }
        let key = try password.withUnsafeBytes { bytes throws(CryptoError) in
            try AccountKey.make(syncKey: AccountKey.syncKey(password: Array(bytes)))
        }
        let stored = StoredAccount(name: name, iterations: Int(key.iterations), salt: key.salt, hash: key.hash)
        guard try state.addAccount(stored) else {
            throw CommandFailure(.refused, "an account named \(name) was added meanwhile; nothing was changed")
        }
        print("added account \(name)")
    }
}

struct AccountList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the accounts, by name.")

    @Flag(help: "Print JSON: an array of {name, created, kdf, iterations}.")
    var json = false

    @OptionGroup var stateOptions: StateOptions

    struct Listed: Encodable {
        var name: String
        var created: String
        var kdf: String
        var iterations: Int
    }

    func run() throws {
        let accounts = try stateOptions.open().accounts()
        let formatter = ISO8601DateFormatter()
        if json {
            return try JSONOutput.print(accounts.map { Listed(name: $0.name, created: formatter.string(from: $0.createdAt),
                                                              kdf: $0.kdf, iterations: $0.iterations) })
        }
        if accounts.isEmpty { print("no accounts: `inkyfs serve` on loopback asks for no login (add one: inkyfs account add NAME)") }
        for account in accounts { print("\(account.name)  added \(formatter.string(from: account.createdAt))") }
    }
}

struct AccountRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove an account: a running server refuses it from its next request on.")

    @Argument(help: "The account's name.")
    var name: String

    @OptionGroup var stateOptions: StateOptions

    func run() throws {
        guard try stateOptions.open().removeAccount(name) else {
            throw CommandFailure(.refused, "no account named \(name) (inkyfs account list shows them)")
        }
        print("removed account \(name)")
    }
}
