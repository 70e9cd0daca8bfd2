import Foundation

/// Where `CommandRunner.binaryForOtherUsers` links the executables: one folder a test process.
private let otherUsersFolder = FileManager.default.temporaryDirectory.appendingPathComponent("inkyfs-bin-\(getpid())-\(UUID().uuidString)").path

/// Runs the built `inkyfs` binary like a user would, capturing its output and exit status.
public enum CommandRunner {
    public struct Result {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    public static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("inkyfs")
    }

    /// The built worker executable, beside `inkyfs` as in every build folder.
    public static var workerBinary: URL {
        binary.deletingLastPathComponent().appendingPathComponent("inkyfs-worker")
    }

    /// The built server executable `inkyfs serve` becomes, beside `inkyfs` too.
    public static var serveBinary: URL {
        binary.deletingLastPathComponent().appendingPathComponent("inkyfs-serve")
    }

    /// `inkyfs` for a test that runs it as another user (runuser, setpriv, a launcher): that user
    /// must be able to search every folder above it, which a checkout in a private home, or a
    /// build folder made 0750, does not allow. The built executables are linked (copied across
    /// filesystems) once per test process into a folder anyone can search, removed at exit.
    public static let binaryForOtherUsers: URL = {
        let folder = URL(fileURLWithPath: otherUsersFolder)
        mkdir(folder.path, 0o755)
        chmod(folder.path, 0o755)
        for source in [binary, workerBinary, serveBinary] {
            let target = folder.appendingPathComponent(source.lastPathComponent)
            if link(source.path, target.path) != 0 { try? FileManager.default.copyItem(at: source, to: target) }
        }
        atexit { _ = try? FileManager.default.removeItem(atPath: otherUsersFolder) }
        return folder.appendingPathComponent("inkyfs")
    }()

    public static func inkyfs(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try capture(binary.path, arguments, environment: environment)
    }

    /// Runs any program, capturing stdout and stderr; the exit status is the caller's to judge.
    public static func capture(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                               environment: [String: String] = [:]) throws -> Result {
        let (status, out, errors) = try captureBytes(executable, arguments, in: directory, environment: environment)
        return Result(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: errors)
    }

    /// Runs any program: its exit status, its whole stdout as bytes and its stderr as text.
    public static func captureBytes(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                                    environment: [String: String] = [:]) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
        LeftoverProcesses.watching
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // stderr is drained on another thread so a chatty child cannot block on a full pipe.
        let errorText = LogBuffer()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorText.append(errors.fileHandleForReading.readDataToEndOfFile())
            drained.signal()
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        let status = process.waitForExit()
        return (status, [UInt8](out), errorText.text)
    }
}
