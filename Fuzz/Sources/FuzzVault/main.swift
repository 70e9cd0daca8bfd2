import Foundation
import FuzzerDriver

// libFuzzer's driver with this target's input function; returns when the run ends.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput))
