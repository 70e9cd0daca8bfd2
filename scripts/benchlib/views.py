"""`scripts/bench --metadata-views N`: N small CBZ comics tagged with ComicInfo.xml, written once
under --work; `inkyfs index` of them with their metadata (comics/s), then a mount of the indexed library and
`ls` of `By Series/` and of one series' folder, warm (ms, the median of --runs after one unmeasured run).

    library-meta-N/Publisher PPP/Series SSSS/Series SSSS #III.cbz     25 issues a series, 40 series a publisher,
                                                                      2 tiny stored pages each, a story arc in
                                                                      every 10th series
"""

import json
import os
import shutil
import statistics
import subprocess
import time
import zipfile
from pathlib import Path

from .cbz_library import CBZ_BASES, CBZ_ISSUES_EACH, CBZ_PAGE_H, CBZ_PAGE_W, CBZ_SEED, CBZ_SERIES_EACH, ZIP_DATE
from .common import EPOCH, log
from .scale_library import tiny_jpegs, with_comment
from .scale import time_index


def comic_info(series, issue, publisher):
    arc = (f"<StoryArc>Event {series // 10 + 1:03d}</StoryArc><StoryArcNumber>{issue}</StoryArcNumber>"
           if series % 10 == 0 else "")
    return (f"<?xml version=\"1.0\"?>\n<ComicInfo><Series>Series {series + 1:04d}</Series><Number>{issue}</Number>"
            f"<Volume>{2000 + series % 20}</Volume><Publisher>Publisher {publisher:03d}</Publisher>"
            f"<Year>{2000 + series % 20 + issue // 12}</Year><Month>{issue % 12 + 1}</Month>{arc}"
            f"<PageCount>2</PageCount></ComicInfo>").encode()


def ensure_meta_library(work, count):
    """The library of `count` tagged comics under work/ (written once, in a .part folder renamed)."""
    library, manifest = work / f"library-meta-{count}", work / f"library-meta-{count}.json"
    if library.is_dir() and manifest.exists():
        return library, json.loads(manifest.read_text())
    part = work / f"library-meta-{count}.part"
    shutil.rmtree(part, ignore_errors=True)
    log(f"bench: writing {count:,} tagged CBZ comics into {library} ...")
    started = time.perf_counter()
    bases = tiny_jpegs(CBZ_SEED, CBZ_BASES, CBZ_PAGE_W, CBZ_PAGE_H)
    for index in range(count):
        series, issue = divmod(index, CBZ_ISSUES_EACH)
        publisher = series // CBZ_SERIES_EACH + 1
        folder = part / f"Publisher {publisher:03d}" / f"Series {series + 1:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        archive = folder / f"Series {series + 1:04d} #{issue + 1:03d}.cbz"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(zipfile.ZipInfo("ComicInfo.xml", date_time=ZIP_DATE), comic_info(series, issue + 1, publisher))
            for number in (1, 2):
                page = with_comment(bases[(index + number) % CBZ_BASES], f"{index} p{number}".encode())
                z.writestr(zipfile.ZipInfo(f"{number:03d}.jpg", date_time=ZIP_DATE), page)
        os.utime(archive, (EPOCH, EPOCH + index))
        if (index + 1) % 10_000 == 0:
            log(f"bench: {index + 1:,} comics written ({time.perf_counter() - started:.0f} s)")
    part.rename(library)
    facts = {"comics": count, "series": (count + CBZ_ISSUES_EACH - 1) // CBZ_ISSUES_EACH,
             "seconds": time.perf_counter() - started}
    manifest.write_text(json.dumps(facts, indent=2) + "\n")
    return library, facts


def timed_ls(path, runs):
    """Median ms of `ls` of path over `runs` runs after one unmeasured run; the entries counted."""
    env = dict(os.environ, LC_ALL="C")
    first = subprocess.run(["ls", str(path)], capture_output=True, text=True, env=env, timeout=600)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["ls", str(path)], capture_output=True, env=env, timeout=600, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return {"ms": statistics.median(times), "runs_ms": times, "entries": len(first.stdout.splitlines())}


def bench_metadata_views(args):
    count = args.metadata_views
    library, facts = ensure_meta_library(args.work, count)
    state = args.work / f"views-state-{count}"
    shutil.rmtree(state, ignore_errors=True)
    log(f"bench: inkyfs index of {count:,} tagged comics ...")
    index = time_index(args.inkyfs, library, state, timeout=3600)
    index["comics_per_second"] = count / index["seconds"]
    mountpoint = args.work / f"views-mnt-{count}"
    mountpoint.mkdir(parents=True, exist_ok=True)
    result = {"comics": count, "series": facts["series"], "index": index}
    mount = subprocess.run([str(args.inkyfs), "mount", "--state", str(state), "--views", "all", str(library), str(mountpoint)],
                           capture_output=True, text=True, timeout=120)
    if mount.returncode != 0:
        result["error"] = f"mount failed: {mount.stderr.strip()[-300:]}"
        return result
    try:
        series_view = mountpoint / "By Series"
        started, deadline = time.perf_counter(), time.time() + 300
        while time.time() < deadline:
            if series_view.is_dir() and len(os.listdir(series_view)) == facts["series"]:
                break
            time.sleep(0.05)
        # From the mount's return to By Series/ listing every series: the metadata read from the index.
        result["first_listing_s"] = time.perf_counter() - started
        result["ls_by_series"] = timed_ls(series_view, args.runs)
        result["ls_one_series"] = timed_ls(series_view / "Series 0001 (2000)", args.runs)
        result["ls_recently_added"] = timed_ls(mountpoint / "Recently Added", args.runs)
    finally:
        subprocess.run([str(args.inkyfs), "unmount", str(mountpoint)], capture_output=True, timeout=60)
    return result


def print_metadata_views(result):
    index = result["index"]
    print(f"\nMetadata views, {result['comics']:,} tagged comics in {result['series']:,} series")
    print(f"  inkyfs index (listings and metadata): {index['seconds']:.1f} s, "
          f"{index['comics_per_second']:,.0f} comics/s, {1000 * index['cpu_seconds'] / result['comics']:.2f} ms CPU "
          f"(user + sys) a comic ({index.get('summary') or index.get('error')})")
    if "error" in result:
        print(f"  {result['error']}")
        return
    print(f"  mounted to By Series/ complete: {result['first_listing_s']:.2f} s (metadata read from the index)")
    for key, label in (("ls_by_series", "ls By Series/"), ("ls_one_series", "ls By Series/Series 0001 (2000)/"),
                       ("ls_recently_added", "ls Recently Added/")):
        entry = result[key]
        print(f"  {label}: {entry['ms']:.1f} ms warm ({entry['entries']:,} entries; runs "
              f"{', '.join(f'{ms:.1f}' for ms in entry['runs_ms'])})")
