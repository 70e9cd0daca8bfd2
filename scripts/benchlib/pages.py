"""The big comics of the per-comic cases: 1800x2700 JPEG pages drawn from a fixed seed, written as
stored and deflated CBZ, CBT, CBR (where `rar` exists) and solid CB7, cached under --work."""

import io
import os
import random
import shutil
import subprocess
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

from .common import EPOCH, SEED, SERIES, log


PAGE_W, PAGE_H = 1800, 2700
MARGIN = 64                          # base canvases are this much larger; pages are crops of them
BASE_COUNT = 12
MIN_PAGE, MAX_PAGE = 300_000, 1_500_000


@dataclass
class Comic:
    stem: str            # directory name under the mount: Bench/<stem>/
    path: Path           # the archive in the library
    fmt: str             # zip, 7z or tar
    members: list        # entry names inside the archive, in reading order
    page_bytes: int      # sum of the page sizes (None: rendered PDF pages, known only once rendered)
    ext: str = "jpg"     # the page files' extension under the mount
    sources: list = None # the page files it was made of (the FUSE ceiling serves these)
    kind: str = ""       # stored, deflated, tar, rar or solid: which of the rows it feeds

    @property
    def pages(self):
        return len(self.members)


def member_name(number):
    return f"page-{number:03d}.jpg"


def make_base(rng):
    """One canvas a little larger than a page: gradients + noise + shapes, different per seed."""
    w, h = PAGE_W + MARGIN, PAGE_H + MARGIN
    linear = Image.linear_gradient("L").resize((w, h)).rotate(rng.choice([0, 90, 180, 270]))
    radial = Image.radial_gradient("L").resize((w, h))
    noise = Image.frombytes("L", (w, h), rng.randbytes(w * h))
    blur = rng.choice([0.6, 0.9, 1.2, 1.6])
    noise = noise.filter(ImageFilter.GaussianBlur(blur))
    channels = [Image.blend(radial if c == 1 else linear, noise, rng.uniform(0.12, 0.45)) for c in range(3)]
    img = Image.merge("RGB", channels)
    draw = ImageDraw.Draw(img)
    for _ in range(40):
        x0, y0 = rng.randrange(w), rng.randrange(h)
        box = (x0, y0, x0 + rng.randrange(50, 700), y0 + rng.randrange(50, 700))
        colour = tuple(rng.randrange(256) for _ in range(3))
        kind = rng.randrange(3)
        if kind == 0:
            draw.rectangle(box, outline=colour, width=rng.randrange(2, 12))
        elif kind == 1:
            draw.ellipse(box, fill=colour)
        else:
            draw.line(box, fill=colour, width=rng.randrange(2, 20))
    return img


def make_page(bases, number):
    """Page `number` (1-based): a crop of a base at its own offset, a few marks, its own quality."""
    rng = random.Random(SEED * 100_003 + number)
    base = bases[number % len(bases)]
    dx, dy = rng.randrange(1, MARGIN), rng.randrange(1, MARGIN)
    img = base.crop((dx, dy, dx + PAGE_W, dy + PAGE_H))
    draw = ImageDraw.Draw(img)
    for _ in range(6):  # panel borders, different on every page
        x0, y0 = rng.randrange(PAGE_W - 200), rng.randrange(PAGE_H - 200)
        draw.rectangle((x0, y0, x0 + rng.randrange(100, 900), y0 + rng.randrange(100, 900)),
                       outline=(0, 0, 0), width=rng.randrange(4, 10))
    quality = rng.randrange(68, 94)
    while True:
        out = io.BytesIO()
        img.save(out, "JPEG", quality=quality)
        data = out.getvalue()
        if len(data) > MAX_PAGE and quality > 20:
            quality -= 6
        elif len(data) < MIN_PAGE and quality < 97:
            quality += 3
        else:
            return data


