"""Damaged archives of every format (truncated, bit-flipped, zeroed), encrypted ones, and archives
under the wrong extension."""

import os
import random
import shutil
import subprocess
import tempfile
import zipfile

from .corpus import FIXTURES, jpeg, noise, seven_zip, tar_bytes, tar_file, zip_bytes

def damaged(c):
    pages = [jpeg(40_000, 60 + i) for i in range(6)]
    named = [(f"{i + 1:02}.jpg", p) for i, p in enumerate(pages)]
    originals = {
        "zip": zip_bytes(named),
        "stored.zip": zip_bytes(named, zipfile.ZIP_STORED),
        "7z": seven_zip(named),
        "solid.7z": seven_zip(named, ["-ms=on"]),
        "tar.gz": tar_bytes([tar_file(n, d) for n, d in named], "gz"),
        "tar": tar_bytes([tar_file(n, d) for n, d in named]),
        "rar5": open(os.path.join(FIXTURES, "Real", "Captain Science 001.cbr"), "rb").read(),
    }
    extension = {"zip": "cbz", "stored.zip": "cbz", "7z": "cb7", "solid.7z": "cb7", "tar.gz": "cbt", "tar": "cbt", "rar5": "cbr"}
    rng = random.Random(6)
    for kind, data in originals.items():
        ext = extension[kind]
        for fraction in [0.1, 0.5, 0.9, 0.999]:
            c.write(f"damaged/{kind} cut at {fraction}.{ext}", data[:int(len(data) * fraction)], why="truncated")
        for n in range(4):
            flipped = bytearray(data)
            for _ in range(1 + n * 3):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            c.write(f"damaged/{kind} flipped {n}.{ext}", bytes(flipped), why="bit flips: never wrong bytes")
        # Zeroed header and a zeroed middle.
        c.write(f"damaged/{kind} zeroed head.{ext}", bytes(64) + data[64:], why="zeroed header")
        mid = len(data) // 2
        c.write(f"damaged/{kind} zeroed middle.{ext}", data[:mid] + bytes(4096) + data[mid + 4096:], why="zeroed middle")


# --- encrypted and misnamed --------------------------------------------------------------

def encrypted(c):
    with tempfile.TemporaryDirectory() as work:
        for i in range(3):
            with open(os.path.join(work, f"0{i + 1}.jpg"), "wb") as f:
                f.write(jpeg(5_000, 70 + i))
        names = ["01.jpg", "02.jpg", "03.jpg"]
        subprocess.run(["zip", "-q", "-P", "secret", "z.zip", *names], cwd=work, check=True)
        subprocess.run(["7z", "a", "-bd", "-bso0", "-bsp0", "-psecret", "d.7z", *names], cwd=work, check=True)
        subprocess.run(["7z", "a", "-bd", "-bso0", "-bsp0", "-psecret", "-mhe=on", "h.7z", *names], cwd=work, check=True)
        subprocess.run(["7z", "a", "-bd", "-bso0", "-bsp0", "-tzip", "-psecret", "-mem=AES256", "a.zip", *names], cwd=work, check=True)
        for source, target in [("z.zip", "ZipCrypto.cbz"), ("a.zip", "AES zip.cbz"), ("d.7z", "7z data.cb7"), ("h.7z", "7z headers.cb7")]:
            with open(os.path.join(work, source), "rb") as f:
                c.write(f"encrypted/{target}", f.read(), expect="error", why="password-protected pages: ERROR.txt says encrypted")
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "shared", "corpus")
    for source, target in [("rarfile-tests/rar5-psw.rar", "RAR5 data.cbr"), ("rarfile-tests/rar5-hpsw.rar", "RAR5 headers.cbr"),
                           ("libarchive-tests/test_read_format_rar4_encrypted.rar", "RAR4 data.cbr")]:
        full = os.path.join(corpus, source)
        if os.path.exists(full):
            shutil.copyfile(full, c.path(f"encrypted/{target}"))
            c.note(f"encrypted/{target}", why="encrypted RAR (no image entries): nothing servable")


def misnamed(c):
    pages = [jpeg(7_000, 80 + i) for i in range(3)]
    named = [(f"{i + 1:02}.jpg", p) for i, p in enumerate(pages)]
    rar = open(os.path.join(FIXTURES, "Real", "Captain Science 001.cbr"), "rb").read()
    c.write("misnamed/Zip named cbr.cbr", zip_bytes(named), pages=pages, why="content decides, not the extension")
    c.write("misnamed/7z named cbt.cbt", seven_zip(named), pages=pages, why="content decides")
    c.write("misnamed/Tar named cb7.cb7", tar_bytes([tar_file(n, d) for n, d in named]), pages=pages, why="content decides")
    c.write("misnamed/Rar named cbz.cbz", rar, why="content decides")
    c.write("misnamed/Text named cbz.cbz", b"this is not an archive\n" * 50, expect="error", why="not a comic archive")
    c.write("misnamed/Jpeg named cbr.cbr", pages[0], expect="error", why="an image, not an archive")
    c.write("misnamed/Empty.cbz", b"", expect="error", why="empty file")
    c.write("misnamed/Noise.cb7", noise(100_000, 90), expect="error", why="random bytes")
    c.write("misnamed/Zip header then noise.cbz", b"PK\x03\x04" + noise(50_000, 91), expect="error", why="magic then garbage")
    c.write("misnamed/Rar magic then noise.cbr", b"Rar!\x1a\x07\x01\x00" + noise(50_000, 92), expect="error", why="magic then garbage")
    c.write("misnamed/7z magic then noise.cb7", b"7z\xbc\xaf\x27\x1c\x00\x04" + noise(50_000, 93), expect="error", why="magic then garbage")

