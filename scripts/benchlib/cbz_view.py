"""The CBZ case (`--only cbz`): comics as CBZ files and covers.

- sequential reads of the synthesized CBZ (`--as cbz`) of a stored CBZ, a deflated CBZ and a solid
  CB7 of 400 pages, beside reading the same pages in order in the folder view, on fresh mounts with
  a fresh state (the CBZ's first open computes the CRC-32s the archive lacks) and again with the
  state of that mount (CRC-32s from the index); goal: the CBZ at >= 0.9x the folder view's page bytes/s;
- `stat` of every CBZ of the 20,000-comic library (cbz_library.py) with a warm index, counting the
  worker processes the daemon started (none: no archive is opened);
- one cover of a 1800x2700 JPEG page on one core (`inkyfs-worker __convert --cover 600`, as a worker makes it);
- `ls -l` of a series folder whose covers are not made (an empty cover cache), and how long
  `folder.jpg` then takes to appear (made in the background).
"""

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from .cbz_library import ensure_cbz_library
from .common import MB, SERIES, converter, log
from .convert import one_core
from .measure import median_tree, read_whole, repeated, run_guarded
from .mounts import InkyfsMount
from .pages import ensure_library, ensure_pages
from .procs import proc_children, proc_cpu_seconds
from .tables import fmt as format_number, print_table

KINDS = ("stored", "deflated", "solid")
LIBRARY_COMICS = 20_000
COVER_ROUNDS = 20
LS_RUNS = 5


def read_folder_view(new_mount, comic):
    """Fresh mount: every page of the comic's folder, in order, 1 MiB reads."""
    with new_mount() as m:
        started = time.perf_counter()
        pages = sorted((m.mountpoint / SERIES / comic.stem).iterdir())
        total = sum(read_whole(page)[0] for page in pages)
        seconds = time.perf_counter() - started
    return {"pages": len(pages), "bytes": total, "seconds": seconds, "page_mb_per_s": total / MB / seconds}


def read_cbz(new_mount, comic):
    """Fresh mount: the comic's CBZ read from start to end with 1 MiB reads, as `cat` reads it."""
    with new_mount() as m:
        path = m.mountpoint / SERIES / f"{comic.stem}.cbz"
        started = time.perf_counter()
        size = path.stat().st_size
        total, _ = read_whole(path)
        seconds = time.perf_counter() - started
        if total != size:
            m.notes.append(f"{path.name}: stat says {size} bytes, a read gave {total}")
    return {"file_bytes": total, "seconds": seconds, "file_mb_per_s": total / MB / seconds,
            "page_mb_per_s": comic.page_bytes / MB / seconds}


def bench_reads(args, entry, notes, scratch):
    library, comics = ensure_library(args.work, False)
    mountpoint = args.work / "mnt" / "inkyfs"
    for comic in [c for c in comics if c.kind in KINDS]:
        def factory(cbz, state):
            def new_mount():
                folder = state or Path(tempfile.mkdtemp(prefix="state-", dir=scratch))
                mount = InkyfsMount(args.inkyfs, library, mountpoint, [*args.inkyfs_args, "--state", str(folder), "--no-continue",
                                                                      "--no-covers", *(["--as", "cbz"] if cbz else [])], notes)
                mount.evict = [comic.path]
                return mount
            return new_mount
        log(f"bench: {comic.stem}: the folder view's pages, then its CBZ (fresh state, then the index warm)")
        row = entry.setdefault(comic.stem, {"kind": comic.kind, "pages": comic.pages, "page_bytes": comic.page_bytes})
        row["folders"] = repeated(args.runs, args.slow_run, comic.stem, notes, read_folder_view, factory(False, None), comic)
        row["cbz_cold"] = repeated(args.runs, args.slow_run, comic.stem, notes, read_cbz, factory(True, None), comic)
        state = Path(tempfile.mkdtemp(prefix="state-", dir=scratch))
        run_guarded(comic.stem, notes, read_cbz, factory(True, state), comic)   # the index learns the CRC-32s
        row["cbz_warm"] = repeated(args.runs, args.slow_run, comic.stem, notes, read_cbz, factory(True, state), comic)


