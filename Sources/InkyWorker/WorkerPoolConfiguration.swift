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

        /// Which workers load the image library before their sandbox closes (`--images`): libvips
        /// maps about a hundred shared libraries, ~20 ms of CPU at each start.
        public var images: ImageWorkers = .none

        public enum ImageWorkers: Sendable {
            /// None: nothing is converted and no cover made.
            case none
            /// Every worker: a mount or server that converts pages, where any request may.
            case every
            /// Only workers started for a cover, or for the vault (whose covers its own workers
            /// make): a library's listings and plain page reads then start workers without it.
            case forCovers
        }

        /// The worker's command line: `arguments`, `--images` for an image worker, and the library
        /// when there is one (a mount's worker confines itself; it opens nothing of the library,
        /// which the pool opens for it).
        func spawnArguments(images: Bool) -> [String] {
            arguments + (images ? ["--images"] : [])
                + (libraryRoot.map { ["--library", $0] + (dropRoot ? ["--drop-root"] : []) } ?? [])
        }

        /// Whether a worker loads the image library: the one rule for a worker a request takes
        /// and one started ahead of any (`request` nil). Under `.forCovers`, one for a cover, and
        /// every worker of the vault: they make the vault's covers too, and one started ahead
        /// serves whichever of its requests comes.
        func loadsImages(vault: Bool, for request: WorkerRequest? = nil) -> Bool {
            switch images {
            case .none: false
            case .every: true
            case .forCovers: if case .cover? = request { true } else { vault }
            }
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
