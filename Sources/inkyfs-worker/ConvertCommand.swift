import ArgumentParser
import Foundation
import InkyImage
import InkyWorkerProcess

/// `inkyfs-worker __convert`: converts image files in this process as a worker would and prints how long
/// each conversion took, for `scripts/bench --only convert`. Writes no file. Not for people.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "__convert", shouldDisplay: false)

    @Argument(help: "Image files, read into memory before any timing.")
    var files: [String]

    @Option(help: ArgumentHelp("Box to shrink into.", valueName: "WxH"), transform: parseBox)
    var fit: ImageSize?

    @Flag var grayscale = false

    @Option(help: "Encode each JPEG to at most this many bytes (a page listed with a size budget).")
    var fitBytes: Int?

    @Option(help: ArgumentHelp("Make a cover this many pixels high instead, as a worker makes one (--fit is then ignored).",
                               valueName: "HEIGHT"))
    var cover: Int?

    @Option(help: "Conversions of each file (the first, which starts libvips, is timed apart).")
    var rounds: Int = 10

    func run() throws {
        let images = try files.map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        var settings = cover.map { CoverMaker.settings(height: $0, maxBytes: 256 << 20) }
            ?? ImageConversion(fit: fit, grayscale: grayscale, output: fitBytes == nil ? nil : .jpeg)
        settings.fitBytes = fitBytes
        var times: [Double] = []
        var cpu: [Double] = []
        var output: ConvertedImage?
        for round in 0..<max(1, rounds) + 1 {
            for image in images {
                let (started, startedCPU) = (DispatchTime.now().uptimeNanoseconds, Self.processCPUms())
                output = try ImageConverter.convert(image, settings)
                guard round > 0 else { continue } // the first starts libvips
                times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
                cpu.append(Self.processCPUms() - startedCPU)
            }
        }
        times.sort()
        cpu.sort()
        // CPU time counts libvips' pipeline thread too, and not the time other processes take the core.
        let result: [String: Any] = ["conversions": times.count, "median_ms": times[times.count / 2],
                                     "min_ms": times[0], "max_ms": times[times.count - 1], "median_cpu_ms": cpu[cpu.count / 2],
                                     "width": output?.size.width ?? 0, "height": output?.size.height ?? 0,
                                     "bytes": output?.bytes.count ?? 0, "format": output?.format.rawValue ?? ""]
        print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
    }

    private static func processCPUms() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) * 1e3 + Double(now.tv_nsec) / 1e6
    }
}

private func parseBox(_ text: String) throws -> ImageSize {
    let sides = text.lowercased().split(separator: "x").compactMap { Int($0) }
    guard sides.count == 2, sides.allSatisfy({ (16...20_000).contains($0) }) else {
        throw ValidationError("'\(text)' is not a box: use WIDTHxHEIGHT in pixels, like 1264x1680")
    }
    return ImageSize(width: sides[0], height: sides[1])
}
