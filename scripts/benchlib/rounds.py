"""The extracted-tree case's two ratios (first mount + cold listing, and the warm index's fresh-mount listing, each
against the extracted folders) measured in interleaved rounds.

On this VM the folders' own warm listing moves between about 1.3 and 2.3 s from one minute to the
next, and one pair of runs decided "met" or not by that alone. Each round measures the folders and
inkyfs (and the FUSE ceiling, for the warm row) one right after the other, so a drift in the
machine's speed meets both; the report gives the median of each and the median of the rounds'
ratios, which is what the targets are checked against, and every round's figures beneath.
"""

import shutil
import statistics

from .scale import count_files


def cold_round(lib, fresh_mount, state, drop_caches, timeout, notes):
    """Caches dropped, the folders listed; caches dropped again, a fresh state, inkyfs mounted and listed."""
    out = {"dropped": drop_caches(3, notes)}
    out["folders"] = count_files(lib.folders, timeout)
    shutil.rmtree(state, ignore_errors=True)
    drop_caches(3, notes)
    with fresh_mount() as m:
        listing = count_files(m.mountpoint, timeout)
    out["inkyfs"] = {**listing, "mount_ms": m.mount_seconds * 1000, "total_ms": m.mount_seconds * 1000 + listing["list_ms"]}
    return out


def warm_round(lib, warm_mount, ceiling_mount, timeout):
    """The folders listed (warm), then a fresh inkyfs mount on the indexed state, then a fresh ceiling mount
    (`ceiling_mount`, None without one), each unmounted right after its listing with the way out timed.
    Both trees are listed once unmeasured first: a cold round, or the warm mount's drop_caches 2, left
    their inodes out of the kernel's cache, and a half-cold folders listing took 2.6-3.3 s, not 1.3-2.3."""
    count_files(lib.folders, timeout)
    count_files(lib.path, timeout)
    out = {"folders": count_files(lib.folders, timeout)}
    with warm_mount() as m:
        out["inkyfs"] = count_files(m.mountpoint, timeout)
    out["inkyfs"].update(exit_times(m))
    if ceiling_mount is not None:
        with ceiling_mount() as m:
            out["ceiling"] = count_files(m.mountpoint, timeout)
        out["ceiling"].update(exit_times(m))
    return out


def exit_times(m):
    """fusermount3 -u until the daemon and its workers have exited, and until fusermount3 returned
    (a mount timed by `ExitTiming`)."""
    if m.exit_seconds is None:
        return {"exit_ms": None}
    return {"exit_ms": m.exit_seconds * 1000, "umount_ms": (m.released - m.release_started) * 1000}


def exit_summary(rounds):
    """{inkyfs, ceiling: median ms; ratio: median of the rounds' ratios; rounds} of the warm rounds that timed
    both ways out: a single unmount moves by about 5 ms from one to the next, as much as the ceiling takes."""
    pairs = [(r["inkyfs"]["exit_ms"], r["ceiling"]["exit_ms"]) for r in rounds
             if "error" not in r and (r.get("inkyfs") or {}).get("exit_ms") and (r.get("ceiling") or {}).get("exit_ms")]
    if not pairs:
        return None
    return {"rounds": len(pairs), "inkyfs": statistics.median(a for a, _ in pairs),
            "ceiling": statistics.median(b for _, b in pairs), "ratio": statistics.median(a / b for a, b in pairs)}


def measured(r, inkyfs_ms):
    """Whether round `r` timed both the folders and inkyfs."""
    return "error" not in r and inkyfs_ms(r) is not None and bool(r["folders"].get("list_ms"))


def summary(rounds, inkyfs_ms):
    """{inkyfs, folders, ceiling: median seconds; ratio, ceiling_ratio: median of the rounds' ratios} of
    rounds that measured both; `inkyfs_ms` picks inkyfs's figure of a round."""
    good = [r for r in rounds if measured(r, inkyfs_ms)]
    if not good:
        return None
    seconds = lambda values: statistics.median(values) / 1000 if values else None
    out = {"rounds": len(good), "inkyfs": seconds([inkyfs_ms(r) for r in good]),
           "folders": seconds([r["folders"]["list_ms"] for r in good]),
           "ratio": statistics.median(inkyfs_ms(r) / r["folders"]["list_ms"] for r in good)}
    ceilings = [r for r in good if (r.get("ceiling") or {}).get("list_ms")]
    if ceilings:
        out["ceiling"] = seconds([r["ceiling"]["list_ms"] for r in ceilings])
        out["ceiling_ratio"] = statistics.median(r["ceiling"]["list_ms"] / r["folders"]["list_ms"] for r in ceilings)
    return out


def round_lines(label, rounds, inkyfs_ms, with_ceiling):
    """One line per round: the folders, inkyfs (and the ceiling), and the ratio."""
    lines = []
    for n, r in enumerate(rounds, 1):
        if not measured(r, inkyfs_ms):
            lines.append(f"    {label} round {n}: {r.get('error', 'incomplete')}")
            continue
        folders, inky = r["folders"]["list_ms"] / 1000, inkyfs_ms(r) / 1000
        ceiling = (r.get("ceiling") or {}).get("list_ms")
        exits = [(r.get(who) or {}).get("exit_ms") for who in ("inkyfs", "ceiling")]
        lines.append(f"    {label} round {n}: folders {folders:.2f} s, inkyfs {inky:.2f} s ({inky / folders:.2f}x)"
                     + (f", ceiling {ceiling / 1000:.2f} s ({ceiling / 1000 / folders:.2f}x)" if with_ceiling and ceiling else "")
                     + (f"; way out {exits[0]:.1f} ms, the ceiling's {exits[1]:.1f} ms" if with_ceiling and all(exits) else ""))
    return lines