def worker_cpu(m):
    """CPU seconds the daemon's worker processes have used so far (2 start with the mount)."""
    return sum(proc_cpu_seconds(c, reaped=False) for c in proc_children(m.server_pid))


def stat_every_comic(args, lib, state, notes, cbz):
    """A mount with the index warm: `stat` of every comic (its CBZ with `--as cbz`, its directory
    in the folder view), folder by folder; the CPU the workers used meanwhile (~0: no archive opened)."""
    mount = InkyfsMount(args.inkyfs, lib.path, args.work / "mnt" / "inkyfs",
                        [*args.inkyfs_args, "--state", str(state), "--no-list-ahead", "--no-continue", "--no-covers",
                         "--views", "none", *(["--as", "cbz"] if cbz else [])], notes)
    with mount as m:
        before = worker_cpu(m)
        started = time.perf_counter()
        count = 0
        for publisher in sorted(os.listdir(m.mountpoint)):
            for series in sorted(os.listdir(m.mountpoint / publisher)):
                folder = m.mountpoint / publisher / series
                for name in os.listdir(folder):
                    os.stat(folder / name)
                    count += 1
        seconds = time.perf_counter() - started
        workers = len(proc_children(m.server_pid))
        spent = worker_cpu(m) - before
    if count != lib.comics:
        notes.append(f"stat of every comic ({'cbz' if cbz else 'folders'}): found {count:,}, expected {lib.comics:,}")
    return {"files": count, "seconds": seconds, "us_per_file": seconds * 1e6 / max(1, count), "workers": workers,
            "worker_cpu_ms": spent * 1000}


