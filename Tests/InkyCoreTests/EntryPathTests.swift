import XCTest
@testable import InkyCore

/// An ASCII member name is split on bytes; the split must be the one by characters, which every
/// name took before and a non-ASCII name still takes.
final class EntryPathTests: XCTestCase {
    func testASCIINamesSplitOnBytesAsOnCharacters() {
        let named = ["", "/", "a", "a/b.jpg", "/abs/x.png", "a//b", "a/./b", "./a", "a/.", "..", "a/../b", "a\\b\\c.jpg",
                     "\\\\server\\x", "c:\\x.jpg", ".", "a/", "a\\", "a\r\nb/c", "\r\n/\r\n", "a/.hidden/b", " a / b ", "...", "./.", "/./"]
        for path in named {
            XCTAssertEqual(EntryPath.asciiComponents(of: path), EntryPath.characterComponents(of: path), path.debugDescription)
        }
        // Every string of up to 7 of the characters that matter to the split, from a fixed seed.
        let alphabet: [Character] = ["a", "/", "\\", ".", "\r", "\n", " ", "_"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 61)
            var path = ""
            for position in 0..<length { path.append(alphabet[Int((state >> UInt64(3 * position + 8)) & 7)]) }
            XCTAssertEqual(EntryPath.asciiComponents(of: path), EntryPath.characterComponents(of: path), path.debugDescription)
        }
    }

    func testASlashThatAMarkCombinesWithIsNoSeparator() {
        // "/" + U+0338 is one character, not "/": the name keeps it, as it always did.
        XCTAssertEqual(EntryPath.components(of: "a/\u{338}b/c.jpg"), ["a/\u{338}b", "c.jpg"])
        XCTAssertEqual(EntryPath.components(of: "Café/01.jpg"), ["Café", "01.jpg"])
    }
}
