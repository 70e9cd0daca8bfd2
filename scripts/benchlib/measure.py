"""Measurements on fresh mounts (each takes a zero-argument factory returning a fresh Mount), their
medians over repeated runs, and the lines the daemon logs meanwhile."""

import math
import re
import shutil
import statistics
import subprocess
import time

from .common import MB, READ_CHUNK, evict
from .mounts import CommandFailed, MountFailed


BUFFER = bytearray(READ_CHUNK)


def read_whole(path):
    """Reads a file with 1 MiB reads; returns (bytes, seconds)."""
    view = memoryview(BUFFER)
    started = time.perf_counter()
    total = 0
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(view):
            total += n
    return total, time.perf_counter() - started


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def latency_summary(seconds):
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "max_ms": max(ms, default=None),
            "samples_ms": ms}


def check_pages(mount, comic, pages, total_bytes, complete):
    if len(pages) != comic.pages:
        mount.notes.append(f"{comic.stem}: listed {len(pages)} pages, expected {comic.pages}")
    elif complete and comic.page_bytes is not None and total_bytes != comic.page_bytes:
        mount.notes.append(f"{comic.stem}: read {total_bytes} bytes, expected {comic.page_bytes}")


def measure_sequential(new_mount, comic, timeout, settle=False):
    """Fresh mount; list the comic; read every page in order with no pause. With `settle`, the
    listing waits until the mount is quiet (`Mount.wait_quiet`), and the time to the first page
    leaves that wait out."""
    with new_mount() as m:
        settled = m.wait_quiet() if settle else 0.0
        cpu_before = m.cpu_seconds()
        started = time.perf_counter()
        pages = m.list_pages(comic)
        listed = time.perf_counter() - started
        latencies, total, first_page_at = [], 0, None
        for page in pages:
            n, seconds = read_whole(page)
            total += n
            latencies.append(seconds)
            if first_page_at is None:
                first_page_at = time.perf_counter()
            if time.perf_counter() - started > timeout:
                break
        elapsed = time.perf_counter() - started
        read_cpu = m.cpu_seconds() - cpu_before
        complete = len(latencies) == len(pages)
        check_pages(m, comic, pages, total, complete)
    return {
        "mount_ms": m.mount_seconds * 1000,
        "list_ms": listed * 1000,
        "pages_read": len(latencies), "complete": complete,
        "bytes": total, "seconds": elapsed, "mount_plus_read_s": m.mount_seconds + elapsed,
        "read_cpu_s": read_cpu,      # server + workers, from the listing to the last byte (no mount, no unlock)
        "mb_per_s": total / MB / elapsed, "pages_per_s": len(latencies) / elapsed,
        "mount_to_first_page_ms": (first_page_at - m.started - settled) * 1000 if first_page_at else None,
        "next_page": latency_summary(latencies[1:]),
        "memory": m.memory,
    }


def measure_think(new_mount, comic, think):
    """Fresh mount; read forward like a reader, pausing `think` seconds between pages."""
    with new_mount() as m:
        pages = m.list_pages(comic)
        latencies = []
        for page in pages:
            if latencies:
                time.sleep(think)
            latencies.append(read_whole(page)[1])
    return {"think_ms": think * 1000, "next_page": latency_summary(latencies[1:]), "memory": m.memory}


def measure_jump(new_mount, comic, target):
    """Fresh mount; open page `target` by path (no listing first), then page target+1."""
    with new_mount() as m:
        _, jump = read_whole(m.page_path(comic, target))
        _, after = read_whole(m.page_path(comic, target + 1))
    return {"page": target, "mount_ms": m.mount_seconds * 1000, "jump_ms": jump * 1000, "next_ms": after * 1000,
            "memory": m.memory}


def measure_ls_then_page(new_mount, comic, target):
    """Fresh mount; from the mount command's start: `ls -l` the comic directory, read page target;
    then page target+1 right after it."""
    with new_mount() as m:
        subprocess.run(["ls", "-l", str(m.comic_dir(comic))], stdout=subprocess.DEVNULL, check=True)
        listed = time.perf_counter()
        _, read = read_whole(m.page_path(comic, target))
        done = time.perf_counter()
        _, after = read_whole(m.page_path(comic, target + 1))
    return {"page": target, "mount_ms": m.mount_seconds * 1000,
            "ls_ms": (listed - m.started - m.mount_seconds) * 1000, "read_ms": read * 1000,
            "total_ms": (done - m.started) * 1000, "next_ms": after * 1000, "memory": m.memory}


