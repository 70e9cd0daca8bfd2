#!/usr/bin/env python3
"""Writes comics of generated pages in given containers, members in the given order.

Usage: make-comic.py JOBS
  JOBS: a JSON array of {"kind": KIND, "out": PATH, "members": [[name, bytes as latin-1 text]]}
  KIND: zip-stored | zip-deflated | rar5 | 7z-solid | 7z-copy | tar | folder
  OUT:  the archive (or, for folder, the folder) to create.
One run writes many comics: a 10,000-page comic costs no 10,000 scratch files but for 7z.

RAR5: Debian has no `rar` writer, so stored (method 0) RAR5 archives are written here from
RARLAB's format description (https://www.rarlab.com/technote.htm#rarsign): the signature, a main
archive header, one file header per member with its data CRC32, and the end of archive header.
Each header begins with the CRC32 of what follows it (size field onwards) and its size as a
vint (7 bits a byte, low first, high bit: more follows).
7z: p7zip's `7z`, members added in LIST order (-mqs=off keeps that order in a solid block).
"""
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import zlib

DATE = (2020, 1, 1, 0, 0, 0)


def vint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def rar5_header(kind, flags, body, extra=b"", data_size=None):
    """A block: CRC32, size, then type, flags, [extra size], [data size], type-specific body, extra."""
    fields = vint(kind) + vint(flags)
    if flags & 0x01:
        fields += vint(len(extra))
    if flags & 0x02:
        fields += vint(data_size)
    fields += body + extra
    sized = vint(len(fields)) + fields
    return struct.pack("<I", zlib.crc32(sized)) + sized


def write_rar5(out, members):
    with open(out, "wb") as archive:
        archive.write(b"Rar!\x1a\x07\x01\x00")
        archive.write(rar5_header(1, 0, vint(0)))                         # main header, no archive flags
        for name, data in members:
            encoded = name.encode("utf-8")
            body = (vint(0x04)                                           # file flags: data CRC32 present
                    + vint(len(data))                                    # unpacked size
                    + vint(0x20)                                         # attributes (archive bit)
                    + struct.pack("<I", zlib.crc32(data))
                    + vint(0)                                            # compression: version 0, stored
                    + vint(0)                                            # host OS: Windows
                    + vint(len(encoded)) + encoded)
            archive.write(rar5_header(2, 0x02, body, data_size=len(data)))
            archive.write(data)
        archive.write(rar5_header(5, 0, vint(0)))                         # end of archive


def write_zip(out, members, method):
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = method
            z.writestr(info, data)


def write_tar(out, members):
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1577836800
            t.addfile(info, io.BytesIO(data))


def write_7z(out, members, solid):
    """Members laid out under their names in a scratch folder, then added in LIST order."""
    with tempfile.TemporaryDirectory() as work:
        write_folder(os.path.join(work, "m"), members)
        listing = os.path.join(work, "list.txt")
        with open(listing, "w", encoding="utf-8") as f:
            f.write("".join(name + "\n" for name, _ in members))
        method = ["-ms=on", "-m0=LZMA2", "-mqs=off"] if solid else ["-ms=off", "-m0=Copy"]
        subprocess.run(["7z", "a", "-bd", "-y", "-scsUTF-8", *method, os.path.abspath(out), "@" + listing],
                       cwd=os.path.join(work, "m"), check=True, stdout=subprocess.DEVNULL)


def write_folder(out, members):
    for name, data in members:
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)


WRITERS = {
    "zip-stored": lambda out, members: write_zip(out, members, zipfile.ZIP_STORED),
    "zip-deflated": lambda out, members: write_zip(out, members, zipfile.ZIP_DEFLATED),
    "rar5": write_rar5,
    "7z-solid": lambda out, members: write_7z(out, members, True),
    "7z-copy": lambda out, members: write_7z(out, members, False),
    "tar": write_tar,
    "folder": write_folder,
}


def main():
    for job in json.load(open(sys.argv[1], encoding="utf-8")):
        members = [(name, text.encode("latin-1")) for name, text in job["members"]]
        WRITERS[job["kind"]](job["out"], members)


main()
