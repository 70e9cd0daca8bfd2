"""The PDF case: a 200-page image PDF (embedded JPEGs served as they are) and rendered pages."""

import os
import subprocess
import sys
import shutil
import tempfile
import time
from pathlib import Path

from .common import MB, SERIES, log
from .measure import measure_sequential, read_whole, run_guarded
from .mounts import InkyfsMount
from .pages import Comic, ensure_pages, write_atomically
from .tables import cell, dig, fmt, pair, peak_memory, print_table, seq_value, workers_rss


PDF_PAGES = 200
PDF_RENDERED_PAGES = 20
PDF_TARGET = 100                  # mount -> list -> page 100 -> page 101
PDF_RENDER_TARGET = 10            # stat (render) page 10, then page 11


def ensure_pdf_library(work):
    """Returns (library dir, [Comic] or None when img2pdf/cairo are missing, reason)."""
    probe = subprocess.run([sys.executable, "-c", "import img2pdf, cairo"], capture_output=True)
    if probe.returncode != 0:
        return None, None, "needs img2pdf and python3-cairo for this python (apt-get install img2pdf python3-cairo)"
    pages = ensure_pages(work / "pages", PDF_PAGES)
    library = work / "library-pdf"
    series = library / SERIES
    series.mkdir(parents=True, exist_ok=True)
    made = [
        ("pdf-200.pdf", pages[:PDF_PAGES], """
import img2pdf, sys
open(sys.argv[1], "wb").write(img2pdf.convert(sys.argv[2:]))
"""),
        ("scan-margins-20.pdf", pages[:PDF_RENDERED_PAGES], """
import img2pdf, sys
layout = img2pdf.get_layout_fun((img2pdf.mm_to_pt(210), img2pdf.mm_to_pt(297)), border=(img2pdf.mm_to_pt(10), img2pdf.mm_to_pt(10)))
open(sys.argv[1], "wb").write(img2pdf.convert(sys.argv[2:], layout_fun=layout))
"""),
        ("vector-20.pdf", [], """
import cairo, sys
surface = cairo.PDFSurface(sys.argv[1], 477, 738)
context = cairo.Context(surface)
for number in range(%d):
    context.set_source_rgb(1, 1, 1); context.paint()
    for panel in range(4):
        context.set_source_rgb(0.15 * panel, 0.3, 0.8 - 0.15 * panel)
        context.rectangle(24 + (panel %% 2) * 220, 24 + (panel // 2) * 300, 205, 280); context.fill()
    context.set_source_rgb(0, 0, 0); context.set_font_size(18)
    for line in range(10):
        context.move_to(30, 640 + line * 9); context.set_font_size(8)
        context.show_text("Page %%d, line %%d: the quick brown fox jumps over the lazy dog" %% (number + 1, line + 1))
    context.set_line_width(3); context.arc(238, 330, 90, 0, 6.283); context.stroke()
    context.show_page()
surface.finish()
""" % PDF_RENDERED_PAGES),
    ]
    comics = []
    for name, sources, program in made:
        path = series / name
        if not path.exists():
            log(f"bench: making {path}")
            write_atomically(path, lambda tmp: subprocess.run([sys.executable, "-c", program, str(tmp), *map(str, sources)],
                                                             check=True))
        if name == "pdf-200.pdf":
            comics.append(Comic(stem=path.stem, path=path, fmt="pdf", members=[p.name for p in sources],
                                page_bytes=sum(p.stat().st_size for p in sources)))
        else:
            comics.append(Comic(stem=path.stem, path=path, fmt="pdf", members=[f"page {n}" for n in range(1, PDF_RENDERED_PAGES + 1)],
                                page_bytes=None, ext="png"))
    return library, comics, None


def measure_list_then_jump(new_mount, comic, target):
    """Fresh mount; from the mount command's start: list the directory (no stat), read page target, then target+1."""
    with new_mount() as m:
        listed_at = time.perf_counter()
        names = os.listdir(m.comic_dir(comic))
        listed = time.perf_counter()
        _, jump = read_whole(m.page_path(comic, target))
        _, after = read_whole(m.page_path(comic, target + 1))
        done = time.perf_counter()
    if len(names) != comic.pages:
        m.notes.append(f"{comic.stem}: listed {len(names)} entries, expected {comic.pages}")
    return {"page": target, "mount_ms": m.mount_seconds * 1000, "list_ms": (listed - listed_at) * 1000,
            "jump_ms": jump * 1000, "next_ms": after * 1000, "total_ms": (done - m.started) * 1000, "memory": m.memory}


def measure_rendered(new_mount, comic, target):
    """Fresh mount: stat page target (renders it), read it, stat + read target+1; a remount with the
    same state: stat page target again (from the index)."""
    result = {"page": target}
    with new_mount() as m:
        os.listdir(m.comic_dir(comic))
        started = time.perf_counter()
        size = os.stat(m.page_path(comic, target)).st_size
        result["first_lookup_ms"] = (time.perf_counter() - started) * 1000
        n, read = read_whole(m.page_path(comic, target))
        result["read_after_ms"] = read * 1000
        started = time.perf_counter()
        os.stat(m.page_path(comic, target + 1))
        result["next_lookup_ms"] = (time.perf_counter() - started) * 1000
        result["next_read_ms"] = read_whole(m.page_path(comic, target + 1))[1] * 1000
        result["png_bytes"] = size
        if n != size:
            m.notes.append(f"{comic.stem}: page {target} stat said {size} bytes, read gave {n}")
    result["memory"] = m.memory
    with new_mount() as m:
        started = time.perf_counter()
        again = os.stat(m.page_path(comic, target)).st_size
        result["remount_lookup_ms"] = (time.perf_counter() - started) * 1000
        if again != size:
            m.notes.append(f"{comic.stem}: page {target} is {again} bytes after a remount, {size} before")
    return result