def ensure_pages(pages_dir, count):
    """Writes pages 1..count that are missing under pages_dir; returns their paths."""
    pages_dir.mkdir(parents=True, exist_ok=True)
    paths = [pages_dir / member_name(n) for n in range(1, count + 1)]
    missing = [n for n, p in enumerate(paths, 1) if not p.exists()]
    if missing:
        log(f"bench: drawing {len(missing)} pages ({PAGE_W}x{PAGE_H}) into {pages_dir} ...")
        started = time.perf_counter()
        rng = random.Random(SEED)
        bases = [make_base(rng) for _ in range(BASE_COUNT)]
        for n in missing:
            tmp = paths[n - 1].with_suffix(".tmp")
            tmp.write_bytes(make_page(bases, n))
            os.utime(tmp, (EPOCH, EPOCH))
            tmp.rename(paths[n - 1])
        log(f"bench: pages drawn in {time.perf_counter() - started:.1f} s")
    return paths


def write_atomically(path, writer):
    """Calls writer(tmp_path), then renames tmp_path to path: an interrupted run leaves no half archive."""
    tmp = path.with_name(path.name + ".part")
    tmp.unlink(missing_ok=True)
    writer(tmp)
    tmp.rename(path)


def write_zip(path, pages, compression):
    def writer(tmp):
        with zipfile.ZipFile(tmp, "w", compression=compression) as z:
            for page in pages:
                info = zipfile.ZipInfo(page.name, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = compression
                info.external_attr = 0o100644 << 16   # a regular file, rw-r--r--
                z.writestr(info, page.read_bytes())
    write_atomically(path, writer)


def write_tar(path, pages):
    def writer(tmp):
        with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as t:
            for page in pages:
                info = tarfile.TarInfo(page.name)
                info.size, info.mtime, info.mode = page.stat().st_size, EPOCH, 0o644
                with page.open("rb") as f:
                    t.addfile(info, f)
    write_atomically(path, writer)


def write_rar(path, pages):
    def writer(tmp):
        subprocess.run(["rar", "a", "-m0", "-ep", "-idq", str(tmp.resolve()), *[str(p) for p in pages]], check=True,
                       stdout=subprocess.DEVNULL)
    write_atomically(path, writer)


def write_7z(path, pages):
    def writer(tmp):
        log(f"bench: compressing {len(pages)} pages into {path.name} (7z solid LZMA2) ...")
        subprocess.run(["7z", "a", "-t7z", "-ms=on", "-mx=5", "-mmt=2", str(tmp.resolve()),
                        *[p.name for p in pages]],
                       cwd=pages[0].parent, check=True, stdout=subprocess.DEVNULL)
    write_atomically(path, writer)


def ensure_library(work, quick):
    """Returns (library dir, [Comic]); writes whatever is missing."""
    solid_pages = 100 if quick else 400
    flat = 40 if quick else 400          # the rows: 400 pages of ~270 MB in every format
    pages = ensure_pages(work / "pages", max(flat, solid_pages))
    library = work / ("library-quick" if quick else "library")
    series = library / SERIES
    series.mkdir(parents=True, exist_ok=True)
    wanted = [
        (f"stored-{flat}.cbz", "zip", "stored", pages[:flat], lambda p, pp: write_zip(p, pp, zipfile.ZIP_STORED)),
        (f"deflated-{flat}.cbz", "zip", "deflated", pages[:flat],
         lambda p, pp: write_zip(p, pp, zipfile.ZIP_DEFLATED)),
        (f"tar-{flat}.cbt", "tar", "tar", pages[:flat], write_tar),
        *([(f"stored-{flat}.cbr", "rar", "rar", pages[:flat], write_rar)] if shutil.which("rar") else []),
        (f"solid-{solid_pages}.cb7", "7z", "solid", pages[:solid_pages], write_7z),
    ]
    comics = []
    for name, fmt, kind, comic_pages, writer in wanted:
        path = series / name
        if not path.exists():
            shared = work / "archives" / name        # the same file for quick and full libraries
            shared.parent.mkdir(parents=True, exist_ok=True)
            if not shared.exists():
                writer(shared, comic_pages)
            os.link(shared, path)
        comics.append(Comic(stem=path.stem, path=path, fmt=fmt, members=[p.name for p in comic_pages],
                            page_bytes=sum(p.stat().st_size for p in comic_pages), sources=comic_pages, kind=kind))
    return library, comics
