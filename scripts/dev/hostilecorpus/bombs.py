"""Bombs: a real 5 GiB entry, headers lying about their sizes, 1,000 entries sharing one stream and
100,000 junk entries, each next to a real page that must still read."""

import io
import struct
import zipfile
import zlib

from .corpus import DATE, jpeg, zip_bytes

def zeros_zip(mebibytes, real):
    """A deflated ZIP: 01.jpg is a JPEG marker and `mebibytes` MiB of zeros, 02.jpg the real page."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        info = zipfile.ZipInfo("01.jpg", DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w") as entry:
            entry.write(b"\xff\xd8\xff\xe0")
            for _ in range(mebibytes):
                entry.write(bytes(1 << 20))
        z.writestr(zipfile.ZipInfo("02.jpg", DATE), real)
    return buffer.getvalue()


def declare_size(data, size):
    """Rewrites the first entry's uncompressed size, in its local header and in the central directory."""
    struct.pack_into("<I", data, data.find(b"PK\x03\x04") + 22, size)
    struct.pack_into("<I", data, data.find(b"PK\x01\x02") + 24, size)


def bombs(c):
    real = jpeg(30_000, 1)
    # A real 5 GiB entry of zeros (ZIP64), streamed in 1 MiB chunks: ~5 MB on disk.
    name = "bombs/Five GiB of zeros.cbz"
    with zipfile.ZipFile(c.path(name), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        info = zipfile.ZipInfo("01.jpg", DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        chunk = b"\xff\xd8\xff\xe0" + bytes((1 << 20) - 4)
        with z.open(info, "w", force_zip64=True) as entry:
            entry.write(chunk)
            zeros = bytes(1 << 20)
            for _ in range((5 << 10) - 1):
                entry.write(zeros)
        info = zipfile.ZipInfo("02.jpg", DATE)
        z.writestr(info, real)
    c.note(name, contains=[real], why="5 GiB entry: refused by the size or ratio limit; the real page still reads")

    # A header that lies: 1 GiB declared (local and central), 300 KB held.
    data = bytearray(zip_bytes([("01.jpg", jpeg(300_000, 2)), ("02.jpg", real)], zipfile.ZIP_STORED))
    declare_size(data, 1 << 30)
    c.write("bombs/Lies about 1 GiB.cbz", bytes(data), contains=[real], why="declared 1 GiB, holds 300 KB")

    # Bombs inside the limits on paper: an honest 100 MiB page of zeros (1000:1), and 1 GiB of
    # zeros whose headers declare 100,000 bytes. Both must fail (EIO) after bounded work.
    c.write("bombs/100 MiB of zeros.cbz", zeros_zip(100, real), contains=[real], eio=["001.jpg"],
            why="1000:1 inside the page size limit: the ratio check stops it")
    data = bytearray(zeros_zip(1 << 10, real))
    declare_size(data, 100_000)
    c.write("bombs/Declares 100 KB, inflates to 1 GiB.cbz", bytes(data), contains=[real], eio=["001.jpg"],
            why="never more than the declared size is produced or kept")

    # 1,000 central-directory entries sharing one local header and one stored stream.
    page = jpeg(200_000, 3)
    body = bytearray()
    crc = zlib.crc32(page)
    local_name = b"0000.jpg"
    body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, len(page), len(page), len(local_name), 0) + local_name + page
    directory = bytearray()
    for i in range(1000):
        entry_name = f"{i:04}.jpg".encode()
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, crc, len(page), len(page),
                                 len(entry_name), 0, 0, 0, 0, 0, 0) + entry_name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1000, 1000, len(directory), len(body), 0)
    c.write("bombs/One stream for 1000 pages.cbz", bytes(body + directory + end),
            why="overlapping entries: the same 200 KB page a thousand times over, or refused")

    # 100,000 junk entries and one page.
    name = "bombs/100000 junk entries.cbz"
    with zipfile.ZipFile(c.path(name), "w", zipfile.ZIP_STORED) as z:
        for i in range(100_000):
            z.writestr(zipfile.ZipInfo(f"junk/{i:06}.txt", DATE), b"x")
        z.writestr(zipfile.ZipInfo("zz-page.jpg", DATE), real)
    c.note(name, contains=[real], why="100,000 entries listed within the entry limit, one page")

