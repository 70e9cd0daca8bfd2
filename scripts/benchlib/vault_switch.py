"""The vault case's switching row: a reader going back and forth between two comics page by page
(page k of one, page k of the other, ...), through Vault/, a plain mount of the same archives and
gocryptfs. A vault comic is read by workers that each hold that one comic's key; what the row
shows is whether switching starts workers (the one-key rule needs none once each comic has one)."""

import dataclasses
import os
import shutil
import statistics
import tempfile
import time

from .common import SERIES, log
from .measure import percentile, read_whole, run_guarded
from .mounts import InkyfsMount
from .tables import fmt, print_table
from .vault_setup import VARIANTS, GocryptfsMount, VaultInkyfsMount, run_command

SWITCH_PAIRS = 30          # pages k of A and B, from the middle page on
SWITCH_SUFFIX = "-b"       # the second comic: a copy of the first under another name


def prepare_switch(args, setup, comic, notes):
    """A copy of `comic` under another name, added to the vault and beside the original in a
    library of its own (for the plain mounts); returns the two comics."""
    folder = setup.root / "switch-library" / SERIES
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / f"{comic.path.stem}{SWITCH_SUFFIX}{comic.path.suffix}"
    original = folder / comic.path.name
    if not original.exists():
        os.link(comic.path, original)
    shutil.copyfile(comic.path, copy)
    log(f"bench: vault: adding {copy.name} (a copy of {comic.path.name}) for the switching row")
    run_command([args.inkyfs, "vault", "add", copy, "--into", SERIES, "--keep", "--vault", setup.vault,
                 "--password-file", setup.password_file], timeout=1800)
    return comic, dataclasses.replace(comic, stem=copy.stem, path=copy)


def measure_switch(new_mount, first, second, start, pairs):
    """Fresh mount; list both comics; then page k of the first, page k of the second, for `pairs` k
    from `start`: each page's time, and the workers (inkyfs) started while switching."""
    with new_mount() as m:
        listed = [m.list_pages(first), m.list_pages(second)]
        # A worker a listing starts in the background (a comic's second, for decoding) is the
        # listing's, not the switching's: the sampler's next scans see it before counting starts.
        time.sleep(0.15)
        seen = set(m.sampler.children) if m.sampler else set()
        before = len(seen)
        latencies = []
        started = time.perf_counter()
        for k in range(start, start + pairs):
            for pages in listed:
                latencies.append(read_whole(pages[k])[1] * 1000)
        seconds = time.perf_counter() - started
        time.sleep(0.15)            # the sampler's next scan for new worker processes
        workers = len(m.sampler.children) - before if m.sampler else None
    return {"p50_ms": statistics.median(latencies), "p90_ms": percentile(latencies, 90), "max_ms": max(latencies),
            "seconds": seconds, "pages": len(latencies), "workers_started": workers, "samples_ms": latencies,
            "memory": m.memory}


def bench_vault_switch(args, entry, setup, comics, stored, notes, have_gocryptfs, extra):
    """Runs the switching row into entry["switch"]; `comics`: the vault case's deflated comic first."""
    deflated = next((c for c in comics if c.kind == "deflated"), None)
    if deflated is None:
        entry["switch"] = {"skipped": "the deflated CBZ was not selected"}
        return
    prepared = run_guarded("vault switch setup", notes, prepare_switch, args, setup, deflated, notes)
    if isinstance(prepared, dict):
        entry["switch"] = {"skipped": f"setup failed: {prepared['error'][:200]}"}
        return
    first, second = prepared
    mnt = args.work / "mnt"
    switch_library = setup.root / "switch-library"
    made = {
        "vault": lambda: VaultInkyfsMount(args.inkyfs, setup.empty, mnt / "inkyfs-vault", extra("vault"),
                                          setup.password_file, notes),
        "plain": lambda: InkyfsMount(args.inkyfs, switch_library, mnt / "inkyfs-plain", extra("plain"), notes,
                                     cache=tempfile.mkdtemp(prefix="plain-cache-", dir=setup.states)),
    }
    if have_gocryptfs:
        made["gocryptfs"] = lambda: GocryptfsMount(setup.cipher, mnt / "gocryptfs", setup.password_file,
                                                   args.work / "logs" / "gocryptfs.log", notes)
    evicted = {"vault": [setup.vault / "objects"], "plain": [first.path, second.path], "gocryptfs": [setup.cipher]}
    # gocryptfs holds each comic's pages once: its two comics are the deflated and the stored one's
    # folders (the same pages, two folders of files, as the two archives are for the others).
    pair = {"vault": (first, second), "plain": (first, second), "gocryptfs": (first, stored or second)}
    start = first.pages // 2
    # From the middle page on, as many pairs as the shorter comic holds (--quick's have 40 pages).
    pairs = min(SWITCH_PAIRS, min(c.pages for comics_read in pair.values() for c in comics_read) - start)
    result = entry["switch"] = {"comics": [first.stem, second.stem], "start": start + 1, "pairs": pairs,
                                "runs": {v: [] for v in made}, "summary": {}}
    for n in range(args.vault_runs):
        for variant, factory in made.items():
            def fresh(factory=factory, variant=variant):
                m = factory()
                m.evict = [p for folder in evicted[variant] for p in (folder.rglob("*") if folder.is_dir() else [folder])
                           if p.is_file()]
                return m
            log(f"bench: vault switching {VARIANTS[variant]}: pages {start + 1}-{start + pairs} of two comics, "
                f"alternating (run {n + 1}/{args.vault_runs})")
            result["runs"][variant].append(run_guarded(f"vault switch {variant}", notes, measure_switch, fresh,
                                                       *pair[variant], start, pairs))
    for variant, runs in result["runs"].items():
        good = [r for r in runs if "error" not in r]
        if good:
            result["summary"][variant] = {
                key: statistics.median(r[key] for r in good if r.get(key) is not None)
                for key in ("p50_ms", "p90_ms", "max_ms", "seconds") if any(r.get(key) is not None for r in good)}
            started = [r["workers_started"] for r in good if r.get("workers_started") is not None]
            result["summary"][variant]["workers_started"] = max(started) if started else None


def print_switch_table(entry):
    result = entry.get("switch")
    if not result or not result.get("summary"):
        if result and result.get("skipped"):
            print(f"\n  switching: skipped: {result['skipped']}")
        return
    summary = result["summary"]
    columns = [("per page p50 ms", "p50_ms", 1), ("p90 ms", "p90_ms", 1), ("slowest ms", "max_ms", 1),
               (f"{2 * result['pairs']} pages s", "seconds", 2)]
    rows = []
    for variant, label in VARIANTS.items():
        s = summary.get(variant)
        if s is None:
            continue
        workers = s.get("workers_started")
        rows.append([label, *[fmt(s.get(key), digits) or "—" for _, key, digits in columns],
                     "—" if workers is None else f"{workers} (most in a run)"])
    vault, goc = summary.get("vault"), summary.get("gocryptfs")
    if vault and goc:
        rows.append(["Vault/ ÷ gocryptfs", *[f"{vault[key] / goc[key]:.2f}x" if vault.get(key) and goc.get(key) else "—"
                                             for _, key, _ in columns], ""])
    print_table(f"\n  switching between {result['comics'][0]} and {result['comics'][1]} page by page (pages "
                f"{result['start']}-{result['start'] + result['pairs'] - 1} of each, alternating; gocryptfs: the deflated "
                f"and the stored comic's folders), fresh mount, both listed first",
                ["", *[name for name, _, _ in columns], "workers started"], rows)
