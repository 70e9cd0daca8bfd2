"""`--library-scale N`: N small CBZ comics listed whole through inkyfs, beside the same tree
extracted to plain folders on the same disk, in one run, with the ratios against their targets.

Each measurement runs once (at 100,000 comics a cold listing alone takes minutes). Cold means
`echo 3 > /proc/sys/vm/drop_caches` right before (page cache, dentries and inodes: root only). The
inkyfs mounts here run without the 20 ms RSS sampler, so nothing but the listing shares the cores;
the daemon's VmHWM and VmRSS are read from /proc/PID/status at the points the rows name.
"""

import os
import shutil
import subprocess
import time

from .cbz_library import comic_files, comic_place, ensure_cbz_library
from .common import MB, MIB, log
from .measure import read_whole, run_guarded
from .mounts import ACTIVE_MOUNTS, TREE_CEILING_SOURCE, InkyfsMount, TreeCeilingMount, build_ceiling, is_mounted, unmount
from .listing_cache import measure_views, print_views_report, with_cpu
from .page_drops import proactive_reclaim
from .procs import proc_alive, proc_children, proc_memory
from .rounds import cold_round, exit_summary, exit_times, round_lines, summary, warm_round
from .scale import SCALE_INKYFS_TIMEOUT, count_files, time_index
from .scale_library import warm_library
from .tables import dig, fmt, print_table

LATER_SECONDS = 11.0          # past the kernel's 10 s entry/attribute timeout of the old core
READ_COMICS = 50
EXIT_WAIT = 10.0              # seconds the daemon may take to go after `fusermount3 -u`
# The targets: inkyfs / the extracted folders at most this much, and absolute bounds
TARGET_COLD, TARGET_WARM, TARGET_AGAIN = 2.0, 1.5, 1.2
TARGET_INDEX_PER_S, TARGET_EXIT_MS = 2000, 500
TARGET_EXIT_CEILING = 1.1    # the way out against the ceiling's, median of the warm rounds' ratios


def rss_target_mib(comics):
    """96 MiB at 20,000 comics, 128 MiB at 100,000 (no other size has a target: above 20,000, 128)."""
    return 96 if comics <= 20_000 else 128