def timed_shell(argv):
    """Runs argv with stdout to /dev/null; returns seconds, or None if it failed."""
    started = time.perf_counter()
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started if result.returncode == 0 else None


def measure_floor(comic):
    """Disk (cat) and whole-archive decode floors."""
    size = comic.path.stat().st_size
    floor = {}
    for name, argv, nbytes in [
        ("cat", ["cat", str(comic.path)], size),
        ("bsdtar -xOf", ["bsdtar", "-xOf", str(comic.path)], comic.page_bytes),
        ("7z x -so", ["7z", "x", "-so", str(comic.path)], comic.page_bytes),
    ]:
        if not shutil.which(argv[0]):
            floor[name] = None
            continue
        evict([comic.path])                               # cold, like every mount
        seconds = timed_shell(argv)
        floor[name] = None if seconds is None else {"seconds": seconds, "mb_per_s": nbytes / MB / seconds}
    return floor


def median_tree(values, peak=False):
    """One value from a list of same-shaped results: medians of numbers (largest with peak, as for
    memory and CPU), all() of flags, dictionaries key by key, the first of anything else."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    first = values[0]
    if isinstance(first, bool):
        return all(values)
    if isinstance(first, (int, float)):
        numbers = [v for v in values if isinstance(v, (int, float))]
        return max(numbers) if peak else statistics.median(numbers)
    if isinstance(first, dict):
        keys = list(dict.fromkeys(k for v in values if isinstance(v, dict) for k in v))
        return {k: median_tree([v.get(k) for v in values if isinstance(v, dict)], peak or k.endswith("_mib"))
                for k in keys}
    return first


def repeated(runs, slow_run, label, notes, function, *args):
    """run_guarded `runs` times on fresh mounts; the medians, with every run under "runs". A run
    that fails or takes over slow_run seconds ends the repetitions (a slow peer runs once)."""
    done = []
    for n in range(runs):
        started = time.perf_counter()
        result = run_guarded(label, notes, function, *args)
        done.append(result)
        took = time.perf_counter() - started
        if "error" in result or result.get("complete") is False:
            break
        if took > slow_run and n + 1 < runs:
            notes.append(f"{label}: {function.__name__} ran once ({took:.0f} s > --slow-run {slow_run:.0f} s)")
            break
    good = [r for r in done if "error" not in r]
    if not good:
        return {**done[-1], "runs": done}
    merged = median_tree(good)
    merged["repetitions"] = len(good)
    merged["runs"] = [{k: v for k, v in r.items() if k not in ("next_page",)} for r in done]
    return merged


def run_guarded(label, notes, function, *args):
    """Runs one measurement; a failure becomes a note and a {"error": ...} result, not a crash."""
    try:
        return function(*args)
    except (MountFailed, CommandFailed, OSError, subprocess.SubprocessError) as error:
        notes.append(f"{label}: {error}")
        return {"error": str(error)}


class LogWatch:
    """The lines the inkyfs daemon logs add while a measurement runs."""

    PROBLEM = re.compile(r"error|fail|warn|crash|timed? ?out|killed|denied|corrupt", re.IGNORECASE)

    def __init__(self, folder):
        self.folder = folder
        self.sizes = {p: p.stat().st_size for p in folder.glob("*.log")} if folder.is_dir() else {}

    def new_lines(self):
        lines = []
        for path in sorted(self.folder.glob("*.log")) if self.folder.is_dir() else []:
            with open(path, "rb") as f:
                f.seek(self.sizes.get(path, 0))
                lines += [f"{path.name}: {line}" for line in f.read().decode(errors="replace").splitlines()]
        return lines

    def summary(self):
        lines = self.new_lines()
        problems = [line for line in lines if self.PROBLEM.search(line)]
        return {"log_lines": len(lines), "log_problem_lines": len(problems), "log_problems": problems[:20]}
