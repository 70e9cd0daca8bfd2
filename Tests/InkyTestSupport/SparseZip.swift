import Foundation
import XCTest

/// A ZIP comic past 4 GiB that costs no disk: Python's zipfile writes it (so its ZIP64 records are
/// a reference zipper's, not ours), through a file object that turns blocks of zeros into holes.
/// Its big pages are a JPEG start and then zeros; the small pages `after` them lie past them.
public enum SparseZip {
    /// Writes `path` with `bigPages` stored members of `bigSize` bytes each, then each of `after`,
    /// named 001.jpg, 002.jpg, ... in that order. Skips the test when the folder's filesystem keeps
    /// no holes (the file would take its whole size on disk).
    public static func write(to path: URL, bigPages: Int, bigSize: Int64, after: [[UInt8]]) throws {
        let smallFiles = after.indices.map { path.deletingLastPathComponent().appendingPathComponent(".small-page-\($0)") }
        for (bytes, file) in zip(after, smallFiles) { try Data(bytes).write(to: file) }
        defer { for file in smallFiles { try? FileManager.default.removeItem(at: file) } }
        try ArchiveMaker.python("""
            import sys, zipfile
            path, count, size, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
            class Sparse:
                def __init__(self, f): self.f = f
                def write(self, b):
                    if len(b) >= 4096 and b.count(0) == len(b): self.f.seek(len(b), 1)
                    else: self.f.write(b)
                    return len(b)
                def tell(self): return self.f.tell()
                def seek(self, *a): return self.f.seek(*a)
                def seekable(self): return True
                def flush(self): self.f.flush()
            when = (2024, 1, 1, 0, 0, 0)
            with open(path, "wb") as raw:
                with zipfile.ZipFile(Sparse(raw), "w", zipfile.ZIP_STORED) as z:
                    head, zero = b"\\xff\\xd8\\xff\\xe0" + bytes(12), bytes(64 << 20)
                    for number in range(1, count + 1):
                        with z.open(zipfile.ZipInfo("%03d.jpg" % number, when), "w", force_zip64=True) as member:
                            member.write(head)
                            left = size - len(head)
                            while left:
                                n = min(left, len(zero)); member.write(zero[:n]); left -= n
                    for number, page in enumerate(small, count + 1):
                        z.writestr(zipfile.ZipInfo("%03d.jpg" % number, when), open(page, "rb").read())
                raw.truncate()
            """, arguments: [path.path, String(bigPages), String(bigSize)] + smallFiles.map(\.path))
        var info = stat()
        guard stat(path.path, &info) == 0 else { throw XCTSkip("\(path.path) was not written") }
        let onDisk = Int64(info.st_blocks) * 512
        if onDisk > 64 << 20 {
            try? FileManager.default.removeItem(at: path)
            throw XCTSkip("\(path.deletingLastPathComponent().path) keeps no holes (a \(info.st_size)-byte sparse file took \(onDisk) bytes): a comic past 4 GiB would fill the disk")
        }
    }
}
