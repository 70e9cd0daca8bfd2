"""Mounts under test, one class each, used as `with Mount(...) as m:`: inkyfs, the peers (fuse-zip,
archivemount, ratarmount, fuse-archive) and the FUSE ceiling (scripts/benchlib/bench-ceiling.c)."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .common import REPO_ROOT, SERIES, evict, log
from .procs import RssSampler, all_pids, proc_children, proc_cmdline, proc_cpu_seconds, stop_pid


PEERS = {
    # tool: (formats it mounts, argv before "ARCHIVE MOUNTPOINT", how to install)
    "fuse-zip": ({"zip"}, ["-f", "-r"], "apt-get install fuse-zip"),
    "archivemount": ({"zip", "7z", "tar"}, ["-f", "-o", "readonly"], "apt-get install archivemount"),
    "ratarmount": ({"zip", "7z", "tar"}, ["-f", "--index-file", ":memory:"], "pip install ratarmount"),
    "fuse-archive": ({"zip", "7z", "tar", "rar"}, ["-f"], "build it into /work/peers/fuse-archive/ or set FUSE_ARCHIVE"),
    "ceiling": ({"zip", "7z", "tar", "rar"}, [], "cc and libfuse3-dev (scripts/benchlib/bench-ceiling.c)"),
}
PEERS["archivemount"][0].add("rar")            # libarchive reads RAR
PEERS["ratarmount"][0].add("rar")              # through rarfile, when unrar is there
TOOLS = ["inkyfs", *PEERS]
CEILING_SOURCE = Path(__file__).resolve().parent / "bench-ceiling.c"
CEILING_BINARY = None                           # set by main(): WORK/bench-ceiling once compiled
TREE_CEILING_SOURCE = CEILING_SOURCE.with_name("bench-ceiling-tree.c")   # the listings' ceiling (--library-scale N)


def peer_binary(tool):
    """The peer's executable, or None when it is not there."""
    if tool == "ceiling":
        return CEILING_BINARY
    if tool == "fuse-archive":
        built = os.environ.get("FUSE_ARCHIVE", "/work/peers/fuse-archive/fuse-archive")
        if os.access(built, os.X_OK):
            return built
    return shutil.which(tool)


def build_ceiling(work, source=CEILING_SOURCE):
    """Compiles scripts/benchlib/bench-ceiling.c (or `source`, bench-ceiling-tree.c) into WORK (again when the source is
    newer); None if it cannot."""
    binary = work / source.stem
    # The tree ceiling reads the device with inkyfs's own device readers (the CInkyFuseDevice target).
    device = REPO_ROOT / "Sources" / "CInkyFuseDevice"
    tree = source == TREE_CEILING_SOURCE
    inputs = [source, device / "fuse_device.c", device / "include" / "inky_fuse_device.h"] if tree else [source]
    if binary.exists() and all(binary.stat().st_mtime >= one.stat().st_mtime for one in inputs):
        return str(binary)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True, text=True)
    if flags.returncode != 0 or not shutil.which("cc"):
        return None
    extra = ["-I", str(device / "include"), str(device / "fuse_device.c")] if tree else []
    built = subprocess.run(["cc", "-O2", *extra, "-o", str(binary), str(source), *flags.stdout.split()],
                           capture_output=True, text=True)
    if built.returncode != 0:
        log(f"bench: cannot build the FUSE ceiling: {built.stderr.strip()[:300]}")
        return None
    return str(binary)


ACTIVE_MOUNTS = set()       # mount points to lazily unmount if anything goes wrong


def unmount(mountpoint):
    subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ACTIVE_MOUNTS.discard(str(mountpoint))


def is_mounted(mountpoint):
    target = os.path.realpath(mountpoint)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)


class MountFailed(Exception):
    pass


class CommandFailed(Exception):
    pass


class Mount:
    """A fresh mount of something under test. Subclasses set self.server_pid in start()."""

    sample = True   # the 20 ms RSS sampler; off where its /proc scans would share the cores with what is timed

    def __init__(self, mountpoint, notes):
        self.mountpoint = Path(mountpoint)
        self.notes = notes         # list of odd things seen, shared with the report
        self.started = None        # perf_counter() when the mount command started
        self.mount_seconds = None
        self.server_pid = None
        self.sampler = None
        self.memory = {}
        self.evict = []            # files dropped from the host page cache right before the mount

    def __enter__(self):
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        if is_mounted(self.mountpoint):
            unmount(self.mountpoint)
        ACTIVE_MOUNTS.add(str(self.mountpoint))
        evict(self.evict)
        try:
            self.started = time.perf_counter()
            self.start()
            self.mount_seconds = time.perf_counter() - self.started
            self.sampler = RssSampler(self.server_pid) if self.sample else None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.sampler:
            self.memory = self.sampler.stop()
        self.release()
        self.stop()
        return False

    def cpu_seconds(self):
        """CPU the server and its children have used so far (the children it reaped included)."""
        if not self.server_pid:
            return 0.0
        return proc_cpu_seconds(self.server_pid) + sum(proc_cpu_seconds(c, reaped=False)
                                                       for c in proc_children(self.server_pid))

    def wait_quiet(self, still=0.3, limit=5.0):
        """Waits until the server and its children use no CPU for `still` seconds (at most `limit`):
        what a mount starts in the background (inkyfs's workers started ahead) is its own cost,
        not the next measurement's. Returns the seconds waited."""
        began = time.perf_counter()
        last, since = self.cpu_seconds(), began
        while time.perf_counter() - began < limit:
            time.sleep(0.05)
            now = self.cpu_seconds()
            if now != last:
                last, since = now, time.perf_counter()
            elif time.perf_counter() - since >= still:
                break
        return time.perf_counter() - began

    def release(self):
        """Unmounts (lazily, with fusermount3); subclasses may try their own unmount first."""
        unmount(self.mountpoint)

    def comic_dir(self, comic):
        raise NotImplementedError

    def page_path(self, comic, number):
        raise NotImplementedError

    def list_pages(self, comic):
        raise NotImplementedError


