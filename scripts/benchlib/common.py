"""What every part of the bench shares: where things are, the seed, units, logging and page-cache eviction."""

import contextlib
import os
import sys
from pathlib import Path


REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_WORK = REPO_ROOT / "bench-out"
DEFAULT_INKYFS = REPO_ROOT / ".build-bench" / "release" / "inkyfs"
SEED = 20240917
EPOCH = 1577836800                   # 2020-01-01T00:00:00Z, every archive member's mtime
SERIES = "Bench"
READ_CHUNK = 1 << 20
MB, MIB = 1e6, 1 << 20


def evict(paths):
    """Drops the files' pages from the host page cache, so the next read comes from the disk."""
    for path in paths:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def files_below(folder):
    return [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names]


def log(message):
    print(message, file=sys.stderr, flush=True)


def converter(inkyfs):
    """The command that runs `__convert`: inkyfs-worker beside inkyfs, or (a build from before
    the worker executable) inkyfs itself."""
    worker = Path(inkyfs).parent / "inkyfs-worker"
    return [str(worker)] if worker.exists() else [str(inkyfs)]
