@testable import InkyCore
import InkyTestSupport
import XCTest

/// The header sniffer reads what real encoders write, and refuses what hostile headers declare
/// (truncations, zero sizes, bombs) without ever reading past the bytes it was given.
final class ImageDimensionsTests: XCTestCase {
    private let limit: Int64 = 100_000_000

    func testRealEncodersHeadersGiveTheirSize() throws {
        for format in [PageImages.Format.jpeg, .png, .gif, .webp, .bmp] {
            let bytes = try PageImages.make(format, width: 300, height: 200)
            XCTAssertEqual(ImageDimensions.read(bytes, maxPixels: limit), .size(width: 300, height: 200), "\(format)")
        }
        let transparent = try PageImages.make(.webp, width: 301, height: 203, alpha: true)
        XCTAssertEqual(ImageDimensions.read(transparent, maxPixels: limit), .size(width: 301, height: 203))
        XCTAssertEqual(ImageDimensions.read(try PageImages.make(.avif, width: 30, height: 20), maxPixels: limit), .unrecognized,
                       "left to libvips' header")
    }

    func testEveryTruncationIsRefusedOrUnrecognizedNeverACrash() throws {
        for format in [PageImages.Format.jpeg, .png, .gif, .webp, .bmp] {
            let bytes = try PageImages.make(format, width: 64, height: 48)
            for length in 0..<min(bytes.count, 700) {
                let result = ImageDimensions.read(Array(bytes.prefix(length)), maxPixels: limit)
                if case .size(let width, let height) = result {
                    XCTAssertEqual([width, height], [64, 48], "\(format) cut at \(length)")
                }
            }
        }
    }

    func testZeroAndHugeSizesAreRefused() throws {
        XCTAssertEqual(ImageDimensions.read(png(width: 0, height: 10), maxPixels: limit), .refused("0 × 10 pixels"))
        XCTAssertEqual(ImageDimensions.read(try PageImages.bombPNG(), maxPixels: limit),
                       .refused("100000 × 100000 pixels, more than the limit of 100000000"))
        XCTAssertEqual(ImageDimensions.read(png(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF), maxPixels: limit),
                       .refused("4294967295 × 4294967295 pixels, more than the limit of 100000000"))
        var gif = Array("GIF89a".utf8) + [0xFF, 0xFF, 0x00, 0x00]
        XCTAssertEqual(ImageDimensions.read(gif, maxPixels: limit), .refused("65535 × 0 pixels"))
        gif[8] = 0xFF; gif[9] = 0xFF
        XCTAssertEqual(ImageDimensions.read(gif, maxPixels: limit), .refused("65535 × 65535 pixels, more than the limit of 100000000"))
        // A BMP with the most negative height (a top-down image cannot be that tall).
        var bmp = Array("BM".utf8) + [UInt8](repeating: 0, count: 24)
        bmp[14] = 40; bmp[18] = 10; bmp[22...25] = [0, 0, 0, 0x80]
        XCTAssertEqual(ImageDimensions.read(bmp, maxPixels: limit), .refused("10 × 0 pixels"))
    }

    func testJPEGSegmentsThatLieAreRefused() {
        let sof: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0xC8, 0x01, 0x2C]
        XCTAssertEqual(ImageDimensions.read([0xFF, 0xD8] + sof, maxPixels: limit), .size(width: 300, height: 200))
        XCTAssertEqual(ImageDimensions.read([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01] + sof, maxPixels: limit), .refused("JPEG segment of length 1"))
        XCTAssertEqual(ImageDimensions.read([0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xF0] + sof, maxPixels: limit), .refused("truncated JPEG header"))
        XCTAssertEqual(ImageDimensions.read([0xFF, 0xD8, 0x12, 0x34] + sof, maxPixels: limit), .refused("JPEG marker expected at byte 2"))
        XCTAssertEqual(ImageDimensions.read([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02] + sof, maxPixels: limit),
                       .refused("JPEG without a frame header before its scan"))
    }

    func testAnEXIFOrientationThatTurnsThePageSwapsItsSides() {
        let sof: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0xC8, 0x01, 0x2C]
        for (orientation, turned) in [(1, false), (3, false), (6, true), (8, true)] {
            // Exif, a big-endian TIFF header, IFD0 at 8 with one entry: 0x0112 SHORT 1 = orientation.
            let tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0]
            let app1 = Array("Exif\0\0".utf8) + tiff
            let segment: [UInt8] = [0xFF, 0xE1, 0, UInt8(app1.count + 2)] + app1
            XCTAssertEqual(ImageDimensions.read([0xFF, 0xD8] + segment + sof, maxPixels: limit),
                           turned ? .size(width: 200, height: 300) : .size(width: 300, height: 200), "orientation \(orientation)")
        }
    }

    private func png(width: UInt32, height: UInt32) -> [UInt8] {
        let be = { (value: UInt32) -> [UInt8] in [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + be(width) + be(height) + [8, 2, 0, 0, 0]
    }
}
