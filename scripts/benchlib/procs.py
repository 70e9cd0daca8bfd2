"""Processes and memory from /proc: the daemon and its workers found, waited for and sampled
(VmRSS, VmHWM, CPU) without leaving zombies behind."""

import contextlib
import ctypes
import os
import signal
import threading
import time

from .common import MIB


RSS_INTERVAL = 0.020
SCAN_EVERY = 5                       # look for new worker processes every 5th sample (100 ms)


def become_subreaper():
    """Orphans below us (the inkyfs daemon once `inkyfs mount` returns, its workers) become our
    children, so we can find them, wait for them and leave no zombie behind."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def proc_alive(pid):
    """True while pid exists and is not a zombie (reaping it if it is our zombie child)."""
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def all_pids():
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def proc_children(pid):
    """Pids whose parent is pid (this kernel may lack /proc/PID/task/*/children: scan /proc)."""
    found = []
    for child in all_pids():
        try:
            with open(f"/proc/{child}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(child)
        except (OSError, ValueError, IndexError):
            pass
    return found


def proc_cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def proc_memory(pid):
    """(VmRSS, VmHWM) in bytes, or (0, 0) once pid is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid, reaped=True):
    """utime+stime of pid (and, with reaped, of the children it has waited for), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if reaped else 0)
    return ticks / CLOCK_TICK


def stop_pid(pid, grace=5.0):
    """Waits up to grace seconds for pid to exit, then SIGTERM, then SIGKILL. True if it had to."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not proc_alive(pid):
            return False
        time.sleep(0.05)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and proc_alive(pid):
            time.sleep(0.05)
        if not proc_alive(pid):
            break
    return True


class RssSampler:
    """Samples VmRSS of a server process and of its children every 20 ms, in a thread."""

    def __init__(self, pid):
        self.pid = pid
        self.children = set()          # every child pid seen (the workers)
        self.server_peak = 0
        self.workers_peak = 0
        self.worker_hwm = {}
        self.worker_cpu = {}           # the last CPU seconds seen of every child
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        tick = 0
        while not self._stop.is_set():
            if tick % SCAN_EVERY == 0:
                self.children.update(proc_children(self.pid))
            tick += 1
            self.server_peak = max(self.server_peak, proc_memory(self.pid)[0])
            total = 0
            for child in self.children:
                rss, hwm = proc_memory(child)
                total += rss
                self.worker_hwm[child] = max(self.worker_hwm.get(child, 0), hwm)
                if tick % SCAN_EVERY == 1 and rss:
                    self.worker_cpu[child] = proc_cpu_seconds(child)
            self.workers_peak = max(self.workers_peak, total)
            self._stop.wait(RSS_INTERVAL)

    def stop(self):
        """Stops sampling (call while the processes still run) and returns the numbers in MiB."""
        self._stop.set()
        self._thread.join()
        self.children.update(proc_children(self.pid))
        total = 0
        for child in self.children:
            child_rss, child_hwm = proc_memory(child)
            total += child_rss
            self.worker_hwm[child] = max(self.worker_hwm.get(child, 0), child_hwm)
            if child_rss:
                self.worker_cpu[child] = proc_cpu_seconds(child)
        self.workers_peak = max(self.workers_peak, total)   # a worker born after the last scan
        rss, hwm = proc_memory(self.pid)
        # A child the server reaped is in its cutime; one still running (or seen before it went and
        # not yet reaped) is counted from its own last sample: reaped ones are never counted twice
        # because their last sample stops at their exit, and cutime only grows once they are waited for.
        server_cpu = proc_cpu_seconds(self.pid, reaped=False)
        reaped_cpu = proc_cpu_seconds(self.pid) - server_cpu
        workers_cpu = max(sum(self.worker_cpu.values()), reaped_cpu)
        return {
            "server_cpu_s": server_cpu,
            "workers_cpu_s": workers_cpu,
            "cpu_s": server_cpu + workers_cpu,
            "server_rss_end_mib": rss / MIB,
            "server_hwm_mib": hwm / MIB,
            "server_peak_sampled_mib": max(self.server_peak, rss) / MIB,
            "workers": len(self.children),
            "workers_peak_sum_mib": self.workers_peak / MIB,
            "worker_max_hwm_mib": max(self.worker_hwm.values(), default=0) / MIB,
        }
