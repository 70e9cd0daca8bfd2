"""What every part of the hostile corpus shares: the Corpus being written and its manifest, page-like
bytes, and archives made in memory (ZIP, TAR) or by the 7z tool."""

import hashlib
import io
import os
import random
import subprocess
import tarfile
import tempfile
import zipfile

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Fixtures", "Library")
DATE = (2020, 1, 1, 0, 0, 0)


def noise(n, seed):
    return random.Random(seed).randbytes(n)


def jpeg(n, seed):
    """Looks like a JPEG to a sniffer; the rest is noise."""
    return b"\xff\xd8\xff\xe0" + noise(n - 4, seed)


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Corpus:
    def __init__(self, out, canary):
        self.out = out
        self.canary = canary
        self.manifest = {}

    def path(self, name):
        full = os.path.join(self.out.encode(), name if isinstance(name, bytes) else name.encode())
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return os.fsdecode(full)

    def note(self, name, expect="any", contains=None, pages=None, eio=None, why=""):
        key = (name if isinstance(name, bytes) else name.encode()).decode("latin-1")
        entry = {"expect": expect, "why": why}
        if eio:
            entry["eio"] = eio
        if contains:
            entry["contains"] = [sha(p) for p in contains]
        if pages is not None:
            entry["pages"] = [sha(p) for p in pages]
        self.manifest[key] = entry

    def write(self, name, data, **note):
        with open(self.path(name), "wb") as f:
            f.write(data)
        self.note(name, **note)


def zip_bytes(members, mode=zipfile.ZIP_DEFLATED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", mode) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = mode
            z.writestr(info, data)
    return buffer.getvalue()


def tar_bytes(members, compression=""):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w" + (":" + compression if compression else ""), format=tarfile.GNU_FORMAT) as t:
        for info, data in members:
            info.mtime = 1577836800
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def tar_file(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def seven_zip(pages, extra_args=(), names=None, cwd=None):
    """A 7z of `pages` (name -> bytes) made by the 7z tool; `names` as given to 7z (for -spf)."""
    with tempfile.TemporaryDirectory() as work:
        base = cwd or work
        for name, data in pages:
            full = os.path.join(base, name) if not name.startswith("/") else name
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
            os.utime(full, (1577836800, 1577836800))
        archive = os.path.join(work, "out.7z")
        subprocess.run(["7z", "a", "-bd", "-bso0", "-bsp0", *extra_args, archive, *(names or [n for n, _ in pages])],
                       cwd=base, check=True)
        with open(archive, "rb") as f:
            data = f.read()
        for name, _ in pages:
            if name.startswith("/"):
                os.remove(name)
        return data

