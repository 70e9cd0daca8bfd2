"""`inkyfs serve` as the serve case runs it: on a free loopback port, on an indexed state, its log in
a file, its CPU and memory (and its workers') read from /proc, stopped with SIGTERM as a user would."""

import re
import subprocess
import time

from .common import MIB
from .http_load import free_port
from .procs import proc_alive, proc_children, proc_cpu_seconds, proc_memory, stop_pid

START_WAIT = 120.0
SETTLE_IDLE = 1.0          # seconds of a quiet server that count as its background work done
SETTLE_SHARE = 0.03        # quiet: less CPU than this share of one core meanwhile


class ServeFailed(RuntimeError):
    pass


class InkyServe:
    """`inkyfs serve LIBRARY --listen 127.0.0.1:PORT --state DIR` until the context ends."""

    def __init__(self, inkyfs, library, state, log_path, extra=()):
        self.command = [str(inkyfs), "serve", str(library), "--listen", f"127.0.0.1:{free_port()}",
                        "--state", str(state), *extra]
        self.log_path, self.process, self.base = log_path, None, None
        self.start_seconds = None
        self.exit_seconds = None

    @property
    def pid(self):
        return self.process.pid

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def __enter__(self):
        started = time.perf_counter()
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = started + START_WAIT
        while time.perf_counter() < deadline:
            found = re.search(r"serving .* at (http://[^/\s]+)", self.log_text())
            if found:       # the line names the catalog (http://ADDR:PORT/opds): the base is before it
                self.base = found.group(1)
                self.start_seconds = time.perf_counter() - started
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.005)
        tail = self.log_text().strip()[-400:]
        self.__exit__()
        raise ServeFailed(f"inkyfs serve did not start ({' '.join(self.command[1:3])}): {tail or 'no log'}")

    def settle(self, timeout):
        """Waits until the server has spent less than SETTLE_SHARE of a core for SETTLE_IDLE seconds
        (its listing ahead and its digests done); the seconds it took, or None at the timeout."""
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            before = self.cpu_seconds()
            time.sleep(SETTLE_IDLE)
            if self.cpu_seconds() - before < SETTLE_SHARE * SETTLE_IDLE:
                return time.perf_counter() - started - SETTLE_IDLE
        return None

    def cpu_seconds(self):
        """The server's CPU and its living workers' (utime + stime)."""
        return proc_cpu_seconds(self.pid) + sum(proc_cpu_seconds(child, reaped=False) for child in proc_children(self.pid))

    def memory(self):
        """The server's VmHWM and VmRSS, and its workers' VmRSS summed, in MiB."""
        rss, hwm = proc_memory(self.pid)
        workers = [proc_memory(child)[0] for child in proc_children(self.pid)]
        return {"hwm_mib": hwm / MIB, "rss_mib": rss / MIB, "workers": len(workers), "workers_rss_mib": sum(workers) / MIB}

    def __exit__(self, *exc):
        if self.process is None:
            return
        workers = proc_children(self.process.pid)
        started = time.perf_counter()
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=15)
            self.exit_seconds = time.perf_counter() - started
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for pid in workers:
            if proc_alive(pid):
                stop_pid(pid, grace=2.0)
        self.process = None
