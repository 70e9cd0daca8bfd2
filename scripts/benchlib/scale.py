"""The library-scale case: the whole library mounted and listed (`ls -lRA`) by inkyfs,
cold and warm index, and by ratarmount -r; its table."""

import contextlib
import os
import re
import resource
import shutil
import subprocess
import time
from pathlib import Path

from .common import MB, files_below, log
from .measure import LogWatch, median_tree, run_guarded
from .mounts import ACTIVE_MOUNTS, InkyfsMount, PeerMount, is_mounted, unmount
from .scale_library import ensure_scale_library, warm_library
from .tables import cell, dig, fmt, print_table


SCALE_INKYFS_TIMEOUT = 600.0                    # seconds an inkyfs listing or `inkyfs index` may take
INDEX_GLOB = "*.index.sqlite*"


def count_files(root, timeout):
    """`ls -lRA ROOT` (every entry listed and stat'ed, as the summary's row), regular files counted here:
    the lines that start with "-"."""
    started = time.perf_counter()
    try:
        result = subprocess.run(["ls", "-lRA", "--color=never", str(root)], stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=timeout, env={**os.environ, "LC_ALL": "C"})
        out, err, code, timed_out = result.stdout, result.stderr, result.returncode, False
    except subprocess.TimeoutExpired as expired:
        out, err, code, timed_out = expired.stdout or b"", expired.stderr or b"", None, True
    seconds = time.perf_counter() - started
    files = sum(1 for line in out.split(b"\n") if line.startswith(b"-"))
    return {"files": files, "list_ms": seconds * 1000, "timed_out": timed_out, "find_exit": code,
            "find_errors": err.decode(errors="replace").splitlines()[:5]}


class LibraryInkyfsMount(InkyfsMount):
    """inkyfs on the whole library; unmounts with `inkyfs unmount`, times it until the daemon is gone."""

    def __init__(self, inkyfs, library, mountpoint, extra_args, notes):
        super().__init__(inkyfs, library, mountpoint, extra_args, notes)
        self.inkyfs = inkyfs
        self.release_started = None
        self.unmount_seconds = None

    def release(self):
        self.release_started = time.perf_counter()
        try:
            result = subprocess.run([str(self.inkyfs), "unmount", str(self.mountpoint)], stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=30)
            if result.returncode != 0:
                self.notes.append(f"inkyfs unmount exited {result.returncode}: {result.stderr.strip()[:200]}")
        except subprocess.TimeoutExpired:
            self.notes.append("inkyfs unmount took over 30 s")
        if is_mounted(self.mountpoint):
            unmount(self.mountpoint)
        ACTIVE_MOUNTS.discard(str(self.mountpoint))

    def stop(self):
        super().stop()
        if self.release_started is not None:
            self.unmount_seconds = time.perf_counter() - self.release_started


def measure_library_mount(new_mount, list_timeout):
    """A mount of the whole library, then `ls` of its root, then `ls -lR` of all of it."""
    with new_mount() as m:
        started = time.perf_counter()
        subprocess.run(["ls", str(m.mountpoint)], stdout=subprocess.DEVNULL, check=True)
        answered = time.perf_counter() - started
        listing = count_files(m.mountpoint, list_timeout)
    result = {"mount_ms": m.mount_seconds * 1000, "ls_answers_ms": (m.mount_seconds + answered) * 1000, **listing,
              "total_ms": (m.mount_seconds + answered) * 1000 + listing["list_ms"], "memory": m.memory}
    if getattr(m, "unmount_seconds", None) is not None:
        result["unmount_ms"] = m.unmount_seconds * 1000
    return result


