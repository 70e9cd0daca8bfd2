internal import CInkyVips
import Foundation
import Synchronization

/// Owns one `VipsImage` reference: dropped in `deinit`, so no path leaks one.
final class VipsImageHandle {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(_ pointer: UnsafeMutablePointer<VipsImage>) { self.pointer = pointer }

    deinit { inky_vips_unref(pointer) }

    var width: Int { Int(inky_vips_width(pointer)) }
    var height: Int { Int(inky_vips_height(pointer)) }
    var bands: Int { Int(inky_vips_bands(pointer)) }
    var hasAlpha: Bool { inky_vips_has_alpha(pointer) != 0 }
    /// The loader libvips chose ("jpegload_buffer", "gifload_buffer"...).
    var loader: String { String(cString: inky_vips_loader(pointer)) }
    var hasPalette: Bool { inky_vips_has_palette(pointer) != 0 }

    /// Runs an operation that makes a new image; its failure carries libvips' message.
    static func make(_ wrap: (String) -> ImageError,
                     _ operation: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) throws(ImageError) -> VipsImageHandle {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = operation(&out)
        guard status == 0, let out else {
            if let out { inky_vips_unref(out) }
            throw wrap(VipsRuntime.takeError())
        }
        return VipsImageHandle(out)
    }

    /// Encodes with a libvips saver; the buffer it allocates is copied and freed here. `progress`
    /// is called now and then meanwhile (the whole pipeline runs as the saver pulls its pixels).
    func encode(progress: (() -> Void)?,
                _ save: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                         UnsafeMutablePointer<Int>) -> Int32) throws(ImageError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let ticks = progress.map(ProgressTicks.init)
        let handler = ticks.map { ticks in
            inky_vips_watch(pointer, { _, _, context in
                context.map { Unmanaged<ProgressTicks>.fromOpaque($0).takeUnretainedValue().tick() }
            }, Unmanaged.passUnretained(ticks).toOpaque())
        }
        let status = withExtendedLifetime(ticks) { save(pointer, &buffer, &length) }
        // The ticks go with this call: an image encoded again (at a lower quality, to fit a
        // page's budget) must not call them.
        if let handler { inky_vips_unwatch(pointer, handler) }
        defer { inky_vips_free(buffer) }
        guard status == 0, let buffer else { throw .unencodable(VipsRuntime.takeError()) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}

/// What a conversion's progress signal calls, kept alive by the encode that watches it.
private final class ProgressTicks {
    let tick: () -> Void
    init(_ tick: @escaping () -> Void) { self.tick = tick }
}

/// libvips started once per process: `VIPS_INIT` loads its format modules, so a worker starts
/// it before its seccomp filter, and every later call finds it ready.
enum VipsRuntime {
    private static let started: Result<Void, ImageError> = {
        inky_vips_start() == 0 ? .success(()) : .failure(.unavailable(takeError()))
    }()
    private static let magickLock = Mutex(())

    static func start() throws(ImageError) { try started.get() }

    /// libvips' error buffer is process-wide text that grows until cleared: taken and cleared.
    static func takeError() -> String {
        let text = String(cString: inky_vips_error()).trimmingCharacters(in: .whitespacesAndNewlines)
        inky_vips_error_clear()
        return text.isEmpty ? "libvips gave no reason" : text
    }

    /// Runs `body` with ImageMagick allowed (a BMP: libvips has no loader of its own for it).
    static func withMagick<T: Sendable>(_ body: () throws(ImageError) -> T) throws(ImageError) -> T {
        try magickLock.withLock { _ throws(ImageError) -> T in
            inky_vips_allow_magick(1)
            defer { inky_vips_allow_magick(0) }
            return try body()
        }
    }
}
