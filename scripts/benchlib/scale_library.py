"""The library of the library-scale case: thousands of small comics (ZIP, tar, 7z) in nested
folders, written once under --work with their counts beside them."""

import io
import json
import os
import random
import shutil
import subprocess
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from .common import EPOCH, MB, SEED, log
from .measure import BUFFER


SCALE_SEED = SEED + 7
SCALE_PUBLISHERS, SCALE_SERIES_EACH = 10, 5     # 50 series folders: Publisher NN/Series MM/
SCALE_PAGE_W, SCALE_PAGE_H = 64, 96
SCALE_BASES = 8
SCALE_COVER_EVERY = 5                           # a loose cover.jpg in every 5th series folder


@dataclass
class ScaleLibrary:
    path: Path
    comics: int
    series: int
    pages: int
    comic_info: int      # comics holding a ComicInfo.xml (inkyfs: hidden .ComicInfo.xml, a file too)
    loose: int           # loose files in series folders (cover.jpg)
    formats: dict        # zip/tar/7z -> comics
    bytes: int           # every file of the library

    @property
    def expected_files(self):
        return self.pages + self.comic_info + self.loose

    def to_json(self):
        return {"path": str(self.path), "comics": self.comics, "series": self.series, "pages": self.pages,
                "comic_info": self.comic_info, "loose": self.loose, "formats": self.formats,
                "bytes": self.bytes, "expected_files": self.expected_files}


def tiny_jpegs(seed, count, w, h):
    """A few tiny JPEGs (gradient + noise); pages are these with a JPEG comment of their own."""
    rng = random.Random(seed)
    bases = []
    for _ in range(count):
        noise = Image.frombytes("L", (w, h), rng.randbytes(w * h))
        gradient = Image.linear_gradient("L").resize((w, h)).rotate(rng.choice([0, 90, 180, 270]))
        img = Image.merge("RGB", [Image.blend(gradient, noise, rng.uniform(0.2, 0.8)) for _ in range(3)])
        out = io.BytesIO()
        img.save(out, "JPEG", quality=rng.randrange(70, 95))
        bases.append(out.getvalue())
    return bases


def scale_bases():
    return tiny_jpegs(SCALE_SEED, SCALE_BASES, SCALE_PAGE_W, SCALE_PAGE_H)


def with_comment(base, payload):
    """The JPEG with a COM segment holding payload right after SOI: same image, other bytes."""
    return base[:2] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + base[2:]


def scale_page(bases, rng, label):
    """A base JPEG with a COM segment (label + 0-4,000 bytes of hex): every page differs."""
    n = rng.randrange(0, 4000)
    payload = label.encode() + b" " + rng.randbytes(n // 2 + 1).hex().encode()[:n]
    return with_comment(rng.choice(bases), payload)


def comic_info_xml(series, issue, publisher, pages):
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<ComicInfo>\n  <Series>{series}</Series>\n'
            f"  <Number>{issue}</Number>\n  <Publisher>{publisher}</Publisher>\n"
            f"  <PageCount>{pages}</PageCount>\n</ComicInfo>\n").encode()


def write_scale_comic(path, fmt, entries, scratch):
    """entries: [(name inside the archive, bytes)]. zip: stored; tar: ustar; 7z: `7z a -mx=1`."""
    if fmt == "zip":
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
            for name, data in entries:
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o100644 << 16
                z.writestr(info, data)
    elif fmt == "tar":
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as t:
            for name, data in entries:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
                t.addfile(info, io.BytesIO(data))
    else:
        shutil.rmtree(scratch, ignore_errors=True)
        for name, data in entries:
            file = scratch / name
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(data)
            os.utime(file, (EPOCH, EPOCH))
        subprocess.run(["7z", "a", "-t7z", "-mx=1", "-bd", str(path.resolve()), *[name for name, _ in entries]],
                       cwd=scratch, check=True, stdout=subprocess.DEVNULL)
        shutil.rmtree(scratch)
    os.utime(path, (EPOCH, EPOCH))