def bench_pdf(args, entry, notes):
    library, comics, missing = ensure_pdf_library(args.work)
    if comics is None:
        notes.append(f"PDF case skipped: {missing}")
        return []

    def mount_factory(state=None):
        def new_mount():
            folder = state or Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-"))
            m = InkyfsMount(args.inkyfs, library, args.work / "mnt" / "inkyfs",
                            [*args.inkyfs_args, "--state", str(folder), "--no-continue"], notes)
            m.scratch = None if state else folder
            return m
        return new_mount
    for comic in comics:
        label = f"inkyfs {comic.stem}"
        result = {"file_bytes": comic.path.stat().st_size, "pages": comic.pages, "page_bytes": comic.page_bytes}
        if comic.page_bytes is not None:
            log(f"bench: {label}: mount -> list -> page {PDF_TARGET} -> {PDF_TARGET + 1}, cold sequential")
            result["list_then_jump"] = run_guarded(label, notes, measure_list_then_jump, mount_factory(), comic, PDF_TARGET)
        else:
            log(f"bench: {label}: first lookup of page {PDF_RENDER_TARGET}, remount, cold sequential")
            state = Path(tempfile.mkdtemp(prefix="inkyfs-bench-state-"))
            result["rendered"] = run_guarded(label, notes, measure_rendered, mount_factory(state), comic, PDF_RENDER_TARGET)
            shutil.rmtree(state, ignore_errors=True)  # shared by its two mounts: removed after both
        result["sequential"] = run_guarded(label, notes, measure_sequential, mount_factory(), comic, float("inf"))
        entry[comic.stem] = result
    return comics


def memory_rows():
    """The daemon's and its workers' peak RSS, the last rows of both PDF tables."""
    return [("daemon peak RSS, VmHWM (MiB)", lambda r: fmt(peak_memory(r, "server_hwm_mib"), 1)),
            ("workers peak RSS sum / max one (MiB)", workers_rss)]


def print_pdf_report(entry):
    image = {k: v for k, v in entry.items() if v.get("page_bytes") is not None}
    rendered = {k: v for k, v in entry.items() if v.get("page_bytes") is None}
    for stem, r in image.items():
        title = (f"\n== PDF {stem}.pdf: {r['pages']} pages, embedded JPEGs served as they are, "
                 f"{r['page_bytes'] / MB:.1f} MB of pages, file {r['file_bytes'] / MB:.1f} MB (inkyfs only: no peer mounts PDFs)")
        rows = [
            ("mount returns (ms)", lambda r: fmt(dig(r, "list_then_jump", "mount_ms"), 0)),
            ("list dir, no stat (ms)", lambda r: fmt(dig(r, "list_then_jump", "list_ms"), 1)),
            (f"then page {PDF_TARGET} (ms)", lambda r: fmt(dig(r, "list_then_jump", "jump_ms"), 1)),
            (f"then page {PDF_TARGET + 1} (ms)", lambda r: fmt(dig(r, "list_then_jump", "next_ms"), 1)),
            (f"mount -> list -> page {PDF_TARGET + 1} read (ms)", lambda r: fmt(dig(r, "list_then_jump", "total_ms"), 0)),
            ("cold sequential: list dir (ms)", lambda r: fmt(dig(r, "sequential", "list_ms"), 1)),
            ("cold sequential (MB/s)", seq_value("mb_per_s", 1)),
            ("cold sequential (pages/s)", seq_value("pages_per_s", 1)),
            ("next page, no think p50/p99 (ms)", pair("sequential", "p50_ms", "p99_ms", "next_page")),
            *memory_rows(),
        ]
        print_table(title, ["", "inkyfs"], [[label, cell(r, row)] for label, row in rows])
    if rendered:
        rows = [
            (f"list dir, then stat page {PDF_RENDER_TARGET}: first lookup, renders (ms)", lambda r: fmt(dig(r, "rendered", "first_lookup_ms"), 0)),
            (f"read page {PDF_RENDER_TARGET} after it (ms)", lambda r: fmt(dig(r, "rendered", "read_after_ms"), 1)),
            (f"stat page {PDF_RENDER_TARGET + 1}, rendered ahead (ms)", lambda r: fmt(dig(r, "rendered", "next_lookup_ms"), 1)),
            (f"read page {PDF_RENDER_TARGET + 1} (ms)", lambda r: fmt(dig(r, "rendered", "next_read_ms"), 1)),
            (f"remount, stat page {PDF_RENDER_TARGET}: size from the index (ms)", lambda r: fmt(dig(r, "rendered", "remount_lookup_ms"), 1)),
            (f"PNG of page {PDF_RENDER_TARGET} (KB)", lambda r: fmt((dig(r, "rendered", "png_bytes") or 0) / 1000, 0) if dig(r, "rendered", "png_bytes") else None),
            ("cold sequential, stat + read each (pages/s)", seq_value("pages_per_s", 2)),
            ("next page, no think p50/p99 (ms)", pair("sequential", "p50_ms", "p99_ms", "next_page")),
            *memory_rows(),
        ]
        stems = list(rendered)
        print_table("\n== PDF pages rendered on demand (PNG 2,700 px high unless --inkyfs-args say otherwise)",
                    ["", *[f"{stem}.pdf" for stem in stems]],
                    [[label, *[cell(rendered[stem], row) for stem in stems]] for label, row in rows])
