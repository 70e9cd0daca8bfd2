internal import CInkyVips

/// What a page becomes: at most `fit` (width, height) pixels, shrunk on load and never enlarged,
/// in grayscale if asked, encoded as JPEG, or as PNG where JPEG would hurt (transparency, or a
/// palette image: line art, flat colours).
public struct ImageConversion: Sendable, Equatable {
    public var fit: ImageSize?
    public var grayscale: Bool
    /// The format to write whatever the image is (its name already says it); nil chooses.
    /// A transparent image written as JPEG is laid on white.
    public var output: ConvertedImage.Format?
    public var jpegQuality: Int
    /// Refused on the header, before decoding: a decompression bomb declares its size there.
    public var maxPixels: Int64
    /// Refused after encoding (the per-page limit).
    public var maxBytes: Int
    /// Uniform borders trimmed before anything else.
    public var cropMargins: Bool
    /// Only this part of the (trimmed) image is kept.
    public var piece: ImagePiece?
    /// A JPEG that would come out larger is encoded again at lower qualities, down to
    /// `lowestQuality`, until it fits (a page listed with a size budget).
    public var fitBytes: Int?
    public static let lowestQuality = 20

    public init(fit: ImageSize? = nil, grayscale: Bool = false, output: ConvertedImage.Format? = nil, jpegQuality: Int = 85,
                maxPixels: Int64 = 100_000_000, maxBytes: Int = 128 << 20, cropMargins: Bool = false, piece: ImagePiece? = nil) {
        self.fit = fit
        self.grayscale = grayscale
        self.cropMargins = cropMargins
        self.piece = piece
        self.output = output
        self.jpegQuality = jpegQuality
        self.maxPixels = maxPixels
        self.maxBytes = maxBytes
    }
}

public struct ImageSize: Sendable, Equatable, Hashable, Codable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// The encoded result.
public struct ConvertedImage: Sendable, Equatable {
    public enum Format: String, Sendable { case jpeg, png }
    public var bytes: [UInt8]
    public var format: Format
    public var size: ImageSize
}

/// What a header says, read without decoding pixels.
public struct ImageHeader: Sendable, Equatable {
    public var size: ImageSize
    public var bands: Int
    public var hasAlpha: Bool
    /// libvips' loader ("jpegload_buffer", "pngload_buffer"...).
    public var loader: String
}

public enum ImageConverter {
    /// Starts the image library; a worker calls it before its seccomp filter (modules load here).
    /// Loads libvips and libjxl: a worker calls it before its seccomp filter, which may refuse
    /// the files a later load would open.
    public static func start() throws(ImageError) {
        try VipsRuntime.start()
        JPEGReconstruction.load()
    }

    public static func header(of bytes: [UInt8]) throws(ImageError) -> ImageHeader {
        try start()
        let read = { () throws(ImageError) -> ImageHeader in
            try bytes.withBytes { raw throws(ImageError) -> ImageHeader in
                let image = try load(raw)
                return ImageHeader(size: ImageSize(width: image.width, height: image.height), bands: image.bands,
                                   hasAlpha: image.hasAlpha, loader: image.loader)
            }
        }
        return isBMP(bytes) ? try VipsRuntime.withMagick(read) : try read()
    }

    /// Converts one image. A JPEG XL made from a JPEG gives back that JPEG, bit-exact, when it
    /// needs neither resizing nor grayscale. `progress` is called now and then while libvips works
    /// (a worker's heartbeat: a large page must not look like a hang).
    public static func convert(_ bytes: [UInt8], _ conversion: ImageConversion,
                               progress: (() -> Void)? = nil) throws(ImageError) -> ConvertedImage {
        try start()
        if conversion.output != .png, JPEGReconstruction.isJPEGXL(bytes), let jpeg = try JPEGReconstruction.jpeg(from: bytes, maxPixels: conversion.maxPixels,
                                                                                     maxBytes: conversion.maxBytes) {
            let header = try Self.header(of: jpeg)
            if conversion.fit.map({ header.size.width <= $0.width && header.size.height <= $0.height }) ?? true,
               !conversion.grayscale, !conversion.cropMargins, conversion.piece == nil, conversion.fitBytes.map({ jpeg.count <= $0 }) ?? true {
                return ConvertedImage(bytes: jpeg, format: .jpeg, size: header.size)
            }
            return try convert(jpeg, conversion, progress: progress)
        }
        return try bytes.withBytes { raw throws(ImageError) -> ConvertedImage in
            try convert(raw, isBMP: isBMP(bytes), conversion, progress: progress)
        }
    }

