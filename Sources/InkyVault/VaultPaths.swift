/// The files of a vault directory:
///
///     vault.key            the wrapped master key
///     vault.key.prev       the previous key file (kept across a password change)
///     manifest.bin         the encrypted manifest (names, sizes, hashes)
///     manifest.bin.prev    the manifest before the last save
///     objects/<32 hex>     one encrypted object per comic, write-once
///     orphans/             objects the manifest does not know, moved here at unlock
struct VaultPaths: Sendable {
    let root: String

    var keyFile: String { DurableFiles.join(root, "vault.key") }
    var previousKeyFile: String { keyFile + ".prev" }
    var manifest: String { DurableFiles.join(root, "manifest.bin") }
    var previousManifest: String { manifest + ".prev" }
    var objects: String { DurableFiles.join(root, "objects") }
    var orphans: String { DurableFiles.join(root, "orphans") }

    func object(named name: String) -> String { DurableFiles.join(objects, name) }
}
