"""The command line (`scripts/bench --help`) and the run: which cases, cleanup on Ctrl-C, the JSON."""

import argparse
import json
import os
import subprocess
import re
import shutil
import signal
import time
from pathlib import Path

from . import mounts
from .comics import bench_inkyfs, bench_peer
from .common import DEFAULT_INKYFS, DEFAULT_WORK, READ_CHUNK, log
from .measure import measure_floor
from .mounts import ACTIVE_MOUNTS, TOOLS, build_ceiling, unmount
from .pages import ensure_library
from .convert import bench_convert
from .cbz_view import bench_cbz
from .pdf import bench_pdf
from .procs import become_subreaper, proc_children, proc_cmdline, stop_pid
from .report import print_report
from .resume import bench_resume
from .scale import bench_library_scale
from .serve import SERVE_DEFAULT_COMICS, bench_serve
from .summary import issue_summary, print_summary
from .vault import bench_vault
from .versus_folders import bench_library_size
from .views import bench_metadata_views, print_metadata_views


DESCRIPTION = """Benchmark inkyfs page reads through the kernel, next to other FUSE archive mounters.
A benchmark, not a test: it prints numbers and exits 0 unless it cannot run at all."""

EPILOG = """examples:
  scripts/bench                       full run: 400-page comics (stored, deflated, TAR, solid 7z), the PDF
                                      case, the vault case, then the library-scale case (1,000 small comics)
  scripts/bench --quick               the solid comic has 100 pages instead of 400, the library 500 comics
  scripts/bench --json out.json       also write every number (and every raw latency) as JSON
  scripts/bench --only comics         only the per-comic page reads (also: --only vault, library, pdf, convert, cbz)
  scripts/bench --only resume         page M of the solid CB7 after a remount (the pages kept on disk), beside
                                      7z decoding page M alone
  scripts/bench --only cbz            only the CBZ rows: --as cbz reads beside the folder view, stat of every
                                      CBZ of 20,000 comics, one cover on one core, ls -l of a series without covers
  scripts/bench --library-scale       only the library-scale case (= --only library)
  scripts/bench --library-scale 20000 only the extracted-tree case: 20,000 small CBZ comics listed by inkyfs beside
                                      the same tree extracted to plain folders: index, cold and warm
                                      listings, daemon RSS, exit time, each against its target
  scripts/bench --only serve          only inkyfs serve beside nginx on 2,000 small CBZ comics: OPDS-PSE pages/s
                                      (wrk) and time to first byte (curl), uncached and cached; OPDS feeds cold
                                      and warm; the server's memory. Not in the full run.
  scripts/bench --serve-scale 100000  the same on 100,000 comics (= --only serve; the library of --library-scale N)
  scripts/bench --skip-library        leave the library-scale case out (--skip-vault, --skip-pdf: those)

It builds nothing: build the binary first with
  swift build -c release --static-swift-stdlib --product inkyfs --scratch-path .build-bench
  swift build -c release --static-swift-stdlib --product inkyfs-worker --scratch-path .build-bench
  swift build -c release --static-swift-stdlib --product inkyfs-serve --scratch-path .build-bench   (--only serve)
or pass --inkyfs PATH. --only serve also needs curl, and wrk and nginx for its pages/s rows and its nginx
column (Debian: apt-get install curl wrk nginx; a missing one is said and its rows skipped). Test data is generated once into --work (bench-out/); --library-scale N drops the
kernel's caches for its cold rows (root). What every number means and how it is taken: docs/bench.md."""


def library_size(text):
    """20000, 20,000, 20_000 or 20k: a number of comics."""
    match = re.fullmatch(r"(\d+)([kK]?)", text.replace(",", "").replace("_", ""))
    if not match or int(match.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"not a number of comics: {text!r} (e.g. 20000 or 100k)")
    return int(match.group(1)) * (1000 if match.group(2) else 1)


