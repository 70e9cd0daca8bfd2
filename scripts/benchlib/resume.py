"""The resume case (`--only resume`): a reader stops at page M of the solid CB7 (M = half its pages),
unmounts, and comes back. Each run: a fresh state and cache; mount, read page M (the first time: the
stream decoded from its start), wait until the pages kept to resume (page M and the ones after it)
are on disk, unmount; evict the archive and those pages from the host page cache; mount again and
read page M, then the pages after it one after another, with no pause (the worst case: the pages past
the kept ones wait for the decode from the start begun at page M) and, in a run of its own, with a
reader's pause between pages. Beside it, in the same run, the LZMA floor: `7z x -so` of page M alone,
cold (7z decodes the solid stream up to it)."""

import statistics
import tempfile
import time
from pathlib import Path

from .common import evict, files_below, log
from .measure import read_whole, run_guarded, timed_shell
from .mounts import InkyfsMount
from .tables import fmt, print_table

AHEAD = 24          # ResumePages.defaultAhead: the pages kept after the last one read
AFTER = AHEAD + 3   # pages read after page M: the kept run, then the first pages past it
THINK = 0.35        # seconds a reader looks at a page in the paused variant (24 pages: ~8 s, the decode's time)


def measure_resume(args, comic, target, cache, state, notes, think=0.0):
    """One run: the first read of page `target` (1-based), then the same page after a remount."""
    def new_mount():
        m = InkyfsMount(args.inkyfs, comic.path, args.work / "mnt" / "inkyfs",
                        [*args.inkyfs_args, "--state", str(state), "--no-continue"], notes, cache=cache)
        m.evict = [comic.path, *files_below(cache)]
        return m
    pages_folder = cache / "inkyfs" / "pages"
    with new_mount() as m:
        _, first = read_whole(m.page_path(comic, target))
        deadline = time.monotonic() + 120
        while len([p for p in files_below(pages_folder) if p.endswith(".page")]) < AHEAD + 1:
            if time.monotonic() > deadline:
                notes.append(f"resume: the kept pages were not all on disk within 120 s")
                break
            time.sleep(0.05)
    kept = len([p for p in files_below(pages_folder) if p.endswith(".page")])
    with new_mount() as m:
        _, resumed = read_whole(m.page_path(comic, target))
        after = []
        for n in range(1, min(AFTER, comic.pages - target) + 1):
            time.sleep(think)
            after.append(read_whole(m.page_path(comic, target + n))[1])
    return {"first_ms": first * 1000, "resume_ms": resumed * 1000, "kept_files": kept,
            "kept_max_ms": max(after[:AHEAD]) * 1000,
            "past_run_ms": after[AHEAD] * 1000 if len(after) > AHEAD else None,
            "then_ms": statistics.median(after[AHEAD + 1:]) * 1000 if len(after) > AHEAD + 1 else None,
            "remount_to_page_ms": (m.mount_seconds + resumed) * 1000}


def bench_resume(args, out, comics, notes):
    solid = [c for c in comics if c.kind == "solid"]
    if not solid:
        notes.append("resume: no solid comic")
        return
    comic = solid[0]
    target = comic.pages // 2
    member = comic.members[target - 1]
    log(f"bench: resume {comic.stem}: {args.runs} x (page {target}, remount, page {target} and {AFTER} after), "
        f"and 7z x -so of page {target} alone")
    runs, paused, floors = [], [], []
    for _ in range(args.runs):
        scratch = Path(tempfile.mkdtemp(prefix="inkyfs-bench-resume-"))
        runs.append(run_guarded("resume", notes, measure_resume, args, comic, target, scratch / "cache",
                                scratch / "state", notes))
        scratch = Path(tempfile.mkdtemp(prefix="inkyfs-bench-resume-"))
        paused.append(run_guarded("resume", notes, measure_resume, args, comic, target, scratch / "cache",
                                  scratch / "state", notes, THINK))
        evict([comic.path])
        seconds = timed_shell(["7z", "x", "-so", str(comic.path), member])
        floors.append(None if seconds is None else seconds * 1000)
    def median(results, key):
        values = [r[key] for r in results if "error" not in r and r.get(key) is not None]
        return statistics.median(values) if values else None
    keys = ("first_ms", "resume_ms", "remount_to_page_ms", "kept_max_ms", "past_run_ms", "then_ms")
    out.update({"comic": comic.stem, "page": target, "ahead": AHEAD, "think_ms": THINK * 1000,
                "runs": runs, "paused_runs": paused, "floor_ms": floors,
                **{key: median(runs, key) for key in keys}, "paused": {key: median(paused, key) for key in keys},
                "floor_median_ms": statistics.median([f for f in floors if f is not None] or [float("nan")])})


def print_resume_report(entry):
    page, ahead = entry["page"], entry["ahead"]
    rows = [
        [f"floor: 7z x -so of page {page} alone, cold (ms)", fmt(entry["floor_median_ms"], 0)],
        [f"first read of page {page}, cold (ms)", fmt(entry["first_ms"], 0)],
        [f"after a remount: page {page}, cold archive (ms)", fmt(entry["resume_ms"], 1)],
        [f"  mount start -> page {page} read (ms)", fmt(entry["remount_to_page_ms"], 0)],
        [f"  pages {page + 1}-{page + ahead}, slowest (ms)", fmt(entry["kept_max_ms"], 1)],
        [f"  page {page + ahead + 1}, read at once (ms)", fmt(entry["past_run_ms"], 0)],
        [f"  pages after it, median (ms)", fmt(entry["then_ms"], 1)],
        [f"  the same, reading a page every {entry['think_ms']:.0f} ms: page {page} (ms)", fmt(entry["paused"]["resume_ms"], 1)],
        [f"    pages {page + 1}-{page + ahead}, slowest (ms)", fmt(entry["paused"]["kept_max_ms"], 1)],
        [f"    page {page + ahead + 1} (ms)", fmt(entry["paused"]["past_run_ms"], 1)],
        [f"    pages after it, median (ms)", fmt(entry["paused"]["then_ms"], 1)],
    ]
    print_table(f"\n== resume after a remount: {entry['comic']}, medians of {len(entry['runs'])} runs",
                ["", "inkyfs"], rows)
