import InkyCore
import InkyTree

/// The library tree as a mount numbers it (`NumberedLibrary`, the base tree), with
/// what the views beside it ask of those numbers: `Continue Reading/` numbers its links after the
/// library's paths, and `Vault/` serves the vault's folders and comics, which the mount numbers
/// in the view's slot. The core (`LibraryFilesystem`) numbers nothing.
protocol NumberedLibraryTree: TreeView {
    /// A library path's number and back, the same for the mount's life.
    func pathNumber(_ path: String) -> UInt32
    func libraryPath(_ number: UInt32) -> String?
    /// Where the vault's nodes are numbered from now on: the `Vault/` view's slot, told when
    /// the view is attached (before mounting).
    func numberVault(in slot: ViewSlot)
    /// Whether `id` numbers a file of a vault comic, known or not: once the vault is locked its
    /// numbers lead nowhere, but a reader holding such a file open gets EIO (the content is
    /// gone), not ENOENT (which says the name went away).
    func isVaultFile(_ id: NodeID) -> Bool
}
