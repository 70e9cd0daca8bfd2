"""The per-comic case: inkyfs and every installed peer reading one big comic, and its table's rows."""

import tempfile
from pathlib import Path

from .common import log
from .measure import measure_jump, measure_ls_then_page, measure_sequential, measure_think, repeated
from .mounts import CeilingMount, InkyfsMount, PEERS, PeerMount, peer_binary
from .tables import dig, fmt, pair, peak_memory, seq_value, workers_rss


def bench_inkyfs(args, library, comic, notes):
    def new_mount():
        # A fresh, empty state folder per mount: every measurement starts with a cold index,
        # so "open comic" really parses the archive (the library-scale case measures warm ones).
        # The comic file itself is the library, as the peers mount one archive: its pages are the root.
        # A fresh cache too: the pages an earlier mount kept to resume the solid comic would serve its cold reads.
        state = Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-"))
        m = InkyfsMount(args.inkyfs, comic.path, args.work / "mnt" / "inkyfs",
                        [*args.inkyfs_args, "--state", str(state), "--no-continue"], notes, cache=state / "cache")
        m.evict = [comic.path]
        m.scratch = state
        return m
    def new_library_mount():
        # The same comic in the library folder, as a reader mounts one: a library makes folder
        # covers, so its workers are not a one-file mount's (only a cover's worker loads libvips).
        state = Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-"))
        m = InkyfsMount(args.inkyfs, library, args.work / "mnt" / "inkyfs",
                        [*args.inkyfs_args, "--state", str(state), "--no-continue"], notes, cache=state / "cache")
        m.evict = [comic.path]
        m.scratch = state
        return m
    middle = comic.pages // 2
    label = f"inkyfs {comic.stem}"
    log(f"bench: {label}: {args.runs} x cold sequential, think {args.think * 1000:.0f} ms, jump to {middle}, "
        f"ls -l then {middle}")
    again = lambda function, *more: repeated(args.runs, args.slow_run, label, notes, function, new_mount, comic, *more)
    return {
        "sequential": again(measure_sequential, float("inf")),
        "think": again(measure_think, args.think),
        "jump": again(measure_jump, middle),
        "ls_then_page": again(measure_ls_then_page, middle),
        "ls_then_page_library": repeated(args.runs, args.slow_run, label + " in a library", notes,
                                         measure_ls_then_page, new_library_mount, comic, middle),
    }


def bench_peer(args, tool, comic, notes):
    formats, _, install = PEERS[tool]
    if not peer_binary(tool):
        return {"status": "n/a (not installed)", "install": install}
    if comic.fmt not in formats:
        return {"status": f"n/a ({comic.fmt})"}

    def new_mount():
        if tool == "ceiling":
            return CeilingMount(comic, args.work / "mnt" / tool, args.work / "logs" / f"{tool}.log", notes)
        m = PeerMount(tool, comic.path, args.work / "mnt" / tool, args.work / "logs" / f"{tool}.log", notes)
        m.evict = [comic.path]
        return m
    label = f"{tool} {comic.stem}"
    log(f"bench: {label}: {args.runs} x cold sequential, jump to {comic.pages // 2}, ls -l then {comic.pages // 2}")
    again = lambda function, *more: repeated(args.runs, args.slow_run, label, notes, function, new_mount, comic, *more)
    return {
        "sequential": again(measure_sequential, args.peer_timeout),
        "jump": again(measure_jump, comic.pages // 2),
        "ls_then_page": again(measure_ls_then_page, comic.pages // 2),
    }


def table_rows(comic, think_ms):
    middle = comic.pages // 2
    return [
        ("mount returns (ms)", lambda r: fmt(dig(r, "sequential", "mount_ms"), 0)),
        ("open comic: list dir (ms)", lambda r: fmt(dig(r, "sequential", "list_ms"), 1)),
        ("cold sequential (MB/s)", seq_value("mb_per_s", 1)),
        ("cold sequential (pages/s)", seq_value("pages_per_s", 1)),
        ("next page, no think p50/p99 (ms)", pair("sequential", "p50_ms", "p99_ms", "next_page")),
        (f"next page, {think_ms:.0f} ms think p50/p99 (ms)", pair("think", "p50_ms", "p99_ms", "next_page")),
        (f"jump to page {middle} cold (ms)", lambda r: fmt(dig(r, "jump", "jump_ms"), 1)),
        (f"then page {middle + 1} (ms)", lambda r: fmt(dig(r, "jump", "next_ms"), 1)),
        ("mount start -> page 1 read (ms)", lambda r: fmt(dig(r, "sequential", "mount_to_first_page_ms"), 0)),
        (f"mount -> ls -l -> page {middle} (ms)", lambda r: fmt(dig(r, "ls_then_page", "total_ms"), 0)),
        (f"  then page {middle + 1} (ms)", lambda r: fmt(dig(r, "ls_then_page", "next_ms"), 1)),
        (f"  the comic in a library folder: mount -> ls -l -> page {middle} (ms)",
         lambda r: fmt(dig(r, "ls_then_page_library", "total_ms"), 0)),
        ("  the same: ls -l of the comic (ms)", lambda r: fmt(dig(r, "ls_then_page_library", "ls_ms"), 1)),
        ("mount + cold sequential read (s)", lambda r: fmt(dig(r, "sequential", "mount_plus_read_s"), 2)),
        ("server peak RSS, VmHWM (MiB)", lambda r: fmt(peak_memory(r, "server_hwm_mib"), 1)),
        ("CPU server + workers, seq. run: mount life / reading (s)",
         lambda r: None if dig(r, "sequential", "memory", "cpu_s") is None else
         f"{fmt(dig(r, 'sequential', 'memory', 'cpu_s'), 2)} / {fmt(dig(r, 'sequential', 'read_cpu_s'), 2) or '—'}"),
        ("workers peak RSS sum / max one (MiB)", workers_rss),
    ]
