"""The vault case: comics read through Vault/ next to plain inkyfs mounts of the same archives and
gocryptfs holding their extracted pages; medians, ratios, a privacy check and its table."""

import shutil
import statistics
import subprocess
import tempfile

from .common import MB, SERIES, files_below, log
from .measure import LogWatch, measure_jump, measure_sequential, read_whole, run_guarded
from .mounts import InkyfsMount
from .scale_library import warm_library
from .tables import dig, fmt, print_table
from .vault_switch import bench_vault_switch, print_switch_table
from .vault_setup import (
    GOCRYPTFS_INSTALL, GOCRYPTFS_SCRYPTN, GocryptfsMount, VARIANTS, VAULT_KDF, VAULT_KINDS, VAULT_LEAK_MARKS,
    VAULT_NAME, VAULT_UNLOCK_RUNS, VaultInkyfsMount, prepare_gocryptfs, prepare_vault, vault_setup,
)


def measure_unlock(new_mount, runs):
    """One mount: `runs` times `inkyfs vault unlock` (until Vault/ lists), then `inkyfs vault lock`."""
    samples = []
    with new_mount() as m:
        for _ in range(runs):
            samples.append({**m.unlock_vault(), **m.lock_vault()})
    listed = [s["listed_ms"] for s in samples]
    return {"runs": samples, "listed_ms": statistics.median(listed), "listed_min_ms": min(listed),
            "listed_max_ms": max(listed), "command_ms": statistics.median(s["command_ms"] for s in samples),
            "lock_ms": statistics.median(s["lock_ms"] for s in samples),
            "gone_after_lock": all(s["gone_after_lock"] for s in samples)}


def median_of(results, *keys):
    values = [dig(r, *keys) for r in results if "error" not in r]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize_variant(runs, unlocks):
    """Medians over the runs of one variant of one comic (the peaks: the largest)."""
    sequential, jump = runs["sequential"], runs["jump"]
    done = [r for r in sequential + jump if "error" not in r]
    peak = lambda key: max((dig(r, "memory", key) or 0 for r in done), default=None)
    return {
        "runs": len(sequential), "failed": len(sequential + jump) - len(done),
        "complete": all(r.get("complete") for r in sequential if "error" not in r),
        "mount_ms": median_of(sequential + jump, "mount_ms"),
        "unlock_ms": statistics.median(u["listed_ms"] for u in unlocks) if unlocks else None,
        "list_ms": median_of(sequential, "list_ms"),
        "mb_per_s": median_of(sequential, "mb_per_s"),
        "pages_per_s": median_of(sequential, "pages_per_s"),
        "next_p50_ms": median_of(sequential, "next_page", "p50_ms"),
        "jump_ms": median_of(jump, "jump_ms"),
        "next_ms": median_of(jump, "next_ms"),
        "server_hwm_mib": peak("server_hwm_mib"),
        "workers_peak_sum_mib": peak("workers_peak_sum_mib"),
        # CPU of the server and its workers (gocryptfs: its process) per GB of pages read
        "cpu_s_per_gb": median_of([{"v": r["read_cpu_s"] / (r["bytes"] / 1e9)} for r in sequential
                                   if "error" not in r and r.get("read_cpu_s") is not None and r.get("bytes")], "v"),
    }


RATIO_KEYS = ("list_ms", "mb_per_s", "pages_per_s", "next_p50_ms", "jump_ms", "next_ms", "cpu_s_per_gb")


def summarize_comic(result):
    runs, summary = result["runs"], result["summary"]
    for variant in runs:
        if runs[variant]["sequential"]:
            summary[variant] = summarize_variant(runs[variant], result["unlocks"] if variant == "vault" else [])
    result["ratios"] = {"vault_over_plain": ratios(summary.get("vault"), summary.get("plain")),
                        "vault_over_gocryptfs": ratios(summary.get("vault"), summary.get("gocryptfs"))}


