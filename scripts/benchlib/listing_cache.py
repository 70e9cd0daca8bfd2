"""`--library-scale N`: whether an unchanged library's second and third `ls -lRA` are answered by
the kernel's cache, with the views on (the mount's default: By Series/, Story Arcs/, Recently
Added/, ...; covers off, so the files are the folders' files), and what the daemon spends on each.

A listing the kernel answers costs the daemon next to nothing; one it forgot costs what the first
did. Each listing is timed with the daemon's CPU (utime + stime from /proc) beside it, and the
daemon's VmHWM is read after the three, against the memory bound for the library's size.
"""

import os
import time

from .common import MIB
from .page_drops import PageDrops, proactive_reclaim
from .procs import proc_cpu_seconds, proc_memory
from .scale import count_files
from .tables import fmt, print_table

VIEWS_WAIT = 60.0             # seconds the views may take to appear after the mount (made in the background)
TARGET_AGAIN, TARGET_CPU_SHARE = 1.2, 0.05


def with_cpu(mount, listing):
    """listing() with the daemon's CPU seconds spent meanwhile, as "cpu_s" in its result."""
    before = proc_cpu_seconds(mount.server_pid, reaped=False)
    out = listing()
    out["cpu_s"] = proc_cpu_seconds(mount.server_pid, reaped=False) - before
    return out


def measure_views(new_mount, timeout):
    """A fresh mount on the indexed state with the views on: once By Series/ is there, three listings."""
    out = {}
    with new_mount() as m:
        out["mount_ms"] = m.mount_seconds * 1000
        started = time.perf_counter()
        # The lookup waits for the view's first tree (bounded): the views are made after the mount.
        while not os.path.isdir(m.mountpoint / "By Series") and time.perf_counter() - started < VIEWS_WAIT:
            time.sleep(0.05)
        out["views_ms"] = (time.perf_counter() - started) * 1000
        for run in ("first", "second", "third"):
            with PageDrops(m.mountpoint) as drops:
                out[run] = with_cpu(m, lambda: count_files(m.mountpoint, timeout))
            out[run]["pages_dropped"] = drops.counts
        rss, hwm = proc_memory(m.server_pid)
        out["memory"] = {"rss_mib": rss / MIB, "hwm_mib": hwm / MIB}
    return out


def print_views_report(entry, warm_folders, rss_target):
    """The views-on rows: each listing against the folders' warm listing, the CPU against the first's, and
    the FUSE ceiling's own listing beside each (its fresh mount's first, then again right after)."""
    views = entry.get("views") or {}
    ceiling = entry.get("ceiling") or {}
    ceiling_s = [(ceiling.get(k) or {}).get("list_ms") for k in ("warm", "again", "again")]
    second = (entry.get("inkyfs") or {}).get("second") or {}
    rows = []

    def row(label, run, first_cpu, ceiling_ms):
        seconds = run.get("list_ms", 0) / 1000 if "list_ms" in run else None
        cpu = run.get("cpu_s")
        ratio = seconds / warm_folders if seconds is not None and warm_folders else None
        share = cpu / first_cpu if cpu is not None and first_cpu else None
        met = None if ratio is None or share is None else ratio <= TARGET_AGAIN and share <= TARGET_CPU_SHARE
        drops = run.get("pages_dropped")
        rows.append([label, fmt(seconds, 2) or "—", fmt(cpu, 2) or "—",
                     f"{fmt(drops['reclaimed'])} / {fmt(drops['invalidated'])}" if drops else "—",
                     fmt(ceiling_ms / 1000, 2) if ceiling_ms is not None else "—", fmt(warm_folders, 2) or "—",
                     f"{ratio:.2f}x" if ratio is not None else "—", f"{share * 100:.1f} %" if share is not None else "—",
                     {True: "yes", False: "NO", None: "?"}[met]])

    views_ro = entry.get("views_ro") or {}
    for label, runs in [("views off (--views none --no-continue: ro)", [second.get(k) or {} for k in ("warm", "again", "later")]),
                        ("views on, the default mount (not ro)", [views.get(k) or {} for k in ("first", "second", "third")]),
                        ("views on, --read-only", [views_ro.get(k) or {} for k in ("first", "second", "third")])]:
        if not any(runs):
            continue
        first_cpu = runs[0].get("cpu_s")
        row(f"{label}: first ls -lRA of a fresh mount", runs[0], None, ceiling_s[0])
        row(f"{label}: second, right after", runs[1], first_cpu, ceiling_s[1])
        row(f"{label}: third" + (" (11 s later)" if label.startswith("views off") else ""), runs[2], first_cpu, ceiling_s[2])
    if not rows:
        return
    print_table("\n  the kernel's cache: an unchanged library listed again (warm index; daemon CPU = utime + stime)",
                ["", "ls -lRA (s)", "daemon CPU (s)", "cached pages reclaimed / invalidated", "FUSE ceiling (s)", "folders warm (s)", "inkyfs/folders",
                 "CPU / first's", f"<= {TARGET_AGAIN}x and <= {TARGET_CPU_SHARE * 100:.0f} %"], rows)
    print("  cached pages: the mount's listings and link texts the kernel dropped during that listing, by its reclaim "
          "or by an invalidation (the daemon's, as comics are listed; the next listing asks for them again)")
    reclaim = entry.get("proactive_reclaim")
    if reclaim:
        print(f"  {reclaim}")
    for label, run in (("views on", views), ("views on, --read-only", views_ro)):
        hwm = (run.get("memory") or {}).get("hwm_mib")
        if hwm is not None:
            print(f"  {label}: daemon VmHWM after the three listings {hwm:.1f} MiB (bound {rss_target} MiB: "
                  f"{'met' if hwm <= rss_target else 'NOT met'}); the views appeared {run.get('views_ms', 0) / 1000:.1f} s after the mount")
