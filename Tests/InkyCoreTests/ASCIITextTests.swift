import InkyCore
import XCTest

final class ASCIITextTests: XCTestCase {
    func testOnlyStringsWhoseEveryByteIsBelow0x80AreASCII() {
        for text in ["", "001.jpg", "Batman 001 (2011)/page_01.png", "\u{7F}\t\r\n"] {
            XCTAssertTrue(text.isASCII, text)
        }
        // A combining mark after a plain letter, a precomposed letter, a wide character, U+0080.
        for text in ["e\u{301}.jpg", "Café", "第1話", "\u{80}"] {
            XCTAssertFalse(text.isASCII, text)
        }
    }
}
