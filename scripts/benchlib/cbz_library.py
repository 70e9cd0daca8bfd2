"""The library of `--library-scale N`: N small CBZ comics, and the same tree extracted to
plain folders beside it on the same disk, written once under --work.

    library-cbz-N/Publisher PPP/Series SSSS/Issue III.cbz        8-24 pages each, 25 issues a series,
    library-cbz-N-folders/Publisher PPP/Series SSSS/Issue III/   40 series a publisher
    library-cbz-N.json                                            the counts and sizes (where no mount sees it)

Written the way real libraries are: a ComicInfo.xml in half the comics, the pages in a sub-folder of
the archive in a third, 90 % stored ZIP and the rest deflated. A page is one of a few tiny JPEGs made
once, with a JPEG comment naming it (so no two pages are the same bytes); the folders hold what inkyfs
shows of each comic: the pages named 001.jpg... and `.ComicInfo.xml` where the archive has one.
Writing is the cost: no image is encoded per page, so 100,000 comics take minutes, not hours.
"""

import json
import os
import random
import shutil
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .common import EPOCH, MB, SEED, log
from .scale_library import tiny_jpegs, with_comment

CBZ_SEED = SEED + 14
CBZ_ISSUES_EACH, CBZ_SERIES_EACH = 25, 40        # 25 issues a series, 40 series a publisher
CBZ_MIN_PAGES, CBZ_MAX_PAGES = 8, 24
CBZ_BASES, CBZ_PAGE_W, CBZ_PAGE_H = 6, 48, 72
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


@dataclass
class CbzLibrary:
    path: Path           # the CBZ comics
    folders: Path        # the same tree extracted: one folder of pages per comic
    comics: int
    series: int
    pages: int           # regular files under either tree
    bytes: int           # apparent size of the CBZ files
    disk_bytes: int      # `du` of the CBZ tree
    folder_disk_bytes: int   # `du` of the extracted tree (one block per page at least)
    seconds: float       # time it took to write both

    def to_json(self):
        return {"path": str(self.path), "folders": str(self.folders), "comics": self.comics, "series": self.series,
                "pages": self.pages, "bytes": self.bytes, "disk_bytes": self.disk_bytes,
                "folder_disk_bytes": self.folder_disk_bytes, "seconds": self.seconds}


def comic_place(index):
    """(publisher, series, issue) folder and file stems of comic `index` (0-based), whatever N is."""
    series, issue = divmod(index, CBZ_ISSUES_EACH)
    return (f"Publisher {series // CBZ_SERIES_EACH + 1:03d}", f"Series {series + 1:04d}", f"Issue {issue + 1:03d}")


def comic_pages(index):
    """The page count of comic `index`, and a generator of its pages' bytes (the same every time)."""
    rng = random.Random(CBZ_SEED * 1_000_003 + index)
    count = rng.randint(CBZ_MIN_PAGES, CBZ_MAX_PAGES)
    picks = [rng.randrange(CBZ_BASES) for _ in range(count)]
    return count, picks


def page_name(number):
    return f"{number:03d}.jpg"


def comic_shape(index):
    """(has a ComicInfo.xml, the archive's pages sit in a sub-folder, deflated): half, a third, a tenth."""
    return index % 2 == 0, index % 3 == 1, index % 10 == 7


def comic_files(index):
    """How many regular files inkyfs shows in comic `index`'s folder: its pages and `.ComicInfo.xml`."""
    return comic_pages(index)[0] + (1 if comic_shape(index)[0] else 0)


def comic_info(index):
    publisher, series, issue = comic_place(index)
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<ComicInfo>\n  <Series>{series}</Series>\n'
            f"  <Number>{int(issue.split()[-1])}</Number>\n  <Publisher>{publisher}</Publisher>\n"
            f"  <PageCount>{comic_pages(index)[0]}</PageCount>\n</ComicInfo>\n").encode()


def disk_usage(path):
    """Bytes `du` counts for path (blocks, not apparent sizes), or None."""
    result = subprocess.run(["du", "-s", "--block-size=1", str(path)], capture_output=True, text=True)
    return int(result.stdout.split()[0]) if result.returncode == 0 and result.stdout else None


def write_comic(bases, index, archive, folder):
    """Comic `index` as a ZIP at archive and as the files inkyfs shows in folder; returns (files, zip bytes)."""
    count, picks = comic_pages(index)
    label = " ".join(comic_place(index))
    has_info, in_subfolder, deflated = comic_shape(index)
    inner = f"{comic_place(index)[2]}/" if in_subfolder else ""
    folder.mkdir()

    def put(z, member, shown, data):
        info = zipfile.ZipInfo(member, date_time=ZIP_DATE)
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED
        z.writestr(info, data)
        fd = os.open(folder / shown, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    with zipfile.ZipFile(archive, "w") as z:
        for number, pick in enumerate(picks, 1):
            put(z, inner + page_name(number), page_name(number), with_comment(bases[pick], f"{label} p{number}".encode()))
        if has_info:
            put(z, "ComicInfo.xml", ".ComicInfo.xml", comic_info(index))
    os.utime(archive, (EPOCH, EPOCH))
    return comic_files(index), archive.stat().st_size


def ensure_cbz_library(work, count):
    """Returns the CbzLibrary of `count` comics under work/, written once (in .part folders, renamed)."""
    name = f"library-cbz-{count}"
    library, folders, manifest = work / name, work / f"{name}-folders", work / f"{name}.json"
    if library.is_dir() and folders.is_dir() and manifest.exists():
        data = json.loads(manifest.read_text())
        return CbzLibrary(path=library, folders=folders, **{k: data[k] for k in
                          ("comics", "series", "pages", "bytes", "disk_bytes", "folder_disk_bytes", "seconds")})
    part, folders_part = work / f"{name}.part", work / f"{name}-folders.part"
    for stale in (part, folders_part, library, folders):
        shutil.rmtree(stale, ignore_errors=True)
    log(f"bench: writing {count:,} small CBZ comics into {library} and their pages into {folders} ...")
    started = time.perf_counter()
    bases = tiny_jpegs(CBZ_SEED, CBZ_BASES, CBZ_PAGE_W, CBZ_PAGE_H)
    pages = total_bytes = 0
    made = set()
    for index in range(count):
        publisher, series, issue = comic_place(index)
        parent = Path(publisher) / series
        if parent not in made:
            (part / parent).mkdir(parents=True)
            (folders_part / parent).mkdir(parents=True)
            made.add(parent)
        n, size = write_comic(bases, index, part / parent / f"{issue}.cbz", folders_part / parent / issue)
        pages += n
        total_bytes += size
        if (index + 1) % 10_000 == 0:
            log(f"bench: {index + 1:,} comics written ({time.perf_counter() - started:.0f} s)")
    part.rename(library)
    folders_part.rename(folders)
    lib = CbzLibrary(path=library, folders=folders, comics=count, series=len(made), pages=pages, bytes=total_bytes,
                     disk_bytes=disk_usage(library), folder_disk_bytes=disk_usage(folders),
                     seconds=time.perf_counter() - started)
    manifest.write_text(json.dumps(lib.to_json(), indent=2) + "\n")
    log(f"bench: written in {lib.seconds:.1f} s: {count:,} comics, {pages:,} pages, {total_bytes / MB:,.0f} MB of CBZ "
        f"({(lib.disk_bytes or 0) / MB:,.0f} MB on disk), extracted {(lib.folder_disk_bytes or 0) / MB:,.0f} MB on disk")
    return lib
