/// Loading `manifest.bin` with its fallback, and saving it.
enum VaultManifestStore {
    struct Loaded {
        let manifest: VaultManifest
        let generation: UInt64
        /// The exact authenticated bytes, to become `.prev` at the next save.
        let image: [UInt8]
        let fallbackReason: String?
    }

    /// `manifest.bin` if it authenticates and parses, else `manifest.bin.prev` (with the
    /// reason), else the main file's error.
    static func load(_ paths: VaultPaths, key: SecureBytes) throws(VaultError) -> Loaded {
        let mainError: VaultError
        do {
            return try open(paths.manifest, key: key, fallbackReason: nil)
        } catch {
            mainError = error
        }
        do {
            return try open(paths.previousManifest, key: key, fallbackReason: "\(mainError)")
        } catch {
            throw mainError
        }
    }

    /// Saves `manifest` as `generation`, which must be above `current` (the generation
    /// loaded or last saved): a save that did not move forward would be a bug, and the
    /// authenticated counter must never be seen going backwards. `currentImage` (the bytes
    /// known to be good) becomes `manifest.bin.prev` first, then the new file replaces
    /// `manifest.bin`; each step is temp + fsync + rename + directory fsync, so a crash
    /// anywhere leaves a main and a prev that both open. Returns the new file's bytes.
    static func save(
        _ manifest: VaultManifest, generation: UInt64, current: UInt64, currentImage: [UInt8],
        paths: VaultPaths, key: SecureBytes, randomness: RandomSource
    ) throws(VaultError) -> [UInt8] {
        guard generation > current else { throw .generationNotIncreasing(current: current, attempted: generation) }
        let image = try VaultManifestFile.seal(manifest, generation: generation, key: key, randomness: randomness)
        try DurableFiles.replace(paths.previousManifest, with: currentImage)
        try DurableFiles.replace(paths.manifest, with: image)
        return image
    }

    private static func open(_ path: String, key: SecureBytes, fallbackReason: String?) throws(VaultError) -> Loaded {
        guard let bytes = try DurableFiles.read(path, limit: VaultManifestFile.readLimit) else {
            throw .damagedManifest(path: path, detail: "missing")
        }
        let (manifest, generation) = try VaultManifestFile.open(bytes, key: key, path: path)
        return Loaded(manifest: manifest, generation: generation, image: bytes, fallbackReason: fallbackReason)
    }
}
