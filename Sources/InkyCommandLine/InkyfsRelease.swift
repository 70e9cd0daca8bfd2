/// The release number, the one place it is written: `inkyfs --version` and `inkyfs-serve --version`
/// print it (so `inkyfs doctor` tells a server executable left from another release), and
/// scripts/dev/package reads it from this file for the Debian version.
public enum InkyfsRelease {
    public static let number = "0.1.0"
}
