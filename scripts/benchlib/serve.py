"""`--only serve` (`--serve-scale N`): `inkyfs serve` on N small CBZ comics, beside nginx serving the
same pages extracted to folders on the same disk, in one run.

  pages      OPDS-PSE page requests per second (wrk) and time to first byte (curl), uncached (pages
             never asked for since the server started, the kernel's caches dropped before) and
             cached (a few pages asked for again and again); nginx gets the same pages as files
  catalog    the OPDS feeds a reader opens, 50 entries a page at most: the first request of each
             since the server started (cold) and the median of the next ones (warm)
  memory     the server's VmHWM and VmRSS (and its workers') after its start, the feeds and the pages

The library is `--library-scale N`'s (cbz_library.py), so `--work` shares it with that case; the
index is made once under WORK/serve-state-N and kept (delete the folder to index again).
"""

import random
import shutil
import subprocess
from dataclasses import dataclass
import urllib.parse

from .cbz_library import comic_pages, comic_place, ensure_cbz_library, page_name
from .common import SEED, log
from .http_load import Nginx, curl_times, find_tool, run_wrk, summarize
from .measure import run_guarded
from .scale import time_index
from .serve_process import InkyServe, ServeFailed
from .versus_folders import drop_caches

SERVE_DEFAULT_COMICS = 2000
FEED_RUNS = 20                 # warm requests of each feed (the median is shown)
TTFB_PAGES = 200               # pages whose time to first byte is taken, uncached then cached
CACHED_PAGES = 64              # the pages asked for again and again
UNCACHED_PAGES = 20_000        # at most, for wrk's two uncached runs together (fewer when the library has fewer)
WRK_CONNECTIONS, WRK_SECONDS = 16, 10
SERVE_SEED = SEED + 15          # the pages picked (cbz_library: SEED + 14)


def comic_path(index):
    publisher, series, issue = comic_place(index)
    return f"{publisher}/{series}/{issue}.cbz"


def quote(text):
    return urllib.parse.quote(text, safe="/")


def server_page(index, number):
    """The PSE URL of page `number` (from 1) of comic `index`: the stream link's template filled in."""
    return f"/opds/comic/page?path={quote(comic_path(index))}&page={number - 1}"


def nginx_page(index, number):
    return "/" + quote("/".join(comic_place(index)) + "/" + page_name(number))