def ls_without_covers(args, lib, state, notes, scratch, covers=True):
    """Folder view, covers on, an empty cover cache: `ls -l` of one series folder; then the time
    until `folder.jpg` appears; then `ls -l` again. covers=False: the same with --no-covers."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=scratch))
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        mount = InkyfsMount(args.inkyfs, lib.path, args.work / "mnt" / "inkyfs",
                            [*args.inkyfs_args, "--state", str(state), "--no-list-ahead", "--no-continue", "--views", "none",
                             *([] if covers else ["--no-covers"])], notes)
        with mount as m:
            series = m.mountpoint / "Publisher 001" / "Series 0001"
            os.listdir(series.parent)
            started = time.perf_counter()
            first = subprocess.run(["ls", "-l", str(series)], capture_output=True, text=True, check=True).stdout
            ls_ms = (time.perf_counter() - started) * 1000
            while covers and "folder.jpg" not in os.listdir(series) and time.perf_counter() - started < 60:
                time.sleep(0.005)
            appeared_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            again = subprocess.run(["ls", "-l", str(series)], capture_output=True, text=True, check=True).stdout
            again_ms = (time.perf_counter() - started) * 1000
    finally:
        if before is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = before
    return {"ls_ms": ls_ms, "listed_cover_at_first": "folder.jpg" in first, "cover_appeared_ms": appeared_ms,
            "ls_after_ms": again_ms, "listed_cover_after": "folder.jpg" in again}


def one_cover(args):
    page = ensure_pages(args.work / "pages", 1)[0]
    out = subprocess.run(one_core([*converter(args.inkyfs), "__convert", "--cover", "600", "--rounds", str(COVER_ROUNDS), str(page)]),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def bench_cbz(args, entry, notes):
    scratch = Path(tempfile.mkdtemp(prefix="inkyfs-bench-cbz-", dir=args.work))
    entry["reads"] = {}
    bench_reads(args, entry["reads"], notes, scratch)
    log("bench: one cover of a 1800x2700 JPEG, one core")
    entry["cover"] = run_guarded("cover", notes, one_cover, args)
    lib = ensure_cbz_library(args.work, LIBRARY_COMICS)
    state = Path(tempfile.mkdtemp(prefix="state-", dir=scratch))
    log(f"bench: inkyfs index of {lib.comics:,} comics, then stat of every CBZ, then ls -l of a series without covers")
    subprocess.run([str(args.inkyfs), "index", str(lib.path), "--state", str(state)], check=True, capture_output=True)
    entry["stat_all"] = run_guarded("stat every CBZ", notes, stat_every_comic, args, lib, state, notes, True)
    entry["stat_all_folders"] = run_guarded("stat every comic folder", notes, stat_every_comic, args, lib, state, notes, False)
    # --views none: what covers cost alone (the views' first build takes CPU in the first second
    # of a mount, though no request waits on it any more). Each variant runs
    # LS_RUNS times, interleaved; the table shows median and max.
    runs = {True: [], False: []}
    for _ in range(LS_RUNS):
        for covers in (True, False):
            runs[covers].append(run_guarded("ls -l of a series", notes, ls_without_covers, args, lib, state, notes, scratch, covers))
    entry["ls_cold_covers"] = {"runs": runs[True], "median": median_tree([r for r in runs[True] if "error" not in r])}
    entry["ls_no_covers"] = {"runs": runs[False], "median": median_tree([r for r in runs[False] if "error" not in r])}


def fmt(value, digits):
    return format_number(value, digits) or "—"


def print_cbz_report(entry):
    rows = []
    for stem, row in (entry.get("reads") or {}).items():
        folders = (row.get("folders") or {}).get("page_mb_per_s")
        for label, key in (("CBZ, fresh state", "cbz_cold"), ("CBZ, index warm", "cbz_warm")):
            cbz = (row.get(key) or {}).get("page_mb_per_s")
            ratio = cbz / folders if cbz and folders else None
            rows.append([f"{stem}: {label}", fmt(folders, 1), fmt(cbz, 1), fmt((row.get(key) or {}).get("file_mb_per_s"), 1),
                         fmt(ratio, 2)])
    print_table("\n== --as cbz: sequential read of the CBZ vs the same pages in the folder view (page MB/s); goal >= 0.9x",
                ["", "folder view", "CBZ (pages)", "CBZ (file)", "ratio"], rows)
    stat_all, cover = entry.get("stat_all") or {}, entry.get("cover") or {}
    ls = (entry.get("ls_cold_covers") or {}).get("median") or {}
    ls_max = max((r.get("ls_ms", 0) for r in (entry.get("ls_cold_covers") or {}).get("runs", [])), default=None)
    plain = entry.get("ls_no_covers") or {}
    plain_max = max((r.get("ls_ms", 0) for r in plain.get("runs", [])), default=None)
    folders = entry.get("stat_all_folders") or {}
    rows = [
        [f"stat of every CBZ, {LIBRARY_COMICS:,} comics, index warm (s)", fmt(stat_all.get("seconds"), 2)],
        ["  per file (us)", fmt(stat_all.get("us_per_file"), 0)],
        ["  workers' CPU meanwhile (ms; ~0: no archive opened)", fmt(stat_all.get("worker_cpu_ms"), 1)],
        ["  same in the folder view: stat of every comic directory (s)", fmt(folders.get("seconds"), 2)],
        ["  its workers' CPU meanwhile (ms)", fmt(folders.get("worker_cpu_ms"), 1)],
        ["cover of a 1800x2700 JPEG, one core, median (ms); goal <= 20", fmt(cover.get("median_ms"), 1)],
        ["  its CPU time, median (ms)", fmt(cover.get("median_cpu_ms"), 1)],
        ["  its output", f"{cover.get('width')}x{cover.get('height')} {cover.get('format')}, {cover.get('bytes')} bytes"],
        [f"ls -l of a series folder, covers not made, median / max of {LS_RUNS} mounts (ms)",
         f"{fmt(ls.get('ls_ms'), 1)} / {fmt(ls_max, 1)}"],
        ["  folder.jpg listed by that ls (runs that did)",
         str(sum(bool(r.get("listed_cover_at_first")) for r in (entry.get("ls_cold_covers") or {}).get("runs", [])))],
        ["  folder.jpg appeared after, median (ms)", fmt(ls.get("cover_appeared_ms"), 1)],
        ["  ls -l again, cover made, median (ms)", fmt(ls.get("ls_after_ms"), 1)],
        ["same ls -l with --no-covers, median / max (ms)",
         f"{fmt((plain.get('median') or {}).get('ls_ms'), 1)} / {fmt(plain_max, 1)}"],
    ]
    print_table("\n== --as cbz at scale, covers", ["", "value"], rows)
