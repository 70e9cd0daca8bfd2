import XCTest
@testable import InkyCore

/// A page padded to the size it was listed with: exactly that long, every byte of the JPEG
/// kept in order after the comments, and read by libvips as the same image.
final class PaddedImageTests: XCTestCase {
    private let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0xFF, 0xD9]

    func testEveryGapComesOutExactlyAndTheJPEGFollowsItsComments() throws {
        for gap in [0, 1, 2, 3, 4, 5, 7, 8, 65_536, 65_537, 65_538, 65_540, 65_541, 65_542, 80_000, 200_003] {
            let padded = try XCTUnwrap(PaddedImage.padded(jpeg, to: jpeg.count + gap), "\(gap)")
            XCTAssertEqual(padded.count, jpeg.count + gap, "\(gap)")
            XCTAssertEqual(Array(padded.prefix(2)), [0xFF, 0xD8])
            XCTAssertEqual(Array(padded.suffix(jpeg.count - 2)), Array(jpeg.dropFirst(2)), "\(gap)")
            // Walk the inserted part: fill bytes, then whole comment segments, up to the original's first marker.
            var at = 2
            while at < 2 + gap, padded[at] == 0xFF, padded[at + 1] == 0xFF { at += 1 }
            while at < 2 + gap {
                XCTAssertEqual(Array(padded[at..<at + 2]), [0xFF, 0xFE], "\(gap) at \(at)")
                at += 2 + Int(padded[at + 2]) << 8 + Int(padded[at + 3])
            }
            XCTAssertEqual(at, 2 + gap, "\(gap)")
        }
        XCTAssertNil(PaddedImage.padded(jpeg, to: jpeg.count - 1), "never cut")
        XCTAssertEqual(PaddedImage.padded([1, 2, 3], to: 5), [1, 2, 3, 0, 0], "not a JPEG: zeros after its end")
    }

    /// What the disk cache keeps: the page without its padding, exactly what padding gives back.
    func testStrippedIsWhatPaddingAddedAndNothingElse() throws {
        for gap in [1, 3, 4, 9, 65_537, 70_000] {
            let padded = try XCTUnwrap(PaddedImage.padded(jpeg, to: jpeg.count + gap))
            XCTAssertEqual(PaddedImage.stripped(padded), jpeg, "\(gap)")
        }
        XCTAssertNil(PaddedImage.stripped(jpeg), "nothing to take away")
        XCTAssertEqual(PaddedImage.stripped([1, 2, 3, 0, 0]), [1, 2, 3])
        // A JPEG whose own first segment is a comment of spaces is kept whole: stripping it too
        // would not pad back to the same bytes.
        let commented: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x03, 0x20] + jpeg.dropFirst(2)
        let padded = try XCTUnwrap(PaddedImage.padded(commented, to: commented.count + 70_000))
        if let kept = PaddedImage.stripped(padded) { XCTAssertEqual(PaddedImage.padded(kept, to: padded.count), padded) }
    }
}
