import Foundation
import InkyCore
import InkyWorker
import InkyImage

/// The listing pass of a profile that cuts pages (`--split-spreads`, `--strips`): every page's
/// dimensions, from its first bytes (`ImageDimensions`) or, for the formats that sniffer does
/// not read (AVIF, HEIF, JPEG XL, JPEG 2000, TIFF), from libvips' header; no pixel is decoded.
/// A page whose dimensions cannot be read, or whose header declares more pixels than the limit,
/// stays whole and is logged: it never fails the comic.
enum PageShapes {
    /// The pixels a page may declare; the conversion refuses the same (`ImageConversion`).
    static let maxPixels = ImageConversion().maxPixels

    /// Archive entry index → its pieces in reading order, for the pages that are cut.
    static func pieces(of reader: any ComicReader, conversion: PageConversion, limits: ComicLimits,
                       isPrivate: Bool) -> [Int: [PagePiece]] {
        let rightToLeft = conversion.rightToLeft || readsRightToLeft(reader)
        var pieces: [Int: [PagePiece]] = [:]
        var pageCount = reader.listing.pages.count
        // In stream order: a solid archive is read once, front to back.
        for page in reader.listing.pages.sorted(by: { $0.entryIndex < $1.entryIndex }) where page.isSizeKnown {
            let member = isPrivate ? "entry \(page.entryIndex + 1)" : "'\(page.sourcePath)'"
            let bytes: [UInt8]
            do throws(ComicError) {
                bytes = try reader.readPage(page)
            } catch {
                log(reader.path, "page \(member) not cut: \(error)")
                continue
            }
            reader.onProgress?()
            switch dimensions(of: bytes) {
            case .success(let size):
                let cut = PagePiece.pieces(width: size.width, height: size.height, conversion: conversion, rightToLeft: rightToLeft)
                guard !cut.isEmpty else { continue }
                guard pageCount + cut.count - 1 <= limits.maxPages else {
                    log(reader.path, "page \(member) not cut: the comic would have more than \(limits.maxPages) pages")
                    continue
                }
                pageCount += cut.count - 1
                pieces[page.entryIndex] = cut
            case .failure(let reason):
                log(reader.path, "page \(member) not cut: \(reason)")
            }
        }
        return pieces
    }

    static func dimensions(of bytes: [UInt8]) -> Result<ImageSize, DimensionsUnknown> {
        switch ImageDimensions.read(bytes, maxPixels: maxPixels) {
        case .size(let width, let height):
            return .success(ImageSize(width: width, height: height))
        case .refused(let reason):
            return .failure(DimensionsUnknown(reason: reason))
        case .unrecognized:
            do throws(ImageError) {
                let header = try ImageConverter.header(of: bytes)
                let size = header.size
                guard size.width > 0, size.height > 0, Int64(size.width) * Int64(size.height) <= maxPixels else {
                    return .failure(DimensionsUnknown(reason: "\(size.width) × \(size.height) pixels, more than the limit of \(maxPixels)"))
                }
                return .success(size)
            } catch {
                return .failure(DimensionsUnknown(reason: "\(error)"))
            }
        }
    }

    struct DimensionsUnknown: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// ComicInfo's `Manga=YesAndRightToLeft`: a damaged ComicInfo is only a missing one.
    static func readsRightToLeft(_ reader: any ComicReader) -> Bool {
        guard let bytes = try? reader.readComicInfo(), let metadata = MetadataFiles.comicInfo(bytes) else { return false }
        return metadata.manga?.caseInsensitiveCompare("YesAndRightToLeft") == .orderedSame
    }

    static func log(_ path: String, _ line: String) {
        FileHandle.standardError.write(Data("inkyfs worker: \(path): \(line)\n".utf8))
    }
}
