"""Which of a FUSE mount's kernel caches went while a listing ran, and who dropped them.

The kernel keeps a FUSE directory's listing, and a link's text, in page-cache pages of that
directory's or link's inode. When one is gone the next `ls -lRA` asks the daemon again. Two
things drop them:

- an invalidation: the daemon's notifications (`fuse_reverse_inval_inode`, run in the daemon's
  own thread as it writes the notification), or the kernel itself on a request;
- reclaim: kswapd under memory pressure, or kdamond where DAMON runs a proactive `pageout`
  scheme. Such a scheme (this machine runs one) pages out file pages that stayed idle for about a
  minute whatever the free memory, and `/proc/vmstat`'s pgscan and pgsteal do not count it.

Counted with the tracefs event `filemap:mm_filemap_delete_from_page_cache` on the mount's
device, in a tracing instance of the bench's own. Root only: None where tracefs is not writable.
"""

import os
from pathlib import Path

TRACING = Path("/sys/kernel/tracing")
DAMON = Path("/sys/kernel/mm/damon/admin/kdamonds")
RECLAIMERS = ("kswapd", "kdamond")


class PageDrops:
    """A context counting the mount's page-cache pages dropped meanwhile: `counts` after it, a dict of
    "reclaimed" and "invalidated", or None when tracing was not possible."""

    def __init__(self, mountpoint):
        device = os.stat(mountpoint).st_dev
        self.device = (os.major(device) << 20) | os.minor(device)  # the kernel's dev_t, as the event has it
        self.instance = TRACING / "instances" / f"inkyfs-bench-{os.getpid()}"
        self.counts = None

    def __enter__(self):
        try:
            self.instance.mkdir(exist_ok=True)
            event = self.instance / "events/filemap/mm_filemap_delete_from_page_cache"
            (event / "filter").write_text(f"s_dev == {self.device}\n")
            (self.instance / "buffer_size_kb").write_text("16384\n")
            (self.instance / "trace").write_text("")
            (event / "enable").write_text("1\n")
        except OSError:
            self._remove()
            self.instance = None
        return self

    def __exit__(self, *_):
        if self.instance is None:
            return False
        try:
            (self.instance / "events/filemap/mm_filemap_delete_from_page_cache/enable").write_text("0\n")
            reclaimed = invalidated = 0
            for line in (self.instance / "trace").read_text(errors="replace").splitlines():
                if "mm_filemap_delete_from_page_cache" not in line:
                    continue
                # "<comm>-<pid> [cpu] flags timestamp: event: ...": the thread that dropped it.
                comm = line.strip().split(" ", 1)[0].rsplit("-", 1)[0]
                if comm.startswith(RECLAIMERS):
                    reclaimed += 1
                else:
                    invalidated += 1
            self.counts = {"reclaimed": reclaimed, "invalidated": invalidated}
        except OSError:
            self.counts = None
        self._remove()
        return False

    def _remove(self):
        try:
            if self.instance is not None:
                self.instance.rmdir()
        except OSError:
            pass


def proactive_reclaim():
    """A sentence on DAMON's proactive reclaim where it runs (schemes whose action is pageout), else None."""
    found = []
    for kdamond in sorted(DAMON.glob("[0-9]*")) if DAMON.is_dir() else []:
        try:
            if (kdamond / "state").read_text().strip() != "on":
                continue
            for context in sorted((kdamond / "contexts").glob("[0-9]*")):
                aggregation_us = int((context / "monitoring_attrs/intervals/aggr_us").read_text())
                for scheme in sorted((context / "schemes").glob("[0-9]*")):
                    if (scheme / "action").read_text().strip() != "pageout":
                        continue
                    age = int((scheme / "access_pattern/age/min").read_text())
                    found.append(f"idle for {age * aggregation_us / 1e6:.0f} s or more")
        except (OSError, ValueError):
            continue
    if not found:
        return None
    return ("DAMON proactive reclaim is on (kdamond pages out file pages " + "; ".join(found)
            + "): the kernel drops cached listings and link texts idle that long, with memory free")