def time_index(inkyfs, library, state, timeout):
    """`inkyfs index LIBRARY --state DIR`: seconds, CPU seconds (user + system, its workers' included:
    on a shared machine the wall time says more about the others' load than about inkyfs), and its
    summary line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([str(inkyfs), "index", str(library), "--state", str(state)], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = result.stdout.splitlines()
    out = {"seconds": seconds, "exit": result.returncode,
           "cpu_seconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
           "summary": next((line for line in lines if line.startswith("indexed ")), None),
           "failed": [line.strip() for line in lines if line.strip().startswith("failed:")][:20]}
    if result.returncode != 0:
        out["error"] = f"exit {result.returncode}: {result.stderr.strip()[-300:]}"
    return out


def state_bytes(folder):
    return sum(p.stat().st_size for p in folder.glob("state.sqlite*")) if folder.is_dir() else None


def check_count(label, result, lib, notes):
    if isinstance(result, dict) and "files" in result:
        if result["timed_out"]:
            notes.append(f"{label}: listing stopped at the timeout after {result['files']:,} files")
        elif result["files"] != lib.expected_files:
            notes.append(f"{label}: listed {result['files']:,} files, expected {lib.expected_files:,} "
                         f"({lib.pages:,} pages + {lib.comic_info} ComicInfo.xml + {lib.loose} loose)")
        if result.get("find_errors"):
            notes.append(f"{label}: find said: {' | '.join(result['find_errors'])[:300]}")


def bench_library_inkyfs(args, lib, notes):
    root = args.work / "scale-state"
    shutil.rmtree(root, ignore_errors=True)
    mount_state, index_state = root / "mount", root / "index"      # fresh, not yet existing
    mountpoint = args.work / "mnt" / "inkyfs-library"
    # The same tree as the folders: no folder.jpg/.directory (covers have their own cost: --only cbz),
    # no metadata views (--metadata-views: By Series/ and Recently Added/ are links the folders do not have).
    extra = [*args.inkyfs_args, "--state", str(mount_state), "--no-continue", "--no-covers", "--views", "none"]

    archives = files_below(lib.path)

    def new_mount():
        m = LibraryInkyfsMount(args.inkyfs, lib.path, mountpoint, extra, notes)
        m.evict = archives
        return m
    out = {"state": str(mount_state), "index_state": str(index_state)}
    runs = {"first": [], "second": []}
    for n in range(args.runs):                  # each repetition: a fresh state, a cold then a warm mount
        shutil.rmtree(mount_state, ignore_errors=True)
        for run in ("first", "second"):
            log(f"bench: inkyfs library: {run} mount ({'cold' if run == 'first' else 'warm'} index) + ls -lR "
                f"(run {n + 1}/{args.runs})")
            watch = LogWatch(args.work / "state" / "inkyfs")
            result = run_guarded(f"inkyfs library {run} mount", notes, measure_library_mount,
                                 new_mount, SCALE_INKYFS_TIMEOUT)
            result.update(watch.summary(), state_bytes=state_bytes(mount_state))
            runs[run].append(result)
    for run in ("first", "second"):
        good = [r for r in runs[run] if "error" not in r]
        out[run] = result = {**median_tree(good), "repetitions": len(good)} if good else runs[run][-1]
        out[run + "_runs"] = runs[run]
        check_count(f"inkyfs library {run} mount", result, lib, notes)
        if result["log_problem_lines"]:
            notes.append(f"inkyfs library {run} mount: {result['log_problem_lines']} daemon log lines look like "
                         f"problems, e.g. {result['log_problems'][0][:200]}")
    if dig(out, "first", "files") is not None and dig(out, "second", "files") is not None \
            and out["first"]["files"] != out["second"]["files"]:
        notes.append(f"inkyfs library: the second mount listed {out['second']['files']:,} files, "
                     f"the first {out['first']['files']:,}")
    out["index"] = {}
    for run in ("cold", "warm"):
        log(f"bench: inkyfs library: inkyfs index ({run})")
        out["index"][run] = result = run_guarded(f"inkyfs index {run}", notes, time_index,
                                                 args.inkyfs, lib.path, index_state, SCALE_INKYFS_TIMEOUT)
        if result.get("failed"):
            notes.append(f"inkyfs index {run}: {len(result['failed'])} comics failed, e.g. {result['failed'][0]}")
    out["index"]["state_bytes"] = state_bytes(index_state)
    return out


def index_files(places):
    """{path: (size, mtime_ns)} of every ratarmount index under the given folders."""
    found = {}
    for place in places:
        if place.is_dir():
            for path in place.rglob(INDEX_GLOB):
                with contextlib.suppress(OSError):
                    st = path.stat()
                    found[str(path)] = (st.st_size, st.st_mtime_ns)
    return found


def bench_library_ratarmount(args, lib, notes):
    if not shutil.which("ratarmount"):
        return {"status": "n/a (pip install ratarmount)"}
    index_dir = args.work / "ratarmount-index"
    shutil.rmtree(index_dir, ignore_errors=True)
    index_dir.mkdir(parents=True)
    mountpoint = args.work / "mnt" / "ratarmount-library"
    # -r: mount every archive found below the folder, recursively (ratarmount 1.3.0: the /archive
    # extensions include cbz, cbt and cb7). --index-folders keeps its .index.sqlite files out of
    # the library (by default it writes them beside each archive, else in ~/.cache/ratarmount).
    command = ["ratarmount", "-f", "-r", "--index-folders", str(index_dir), str(lib.path), str(mountpoint)]

    def new_mount():
        m = PeerMount("ratarmount", lib.path, mountpoint, args.work / "logs" / "ratarmount-library.log", notes)
        m.command, m.mount_timeout = command, args.peer_timeout
        m.evict = files_below(lib.path)
        return m
    places = [index_dir, lib.path, Path.home() / ".cache" / "ratarmount", Path.home() / ".ratarmount"]
    before = index_files(places)
    out = {"command": " ".join(command)}
    snapshots = []
    for run in ("first", "second"):
        if run == "second" and "error" in out["first"] and snapshots[0] == before:
            out[run] = {"skipped": "the first mount failed and left no index to reuse"}
            snapshots.append(snapshots[0])
            continue
        log(f"bench: ratarmount library: {run} mount + ls -lR (timeout {args.peer_timeout:.0f} s each)")
        out[run] = result = run_guarded(f"ratarmount library {run} mount", notes, measure_library_mount,
                                        new_mount, args.peer_timeout)
        check_count(f"ratarmount library {run} mount", result, lib, notes)
        snapshots.append(index_files(places))
    first, second = snapshots
    written = {p: v for p, v in first.items() if before.get(p) != v}
    rewritten = [p for p in second if p in first and second[p] != first[p]]
    added = [p for p in second if p not in first]
    folders = sorted({str(Path(p).parent) for p in written})
    out["index_files"] = {
        "written_by_first": len(written), "bytes": sum(size for size, _ in written.values()),
        "folders": folders, "rewritten_by_second": len(rewritten), "added_by_second": len(added),
    }
    if written:
        reuse = ("the second mount read them (none rewritten or added)" if not rewritten and not added else
                 f"the second mount rewrote {len(rewritten)} and added {len(added)}")
        out["index_files"]["text"] = (f"first mount wrote {len(written)} .index.sqlite "
                                      f"({sum(s for s, _ in written.values()) / MB:.1f} MB) in "
                                      f"{', '.join(folders[:3])}{' …' if len(folders) > 3 else ''}; {reuse}")
    else:
        out["index_files"]["text"] = ("no .index.sqlite written anywhere (its log says \"Creating new SQLite index "
                                      "database at :memory:\" for every archive); a second mount re-reads every archive")
    stray = [p for p in {**written, **dict.fromkeys(added)} if p.startswith(str(lib.path) + os.sep)]
    for path in stray:                       # keep the cached library as it was made
        Path(path).unlink(missing_ok=True)
    if stray:
        notes.append(f"ratarmount wrote {len(stray)} index files inside the library; deleted")
    return out


def bench_library_scale(args, entry, notes):
    lib = ensure_scale_library(args.work, args.library_comics)
    entry["library"] = lib.to_json()
    log(f"bench: library scale: reading {lib.bytes / MB:.0f} MB once to warm the host page cache")
    warm_library(lib.path)
    tools = entry["tools"]
    if "inkyfs" in args.tools:
        tools["inkyfs"] = bench_library_inkyfs(args, lib, notes)
    if "ratarmount" in args.tools:
        tools["ratarmount"] = bench_library_ratarmount(args, lib, notes)


def print_library_report(entry):
    lib = entry.get("library")
    if lib is None:
        return
    formats = ", ".join(f"{n:,} {k}" for k, n in lib["formats"].items())
    print(f"\n== library scale: {lib['comics']:,} comics ({formats}) in {lib['series']} series folders, "
          f"{lib['bytes'] / MB:.0f} MB\n   expected files: {lib['pages']:,} pages + {lib['comic_info']:,} "
          f"ComicInfo.xml + {lib['loose']} loose cover.jpg = {lib['expected_files']:,}")

    def ms(run, key):
        def row(r):
            g = r.get(run) or {}
            if "skipped" in g:
                return "skipped"
            if "error" in g:
                timeout = re.search(r"did not mount within (\d+) s", g["error"])
                if not timeout:
                    return "error"
                return {"mount_ms": f"timeout, > {timeout.group(1)} s", "list_ms": "not run",
                        "ls_answers_ms": f"> {timeout.group(1)} s",
                        "total_ms": f"> {timeout.group(1)} s"}[key]
            text = fmt(g.get(key), 0)
            if text and key != "mount_ms" and g.get("timed_out"):
                text += " (timeout)"
            return text
        return row

    def both(key, digits, *path):
        def row(r):
            a, b = dig(r, "first", *path, key), dig(r, "second", *path, key)
            return None if a is None and b is None else f"{fmt(a, digits) or '—'} / {fmt(b, digits) or '—'}"
        return row

    def index_row(r):
        cold, warm = dig(r, "index", "cold"), dig(r, "index", "warm")
        if cold is None and warm is None:
            return None
        show = lambda g: "—" if g is None else "error" if "error" in g else fmt(g["seconds"] * 1000, 0)
        return f"{show(cold)} / {show(warm)}"

    def workers_row(r):
        if not (dig(r, "first", "memory", "workers") or dig(r, "second", "memory", "workers")):
            return None
        return both("workers_peak_sum_mib", 1, "memory")(r)

    rows = [
        ("first mount returns (ms)", ms("first", "mount_ms")),
        ("first mount -> ls answers (ms)", ms("first", "ls_answers_ms")),
        ("first listing, ls -lR (ms)", ms("first", "list_ms")),
        ("first mount + listing (ms)", ms("first", "total_ms")),
        ("second mount returns (ms)", ms("second", "mount_ms")),
        ("second listing, ls -lR (ms)", ms("second", "list_ms")),
        ("second mount + listing (ms)", ms("second", "total_ms")),
        ("inkyfs index cold / warm (ms)", index_row),
        ("files listed first / second", both("files", 0)),
        ("server peak RSS first / second (MiB)", both("server_hwm_mib", 1, "memory")),
        ("workers peak RSS sum first / second (MiB)", workers_row),
        ("unmount -> daemon gone first / second (ms)", both("unmount_ms", 0)),
    ]
    tools = [t for t in ("inkyfs", "ratarmount") if t in entry["tools"]]
    header = ["", *[("ratarmount -r" if t == "ratarmount" else t) for t in tools]]
    print_table("", header, [[label, *[cell(entry["tools"][t], row) for t in tools]] for label, row in rows])
    inky = entry["tools"].get("inkyfs") or {}
    if dig(inky, "first", "state_bytes") is not None:
        summaries = [dig(inky, "index", run, "summary") for run in ("cold", "warm")]
        print(f"  inkyfs: state.sqlite {inky['first']['state_bytes'] / MB:.1f} MB after the first mount, "
              f"{(dig(inky, 'second', 'state_bytes') or 0) / MB:.1f} MB after the second; "
              f"daemon log: {dig(inky, 'first', 'log_lines')} + {dig(inky, 'second', 'log_lines')} new lines")
        for summary in summaries:
            if summary:
                print(f"  inkyfs index: {summary}")
    rat = entry["tools"].get("ratarmount") or {}
    if dig(rat, "index_files", "text"):
        print(f"  ratarmount: {rat['command']}\n  ratarmount: {rat['index_files']['text']}")
