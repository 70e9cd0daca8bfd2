internal import CFuse3

/// Facts about the libfuse3 this binary runs against (for `--version` and `doctor`).
/// The kernel-facing adapter itself lives beside this file.
public enum FUSELibrary {
    public static var version: String { String(cString: inky_fuse_version_string()) }
    /// libfuse's numeric version, e.g. 314 for 3.14.
    public static var versionNumber: Int { Int(inky_fuse_version()) }
}