def ratios(a, b):
    """a / b for every measured key both have (MB/s: below 1 is slower; ms: above 1 is slower)."""
    if not a or not b:
        return None
    return {k: a[k] / b[k] if a.get(k) is not None and b.get(k) else None for k in RATIO_KEYS}


def leak_places(paths, marks):
    """The files under paths whose bytes hold any of marks."""
    found = []
    for path in paths:
        for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            data = file.read_bytes()
            if any(mark in data for mark in marks):
                found.append(str(file))
    return found


def check_vault_privacy(setup, comics, log_lines, notes):
    """Nothing of a vault comic's name or its pages' names in the vault folder, in the Vault/ mounts'
    state databases or in their daemon log (a folder of their own: their library is empty)."""
    marks = [c.stem.encode() for c in comics] + VAULT_LEAK_MARKS
    leaks = {"vault_folder": leak_places([setup.vault], marks),
             "vault_mount_states": leak_places(sorted(setup.states.glob("vault-*")), marks),
             "vault_mount_log_lines": [line for line in log_lines if any(m.decode() in line for m in marks)][:20]}
    for place, found in leaks.items():
        if found:
            notes.append(f"vault: a comic or page name appears in {place.replace('_', ' ')}: {found[0][:200]}")
    return leaks


def bench_vault(args, entry, library, comics, notes):
    comics = [c for c in comics if c.kind in VAULT_KINDS or (args.vault_solid and c.kind == "solid")]
    if not comics:
        entry["skipped"] = "none of the vault's comics (the stored and the deflated CBZ) was selected"
        return
    watch = LogWatch(args.work / "state" / "inkyfs")
    setup = vault_setup(args.work)
    entry.update(kdf=VAULT_KDF, runs=args.vault_runs, vault=str(setup.vault))
    entry["setup"] = run_guarded("vault setup", notes, prepare_vault, args, setup, comics, notes)
    if "error" in entry["setup"]:
        entry["skipped"] = f"making the inkyfs vault failed: {entry['setup']['error'][:200]}"
        return
    have_gocryptfs = shutil.which("gocryptfs") is not None
    if not have_gocryptfs:
        entry["gocryptfs"] = {"status": f"n/a ({GOCRYPTFS_INSTALL})"}
    else:
        version = subprocess.run(["gocryptfs", "-version"], capture_output=True, text=True).stdout.split(";")[0]
        prepared = run_guarded("gocryptfs setup", notes, prepare_gocryptfs, args, setup, comics, notes)
        have_gocryptfs = "error" not in prepared
        entry["gocryptfs"] = {"version": version.strip(), "scryptn": GOCRYPTFS_SCRYPTN, "cipher": str(setup.cipher),
                              "status": "ok" if have_gocryptfs else "error (setup failed)", **prepared}
    log("bench: vault: reading the archives, the vault and the gocryptfs cipher folder once (host page cache)")
    for comic in comics:
        read_whole(comic.path)
    for folder in (setup.vault, setup.cipher):
        warm_library(folder)

    mnt = args.work / "mnt"

    def extra(variant):
        # Both inkyfs variants get --vault and a fresh --state of their own; only Vault/ gets unlocked.
        state = tempfile.mkdtemp(prefix=f"{variant}-", dir=setup.states)
        return [*args.inkyfs_args, "--vault", str(setup.vault), "--state", state, "--no-continue"]

    def cold(factory, paths):
        def made():
            m = factory()
            m.evict = paths
            return m
        return made

    def factories(unlock_log):
        made = {
            "vault": lambda: VaultInkyfsMount(args.inkyfs, setup.empty, mnt / "inkyfs-vault", extra("vault"),
                                              setup.password_file, notes, unlock_log=unlock_log),
            "plain": lambda: InkyfsMount(args.inkyfs, library, mnt / "inkyfs-plain", extra("plain"), notes,
                                         cache=tempfile.mkdtemp(prefix="plain-cache-", dir=setup.states)),
            "gocryptfs": lambda: GocryptfsMount(setup.cipher, mnt / "gocryptfs", setup.password_file,
                                                args.work / "logs" / "gocryptfs.log", notes),
        }
        # Cold, like the other cases: what each variant reads is evicted before its mount.
        evicted = {"vault": files_below(setup.vault), "plain": [c.path for c in comics], "gocryptfs": files_below(setup.cipher)}
        return {v: cold(f, evicted[v]) for v, f in made.items() if v != "gocryptfs" or have_gocryptfs}

    log(f"bench: vault: {VAULT_UNLOCK_RUNS} x inkyfs vault unlock (until Vault/ lists) + lock on one mount")
    unlock_only = lambda: VaultInkyfsMount(args.inkyfs, setup.empty, mnt / "inkyfs-vault", extra("vault"),
                                           setup.password_file, notes, unlock=False)
    entry["unlock"] = unlock = run_guarded("inkyfs vault unlock", notes, measure_unlock, unlock_only, VAULT_UNLOCK_RUNS)
    if unlock.get("gone_after_lock") is False:
        notes.append(f"vault: {VAULT_NAME}/ still answered right after `inkyfs vault lock` returned")

    entry["comics"] = {}
    for comic in comics:
        middle, unlocks = comic.pages // 2, []
        mounts = factories(unlocks)
        runs = {v: {"sequential": [], "jump": []} for v in mounts}
        result = entry["comics"][comic.stem] = {
            "pages": comic.pages, "page_bytes": comic.page_bytes, "archive_bytes": comic.path.stat().st_size,
            "format": comic.fmt, "middle": middle, "summary": {}, "ratios": {}, "unlocks": unlocks, "runs": runs}
        for n in range(args.vault_runs):
            for variant, new_mount in mounts.items():     # interleaved, so drift hits every variant alike
                label = f"vault {comic.stem} {VARIANTS[variant]}"
                log(f"bench: {label}: cold sequential, jump to {middle} (run {n + 1}/{args.vault_runs})")
                # Once each mount is quiet: CPU per GB is the reads', not the workers a mount starts ahead.
                runs[variant]["sequential"].append(
                    run_guarded(label, notes, measure_sequential, new_mount, comic, float("inf"), True))
                runs[variant]["jump"].append(run_guarded(label, notes, measure_jump, new_mount, comic, middle))
                summarize_comic(result)          # after every run, so an interrupted run still reports

    stored = next((c for c in comics if c.kind == "stored"), None)
    bench_vault_switch(args, entry, setup, comics, stored, notes, have_gocryptfs, extra)

    lines = watch.new_lines()
    vault_lines = [line for line in lines if "inkyfs-vault" in line.split(":", 1)[0]]
    problems = [line for line in lines if LogWatch.PROBLEM.search(line)]
    entry["daemon_log"] = {"lines": len(lines), "vault_mount_lines": len(vault_lines),
                           "problem_lines": problems[:20], "vault_mount_sample": vault_lines[:10]}
    if problems:
        notes.append(f"vault: {len(problems)} daemon log lines look like problems, e.g. {problems[0][:200]}")
    entry["privacy"] = check_vault_privacy(setup, comics, vault_lines, notes)