def parse_args():
    parser = argparse.ArgumentParser(description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="cache and scratch directory (default: bench-out/)")
    parser.add_argument("--quick", action="store_true",
                        help="100-page solid comic instead of 400; 500 comics instead of 1,000 in the library-scale case")
    parser.add_argument("--json", type=Path, help="also write every number to this file")
    parser.add_argument("--inkyfs", type=Path, default=DEFAULT_INKYFS, help="the binary (default: .build-bench/release/inkyfs)")
    parser.add_argument("--inkyfs-args", default="", help="extra `inkyfs mount` options, e.g. '--prefetch 8 --workers 2' (the serve case: "
                             "extra `inkyfs serve` options, e.g. '--cache-size 16M')")
    parser.add_argument("--think", type=float, default=0.030, help="seconds between pages in the think-time run")
    parser.add_argument("--peer-timeout", type=float, default=120.0, help="seconds a peer's sequential run may take")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of: " + ", ".join(TOOLS))
    parser.add_argument("--comics", default="", help="comma-separated subset of comic names, e.g. stored-40,solid-400")
    parser.add_argument("--only", choices=["comics", "vault", "library", "pdf", "convert", "cbz", "serve", "resume"],
                        help="run only the per-comic page reads (comics), the vault case (vault), the library-scale "
                             "case (library), the PDF case (pdf), page conversion (convert), comics as CBZ "
                             "files and covers (cbz), resuming the solid comic after a remount (resume), or inkyfs serve beside nginx "
                             "(serve: only this way, not in the full run)")
    parser.add_argument("--serve-scale", type=library_size, metavar="N",
                        help=f"comics in the serve case (default {SERVE_DEFAULT_COMICS:,}; implies --only serve): "
                             "inkyfs serve beside nginx on N small CBZ comics and their pages extracted to folders")
    parser.add_argument("--library-scale", nargs="?", const=0, type=library_size, metavar="N",
                        help="without N: run only the library-scale case (= --only library); with N (e.g. 20000 or "
                             "100k): run only the extracted-tree case instead, N small CBZ comics through inkyfs beside the "
                             "same tree extracted to folders")
    parser.add_argument("--metadata-views", type=library_size, metavar="N",
                        help="run only the metadata-views case: N tagged CBZ comics, `inkyfs index` with metadata (comics/s), "
                             "then warm `ls` of By Series/ and of one series' folder (ms)")
    parser.add_argument("--skip-library", action="store_true", help="leave the library-scale case out")
    parser.add_argument("--skip-vault", action="store_true", help="leave the vault case out")
    parser.add_argument("--skip-pdf", action="store_true", help="leave the PDF case out")
    parser.add_argument("--skip-convert", action="store_true", help="leave the page-conversion case out")
    parser.add_argument("--skip-cbz", action="store_true", help="leave the CBZ-files-and-covers case out")
    parser.add_argument("--skip-resume", action="store_true", help="leave the resume-after-a-remount case out")
    parser.add_argument("--runs", type=int, default=3, help="fresh mounts per measurement (the tables show medians)")
    parser.add_argument("--slow-run", type=float, default=60.0,
                        help="a measurement run longer than this many seconds is not repeated")
    parser.add_argument("--library-comics", type=int,
                        help="comics in the library-scale case (default 1,000; 500 with --quick)")
    parser.add_argument("--vault-solid", action="store_true",
                        help="the vault case also reads the solid CB7 through Vault/ (and plain); slow: use --quick")
    parser.add_argument("--vault-runs", type=int, default=3,
                        help="fresh mounts per comic and variant in the vault case (the table shows medians)")
    args = parser.parse_args()
    if args.library_scale is not None and args.only not in (None, "library"):
        parser.error("--library-scale runs only the library-scale case (= --only library)")
    if args.serve_scale is not None:
        if args.only not in (None, "serve") or args.library_scale is not None or args.metadata_views:
            parser.error("--serve-scale N runs only the serve case (= --only serve)")
        args.only = "serve"
    args.library_size = args.library_scale or None
    if args.library_size and (args.only or args.skip_library or args.library_comics is not None):
        parser.error("--library-scale N runs only the extracted-tree case, of N comics: without --only, --skip-library "
                     "or --library-comics")
    only = "library" if args.library_scale is not None else args.only
    skipped = {case for case, skip in (("library", args.skip_library), ("vault", args.skip_vault), ("pdf", args.skip_pdf),
                                           ("convert", args.skip_convert), ("cbz", args.skip_cbz),
                                           ("resume", args.skip_resume)) if skip}
    if only in skipped:
        parser.error(f"--only {only} and --skip-{only} leave nothing to run")
    if args.vault_runs < 1 or args.runs < 1:
        parser.error("--runs and --vault-runs must be at least 1")
    if args.library_comics is None:
        args.library_comics = 500 if args.quick else 1000
    cases = {only} if only else {"comics", "vault", "library", "pdf", "convert", "cbz", "resume"} - skipped
    if args.library_size:
        cases = {"size"}
    args.run_size = "size" in cases
    args.run_comics, args.run_vault, args.run_library = ("comics" in cases, "vault" in cases, "library" in cases)
    args.run_pdf = "pdf" in cases
    args.run_convert = "convert" in cases
    args.run_cbz = "cbz" in cases
    args.run_serve = "serve" in cases
    args.run_resume = "resume" in cases
    args.work = args.work.resolve()
    args.inkyfs_args = args.inkyfs_args.split()
    args.tools = [t for t in args.tools.split(",") if t]
    unknown = set(args.tools) - set(TOOLS)
    if unknown:
        parser.error(f"unknown tools: {', '.join(sorted(unknown))}")
    if ("inkyfs" in args.tools or args.run_vault or args.run_serve or args.run_pdf or args.run_convert or args.run_cbz or args.run_resume) and not os.access(args.inkyfs, os.X_OK):
        parser.error(f"{args.inkyfs} not found: swift build -c release --static-swift-stdlib --product inkyfs --scratch-path .build-bench")
    # A build from before the worker executable (one binary, `inkyfs __worker`) still benches: to
    # compare before and after. A build that has the split needs its worker beside it.
    worker = args.inkyfs.parent / "inkyfs-worker"
    split = os.access(args.inkyfs, os.X_OK) and subprocess.run([str(args.inkyfs), "__worker", "--help"], capture_output=True).returncode != 0
    if split and not os.access(worker, os.X_OK):
        parser.error(f"{worker} not found: swift build -c release --static-swift-stdlib --product inkyfs-worker --scratch-path .build-bench")
    # Likewise the server: a build that has its own (`inkyfs serve` becomes inkyfs-serve) needs it beside.
    server = args.inkyfs.parent / "inkyfs-serve"
    if args.run_serve and not os.access(server, os.X_OK) and b"INKYFS_SERVE" in args.inkyfs.read_bytes():
        parser.error(f"{server} not found: swift build -c release --static-swift-stdlib --product inkyfs-serve --scratch-path .build-bench")
    for tool in ("fusermount3", "7z"):
        if not shutil.which(tool):
            parser.error(f"needs {tool} (Debian: apt-get install fuse3 p7zip-full)")
    return args


