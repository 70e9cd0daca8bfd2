import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import InkyVault

/// The vault's parsers of bytes read from disk: the key file, the object header (and the
/// object reader that opens an object with it) and the manifest. The first input byte picks
/// the parser; the rest is its input. Where a checksum or GCM tag would stop nearly every
/// mutation at the door, a second mode seals the fuzzed bytes properly first, so the fields
/// behind the door are fuzzed too. Needs `@testable`: the parsers are internal to InkyVault
/// (scripts/dev/fuzz builds debug, where SwiftPM compiles with testing enabled).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzVault(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 6 {
    case 0: keyFile(input)
    case 1: keyFile(input + (try! SHA256Hasher.hash(input)))  // a checksum that matches
    case 2: objectHeader(input)
    case 3: objectFile(input)
    case 4: manifestFile(input)
    default: manifestPayload(input)
    }
    return 0
}

/// A fixed key: what matters here is parsing, not secrecy.
private let key = SecureBytes(copying: [UInt8](repeating: 0x5A, count: 32))

private func keyFile(_ bytes: [UInt8]) {
    guard case .success(let file) = VaultKeyFile.parse(bytes) else { return }
    // Anything accepted must be exactly one file we could have written...
    precondition((try? file.encoded()) == bytes, "an accepted key file does not re-encode to itself")
    // ...and must never make an unlock run for hours or allocate gigabytes.
    precondition(file.kdf.outOfBoundsReason == nil, "accepted out-of-bounds KDF \(file.kdf)")
}

private func objectHeader(_ bytes: [UInt8]) {
    guard let header = try? VaultObjectHeader.parse(bytes, path: "fuzz") else { return }
    precondition(header.bytes == Array(bytes.prefix(VaultObjectHeader.length)), "header does not re-encode")
    precondition(VaultObjectHeader.chunkSizeRange.contains(header.chunkSize))
    guard let layout = VaultChunkLayout(plaintextSize: header.plaintextSize, chunkSize: header.chunkSize) else { return }
    precondition(layout.fileSize >= UInt64(VaultObjectHeader.length) + header.plaintextSize)
    precondition(VaultChunkLayout.plaintextSize(forFileSize: layout.fileSize, chunkSize: layout.chunkSize) == header.plaintextSize,
                 "layout size arithmetic does not invert")
    // Chunk arithmetic for any offset a reader might be asked for, taken from the input's tail.
    let offset = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let chunks = layout.chunks(coveringOffset: offset % max(1, layout.plaintextSize), count: 1 << 20)
    for index in [chunks.lowerBound, max(chunks.lowerBound, chunks.upperBound &- 1)] where index < layout.chunkCount {
        let range = layout.plaintextRange(ofChunk: index)
        precondition(range.count <= header.chunkSize && layout.storedOffset(ofChunk: index) < layout.fileSize)
    }
}

/// The object reader as a worker opens a vault object: header, size check, chunk 0.
private func objectFile(_ bytes: [UInt8]) {
    let path = scratchFile(bytes)
    defer { unlink(path) }
    guard let reader = try? VaultObjectReader(path: path, key: key) else { return }
    _ = try? reader.read(at: 0, count: 1 << 16)
}

private func manifestFile(_ bytes: [UInt8]) {
    _ = try? VaultManifestFile.open(bytes, key: key, path: "fuzz")
}

/// Authentic manifests whose JSON payload is the fuzzer's: decoding and validation, which
/// only run after the tag verifies.
private func manifestPayload(_ json: [UInt8]) {
    var file = VaultManifestFile.magic
    file.appendBigEndian(UInt16(1))  // format version 1 (still read): the generation in the clear header
    file.appendBigEndian(VaultManifestFile.aesGCM)
    file.appendBigEndian(UInt64(1))
    file += [UInt8](repeating: 7, count: AESGCM.nonceLength)
    let header = file
    let sealed = try! AESGCM.seal(plaintext: json, key: key, nonce: Array(header[20...]), aad: header)
    file += sealed.ciphertext + sealed.tag
    do {
        let (manifest, _) = try VaultManifestFile.open(file, key: key, path: "fuzz")
        precondition(manifest.validationFailure() == nil)
        for entry in manifest.entries {
            precondition(!entry.displayPath.split(separator: "/").contains(".."), "'..' in an accepted display path")
        }
    } catch {
        _ = "\(error)"
    }
}

/// A file for APIs that take a path; in /dev/shm when there is one, so no disk I/O.
private func scratchFile(_ bytes: [UInt8]) -> String {
    let folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
    var template = Array("\(folder)/inkyfs-fuzz-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    precondition(fd >= 0, "mkstemp: \(errno)")
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    precondition(written == bytes.count, "short write")
    close(fd)
    return String(cString: template)
}
