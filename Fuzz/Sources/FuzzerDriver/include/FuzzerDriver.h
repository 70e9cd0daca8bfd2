#ifndef INKYFS_FUZZER_DRIVER_H
#define INKYFS_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer). Each fuzz target's main.swift
/// calls it itself: SwiftPM points `main` at the Swift module's entry point, so libFuzzer's own
/// `main` is never the one that runs.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// The target's input function, defined in Swift with @_cdecl. Passed to the driver through
/// this declaration: taking the Swift function's address instead makes the compiler emit a
/// second definition of the C symbol in main.swift.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