def print_vault_report(comics, entry):
    if entry.get("skipped"):
        print(f"\n== vault: skipped: {entry['skipped']}")
        return
    if "setup" not in entry:
        print("\n== vault: interrupted while making the vault")
        return
    goc = entry.get("gocryptfs") or {"status": "not run (interrupted)"}
    goc_text = (f"{goc['version']} (scrypt N=2^{goc['scryptn']}) holding the extracted pages"
                if goc["status"] == "ok" else f"gocryptfs {goc['status']}")
    print(f"\n== vault: Vault/{SERIES}/<comic> of an inkyfs vault ({entry['kdf']}) vs the same archive on a plain "
          f"inkyfs mount\n   and {goc_text}; medians of {entry['runs']} fresh mounts each (fresh --state each); "
          f"unlock: on each fresh mount, until Vault/ lists")
    unlock, setup = entry.get("unlock") or {}, entry["setup"]
    if "error" in unlock:
        print(f"  unlock: error: {unlock['error'][:200]}")
    elif unlock:
        print(f"  inkyfs vault unlock -> Vault/ lists: {unlock['listed_ms']:,.0f} ms (median of {len(unlock['runs'])}, "
              f"{unlock['listed_min_ms']:,.0f}-{unlock['listed_max_ms']:,.0f}); the command returns after "
              f"{unlock['command_ms']:,.0f} ms; inkyfs vault lock {unlock['lock_ms']:,.0f} ms"
              f"{'' if unlock['gone_after_lock'] else ' (Vault/ still there after it!)'}")
    print(f"  inkyfs vault list, no mount (a new process: one key derivation + the manifest): "
          f"{setup['vault_list_ms']:,.0f} ms")
    print(f"  setup: inkyfs vault init {setup['vault_init_s']:.1f} s, vault add of {len(setup['comics'])} comics "
          f"{setup['vault_add_s']:.1f} s" + (f"; gocryptfs -init {goc['init_s']:.1f} s, 7z x into it {goc['copy_s']:.1f} s"
                                             if "copy_s" in goc else ""))

    def value(key, digits):
        return lambda s: fmt(s.get(key), digits)

    def ratio(key):
        return lambda r: None if r is None or r.get(key) is None else f"{r[key]:.2f}x"

    for comic in comics:
        result = (entry.get("comics") or {}).get(comic.stem)
        if not result or not result["summary"]:
            continue
        middle = result["middle"]
        columns = [
            ("mount ms", value("mount_ms", 0), None),
            ("unlock ms", value("unlock_ms", 0), None),
            ("list dir ms", value("list_ms", 1), ratio("list_ms")),
            ("cold seq MB/s", value("mb_per_s", 1), ratio("mb_per_s")),
            ("next p50 ms", value("next_p50_ms", 1), ratio("next_p50_ms")),
            (f"jump {middle} ms", value("jump_ms", 1), ratio("jump_ms")),
            (f"then {middle + 1} ms", value("next_ms", 1), ratio("next_ms")),
            ("CPU s/GB", value("cpu_s_per_gb", 2), ratio("cpu_s_per_gb")),
            ("RSS MiB server/workers", lambda s: None if s.get("server_hwm_mib") is None else
             f"{s['server_hwm_mib']:.1f} / {s['workers_peak_sum_mib']:.1f}" if s.get("workers_peak_sum_mib")
             else f"{s['server_hwm_mib']:.1f}", None),
        ]
        rows = []
        for variant, label in VARIANTS.items():
            s = result["summary"].get(variant)
            if s is None:
                rows.append([label, goc["status"] if variant == "gocryptfs" else "not run", *[""] * (len(columns) - 1)])
                continue
            if s["failed"]:
                label += f" ({s['failed']} failed)"
            elif not s["complete"]:
                label += " (incomplete)"
            rows.append([label, *[column(s) or "—" for _, column, _ in columns]])
        for key, label in (("vault_over_plain", "Vault/ ÷ plain"), ("vault_over_gocryptfs", "Vault/ ÷ gocryptfs")):
            r = result["ratios"].get(key)
            if r is not None:
                rows.append([label, *[(ratio_cell(r) or "—") if ratio_cell else "" for _, _, ratio_cell in columns]])
        title = (f"\n  {comic.path.name}: {comic.pages} pages, {comic.page_bytes / MB:.1f} MB of pages, "
                 f"archive {result['archive_bytes'] / MB:.1f} MB ({comic.fmt})")
        print_table(title, ["", *[name for name, _, _ in columns]], rows)
    print("  ratios: MB/s below 1, or ms and CPU s/GB above 1, mean Vault/ is slower or costs more; CPU s/GB: the server's"
          " and its workers' CPU from the listing to the last byte of a cold sequential read, per GB of pages")
    print_switch_table(entry)
    privacy = entry.get("privacy") or {}
    if privacy and not any(privacy.values()):
        print("  no comic or page name found in the vault folder, the Vault/ mounts' state or their daemon log")
