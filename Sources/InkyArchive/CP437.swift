/// unarr decodes RAR4 names without the Unicode flag as CP437 (DOS), but RAR on Linux and
/// macOS stores such names as raw UTF-8. Mapping the CP437 text back to its bytes recovers
/// the real name whenever those bytes are valid UTF-8.
enum CP437 {
    /// The 128 characters of CP437's upper half, in byte order 0x80…0xFF.
    private static let upperHalf: [Character] = Array(
        "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{00A0}")
    private static let byteForCharacter: [Character: UInt8] = Dictionary(
        uniqueKeysWithValues: upperHalf.enumerated().map { ($0.element, UInt8(0x80 + $0.offset)) })

    /// The UTF-8 name hidden in a CP437 decoding, or the name unchanged.
    static func recoverUTF8(_ name: String) -> String {
        guard name.unicodeScalars.contains(where: { $0.value >= 0x80 }) else { return name }
        var bytes: [UInt8] = []
        for character in name {
            if let ascii = character.asciiValue {
                bytes.append(ascii)
            } else if let byte = byteForCharacter[character] {
                bytes.append(byte)
            } else {
                return name // not CP437 output: unarr decoded real Unicode already
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? name
    }
}
