"""Hostile names: traversal and absolute names in ZIP, TAR, 7z and RAR (aimed at the canary), links
and devices, NFC/NFD and stem collisions, non-UTF-8 and control characters."""

import io
import os
import struct
import subprocess
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib

from .corpus import DATE, FIXTURES, jpeg, tar_bytes, tar_file, zip_bytes

def escaping_names(canary):
    up = "../" * 12
    return [up + canary.lstrip("/") + "/escape.jpg", canary + "/absolute.jpg", "a/../../b/../../up.jpg", "..\\..\\win.jpg"]


def traversal(c):
    good = jpeg(8_000, 4)
    hostile = [(n, jpeg(5_000, 40 + i)) for i, n in enumerate(escaping_names(c.canary))]
    c.write("names/Traversal.cbz", zip_bytes(hostile + [("ok/01.jpg", good)]), contains=[good],
            why="traversal and absolute ZIP names never become pages outside their comic")
    c.write("names/Traversal.cbt", tar_bytes([tar_file(n, d) for n, d in hostile] + [tar_file("ok/01.jpg", good)]),
            contains=[good], why="traversal and absolute TAR names")
    # 7z stores ../ and absolute names only with -spf.
    with tempfile.TemporaryDirectory() as work:
        deep = os.path.join(work, "a", "b", "c")
        os.makedirs(deep)
        with open(os.path.join(work, "a", "up.jpg"), "wb") as f:
            f.write(hostile[0][1])
        with open(os.path.join(deep, "01.jpg"), "wb") as f:
            f.write(good)
        absolute = os.path.join(work, "abs.jpg")
        with open(absolute, "wb") as f:
            f.write(hostile[1][1])
        archive = os.path.join(work, "t.7z")
        subprocess.run(["7z", "a", "-bd", "-bso0", "-bsp0", "-spf", archive, "../../up.jpg", "01.jpg", absolute], cwd=deep, check=True)
        with open(archive, "rb") as f:
            c.write("names/Traversal.cb7", f.read(), contains=[good], why="7z with ../ and absolute names (-spf)")
    rar = rar5_renamed(os.path.join(FIXTURES, "Real", "Captain Science 001.cbr"),
                       b"Captain Science 001/", [b"../../../../../../x/", b"/tmp/inkyfs-escape1/"])
    c.write("names/Traversal.cbr", rar, why="RAR5 names rewritten to ../ and absolute paths (header CRCs fixed)")


def vint(data, pos):
    value, shift = 0, 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if not byte & 0x80:
            return value, pos


def rar5_renamed(path, old, replacements):
    """RAR5 with entry names starting with `old` renamed, in turn, to each replacement (same length), header CRCs recomputed."""
    data = bytearray(open(path, "rb").read())
    assert data.startswith(b"Rar!\x1a\x07\x01\x00")
    pos, turn = 8, 0
    while pos < len(data):
        size, body = vint(data, pos + 4)
        end = body + size
        kind, p = vint(data, body)
        flags, p = vint(data, p)
        data_size = 0
        if flags & 1:
            _, p = vint(data, p)
        if flags & 2:
            data_size, p = vint(data, p)
        header = bytes(data[body:end])
        at = header.find(old)
        if kind == 2 and at >= 0:
            new = replacements[turn % len(replacements)]
            turn += 1
            data[body + at:body + at + len(old)] = new
            struct.pack_into("<I", data, pos, zlib.crc32(bytes(data[pos + 4:end])))
        if kind == 5:
            break
        pos = end + data_size
    assert turn > 0, "no names rewritten"
    return bytes(data)


