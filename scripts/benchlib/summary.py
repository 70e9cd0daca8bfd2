"""The summary printed last: one row per measurement, inkyfs beside the best peer."""

import re

from .common import MIB
from .tables import dig, fmt, peak_memory, print_table


SUMMARY_PEERS = ["fuse-zip", "archivemount", "ratarmount", "fuse-archive", "gocryptfs"]


def cache_budget_mib(inkyfs_args):
    """The --cache-size the inkyfs mounts ran with (default 256M), in MiB."""
    for flag, value in zip(inkyfs_args, inkyfs_args[1:]):
        if flag == "--cache-size":
            number, unit = re.fullmatch(r"(\d+)([KMG]?)i?B?", value.upper()).groups()
            return int(number) * {"": 1 / MIB, "K": 1 / 1024, "M": 1, "G": 1024}[unit]
    return 256


def issue_summary(args, comics, results):
    """One row per measurement of the summary: {label, unit, higher (better), values {tool: number or
    text}, best_peer, ratio, target, met, rss_mib, cpu_s}."""
    by_kind = {c.kind: c for c in comics}
    rows = []

    def number(group, key, *path):
        """The value, or (None, why) when there is none to compare."""
        if group is None:
            return None, "—"
        if "status" in group:
            return None, group["status"]
        if "error" in group:
            timeout = re.search(r"did not mount within (\d+) s", group["error"])
            return None, f"> {timeout.group(1)} s (no mount)" if timeout else "error"
        value = dig(group, *path, key)
        if value is None:
            return None, "—"
        if group.get("complete") is False and key in ("mount_plus_read_s", "seconds", "mb_per_s", "pages_per_s"):
            return None, f"> {value:,.2f} (timeout)"     # a total of a run cut short; its first page is real
        return value, None

    def add(label, unit, higher, values, target_text, threshold, inky_group, peers=None):
        numbers = {t: v for t, v in values.items() if isinstance(v, (int, float))}
        peer_numbers = {t: v for t, v in numbers.items() if t in (peers or SUMMARY_PEERS)}
        best = (max if higher else min)(peer_numbers, key=peer_numbers.get) if peer_numbers else None
        inky = numbers.get("inkyfs")
        if threshold == "best":
            threshold = peer_numbers.get(best)
        met = None if inky is None or threshold is None else (inky >= threshold if higher else inky <= threshold)
        rows.append({"label": label, "unit": unit, "higher": higher, "values": values, "best_peer": best,
                     "ratio": inky / peer_numbers[best] if inky is not None and best and peer_numbers[best] else None,
                     "target": target_text, "threshold": threshold, "met": met,
                     "rss_mib": dig(inky_group, "memory", "server_hwm_mib") if inky_group else None,
                     "cpu_s": dig(inky_group, "memory", "cpu_s") if inky_group else None})

    def comic_row(label, kind, group, key, unit, target_text, threshold, scale=1.0):
        comic = by_kind.get(kind)
        entry = (results["comics"] or {}).get(comic.stem) if comic else None
        if entry is None:
            return
        values = {}
        for tool in ["inkyfs", *SUMMARY_PEERS, "ceiling"]:
            result = entry["tools"].get(tool)
            if result is None:
                continue
            if "status" in result:
                values[tool] = result["status"]
                continue
            value, why = number(result.get(group), key)
            values[tool] = why if value is None else value * scale
        if callable(threshold):
            threshold = threshold(entry, values)
        add(label.replace("M+1", str(comic.pages // 2 + 1)).replace("page M", f"page {comic.pages // 2}"), unit,
            False, values, target_text, threshold, dig(entry, "tools", "inkyfs", group))

    floor_bsdtar = lambda entry, values: (None if not dig(entry, "floor", "bsdtar -xOf", "seconds") else
                                          1.2 * entry["floor"]["bsdtar -xOf"]["seconds"])
    ceiling = lambda entry, values: 1.2 * values["ceiling"] if isinstance(values.get("ceiling"), (int, float)) else None
    comic_row("mount -> ls -l -> read page M, stored CBZ", "stored", "ls_then_page", "total_ms", "ms", "<= best peer", "best")
    comic_row("mount -> ls -l -> read page M, solid CB7", "solid", "ls_then_page", "total_ms", "ms", "<= best peer", "best")
    comic_row("page M+1 right after page M, solid CB7", "solid", "ls_then_page", "next_ms", "ms", "<= 5 ms", 5.0)
    comic_row("mount + first page, solid CB7", "solid", "sequential", "mount_to_first_page_ms", "ms", "<= 500 ms", 500.0)
    comic_row("mount + cold sequential read, solid CB7", "solid", "sequential", "mount_plus_read_s", "s",
              "<= best peer", "best")
    comic_row("mount + cold sequential read, deflated CBZ", "deflated", "sequential", "mount_plus_read_s", "s",
              "<= 1.2 x bsdtar -xOf", floor_bsdtar)
    comic_row("cold sequential read, stored CBZ", "stored", "sequential", "seconds", "s", "<= 1.2 x ceiling", ceiling)
    comic_row("mount + cold sequential read, CBT", "tar", "sequential", "mount_plus_read_s", "s", "<= best peer", "best")
    if "rar" in by_kind:
        comic_row("mount + cold sequential read, stored CBR", "rar", "sequential", "mount_plus_read_s", "s",
                  "<= best peer", "best")
    elif results["comics"]:
        rows.append({"label": "stored CBR rows", "note": "not measured: no `rar` on this machine (RAR cannot be "
                     "written by free tools), so no stored CBR could be made"})

    if results["comics"]:
        budget = cache_budget_mib(args.inkyfs_args)
        peaks = {}
        for entry in results["comics"].values():
            for tool, result in entry["tools"].items():
                peak = peak_memory(result, "server_hwm_mib") if "status" not in result else None
                if peak is not None:
                    peaks[tool] = max(peaks.get(tool, 0), peak)
        cpu = [dig(e, "tools", "inkyfs", "sequential", "memory", "cpu_s") for e in results["comics"].values()]
        add("daemon peak RSS (VmHWM), any comic row", "MiB", False, peaks, f"<= cache {budget:.0f} + 64 MiB",
            budget + 64, None)
        rows[-1]["rss_mib"] = peaks.get("inkyfs")

    scale = results.get("library_scale") or {}
    tools = scale.get("tools") or {}
    if tools:
        comics_n = dig(scale, "library", "comics")
        for label, run, key, target, threshold in [
            (f"library of {comics_n:,}: mount until ls answers", "first", "ls_answers_ms", "<= 200 ms", 200.0),
            (f"library: ls -lRA of all, cold, first mount, incl. mount", "first", "total_ms", "<= 1,500 ms", 1500.0),
            (f"library: same, second mount (warm index), incl. mount", "second", "total_ms", "<= 300 ms", 300.0),
        ]:
            values = {}
            for tool, result in tools.items():
                if "status" in result:
                    values[tool] = result["status"]
                    continue
                group = result.get(run) or {}
                value, why = number(group, key)
                values[tool] = why if value is None else value
                if "skipped" in group:
                    values[tool] = "skipped"
            add(label, "ms", False, values, target, threshold, dig(tools, "inkyfs", run), peers=["ratarmount"])

    vault = results.get("vault") or {}
    stored = by_kind.get("stored")
    summary = dig(vault, "comics", stored.stem, "summary") if stored else None
    if summary:
        inky, goc = summary.get("vault") or {}, summary.get("gocryptfs") or {}
        values = {"inkyfs": inky.get("mb_per_s"), "gocryptfs": goc.get("mb_per_s")}
        add("vault: streaming read of a stored CBZ (Vault/)", "MB/s", True, {k: v for k, v in values.items() if v},
            ">= 1.3 x gocryptfs", 1.3 * values["gocryptfs"] if values["gocryptfs"] else None, None)
        rows[-1].update(rss_mib=inky.get("server_hwm_mib"), cpu_s=None)
        unlock = dig(vault, "unlock", "listed_ms")
        values = {"inkyfs": unlock, "gocryptfs": goc.get("mount_ms")}
        add("vault: unlock until Vault/ lists (gocryptfs: mount, scrypt)", "ms", False,
            {k: v for k, v in values.items() if v}, "<= 200 ms", 200.0, None)
        values = {"inkyfs": inky.get("cpu_s_per_gb"), "gocryptfs": goc.get("cpu_s_per_gb")}
        add("vault: daemon CPU per GB read (server + workers)", "s", False,
            {k: v for k, v in values.items() if v}, "<= 0.8 x gocryptfs",
            0.8 * values["gocryptfs"] if values["gocryptfs"] else None, None)
    switch = dig(vault, "switch", "summary")
    if switch and switch.get("vault"):
        inky, goc = switch["vault"], switch.get("gocryptfs") or {}
        values = {"inkyfs": inky.get("p50_ms"), "gocryptfs": goc.get("p50_ms")}
        add("vault: switching two comics page by page (Vault/), per page p50", "ms", False,
            {k: v for k, v in values.items() if v is not None}, "no worker started", None, None)
        started = inky.get("workers_started")
        rows[-1]["met"] = None if started is None else started == 0
        rows[-1]["target"] = f"no worker started ({'?' if started is None else started})"
    return rows


def print_summary(results):
    rows = results.get("summary") or []
    if not rows:
        return
    shown = [t for t in ["inkyfs", *SUMMARY_PEERS, "ceiling"]
             if any(t in (r.get("values") or {}) for r in rows)]

    def show(value, unit):
        if not isinstance(value, (int, float)):
            return value
        return fmt(value, 2 if unit == "s" or value < 10 else 1 if value < 100 else 0)

    table = []
    for r in rows:
        if "note" in r:
            continue
        values = r["values"]
        table.append([f"{r['label']} ({r['unit']})", *[show(values.get(t, "—"), r["unit"]) or "—" for t in shown],
                      r["best_peer"] or "—", f"{r['ratio']:.2f}x" if r["ratio"] is not None else "—", r["target"],
                      {True: "yes", False: "NO", None: "?"}[r["met"]],
                      fmt(r["rss_mib"], 1) or "—", fmt(r["cpu_s"], 2) or "—"])
    print_table("\n== summary (medians; inkyfs / best peer: below 1 is faster for times, above 1 for MB/s)",
                ["row", *shown, "best peer", "inkyfs/best", "target", "met?", "inkyfs RSS MiB", "inkyfs CPU s (mount life)"], table)
    for r in rows:
        if "note" in r:
            print(f"  {r['label']}: {r['note']}")