def ensure_scale_library(work, count):
    """Returns the ScaleLibrary of `count` comics under work/library-scale-COUNT/, built once.

    Publisher NN/Series MM/Issue KKK.cbz|.cbt|.cb7: 50 series folders of count/50 issues, each
    comic 8-20 pages, ~85% stored ZIP, ~10% tar, ~5% 7z (-mx=1), ~40% with a ComicInfo.xml, a
    third of them with the pages in a subfolder; a loose cover.jpg in every 5th series folder.
    Comic (series, issue) is the same whatever the count. Built in a .part folder and renamed,
    with the counts in library-scale-COUNT.json beside it (outside, so no tool sees it)."""
    name = f"library-scale-{count}"
    library, manifest = work / name, work / f"{name}.json"
    if library.is_dir() and manifest.exists():
        data = json.loads(manifest.read_text())
        return ScaleLibrary(path=library, **{k: data[k] for k in
                                             ("comics", "series", "pages", "comic_info", "loose", "formats", "bytes")})
    part, scratch = work / f"{name}.part", work / f"{name}.scratch"
    shutil.rmtree(part, ignore_errors=True)
    log(f"bench: writing a library of {count} small comics into {library} ...")
    started = time.perf_counter()
    bases = scale_bases()
    series_count = SCALE_PUBLISHERS * SCALE_SERIES_EACH
    per_series = max(1, count // series_count)
    pages = comic_info = loose = total_bytes = 0
    formats = {"zip": 0, "tar": 0, "7z": 0}
    extension = {"zip": "cbz", "tar": "cbt", "7z": "cb7"}
    for s in range(series_count):
        publisher, series = f"Publisher {s // SCALE_SERIES_EACH + 1:02d}", f"Series {s + 1:02d}"
        folder = part / publisher / series
        folder.mkdir(parents=True)
        if s % SCALE_COVER_EVERY == 0:
            cover = folder / "cover.jpg"
            cover.write_bytes(scale_page(bases, random.Random(f"{SCALE_SEED}/{s}/cover"), f"{series} cover"))
            os.utime(cover, (EPOCH, EPOCH))
            loose += 1
            total_bytes += cover.stat().st_size
        for issue in range(1, per_series + 1):
            rng = random.Random(f"{SCALE_SEED}/{s}/{issue}")
            roll = rng.random()
            fmt = "7z" if roll < 0.05 else "tar" if roll < 0.15 else "zip"
            page_count = rng.randint(8, 20)
            style = rng.randrange(3)
            entries = []
            for n in range(1, page_count + 1):
                member = (f"page-{n:03d}.jpg" if style == 0 else
                          f"{series} #{issue:03d} - p{n:02d}.jpg" if style == 1 else
                          f"Issue {issue:03d}/{n:02d}.jpg")
                entries.append((member, scale_page(bases, rng, f"{series} {issue} {n}")))
            if rng.random() < 0.4:
                entries.append(("ComicInfo.xml", comic_info_xml(series, issue, publisher, page_count)))
                comic_info += 1
            path = folder / f"Issue {issue:03d}.{extension[fmt]}"
            write_scale_comic(path, fmt, entries, scratch)
            pages += page_count
            formats[fmt] += 1
            total_bytes += path.stat().st_size
    part.rename(library)
    lib = ScaleLibrary(path=library, comics=series_count * per_series, series=series_count, pages=pages,
                       comic_info=comic_info, loose=loose, formats=formats, bytes=total_bytes)
    manifest.write_text(json.dumps(lib.to_json(), indent=2) + "\n")
    log(f"bench: library written in {time.perf_counter() - started:.1f} s: {lib.comics} comics, "
        f"{pages} pages, {total_bytes / MB:.1f} MB")
    return lib


def warm_library(path):
    """Reads every file once, so the archives are in the host page cache for every tool alike."""
    for root, _, names in os.walk(path):
        for name in names:
            with open(os.path.join(root, name), "rb", buffering=0) as f:
                while f.readinto(BUFFER):
                    pass
