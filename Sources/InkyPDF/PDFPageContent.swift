internal import CInkyPDF

/// What one PDF page is, for serving it as a file.
enum PDFPageContent: Equatable {
    /// Exactly one image drawn over the whole page and nothing else: its stream is served as is
    /// (wrapped into a PNG file for Flate data with PNG predictors).
    case image(EmbeddedImage)
    /// Anything else: rendered at read time.
    case rendered

    init(_ info: inky_pdf_page) {
        let format: EmbeddedImage.Format
        switch Int(info.kind) {
        case Int(INKY_PDF_PAGE_JPEG): format = .jpeg
        case Int(INKY_PDF_PAGE_JPX): format = .jpeg2000
        case Int(INKY_PDF_PAGE_PNG): format = .png
        default:
            self = .rendered
            return
        }
        self = .image(EmbeddedImage(format: format, object: Int(info.object), streamLength: info.stream_length,
                                    width: Int(info.width), height: Int(info.height),
                                    bitsPerComponent: Int(info.bits_per_component), colors: Int(info.colors)))
    }
}

/// An image XObject whose stream is a complete image file (or a PNG's IDAT data).
struct EmbeddedImage: Equatable {
    enum Format: Equatable {
        case jpeg, jpeg2000, png
    }

    var format: Format
    var object: Int
    var streamLength: Int64
    var width: Int
    var height: Int
    var bitsPerComponent: Int
    var colors: Int

    /// Bytes of the served file, known without reading the stream.
    var fileSize: Int64 {
        format == .png ? PNGFile.size(idatLength: streamLength) : streamLength
    }

    /// The served file's extension; a JPEG 2000 stream is a JP2 file or a bare codestream.
    func fileExtension(head: [UInt8]) -> String {
        switch format {
        case .jpeg: "jpg"
        case .png: "png"
        case .jpeg2000: head.starts(with: [0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20]) ? "jp2" : "j2k"
        }
    }
}
