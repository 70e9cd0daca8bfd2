extension String {
    /// Every byte below 0x80. In such a string each byte is one character, which is what lets
    /// page order, path splitting and file names take their byte-level shortcuts.
    public var isASCII: Bool { utf8.allSatisfy { $0 < 0x80 } }
}
