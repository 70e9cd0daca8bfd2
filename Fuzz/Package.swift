// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer targets, kept out of the main package: each one's main calls libFuzzer's driver,
/// so they only link with `-sanitize=fuzzer`, which a plain `swift build` or `swift test` of
/// the main package must never need. Built and run only by `scripts/dev/fuzz`.
let fuzzTargetDependencies: [Target.Dependency] = ["FuzzerDriver", .product(name: "InkyFuzzable", package: "inkyfs")]

let package = Package(
    name: "inkyfs-fuzz",
    dependencies: [.package(name: "inkyfs", path: "..")],
    targets: [
        .target(name: "FuzzerDriver"),
        .executableTarget(name: "FuzzArchive", dependencies: fuzzTargetDependencies),
        .executableTarget(name: "FuzzPageOrder", dependencies: fuzzTargetDependencies),
        .executableTarget(name: "FuzzVault", dependencies: fuzzTargetDependencies),
        .executableTarget(name: "FuzzControl", dependencies: fuzzTargetDependencies),
        .executableTarget(name: "FuzzWorkerFrames", dependencies: fuzzTargetDependencies),
    ]
)