def links_and_devices(c):
    pages = [jpeg(6_000, 10), jpeg(6_500, 11)]
    secret = c.canary + "/secret.txt"
    members = [tar_file("01.jpg", pages[0]), tar_file("02.jpg", pages[1])]
    for name, kind, target in [("03.jpg", tarfile.SYMTYPE, secret), ("04.jpg", tarfile.LNKTYPE, secret),
                               ("05.jpg", tarfile.LNKTYPE, "01.jpg"), ("06.jpg", tarfile.SYMTYPE, "../../../../etc/passwd"),
                               ("07.jpg", tarfile.CHRTYPE, None), ("08.jpg", tarfile.BLKTYPE, None), ("09.jpg", tarfile.FIFOTYPE, None),
                               ("10.jpg", tarfile.DIRTYPE, None)]:
        info = tarfile.TarInfo(name)
        info.type = kind
        if target:
            info.linkname = target
        if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
            info.devmajor, info.devminor = (1, 1) if kind == tarfile.CHRTYPE else (8, 0)
        members.append((info, None))
    c.write("links/Links and devices.cbt", tar_bytes(members), contains=pages,
            why="symlinks, hardlinks (to the canary and inside), char/block devices, FIFO, a directory named like a page")
    # ZIP symlink entries (Unix mode in the external attributes) pointing at the canary.
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(zipfile.ZipInfo("01.jpg", DATE), pages[0])
        for name, target in [("02.jpg", secret), ("03.jpg", "/etc/passwd")]:
            info = zipfile.ZipInfo(name, DATE)
            info.create_system = 3
            info.external_attr = (0o120777 << 16)
            z.writestr(info, target)
    c.write("links/Symlinks.cbz", buffer.getvalue(), contains=[pages[0]], why="ZIP symlink entries")


def odd_names(c):
    page = jpeg(4_000, 20)
    other = jpeg(4_100, 21)
    nfc = unicodedata.normalize("NFC", "Café")
    nfd = unicodedata.normalize("NFD", "Café")
    c.write(f"collisions/{nfc}.cbz", zip_bytes([("01.jpg", page)]), pages=[page], why="NFC name")
    c.write(f"collisions/{nfd}.cbz", zip_bytes([("01.jpg", other)]), pages=[other], why="NFD name of the same word")
    c.write("collisions/Inside.cbz", zip_bytes([(f"{nfc}.jpg", page), (f"{nfd}.jpg", other)]), contains=[page, other],
            why="NFC and NFD page names in one archive")
    # Same stem, three ways: two archives and a folder of images.
    c.write("collisions/Same.cbz", zip_bytes([("01.jpg", page)]), why="stem collision with Same.cbr and the folder Same/")
    c.write("collisions/Same.cbr", zip_bytes([("01.jpg", other)]), why="stem collision")
    with open(c.path("collisions/Same/01.jpg"), "wb") as f:
        f.write(page)  # a folder of images named like the two archives' stem
    # Non-UTF-8 and control characters, in file names of the library and in entry names.
    for raw in [b"bad-\xff\xfe name.cbz", b"ctl-\x01\x1b[31m red.cbz", b"line\nbreak.cbz", b"tab\there.cbz", b"del-\x7f.cbz"]:
        c.write(b"names/" + raw, zip_bytes([("01.jpg", page)]), why="non-UTF-8 or control characters in the file name")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for i, raw in enumerate([b"\xff\xfe.jpg", b"a\nb.jpg", b"\x1b[2J.jpg", b"c\x00d.jpg", b"e\rf.jpg"]):
            info = zipfile.ZipInfo(raw.decode("cp437"), DATE)
            z.writestr(info, jpeg(3_000, 30 + i))
    c.write("names/Odd entry names.cbz", buffer.getvalue(), why="non-UTF-8, control and NUL characters in ZIP entry names")
    odd = [tar_file(n, jpeg(3_000, 50 + i)) for i, n in enumerate(["\udcff\udcfe.jpg", "a\nb.jpg", "\x1b]0;title\x07.jpg"])]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape") as t:
        for info, data in odd:
            info.mtime = 1577836800
            t.addfile(info, io.BytesIO(data))
    c.write("names/Odd entry names.cbt", buffer.getvalue(), why="non-UTF-8 and control characters in TAR entry names")

