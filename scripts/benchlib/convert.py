"""The page-conversion case: one 1800x2700 JPEG page to a 1264x1680 grayscale JPEG in
this process on one core (`inkyfs-worker __convert`, libvips as a worker runs it), beside libvips' own
tools on the same file as the floor; then a 400-page comic of such pages through a mount with that
device profile: first lookups (sized at listing: nothing converts), a remount's stat of every page (sizes from the index;
and with a new index, from the disk cache of converted pages), a cold sequential read and the same
read after a remount, served by the disk cache. The mounts keep their pages in a cache folder of
the run's own (XDG_CACHE_HOME), never the user's."""

import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from .common import SERIES, converter, log
from .measure import measure_sequential, run_guarded
from .mounts import InkyfsMount
from .pages import Comic, ensure_pages, write_zip
from .tables import cell, dig, fmt, print_table, seq_value

FIT = "1264x1680"
CONVERT_PAGES = 400
REPEAT = 20


def one_core(argv):
    return (["taskset", "-c", "0"] if shutil.which("taskset") else []) + argv


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_calls(argv, times):
    """Median wall time of running a command `times` times (each a new process)."""
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        subprocess.run(one_core(argv), check=True, capture_output=True)
        spent.append(time.perf_counter() - started)
    return sorted(spent)[len(spent) // 2] * 1000


def measure_in_process(args, page, scratch):
    result = {}
    out = subprocess.run(one_core([*converter(args.inkyfs), "__convert", "--fit", FIT, "--grayscale", "--rounds", str(REPEAT), str(page)]),
                         check=True, capture_output=True, text=True).stdout
    result["inkyfs"] = json.loads(out)
    if shutil.which("vips"):
        target = scratch / "thumb.jpg"
        width, height = FIT.split("x")
        result["vips_cli_ms"] = timed_calls(["vips", "thumbnail", str(page), f"{target}[Q=85]", width, "--height", height,
                                             "--size", "down"], REPEAT)
        result["vips_version_ms"] = timed_calls(["vips", "--version"], REPEAT)   # the CLI's own start-up
    if shutil.which("vipsthumbnail"):
        copies = []
        for n in range(REPEAT):
            copies.append(scratch / f"copy-{n}.jpg")
            shutil.copyfile(page, copies[-1])
        started, cpu = time.perf_counter(), children_cpu()
        subprocess.run(one_core(["vipsthumbnail", "--vips-concurrency=1", "-s", FIT, "-o", "%s-t.jpg[Q=85]", *map(str, copies)]),
                       check=True, capture_output=True)
        result["vipsthumbnail_batch_ms"] = (time.perf_counter() - started) * 1000 / len(copies)
        result["vipsthumbnail_batch_cpu_ms"] = (children_cpu() - cpu) * 1000 / len(copies)
    return result


def stat_all(new_mount, comic):
    """A mount: list the comic, stat every page in order; (ms for the stats, the sizes)."""
    with new_mount() as m:
        pages = m.list_pages(comic)
        started = time.perf_counter()
        sizes = [os.stat(p).st_size for p in pages]
        return (time.perf_counter() - started) * 1000, sizes, m


def measure_lookups_and_remount(new_mount, fresh_index_mount, comic):
    """Fresh mount: stat every page in order (each page is listed at its size budget: a first
    lookup converts nothing); remount with the same state: stat every
    page again (sizes from the index); remount with a new index: stat every page (sizes from the
    disk cache: no page is converted)."""
    result = {}
    spent, sizes, _ = stat_all(new_mount, comic)
    result["first_lookup_ms"] = spent / len(sizes)
    result["converted_bytes"] = sum(sizes)
    result["remount_stat_all_ms"], again, m = stat_all(new_mount, comic)
    result["new_index_stat_all_ms"], from_disk, _ = stat_all(fresh_index_mount, comic)
    for label, seen in (("a remount", again), ("a remount with a new index", from_disk)):
        if seen != sizes:
            m.notes.append(f"{comic.stem}: sizes after {label} differ from the first mount's")
    result["memory"] = m.memory
    return result


def converted_cache_bytes(folder):
    return sum(f.stat().st_size for f in (folder / "inkyfs" / "pages").glob("*.page"))


def with_cache_home(folder, measure, *arguments):
    """Runs a measurement with the mounts' disk caches in `folder` (the daemon inherits it)."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    try:
        return measure(*arguments)
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved


def bench_convert(args, entry, notes):
    scratch = Path(tempfile.mkdtemp(prefix="inkyfs-bench-convert-"))
    try:
        pages = ensure_pages(args.work / "pages", CONVERT_PAGES)
        log(f"bench: convert one 1800x2700 JPEG to a {FIT} grayscale JPEG, one core")
        entry["one_page"] = run_guarded("convert", notes, measure_in_process, args, pages[0], scratch)
        path = args.work / "library-convert" / SERIES / f"device-{CONVERT_PAGES}.cbz"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            write_zip(path, pages, zipfile.ZIP_STORED)
        comic = Comic(stem=path.stem, path=path, fmt="zip", members=[p.name for p in pages], page_bytes=None)

        def mount_factory(state=None, extra=()):
            def new_mount():
                folder = state or Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-", dir=scratch))
                return InkyfsMount(args.inkyfs, path.parent.parent, args.work / "mnt" / "inkyfs",
                                   [*args.inkyfs_args, "--state", str(folder), "--no-continue", "--no-covers", "--fit", FIT, "--grayscale",
                                    *extra], notes)
            return new_mount
        log(f"bench: {comic.stem}: first lookups, remount stat, cold sequential through --fit {FIT} --grayscale")
        state = Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-", dir=scratch))
        lookups_cache = Path(tempfile.mkdtemp(prefix="inkyfs-bench-cache-", dir=scratch))
        entry["lookups"] = run_guarded(comic.stem, notes, with_cache_home, lookups_cache, measure_lookups_and_remount,
                                       mount_factory(state, ("--prefetch", "0")), mount_factory(None, ("--prefetch", "0")), comic)
        # Cold: a new index and an empty disk cache; then a remount (same index) that the disk cache serves.
        state = Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-", dir=scratch))
        read_cache = Path(tempfile.mkdtemp(prefix="inkyfs-bench-cache-", dir=scratch))
        entry["sequential"] = run_guarded(comic.stem, notes, with_cache_home, read_cache, measure_sequential,
                                          mount_factory(state), comic, float("inf"))
        entry["disk_cache_bytes"] = converted_cache_bytes(read_cache)
        entry["from_disk_cache"] = run_guarded(comic.stem, notes, with_cache_home, read_cache, measure_sequential,
                                               mount_factory(state), comic, float("inf"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def print_convert_report(entry):
    one = entry.get("one_page") or {}
    rows = [
        ["inkyfs-worker __convert (libvips in-process, as a worker), median of %d (ms)" % REPEAT, fmt(dig(one, "inkyfs", "median_ms"), 1)],
        ["  its CPU time, median (ms)", fmt(dig(one, "inkyfs", "median_cpu_ms"), 1)],
        ["  its output", f"{dig(one, 'inkyfs', 'width')}x{dig(one, 'inkyfs', 'height')} "
                         f"{dig(one, 'inkyfs', 'format')}, {fmt((dig(one, 'inkyfs', 'bytes') or 0) / 1000, 0)} KB"],
        ["floor: vipsthumbnail, %d files in one process, per file, colour (ms)" % REPEAT, fmt(one.get("vipsthumbnail_batch_ms"), 1)],
        ["  its CPU time, per file, start-up included (ms)", fmt(one.get("vipsthumbnail_batch_cpu_ms"), 1)],
        ["vips thumbnail CLI, one process per page, colour (ms)", fmt(one.get("vips_cli_ms"), 1)],
        ["  of which the CLI's start-up (vips --version) (ms)", fmt(one.get("vips_version_ms"), 1)],
    ]
    print_table(f"\n== One 1800x2700 JPEG page to a {FIT} grayscale JPEG, one core (taskset -c 0); goal <= 25 ms",
                ["", "ms"], rows)
    rows = [
        ("first lookup of each page, sized at listing (ms/page, --prefetch 0)", lambda r: fmt(dig(r, "lookups", "first_lookup_ms"), 1)),
        ("remount: stat of every page, sizes from the index (ms, all pages)", lambda r: fmt(dig(r, "lookups", "remount_stat_all_ms"), 1)),
        ("remount, new index: stat of every page from the disk cache (ms, all pages)",
         lambda r: fmt(dig(r, "lookups", "new_index_stat_all_ms"), 1)),
        ("cold sequential read, new index, empty disk cache (pages/s)", seq_value("pages_per_s", 1)),
        ("  its CPU time, daemon + workers (s)", lambda r: fmt(dig(r, "sequential", "read_cpu_s"), 1)),
        ("remount, sequential read from the disk cache (pages/s)", lambda r: fmt(dig(r, "from_disk_cache", "pages_per_s"), 1)),
        ("  its CPU time, daemon + workers (s)", lambda r: fmt(dig(r, "from_disk_cache", "read_cpu_s"), 1)),
        ("disk cache after the cold read (MB)", lambda r: fmt((r.get("disk_cache_bytes") or 0) / 1e6, 1)),
    ]
    print_table(f"\n== A {CONVERT_PAGES}-page CBZ of 1800x2700 JPEGs through --fit {FIT} --grayscale",
                ["", "inkyfs"], [[label, cell(entry, row)] for label, row in rows])
