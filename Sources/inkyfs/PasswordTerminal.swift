import Foundation

/// The terminal a password is typed on, with echo off from before the prompt is written until
/// the password is read, and back on however the command ends: Ctrl-C (SIGINT), SIGTERM, SIGHUP
/// and Ctrl-Z (SIGTSTP: echo comes back while stopped, goes off again on `fg`).
///
/// The saved settings live in globals because a signal handler can reach nothing else; only
/// async-signal-safe calls (tcsetattr, signal, raise) are made there.
enum PasswordTerminal {
    nonisolated(unsafe) private static var descriptor: Int32 = -1
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var silent = termios()
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// Runs `body` with echo off on `tty` (and canonical input kept: a line at a time).
    static func withoutEcho<T>(_ tty: Int32, prompt: String, _ body: () throws -> T) rethrows -> T {
        descriptor = tty
        tcgetattr(tty, &saved)
        silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        // Echo off first: a key typed while the prompt is being written is not shown in clear.
        tcsetattr(tty, TCSAFLUSH, &silent)
        for signal in signals { _ = Glibc.signal(signal, handle) }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        defer {
            tcsetattr(tty, TCSAFLUSH, &saved)
            for signal in signals { _ = Glibc.signal(signal, SIG_DFL) }
            _ = write(tty, "\n", 1)
            descriptor = -1
        }
        return try body()
    }

    /// Puts the terminal back, then lets the signal do what it would have done; after a stop,
    /// echo goes off again.
    private static let handle: @convention(c) (Int32) -> Void = { signal in
        guard PasswordTerminal.descriptor >= 0 else { return }
        // Ending: what was typed and not read yet is discarded first, or the terminal may
        // process it after echo is back on and show a half-typed password (a SIGTERM can come
        // while the keys are still on their way). Kept on a stop: typing goes on after `fg`.
        if signal != SIGTSTP { tcflush(PasswordTerminal.descriptor, TCIFLUSH) }
        tcsetattr(PasswordTerminal.descriptor, TCSANOW, &PasswordTerminal.saved)
        _ = write(PasswordTerminal.descriptor, "\n", 1)
        _ = Glibc.signal(signal, SIG_DFL)
        // The signal is blocked while its handler runs: unblocked, it acts at once (ends the
        // process, or stops it) instead of after the handler has put its own self back.
        var this = sigset_t()
        sigemptyset(&this)
        sigaddset(&this, signal)
        sigprocmask(SIG_UNBLOCK, &this, nil)
        raise(signal)
        // Only SIGTSTP returns here, when the shell continues the command.
        _ = Glibc.signal(signal, PasswordTerminal.handle)
        tcsetattr(PasswordTerminal.descriptor, TCSANOW, &PasswordTerminal.silent)
    }
}