def drop_caches(level, notes):
    """`sync; echo LEVEL > /proc/sys/vm/drop_caches` (1 page cache, 2 dentries and inodes, 3 both)."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write(f"{level}\n")
        return True
    except OSError as error:
        message = f"cannot drop the kernel's caches ({error.strerror}; root only): the cold rows are not cold"
        if message not in notes:
            notes.append(message)
        return False


class ExitTiming:
    """Unmounted with plain `fusermount3 -u`, timed until the server process and its workers have
    exited: mixed into inkyfs's mount and the FUSE ceiling's, so the exit row has the floor beside it.

    The server is watched while fusermount3 runs, not after: the kernel aborts the FUSE connection
    (the daemon reads ENODEV and exits) before umount(2) evicts the inodes it kept, which for a
    listed 20,000-comic tree takes most of a second after the daemon is gone."""

    sample = False

    def __init__(self, *args):
        super().__init__(*args)
        self.release_started = None
        self.released = None
        self.exit_seconds = None

    def release(self):
        if not is_mounted(self.mountpoint):      # the mount failed: nothing to time
            ACTIVE_MOUNTS.discard(str(self.mountpoint))
            return
        watched = [self.server_pid, *proc_children(self.server_pid)] if self.server_pid else []
        self.release_started = time.perf_counter()
        unmounting = subprocess.Popen(["fusermount3", "-u", str(self.mountpoint)], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
        deadline = self.release_started + EXIT_WAIT
        while time.perf_counter() < deadline:
            now = time.perf_counter()
            if self.released is None and unmounting.poll() is not None:
                self.released = now
            if self.exit_seconds is None and watched and not any(proc_alive(pid) for pid in watched):
                self.exit_seconds = now - self.release_started
            if self.released is not None and (self.exit_seconds is not None or not watched):
                break
            time.sleep(0.001)
        if self.released is None:
            unmounting.wait()
            self.released = time.perf_counter()
        if unmounting.returncode != 0:
            self.notes.append(f"fusermount3 -u {self.mountpoint} exited {unmounting.returncode}: "
                              f"{unmounting.stderr.read().strip()[:200]}; unmounted lazily")
            unmount(self.mountpoint)
        ACTIVE_MOUNTS.discard(str(self.mountpoint))

    def stop(self):
        if self.server_pid and self.release_started is not None and self.exit_seconds is None:
            deadline = self.release_started + EXIT_WAIT
            while proc_alive(self.server_pid) and time.perf_counter() < deadline:
                time.sleep(0.002)
            if not proc_alive(self.server_pid):
                self.exit_seconds = time.perf_counter() - self.release_started
        super().stop()


class ExitTimedMount(ExitTiming, InkyfsMount):
    """inkyfs, unmount timed."""


class ExitTimedCeilingMount(ExitTiming, TreeCeilingMount):
    """The FUSE ceiling, unmount timed: what umount(2) costs any FUSE filesystem holding as many inodes."""


def daemon_memory(mount):
    rss, hwm = proc_memory(mount.server_pid)
    return {"hwm_mib": hwm / MIB, "rss_mib": rss / MIB}


def read_comics(mount, lib):
    """Every page of READ_COMICS comics spread over the library, listed then read in order."""
    picks = sorted({k * lib.comics // READ_COMICS for k in range(min(READ_COMICS, lib.comics))})
    started, pages, total, wrong = time.perf_counter(), 0, 0, []
    for index in picks:
        folder = mount.mountpoint.joinpath(*comic_place(index))
        files = sorted(folder.iterdir())
        if len(files) != comic_files(index):
            wrong.append(f"{folder.relative_to(mount.mountpoint)}: {len(files)} files, expected {comic_files(index)}")
        for page in files:
            total += read_whole(page)[0]
            pages += 1
    if wrong:
        mount.notes.append(f"reading {len(picks)} comics: {'; '.join(wrong[:3])}")
    return {"comics": len(picks), "pages": pages, "bytes": total, "seconds": time.perf_counter() - started}


def measure_first(new_mount, timeout):
    """Fresh state, caches dropped before: mount, then `ls -lRA` of everything (cold index and cache)."""
    with new_mount() as m:
        listing = count_files(m.mountpoint, timeout)
        memory = daemon_memory(m)
    return {"mount_ms": m.mount_seconds * 1000, "listing": listing, "memory": memory, **exit_times(m)}


def measure_second(new_mount, lib, timeout, notes):
    """A fresh mount on the indexed state: three listings (now, right after, 11 s later), 50 comics
    read, then drop_caches 2 (the kernel forgets its inodes) and one more listing."""
    out = {}
    with new_mount() as m:
        out["mount_ms"] = m.mount_seconds * 1000
        out["warm"] = with_cpu(m, lambda: count_files(m.mountpoint, timeout))
        out["again"] = with_cpu(m, lambda: count_files(m.mountpoint, timeout))
        time.sleep(LATER_SECONDS)
        out["later"] = with_cpu(m, lambda: count_files(m.mountpoint, timeout))
        out["read"] = read_comics(m, lib)
        out["memory_after_read"] = daemon_memory(m)
        out["dropped"] = drop_caches(2, notes)
        out["after_drop"] = count_files(m.mountpoint, timeout)
        out["memory_after_drop"] = daemon_memory(m)
    out.update(exit_times(m))
    return out


def measure_ceiling(binary, lib, work, timeout, notes):
    """The extracted tree through the listings' FUSE ceiling (bench-ceiling-tree.c, everything in its memory):
    caches dropped, mount + ls -lRA; then a fresh mount: ls -lRA, and again right away."""
    mountpoint, log_path = work / "mnt" / "ceiling-tree", work / "ceiling-tree.log"
    out = {"dropped": drop_caches(3, notes)}
    with TreeCeilingMount(binary, lib.folders, mountpoint, log_path, notes) as m:
        out["mount_ms"] = m.mount_seconds * 1000
        out["cold"] = count_files(m.mountpoint, timeout)
    with ExitTimedCeilingMount(binary, lib.folders, mountpoint, log_path, notes) as m:
        out["warm"] = count_files(m.mountpoint, timeout)
        out["again"] = count_files(m.mountpoint, timeout)
    out.update(exit_times(m))
    # What the device readers are worth here: the same fresh listing with libfuse reading the device.
    with TreeCeilingMount(binary, lib.folders, mountpoint, log_path, notes, plain_reads=True) as m:
        out["warm_plain_reads"] = count_files(m.mountpoint, timeout)
    return out


def check_files(label, listing, expected, notes):
    if not isinstance(listing, dict) or "files" not in listing:
        return
    if listing["timed_out"]:
        notes.append(f"{label}: listing stopped at the timeout after {listing['files']:,} files")
    elif listing["files"] != expected:
        notes.append(f"{label}: listed {listing['files']:,} files, expected {expected:,}")
    if listing.get("find_errors"):
        notes.append(f"{label}: ls said: {' | '.join(listing['find_errors'])[:300]}")


def bench_library_size(args, entry, notes):
    lib = ensure_cbz_library(args.work, args.library_size)
    entry["library"] = lib.to_json()
    timeout = max(SCALE_INKYFS_TIMEOUT, lib.comics / 100)
    states = args.work / "size-state"
    shutil.rmtree(states, ignore_errors=True)
    mountpoint = args.work / "mnt" / "inkyfs-size"
    # The same tree as the folders: no folder.jpg/.directory (covers have their own cost: --only cbz),
    # no metadata views (--metadata-views: By Series/ and Recently Added/ are links the folders do not have).
    extra = [*args.inkyfs_args, "--state", str(states / "mount"), "--no-continue", "--no-covers", "--views", "none"]

    def new_mount():
        return ExitTimedMount(args.inkyfs, lib.path, mountpoint, extra, notes)

    folders = entry["folders"] = {}
    log(f"bench: {lib.comics:,} comics extracted to folders: ls -lRA cold (caches dropped), then warm")
    folders["dropped"] = drop_caches(3, notes)
    folders["cold"] = count_files(lib.folders, timeout)
    folders["warm"] = count_files(lib.folders, timeout)
    for run in ("cold", "warm"):
        check_files(f"folders {run} ls -lRA", folders[run], lib.pages, notes)

    binary = build_ceiling(args.work, TREE_CEILING_SOURCE)
    if binary is None:
        notes.append("no FUSE ceiling beside the folders: needs cc and libfuse3-dev (scripts/benchlib/bench-ceiling-tree.c)")
    else:
        log("bench: the same folders through the FUSE ceiling (a tree held in memory): ls -lRA cold, fresh, again")
        ceiling = entry["ceiling"] = run_guarded("FUSE ceiling", notes, measure_ceiling, binary, lib, args.work, timeout, notes)
        for run in ("cold", "warm", "again", "warm_plain_reads"):
            check_files(f"FUSE ceiling {run} ls -lRA", ceiling.get(run), lib.pages, notes)

    ink = entry["inkyfs"] = {}
    log(f"bench: inkyfs index of {lib.comics:,} comics (the library read once first: inkyfs's time, not the disk's)")
    warm_library(lib.path)
    ink["index"] = run_guarded("inkyfs index", notes, time_index, args.inkyfs, lib.path, states / "index", timeout)
    log("bench: inkyfs first mount (fresh state, caches dropped) + ls -lRA")
    ink["dropped"] = drop_caches(3, notes)
    ink["first"] = run_guarded("inkyfs first mount", notes, measure_first, new_mount, timeout)
    check_files("inkyfs first mount ls -lRA", ink["first"].get("listing"), lib.pages, notes)
    log(f"bench: inkyfs second mount (warm index): ls -lRA x 2, again {LATER_SECONDS:.0f} s later, "
        f"{READ_COMICS} comics read, drop_caches 2 + ls -lRA")
    ink["second"] = run_guarded("inkyfs second mount", notes, measure_second, new_mount, lib, timeout, notes)
    for run in ("warm", "again", "later", "after_drop"):
        check_files(f"inkyfs second mount ls -lRA ({run})", ink["second"].get(run), lib.pages, notes)
    # The default mount (views and Continue Reading/, so not ro: rm there reaches the daemon), then the
    # same read-only in the kernel, which keeps folders' access times: what each costs on its own.
    log("bench: inkyfs with its views on (fresh mount, warm index, no covers): ls -lRA x 3 with the daemon's CPU, "
        "as mounted by default, then --read-only")
    views_extra = [*args.inkyfs_args, "--state", str(states / "mount"), "--no-covers"]
    entry["proactive_reclaim"] = proactive_reclaim()
    for key, more in (("views", []), ("views_ro", ["--read-only"])):
        entry[key] = run_guarded(f"inkyfs {key}", notes, measure_views,
                                 lambda: ExitTimedMount(args.inkyfs, lib.path, mountpoint, views_extra + more, notes), timeout)
        for run in ("first", "second", "third"):
            check_files(f"inkyfs {key} ls -lRA ({run})", entry[key].get(run), lib.pages, notes)

    log(f"bench: the two ratio rows again, {args.runs} interleaved rounds: folders then inkyfs, cold (caches dropped, "
        f"a fresh state) and warm (a fresh mount on the index, then the ceiling), the warm ones first")
    cold_state = states / "cold-rounds"
    cold_extra = [*args.inkyfs_args, "--state", str(cold_state), "--no-continue", "--no-covers", "--views", "none"]

    def fresh_mount():
        return ExitTimedMount(args.inkyfs, lib.path, mountpoint, cold_extra, notes)
    ceiling_mount = None if binary is None else lambda: ExitTimedCeilingMount(
        binary, lib.folders, args.work / "mnt" / "ceiling-tree", args.work / "ceiling-tree.log", notes)
    rounds = entry["rounds"] = {"cold": [], "warm": []}
    for n in range(args.runs):
        rounds["warm"].append(run_guarded(f"warm round {n + 1}", notes, warm_round, lib, new_mount, ceiling_mount, timeout))
    for n in range(args.runs):
        rounds["cold"].append(run_guarded(f"cold round {n + 1}", notes, cold_round, lib, fresh_mount, cold_state, drop_caches, timeout, notes))
    for kind in ("cold", "warm"):
        for n, result in enumerate(rounds[kind], 1):
            for who in ("folders", "inkyfs", "ceiling"):
                check_files(f"{kind} round {n}: {who} ls -lRA", result.get(who), lib.pages, notes)


def print_size_report(entry):
    lib = entry.get("library")
    if lib is None:
        return
    print(f"\n== library scale: {lib['comics']:,} small CBZ comics ({lib['pages']:,} pages, {lib['series']:,} series, "
          f"{lib['bytes'] / MB:,.0f} MB) vs the same tree extracted to folders\n"
          f"   on the same disk: CBZ {(lib['disk_bytes'] or 0) / MB:,.0f} MB, folders {(lib['folder_disk_bytes'] or 0) / MB:,.0f} MB "
          f"on disk; cold = drop_caches 3 first; the two ratio rows are medians of interleaved rounds, the rest one run each")
    ink, folders, ceiling = entry.get("inkyfs") or {}, entry.get("folders") or {}, entry.get("ceiling") or {}
    first, second = ink.get("first") or {}, ink.get("second") or {}
    seconds = lambda ms: None if ms is None else ms / 1000
    rounds = entry.get("rounds") or {}
    cold_ms = lambda r: (r.get("inkyfs") or {}).get("total_ms")
    warm_ms = lambda r: (r.get("inkyfs") or {}).get("list_ms")
    cold, warm = summary(rounds.get("cold", []), cold_ms), summary(rounds.get("warm", []), warm_ms)
    cold_folders = cold["folders"] if cold else seconds(dig(folders, "cold", "list_ms"))
    warm_folders = warm["folders"] if warm else seconds(dig(folders, "warm", "list_ms"))
    rows = []

    def row(label, inky, inky_text, plain, target_text, limit, higher=False, fuse=None, ratio=None, fuse_ratio=None):
        """inky (a number compared with limit, or ratio'ed to plain when plain is given); fuse: the FUSE ceiling's.
        `ratio`, `fuse_ratio`: the ratios when they are not the figures' (the median of rounds' ratios)."""
        ratio = ratio if ratio is not None else inky / plain if inky is not None and plain else None
        fuse_ratio = fuse_ratio if fuse_ratio is not None else fuse / plain if fuse is not None and plain else None
        value = ratio if plain is not None else inky
        met = None if value is None or limit is None else (value >= limit if higher else value <= limit)
        rows.append([label, inky_text if inky_text is not None else fmt(inky, 2) or "—",
                     fmt(plain, 2) or "—", fmt(fuse, 2) or "—", f"{ratio:.2f}x" if ratio is not None else "—",
                     f"{fuse_ratio:.2f}x" if fuse_ratio is not None else "—", target_text,
                     {True: "yes", False: "NO", None: "?"}[met]])

    index = ink.get("index") or {}
    rate = lib["comics"] / index["seconds"] if index.get("seconds") and "error" not in index else None
    row("inkyfs index, cold state (s; comics/s)", rate,
        "error" if "error" in index else f"{index['seconds']:.2f} ({rate:,.0f}/s)" if rate else None,
        None, f">= {TARGET_INDEX_PER_S:,} comics/s", TARGET_INDEX_PER_S, higher=True)
    mount_s, cold_s = seconds(first.get("mount_ms")), seconds(dig(first, "listing", "list_ms"))
    total = mount_s + cold_s if mount_s is not None and cold_s is not None else None
    ceiling_mount, ceiling_cold = seconds(ceiling.get("mount_ms")), seconds(dig(ceiling, "cold", "list_ms"))
    ceiling_first = ceiling_mount + ceiling_cold if ceiling_mount is not None and ceiling_cold is not None else None
    if cold:
        row(f"first mount + ls -lRA, cold (s; median of {cold['rounds']})", cold["inkyfs"], None, cold_folders,
            f"<= {TARGET_COLD}x folders cold", TARGET_COLD, fuse=ceiling_first, ratio=cold["ratio"])
    else:
        row("first mount + ls -lRA, cold (s)", total,
            f"{mount_s:.2f} + {cold_s:.2f}" if total is not None else "error" if "error" in first else None,
            cold_folders, f"<= {TARGET_COLD}x folders cold", TARGET_COLD, fuse=ceiling_first)
    if warm:
        row(f"warm index: ls -lRA, fresh mount (s; median of {warm['rounds']})", warm["inkyfs"], None, warm_folders,
            f"<= {TARGET_WARM}x folders warm", TARGET_WARM, fuse=warm.get("ceiling"), ratio=warm["ratio"],
            fuse_ratio=warm.get("ceiling_ratio"))
    else:
        row("warm index: ls -lRA, fresh mount (s)", seconds(dig(second, "warm", "list_ms")), None, warm_folders,
            f"<= {TARGET_WARM}x folders warm", TARGET_WARM, fuse=seconds(dig(ceiling, "warm", "list_ms")))
    row("second ls -lRA, same mount, right away (s)", seconds(dig(second, "again", "list_ms")), None, warm_folders,
        f"<= {TARGET_AGAIN}x folders warm", TARGET_AGAIN, fuse=seconds(dig(ceiling, "again", "list_ms")))
    row(f"same, {LATER_SECONDS:.0f} s later (s)", seconds(dig(second, "later", "list_ms")), None, warm_folders,
        f"<= {TARGET_AGAIN}x folders warm", TARGET_AGAIN)
    limit = rss_target_mib(lib["comics"])
    for label, memory, with_rss in [
            ("daemon VmHWM: first mount + ls -lRA (MiB)", dig(first, "memory"), False),
            (f"daemon VmHWM: warm mount, 3 x ls -lRA, {READ_COMICS} comics read (MiB)", dig(second, "memory_after_read"), False),
            ("  then drop_caches 2 + ls -lRA: VmHWM (VmRSS) (MiB)", dig(second, "memory_after_drop"), True)]:
        hwm = dig(memory, "hwm_mib")
        text = None if hwm is None else f"{hwm:.1f} ({memory['rss_mib']:.1f})" if with_rss else f"{hwm:.1f}"
        row(label, hwm, text, None, f"<= {limit} MiB", limit)
    for label, run in [("fusermount3 -u -> daemon and workers exited, first mount (ms)", first),
                       ("fusermount3 -u -> daemon and workers exited, warm mount (ms)", second)]:
        exit_ms = run.get("exit_ms")
        text = fmt(exit_ms, 0) if exit_ms is not None else "error" if "error" in run else "> 10 s" if run else None
        if exit_ms is not None:
            text += f" (fusermount3 returned at {fmt(run['umount_ms'], 0)})"
        row(label, exit_ms, text, None,
            f"<= {TARGET_EXIT_MS} ms", TARGET_EXIT_MS, fuse=ceiling.get("exit_ms") if run is second else None)
    way_out = exit_summary(rounds.get("warm", []))
    if way_out:
        row(f"  the same in the warm rounds: inkyfs/ceiling (ms; median of {way_out['rounds']})", way_out["ratio"],
            f"{way_out['inkyfs']:.1f} ({way_out['ratio']:.2f}x)", None, f"<= {TARGET_EXIT_CEILING}x ceiling", TARGET_EXIT_CEILING,
            fuse=way_out["ceiling"])
    print_table("", ["", "inkyfs", "folders", "FUSE ceiling", "inkyfs/folders", "ceiling/folders", "target", "met?"], rows)
    print_views_report(entry, warm_folders, limit)
    lines = round_lines("cold", rounds.get("cold", []), cold_ms, False) + round_lines("warm", rounds.get("warm", []), warm_ms, True)
    if lines:
        print("  the ratio rows' rounds (each a ratio of its own; the row gives their median; inkyfs cold = mount + listing):")
        print("\n".join(lines))
        print(f"  single runs before them: first mount {mount_s or 0:.2f} + {cold_s or 0:.2f} s (folders cold "
              f"{seconds(dig(folders, 'cold', 'list_ms')) or 0:.2f} s), warm fresh mount {seconds(dig(second, 'warm', 'list_ms')) or 0:.2f} s "
              f"(folders warm {seconds(dig(folders, 'warm', 'list_ms')) or 0:.2f} s)")
    print("  FUSE ceiling: the folders served from memory by scripts/benchlib/bench-ceiling-tree.c (no work per request, the kernel "
          "tuned as for inkyfs, the device read by inkyfs's device readers); cold = caches dropped before its mount (it "
          "never reads the disk while listing)")
    plain = seconds(dig(ceiling, "warm_plain_reads", "list_ms"))
    if plain is not None:
        print(f"  FUSE ceiling with libfuse's own blocking reads of the device (--plain-reads): fresh mount ls -lRA "
              f"{plain:.2f} s" + (f", {plain / warm_folders:.2f}x folders warm" if warm_folders else ""))
    read = second.get("read") or {}
    counts = [dig(first, "listing", "files"), *[dig(second, r, "files") for r in ("warm", "again", "later", "after_drop")]]
    print(f"  files listed: inkyfs {' / '.join(fmt(c) or '—' for c in counts)} (first; warm, again, later, after "
          f"drop_caches 2), folders {fmt(dig(folders, 'cold', 'files')) or '—'} / {fmt(dig(folders, 'warm', 'files')) or '—'}, "
          f"expected {lib['pages']:,}")
    if read:
        print(f"  {read['comics']} comics read through inkyfs: {read['pages']:,} pages, {read['bytes'] / MB:.1f} MB "
              f"in {read['seconds']:.2f} s; the library was written in {lib['seconds']:.0f} s")
    if index.get("summary"):
        print(f"  inkyfs index: {index['summary']}")
