import Foundation
import InkyCore

extension WorkerPool {
    public struct Configuration: Sendable {
        public var executable: String
        public var arguments: [String]
        public var maxWorkers: Int
        /// Seconds without any frame from a busy worker before it is killed.
        public var timeout: Double
        /// Send workers' stderr (libunarr's debug chatter, crash messages) to /dev/null rather
        /// than the caller's stderr: right for a command line, wrong for the daemon's log.
        public var discardWorkerOutput: Bool
        /// Where a daemon's workers' stderr goes, line by line with a level (`WorkerOutput`),
        /// instead of into its log raw; nil: inherited.
        public var workerOutput: LogSink?
        /// The library a mount serves: the pool opens the comics it sends workers (and the pages it
        /// reads itself) beneath it only, never through a link. nil for the command line's own paths.
        public var libraryRoot: String?

        /// Folders a mount's comics come from besides the library (the vault's objects): the
        /// daemon looks at where they lie to decide `dropRoot`.
        public var alsoReadable: [String] = []

        /// A root mount's workers become nobody without any capability (`PrivilegeDrop`);
        /// set by the daemon where the library's filesystems let nobody read what root does.
        public var dropRoot = false

        /// The worker's command line: `arguments`, and the library when there is one (a mount's
        /// worker confines itself; it opens nothing of the library, which the pool opens for it).
        var spawnArguments: [String] {
            arguments + (libraryRoot.map { ["--library", $0] + (dropRoot ? ["--drop-root"] : []) } ?? [])
        }

        public init(executable: String = HelperExecutable.worker.path, arguments: [String] = [], maxWorkers: Int = 4, timeout: Double = 15,
                    discardWorkerOutput: Bool = false) {
            self.executable = executable
            self.arguments = arguments
            self.maxWorkers = max(1, maxWorkers)
            self.timeout = timeout
            self.discardWorkerOutput = discardWorkerOutput
        }
    }
}
