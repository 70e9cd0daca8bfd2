import InkyCore

/// Log lines about vault comics carry no name: an error's detail may quote a name from inside
/// the archive (a page's entry name, a decoder's message about one), and the daemon's log is a
/// plaintext file beside the vault. A vault comic's error is logged by its kind and object path
/// (random hex) only; `ERROR.txt` inside the unlocked vault still shows the whole message.
extension LibraryFilesystem {
    func loggable(_ error: ComicError, of comic: ComicRef) -> String {
        guard comic.isVault else { return error.message }
        return "\(realPath(comic)): \(error.kind) (details of vault comics are not logged)"
    }
}