def interrupted(signum, frame):
    raise KeyboardInterrupt  # SIGTERM cleans up like Ctrl-C


def main():
    args = parse_args()
    if args.metadata_views:
        args.work.mkdir(parents=True, exist_ok=True)
        os.environ["XDG_STATE_HOME"] = str(args.work / "state")
        result = bench_metadata_views(args)
        print_metadata_views(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
        return
    signal.signal(signal.SIGTERM, interrupted)
    become_subreaper()
    os.environ["XDG_STATE_HOME"] = str(args.work / "state")   # inkyfs daemon logs land in the work dir
    runtime = args.work / "run"             # inkyfs control sockets (vault unlock/lock): private, in the work dir
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    runtime.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    (args.work / "logs").mkdir(parents=True, exist_ok=True)
    mounts.CEILING_BINARY = build_ceiling(args.work) if "ceiling" in args.tools else None
    library, comics = ensure_library(args.work, args.quick) if args.run_comics or args.run_vault or args.run_resume else (None, [])
    if args.comics:
        comics = [c for c in comics if c.stem in args.comics.split(",")]

    started = time.perf_counter()
    results = {"config": {"quick": args.quick, "think_ms": args.think * 1000, "inkyfs": str(args.inkyfs),
                          "inkyfs_args": args.inkyfs_args, "library": str(library) if library else None,
                          "read_chunk": READ_CHUNK, "peer_timeout_s": args.peer_timeout,
                          "vault_runs": args.vault_runs if args.run_vault else None,
                          "library_scale_comics": args.library_comics if args.run_library else None,
                          "runs": args.runs, "slow_run_s": args.slow_run,
                          "load_at_start": os.getloadavg(), "cpus": os.cpu_count()},
               "comics": {}, "vault": None, "library_scale": None, "pdf": None, "convert": None, "cbz": None, "serve": None,
               "resume": None, "notes": []}
    notes = results["notes"]
    try:
        for comic in comics if args.run_comics else []:
            entry = {"archive": str(comic.path), "format": comic.fmt, "pages": comic.pages,
                     "page_bytes": comic.page_bytes, "archive_bytes": comic.path.stat().st_size,
                     "floor": {}, "tools": {}}
            results["comics"][comic.stem] = entry
            entry["floor"] = measure_floor(comic)
            for tool in TOOLS:
                if tool not in args.tools:
                    continue
                entry["tools"][tool] = (bench_inkyfs(args, library, comic, notes) if tool == "inkyfs"
                                        else bench_peer(args, tool, comic, notes))
        if args.run_pdf:
            results["pdf"] = {}
            bench_pdf(args, results["pdf"], notes)
        if args.run_convert:
            results["convert"] = {}
            bench_convert(args, results["convert"], notes)
        if args.run_cbz:
            results["cbz"] = {}
            bench_cbz(args, results["cbz"], notes)
        if args.run_resume:
            results["resume"] = {}
            bench_resume(args, results["resume"], comics, notes)
        if args.run_vault:
            results["vault"] = {}
            bench_vault(args, results["vault"], library, comics, notes)
        if args.run_library:
            results["library_scale"] = {"tools": {}}
            bench_library_scale(args, results["library_scale"], notes)
        if args.run_serve:
            results["serve"] = {}
            bench_serve(args, results["serve"], notes)
        if args.run_size:
            results["config"]["library_size_comics"] = args.library_size
            results["library_size"] = {}
            bench_library_size(args, results["library_size"], notes)
    except KeyboardInterrupt:
        notes.append("interrupted: the numbers below are partial")
        log("bench: interrupted, cleaning up")
    finally:
        for mountpoint in list(ACTIVE_MOUNTS):
            unmount(mountpoint)
        for pid in proc_children(os.getpid()):   # anything reparented to us and still there
            command = " ".join(proc_cmdline(pid))[:80]
            if stop_pid(pid, grace=5.0):
                notes.append(f"process {pid} ({command}) was left behind; killed")

    results["seconds"] = time.perf_counter() - started
    results["config"]["load_at_end"] = os.getloadavg()
    results["summary"] = issue_summary(args, comics, results)
    inkyfs_logs = sorted((args.work / "state" / "inkyfs").glob("*.log"))
    results["inkyfs_logs"] = [str(p) for p in inkyfs_logs]
    print_report(comics, results, args.think * 1000)
    print_summary(results)
    load = results["config"]
    print(f"\nMeasured in {results['seconds']:.0f} s on {load['cpus']} CPUs; load average at start "
          f"{' '.join(f'{x:.2f}' for x in load['load_at_start'])}, at end {' '.join(f'{x:.2f}' for x in load['load_at_end'])}"
          f"\ninkyfs logs: {', '.join(map(str, inkyfs_logs)) or 'none'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"JSON: {args.json}")