    private static func convert(_ raw: UnsafeRawBufferPointer, isBMP: Bool, _ conversion: ImageConversion,
                                progress: (() -> Void)?) throws(ImageError) -> ConvertedImage {
        let work = { () throws(ImageError) -> ConvertedImage in
            // libvips reads the header only here: the limit is checked before any pixel is decoded.
            let source = try load(raw)
            let pixels = Int64(source.width) * Int64(source.height)
            guard pixels <= conversion.maxPixels else {
                throw .tooManyPixels(width: source.width, height: source.height, limit: conversion.maxPixels)
            }
            var image: VipsImageHandle
            if conversion.cropMargins || conversion.piece != nil {
                let cut = try ImageCuts.cut(raw, cropMargins: conversion.cropMargins, piece: conversion.piece, fit: conversion.fit)
                let target = conversion.fit ?? ImageSize(width: cut.width, height: cut.height)
                image = try VipsImageHandle.make(ImageError.undecodable) {
                    inky_vips_thumbnail_image(cut.pointer, Int32(target.width), Int32(target.height), $0)
                }
            } else {
                let target = conversion.fit ?? ImageSize(width: source.width, height: source.height)
                let scaled = conversion.grayscale || conversion.fit != nil
                    ? ScaledJPEG.decode(raw, of: source, fit: target, gray: conversion.grayscale, maxPixels: conversion.maxPixels) : nil
                image = try VipsImageHandle.make(ImageError.undecodable) { out in
                    if let scaled { return inky_vips_resize_within(scaled.pointer, Int32(target.width), Int32(target.height), out) }
                    return source.loader.hasPrefix("jp2kload")
                        ? inky_vips_thumbnail_image(source.pointer, Int32(target.width), Int32(target.height), out)
                        : inky_vips_thumbnail(raw.baseAddress, raw.count, Int32(target.width), Int32(target.height), out)
                }
            }
            if conversion.grayscale {
                let colour = image
                image = try VipsImageHandle.make(ImageError.undecodable) { inky_vips_grayscale(colour.pointer, $0) }
            }
            let keepsPNG = conversion.output.map { $0 == .png }
                ?? (image.hasAlpha || source.hasPalette || source.loader.hasPrefix("gifload"))
            if keepsPNG {
                let png = try blamed(raw) { () throws(ImageError) in try image.encode(progress: progress) { inky_vips_png($0, $1, $2) } }
                return try checked(ConvertedImage(bytes: png, format: .png, size: ImageSize(width: image.width, height: image.height)), conversion)
            }
            if image.hasAlpha {
                let transparent = image
                image = try VipsImageHandle.make(ImageError.undecodable) { inky_vips_flatten_white(transparent.pointer, $0) }
            }
            var quality = Int32(conversion.jpegQuality)
            let first = quality
            var jpeg = try blamed(raw) { () throws(ImageError) in try image.encode(progress: progress) { inky_vips_jpeg($0, first, $1, $2) } }
            // Fewer bytes at each step: a page dense enough to pass its budget (a rare one) is
            // served a little softer rather than not at all.
            while let limit = conversion.fitBytes, jpeg.count > limit, quality > Int32(ImageConversion.lowestQuality) {
                quality = max(Int32(ImageConversion.lowestQuality), quality - 15)
                let step = quality
                jpeg = try image.encode(progress: progress) { inky_vips_jpeg($0, step, $1, $2) }
            }
            // Still too large (noise, in effect): fewer pixels, until it fits. Never fails a page.
            var scale = 1.0, size = ImageSize(width: image.width, height: image.height)
            while let limit = conversion.fitBytes, jpeg.count > limit, scale > 0.01 {
                scale *= min(0.9, (Double(limit) / Double(jpeg.count)).squareRoot())
                let (whole, lowest) = (image, quality)
                let width = max(1, Int32(Double(whole.width) * scale)), height = max(1, Int32(Double(whole.height) * scale))
                let smaller = try VipsImageHandle.make(ImageError.undecodable) { inky_vips_resize_within(whole.pointer, width, height, $0) }
                jpeg = try smaller.encode(progress: progress) { inky_vips_jpeg($0, lowest, $1, $2) }
                size = ImageSize(width: smaller.width, height: smaller.height)
            }
            return try checked(ConvertedImage(bytes: jpeg, format: .jpeg, size: size), conversion)
        }
        return isBMP ? try VipsRuntime.withMagick(work) : try work()
    }

    /// libvips reads BMP only through ImageMagick, which stays blocked for everything else.
    private static func isBMP(_ bytes: [UInt8]) -> Bool { bytes.starts(with: [0x42, 0x4D]) }

    private static func load(_ raw: UnsafeRawBufferPointer) throws(ImageError) -> VipsImageHandle {
        guard raw.count > 0 else { throw .undecodable("no bytes") }
        return try VipsImageHandle.make(ImageError.undecodable) { inky_vips_header(raw.baseAddress, raw.count, $0) }
    }

    /// libvips decodes as the saver pulls pixels, so a page that does not decode (truncated,
    /// say) fails in the encode. Told apart on that failure only: the page decoded alone, shrunk
    /// on load (64 pixels, cheap), fails again if it is the page's fault: `.undecodable`, in
    /// libvips' words; otherwise the encode failed.
    private static func blamed(_ raw: UnsafeRawBufferPointer, _ encode: () throws(ImageError) -> [UInt8]) throws(ImageError) -> [UInt8] {
        do throws(ImageError) {
            return try encode()
        } catch {
            guard case .unencodable = error else { throw error }
            let small = try VipsImageHandle.make(ImageError.undecodable) { inky_vips_thumbnail(raw.baseAddress, raw.count, 64, 64, $0) }
            guard inky_vips_wio_input(small.pointer) == 0 else { throw .undecodable(VipsRuntime.takeError()) }
            throw error
        }
    }

    private static func checked(_ image: ConvertedImage, _ conversion: ImageConversion) throws(ImageError) -> ConvertedImage {
        guard image.bytes.count <= conversion.maxBytes else {
            throw .unencodable("\(image.bytes.count) bytes, more than the limit of \(conversion.maxBytes)")
        }
        return image
    }
}
