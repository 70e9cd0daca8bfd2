"""The report printed at the end: every case's tables, missing peers and odd things seen."""


from .comics import table_rows
from .common import MB
from .cbz_view import print_cbz_report
from .convert import print_convert_report
from .mounts import PEERS, TOOLS, peer_binary
from .pdf import print_pdf_report
from .resume import print_resume_report
from .scale import print_library_report
from .serve_report import print_serve_report
from .tables import cell, print_table
from .vault import print_vault_report
from .versus_folders import print_size_report


def print_report(comics, results, think_ms):
    for comic in comics:
        entry = results["comics"].get(comic.stem)
        if entry is None:   # interrupted before this comic
            continue
        title = (f"\n== {comic.path.name}: {comic.pages} pages, {comic.page_bytes / MB:.1f} MB of pages, "
                 f"archive {entry['archive_bytes'] / MB:.1f} MB ({comic.fmt})")
        rows = [[label, *[cell(entry["tools"].get(tool), row) for tool in TOOLS]]
                for label, row in table_rows(comic, think_ms)]
        print_table(title, ["", *TOOLS], rows)
        floor_rows = []
        for name in ("cat", "bsdtar -xOf", "7z x -so"):
            f = entry["floor"].get(name)   # None: not installed, failed or interrupted
            floor_rows.append([f"floor: {name}", "n/a" if f is None else f"{f['seconds'] * 1000:,.0f} ms",
                               "n/a" if f is None else f"{f['mb_per_s']:,.1f} MB/s"])
        print_table("", ["", "time", "speed"], floor_rows)
    if results.get("pdf"):
        print_pdf_report(results["pdf"])
    if results.get("convert"):
        print_convert_report(results["convert"])
    if results.get("cbz"):
        print_cbz_report(results["cbz"])
    if results.get("resume"):
        print_resume_report(results["resume"])
    if results.get("vault"):
        print_vault_report(comics, results["vault"])
    if results.get("library_scale"):
        print_library_report(results["library_scale"])
    if results.get("library_size"):
        print_size_report(results["library_size"])
    if results.get("serve"):
        print_serve_report(results["serve"])
    missing = [f"{tool}: {PEERS[tool][2]}" for tool in PEERS if not peer_binary(tool)]
    if missing and results["comics"]:
        print("\nPeers not installed (this script installs nothing): " + "; ".join(missing))
    if results["notes"]:
        print("\nOdd things seen:")
        for note in results["notes"]:
            print(f"  - {note}")