def page_sets(comics):
    """Disjoint sets of (comic, page), comics in a seeded shuffle: TTFB uncached; two wrk uncached
    loads, one in reading order (each comic's pages in turn, as readers turn them) and one shuffled
    (every request another comic); cached."""
    rng = random.Random(SERVE_SEED)
    order = list(range(comics))
    rng.shuffle(order)
    ttfb = [(index, rng.randint(1, comic_pages(index)[0])) for index in order[:TTFB_PAGES]]
    cached = [(index, rng.randint(1, comic_pages(index)[0])) for index in order[TTFB_PAGES:TTFB_PAGES + CACHED_PAGES]]
    loads, taken = [[], []], TTFB_PAGES + CACHED_PAGES
    for load in loads:
        for index in order[taken:]:
            taken += 1
            load += [(index, number) for number in range(1, comic_pages(index)[0] + 1)]
            if len(load) >= UNCACHED_PAGES // 2:
                break
    rng.shuffle(loads[1])
    return {"ttfb": ttfb, "in_order": loads[0][:UNCACHED_PAGES // 2], "shuffled": loads[1][:UNCACHED_PAGES // 2],
            "cached": cached}


def feeds(comics):
    """(label, path) of the feeds timed: folders, a series' comics, views, a search."""
    series = (comics + 24) // 25
    last_series_page = (series + 49) // 50
    first = comic_place(0)
    return [("Folders (the library's top)", "/opds/folders"),
            ("a publisher's folder (40 series)", f"/opds/folders?path={quote(first[0])}"),
            ("a series' folder (25 comics)", f"/opds/folders?path={quote(first[0] + '/' + first[1])}"),
            ("Recently Added, page 1 (comics)", "/opds/view?kind=recent"),
            ("By Series, page 1", "/opds/view?kind=series"),
            (f"By Series, last page ({last_series_page})", f"/opds/view?kind=series&page={last_series_page}"),
            ("By Publisher, page 1", "/opds/view?kind=publishers"),
            ("search 'Series 0042' (comics)", "/opds/search?q=Series%200042")]


def measure_feeds(tools, server, comics, folder, cold=True):
    """Each feed's first request (cold: None when cold=False), then FEED_RUNS more (warm)."""
    out = {}
    for label, path in feeds(comics):
        url = server.base + path
        (folder / "feed.xml").unlink(missing_ok=True)
        first = curl_times(tools.curl, [url], folder, "feed-cold", keep=folder / "feed.xml")
        warm = curl_times(tools.curl, [url] * FEED_RUNS, folder, "feed-warm")
        body = (folder / "feed.xml").read_text(errors="replace") if (folder / "feed.xml").exists() else ""
        out[label] = {"path": path, "cold": first[0] if first and cold else None, "warm": summarize(warm),
                      "entries": body.count("<entry>") + body.count("<entry "), "bytes": len(body)}
    return out


def measure_pages(tools, base, urls, work, name, with_cpu):
    """TTFB of the uncached pages, wrk over the uncached load, then the cached set: warmed, its TTFB, wrk."""
    out = {}
    out["ttfb_uncached"] = summarize(curl_times(tools.curl, [base + u for u in urls["ttfb"]], work, f"{name}-ttfb-uncached"))
    for kind in ("in_order", "shuffled") if tools.wrk else ():
        out[f"wrk_{kind}"] = with_cpu(lambda: run_wrk(tools.wrk, base, urls[kind], work, f"{name}-{kind}",
                                                      WRK_CONNECTIONS, max(60, len(urls[kind]) // 20), repeat=False))
    cached = [base + u for u in urls["cached"]]
    curl_times(tools.curl, cached, work, f"{name}-warm-up")
    out["ttfb_cached"] = summarize(curl_times(tools.curl, (cached * (TTFB_PAGES // len(cached) + 1))[:TTFB_PAGES], work,
                                              f"{name}-ttfb-cached"))
    if tools.wrk:
        out["wrk_cached"] = with_cpu(lambda: run_wrk(tools.wrk, base, urls["cached"], work, f"{name}-cached",
                                                     WRK_CONNECTIONS, WRK_SECONDS, repeat=True))
    return out


@dataclass
class Tools:
    curl: str
    wrk: str
    nginx: str


def bench_serve(args, entry, notes):
    comics = args.serve_scale or SERVE_DEFAULT_COMICS
    tools = Tools(find_tool("curl"), find_tool("wrk"), find_tool("nginx"))
    entry["tools"] = vars(tools)
    entry["serve_args"] = args.inkyfs_args
    if not tools.curl:
        notes.append("serve: needs curl (Debian: apt-get install curl): nothing measured")
        return
    for tool, rows in (("wrk", "the requests-per-second rows"), ("nginx", "the nginx column")):
        if not entry["tools"][tool]:
            notes.append(f"serve: no {tool} (Debian: apt-get install {tool}): {rows} skipped")
    lib = ensure_cbz_library(args.work, comics)
    entry["library"] = lib.to_json()
    try:
        kept = kept_state(args, lib, entry)
    except (ServeFailed, OSError, subprocess.SubprocessError) as error:
        notes.append(f"serve: {error}")
        return
    sets = page_sets(lib.comics)
    work = args.work / "serve-run"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # A copy of the kept state for each run: no reading progress from an earlier run (the pages
    # asked for are recorded as read, and every feed reads the progress of the comics it shows).
    state = work / "state"
    state.mkdir()
    for part in kept.glob("state.sqlite*"):
        shutil.copy2(part, state / part.name)
    server_urls = {k: [server_page(*p) for p in v] for k, v in sets.items()}
    ink = entry["inkyfs"] = run_guarded("inkyfs serve", notes, measure_server, args, tools, lib, state, work, server_urls, notes)
    if tools.nginx:
        nginx_urls = {k: [nginx_page(*p) for p in v] for k, v in sets.items()}
        entry["nginx"] = run_guarded("nginx", notes, measure_nginx, tools, lib, work, nginx_urls, notes)
    for who in ("inkyfs", "nginx"):
        for kind, result in ((entry.get(who) or {}).get("pages") or {}).items():
            if isinstance(result, dict) and (result.get("bad_status") or result.get("socket_errors")):
                notes.append(f"serve: {who} {kind}: {result.get('bad_status')} answers not 200"
                             + (f", socket errors {result['socket_errors']}" if result.get("socket_errors") else ""))
    shutil.rmtree(state, ignore_errors=True)      # a copy of the index: hundreds of MB at 100,000 comics
    if isinstance(ink, dict) and ink.get("settle_s") is None and "error" not in ink:
        notes.append("serve: the server was still busy when the feeds were asked for (its background work not done)")


def kept_state(args, lib, entry):
    """WORK/serve-state-N: the library indexed, then served once until its background work is done
    (KOReader's digests of every comic are made at a server's first start, and kept in the index).
    Made once; the times of its making are in entry["index"] and entry["first_start"]."""
    kept = args.work / f"serve-state-{lib.comics}"
    if (kept / "prepared").exists():
        return kept
    shutil.rmtree(kept, ignore_errors=True)
    log(f"bench: inkyfs index of {lib.comics:,} comics into {kept}, then a first start (made once, kept for the next runs)")
    entry["index"] = time_index(args.inkyfs, lib.path, kept, timeout=max(600, lib.comics / 50))
    if "error" in entry["index"]:
        raise ServeFailed(f"inkyfs index failed: {entry['index']['error']}")
    with InkyServe(args.inkyfs, lib.path, kept, args.work / f"serve-state-{lib.comics}.log") as server:
        settle = server.settle(timeout=max(300, lib.comics / 50))
        entry["first_start"] = {"start_s": server.start_seconds, "settle_s": settle, "log_lines": background_lines(server)}
    if settle is None:
        raise ServeFailed("the first start on the new index was still busy after the wait: run the bench again")
    (kept / "prepared").write_text(f"{entry['index']['summary']}\n")
    return kept


def background_lines(server):
    return [line for line in server.log_text().splitlines() if "listed" in line or "digested" in line]


def measure_server(args, tools, lib, state, work, urls, notes):
    out = {}
    drop_caches(3, notes)
    log(f"bench: inkyfs serve on {lib.comics:,} comics (indexed): start, background work, feeds, pages")
    try:
        with InkyServe(args.inkyfs, lib.path, state, work / "serve.log", args.inkyfs_args) as server:
            out["start_s"] = server.start_seconds
            out["settle_s"] = server.settle(timeout=max(120, lib.comics / 200))
            out["memory_started"] = server.memory()
            drop_caches(3, notes)
            out["feeds"] = measure_feeds(tools, server, lib.comics, work)
            out["memory_feeds"] = server.memory()
            drop_caches(3, notes)

            def with_cpu(run):
                before = server.cpu_seconds()
                result = run()
                result["cpu_s"] = server.cpu_seconds() - before
                return result
            out["pages"] = measure_pages(tools, server.base, urls, work, "inkyfs", with_cpu)
            out["memory_pages"] = server.memory()
            out["feeds_after_pages"] = measure_feeds(tools, server, lib.comics, work, cold=False)
            out["reading_rows"] = reading_rows(state)
            out["log_lines"] = background_lines(server)
        out["exit_s"] = server.exit_seconds
    except ServeFailed as error:
        out["error"] = str(error)
        notes.append(f"serve: {error}")
    return out


def reading_rows(state):
    """Comics with reading progress in the run's state (read with sqlite3, if installed)."""
    sqlite = shutil.which("sqlite3")
    if not sqlite:
        return None
    result = subprocess.run([sqlite, "-readonly", str(state / "state.sqlite"), "SELECT count(*) FROM reading"],
                            capture_output=True, text=True, timeout=60)
    return int(result.stdout) if result.returncode == 0 and result.stdout.strip().isdigit() else None


def measure_nginx(tools, lib, work, urls, notes):
    log("bench: nginx on the same pages extracted to folders")
    drop_caches(3, notes)
    try:
        with Nginx(tools.nginx, lib.folders, work / "nginx") as server:
            return {"pages": measure_pages(tools, server.base, urls, work, "nginx", lambda run: run())}
    except RuntimeError as error:
        notes.append(f"serve: {error}")
        return {"error": str(error)}