class InkyfsMount(Mount):
    def __init__(self, inkyfs, library, mountpoint, extra_args, notes, cache=None):
        super().__init__(mountpoint, notes)
        self.command = [str(inkyfs), "mount", str(library), str(self.mountpoint), *extra_args]
        self.single = Path(library).is_file()     # one comic file: the mount root is its pages
        # The daemon's XDG_CACHE_HOME (covers, converted pages, the pages kept to resume a solid
        # comic); None: the environment's. A cold row gets a fresh one, or an earlier mount's pages serve it.
        self.env = None if cache is None else {**os.environ, "XDG_CACHE_HOME": str(cache)}
        self.scratch = None        # a folder of this mount's alone (its fresh state), removed once it stopped

    def start(self):
        result = subprocess.run(self.command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                                env=self.env)
        if result.returncode != 0:
            raise MountFailed(f"inkyfs mount exited {result.returncode}: {result.stderr.strip()}")
        mountpoint = str(self.mountpoint)
        daemons = [pid for pid in all_pids() if "--ready-fd" in (args := proc_cmdline(pid)) and mountpoint in args]
        if not daemons:
            raise MountFailed("inkyfs mount returned 0 but no daemon process was found")
        self.server_pid = daemons[0]

    def stop(self):
        if not self.server_pid:
            return
        workers = set(self.sampler.children if self.sampler else ()) | set(proc_children(self.server_pid))
        if stop_pid(self.server_pid, grace=10.0):
            self.notes.append(f"inkyfs daemon {self.server_pid} did not exit within 10 s of the unmount; killed")
        for pid in workers:
            if stop_pid(pid, grace=2.0):
                self.notes.append(f"inkyfs worker {pid} outlived its daemon; killed")
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def comic_dir(self, comic):
        return self.mountpoint if self.single else self.mountpoint / SERIES / comic.stem

    def page_path(self, comic, number):
        return self.comic_dir(comic) / f"{number:0{max(3, len(str(comic.pages)))}d}.{comic.ext}"

    def list_pages(self, comic):
        # 001.jpg, 002.jpg: byte order is reading order; `.directory` (the folder's icon for KDE) is no page
        return sorted(p for p in self.comic_dir(comic).iterdir() if not p.name.startswith("."))


def natural_key(path):
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", str(path))]


class PeerMount(Mount):
    """A peer mounts one archive; run in the foreground in its own session so we own its pid."""

    def __init__(self, tool, archive, mountpoint, log_path, notes, command=None):
        super().__init__(mountpoint, notes)
        self.tool = tool
        self.command = command or [peer_binary(tool), *PEERS[tool][1], str(archive), str(self.mountpoint)]
        self.log_path = log_path
        self.process = None
        self.mount_timeout = 300.0

    def start(self):
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                            start_new_session=True)
        self.server_pid = self.process.pid
        deadline = time.monotonic() + self.mount_timeout
        while not is_mounted(self.mountpoint):
            if self.process.poll() is not None:
                raise MountFailed(f"{self.tool} exited {self.process.returncode} before mounting (log: {self.log_path})")
            if time.monotonic() > deadline:
                self.process.terminate()     # still building its index: stop() then waits for it
                raise MountFailed(f"{self.tool} did not mount within {self.mount_timeout:.0f} s")
            time.sleep(0.001)
        os.listdir(self.mountpoint)  # the mount answers

    def stop(self):
        if self.process is None:
            return
        children = set(self.sampler.children if self.sampler else ())
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.notes.append(f"{self.tool} did not exit within 10 s of the unmount; killed")
            self.process.kill()
            self.process.wait()
        for pid in children:
            stop_pid(pid, grace=2.0)

    def comic_dir(self, comic):
        return self.mountpoint

    def page_path(self, comic, number):
        return self.mountpoint / comic.members[number - 1]

    def list_pages(self, comic):
        files = [Path(root) / name for root, _, names in os.walk(self.mountpoint) for name in names]
        return sorted(files, key=natural_key)


class CeilingMount(PeerMount):
    """The FUSE ceiling: loads the comic's page files, says "loaded", mounts; the clock starts there."""

    def __init__(self, comic, mountpoint, log_path, notes):
        super().__init__("ceiling", None, mountpoint, log_path, notes,
                         command=[CEILING_BINARY, str(mountpoint), *map(str, comic.sources)])

    def start(self):
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=out, start_new_session=True)
        self.server_pid = self.process.pid
        if self.process.stdout.readline().strip() != b"loaded":
            raise MountFailed(f"bench-ceiling did not load its files (log: {self.log_path})")
        self.started = time.perf_counter()
        while not is_mounted(self.mountpoint):
            if self.process.poll() is not None:
                raise MountFailed(f"bench-ceiling exited {self.process.returncode} (log: {self.log_path})")
            time.sleep(0.001)
        os.listdir(self.mountpoint)


class TreeCeilingMount(CeilingMount):
    """The listings' FUSE ceiling (scripts/benchlib/bench-ceiling-tree.c): a folder tree's names and attributes loaded into
    memory, served under the mount point; the clock starts once it is loaded."""

    sample = False

    def __init__(self, binary, folder, mountpoint, log_path, notes, plain_reads=False):
        PeerMount.__init__(self, "ceiling", None, mountpoint, log_path, notes,
                           command=[binary, str(mountpoint), str(folder), *(["--plain-reads"] if plain_reads else [])])
