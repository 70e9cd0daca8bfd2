"""The serve case's table: inkyfs serve beside nginx for pages, then the feeds and the memory."""

from .common import MB
from .serve import CACHED_PAGES, FEED_RUNS, WRK_CONNECTIONS, WRK_SECONDS
from .tables import dig, fmt, print_table


def ratio(inky, plain):
    return f"{inky / plain:.2f}x" if inky is not None and plain else "—"


def page_rows(ink, plain):
    """(label, inkyfs cell, nginx cell, ratio) of the page rows."""
    rows = []
    for kind, label in (("wrk_in_order", "PSE pages/s, uncached, reading order: {n} pages each asked once"),
                        ("wrk_shuffled", "PSE pages/s, uncached, shuffled: {n} pages each asked once"),
                        ("wrk_cached", f"PSE pages/s, cached: {CACHED_PAGES} pages round and round, {WRK_SECONDS} s")):
        a, b = dig(ink, "pages", kind) or {}, dig(plain, "pages", kind) or {}
        if not a and not b:
            rows.append([label.format(n="N"), "skipped (no wrk)", "—", "—"])
            continue

        def cell(r):
            if "error" in r:
                return "error"
            if r.get("rps") is None:
                return "—"
            text = f"{r['rps']:,.0f} (p50 {fmt(r.get('p50_ms'), 2)} ms, p99 {fmt(r.get('p99_ms'), 1)} ms)"
            return text + (f"; {r['cpu_s']:.1f} s CPU" if r.get("cpu_s") is not None else "")
        rows.append([label.format(n=f"{a.get('distinct_paths') or b.get('distinct_paths') or 0:,}")
                     + f", {WRK_CONNECTIONS} connections", cell(a), cell(b) if b else "—", ratio(a.get("rps"), b.get("rps"))])
    for kind, label in (("ttfb_uncached", "time to first byte, uncached page (ms: median / p90)"),
                        ("ttfb_cached", "time to first byte, cached page (ms: median / p90)")):
        a, b = dig(ink, "pages", kind) or {}, dig(plain, "pages", kind) or {}

        def cell(r):
            if r.get("ttfb_median_ms") is None:
                return "—" if not r else "error"
            return f"{r['ttfb_median_ms']:.2f} / {r['ttfb_p90_ms']:.2f} ({r['requests']} requests)"
        rows.append([label, cell(a), cell(b), ratio(a.get("ttfb_median_ms"), b.get("ttfb_median_ms"))])
    return rows


def feed_rows(ink):
    rows = []
    later = ink.get("feeds_after_pages") or {}
    for label, feed in (ink.get("feeds") or {}).items():
        cold, warm = feed.get("cold") or {}, feed.get("warm") or {}
        status = cold.get("status")
        cold_text = fmt(cold.get("total_ms"), 1) if status == 200 else f"HTTP {status}" if status else "error"
        warm_ms = lambda w: f"{w['total_median_ms']:.1f}" if w.get("total_median_ms") is not None else "—"
        rows.append([f"OPDS: {label}: {feed['entries']} entries, {feed['bytes'] / 1000:,.0f} kB",
                     f"{cold_text} / {warm_ms(warm)} / {warm_ms(dig(later, label, 'warm') or {})}", "", ""])
    return rows


def memory_rows(ink):
    rows = []
    for key, label in (("memory_started", "after its start and background work"),
                       ("memory_feeds", "after the feeds"), ("memory_pages", "after the pages")):
        memory = ink.get(key)
        if memory:
            rows.append([f"server VmHWM / VmRSS {label} (MiB)",
                         f"{memory['hwm_mib']:.1f} / {memory['rss_mib']:.1f}; {memory['workers']} workers "
                         f"{memory['workers_rss_mib']:.1f}", "", ""])
    return rows


def print_serve_report(entry, notes=()):
    lib = entry.get("library")
    if lib is None:
        return
    ink, plain = entry.get("inkyfs") or {}, entry.get("nginx") or {}
    print(f"\n== inkyfs serve: {lib['comics']:,} small CBZ comics ({lib['pages']:,} pages, {lib['series']:,} series, "
          f"{lib['bytes'] / MB:,.0f} MB) beside nginx serving the same pages extracted to folders\n"
          f"   uncached = never asked for since the server started, the kernel's caches dropped before; "
          f"feeds: the first request (cold), then the median of {FEED_RUNS} (warm)")
    if entry.get("serve_args"):
        print(f"   inkyfs serve {' '.join(entry['serve_args'])}")
    if "error" in ink:
        print(f"   inkyfs serve: {ink['error']}")
    if not plain:
        plain_head = "nginx (not run)"
    else:
        plain_head = "nginx" if "error" not in plain else f"nginx: {plain['error'][:60]}"
    rows = page_rows(ink, plain) + feed_rows(ink) + memory_rows(ink)
    start = ink.get("start_s")
    if start is not None:
        settle = ink.get("settle_s")
        rows.append(["server start to listening; then background work done (s)",
                     f"{start:.2f}; {fmt(settle, 1) if settle is not None else 'not within the wait'}", "", ""])
    if ink.get("exit_s") is not None:
        rows.append(["SIGTERM to exit (s)", f"{ink['exit_s']:.2f}", "", ""])
    print_table("", ["", "inkyfs serve", plain_head, "inkyfs/nginx"], rows)
    print(f"  OPDS rows, ms: cold (the feed's first request) / warm (median of {FEED_RUNS}) / warm again after the "
          f"pages ({fmt(ink.get('reading_rows')) or '?'} comics then had reading progress: a page asked for is recorded as read)")
    print("  pages/s: the ratio is inkyfs over nginx (higher is better); time to first byte: inkyfs over nginx "
          "(lower is better)")
    index, first = entry.get("index"), entry.get("first_start") or {}
    if index:
        print(f"  index made for this run (kept for the next): {index['seconds']:.1f} s "
              f"({index.get('summary') or index.get('error')})")
    if first:
        print(f"  first start on that index: listening after {first['start_s']:.2f} s, background work (listing ahead, "
              f"KOReader digests) done {fmt(first.get('settle_s'), 1) or '?'} s later")
        for line in first.get("log_lines") or []:
            print(f"    server log: {line.strip()[:160]}")
    for line in ink.get("log_lines") or []:
        print(f"  server log: {line.strip()[:160]}")
