"""HTTP load for `--only serve`: nginx serving a folder as the floor, wrk for requests per second,
curl for time to first byte. Each tool is optional: a missing one is reported, and its rows skipped."""

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import time
from pathlib import Path

from .procs import proc_children, stop_pid

NGINX_PATHS = ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
START_WAIT = 30.0

# One thread's share of a URL list, each URL once, then the thread stops: every request of the run
# asks for a page not asked for before. wrk's own rate counts until the end of -d even for a thread
# stopped early, so the script times the run itself (first request to last answer, a monotonic clock
# through LuaJIT's ffi) and prints it from done(); it also writes a file then, on which the bench
# interrupts wrk (SIGINT: wrk reports and exits). With "repeat", the list is walked round and round.
WRK_SCRIPT = """
local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int clock_gettime(int, bench_timespec *); ]]
local function now()
  local t = ffi.new("bench_timespec")
  ffi.C.clock_gettime(1, t)
  return tonumber(t.tv_sec) + tonumber(t.tv_nsec) * 1e-9
end
local threads = {}
local paths, step, at, left = {}, 1, 0, 0
function setup(thread)
  thread:set("thread_id", #threads)
  threads[#threads + 1] = thread
end
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  step, repeat_list, done_file = tonumber(args[2]), args[3] == "repeat", args[4]
  at = thread_id
  left = math.floor((#paths - thread_id + step - 1) / step)
  answered = 0
end
function request()
  if not started_at then started_at = now() end
  local path = paths[(at % #paths) + 1]
  at = at + step
  return wrk.format("GET", path)
end
function response(status, headers, body)
  answered = answered + 1
  if not repeat_list and answered >= left then
    ended_at = now()
    wrk.thread:stop()
    local mark = io.open(done_file, "w")
    mark:write("done\\n")
    mark:close()
  end
end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    local started, ended = thread:get("started_at"), thread:get("ended_at")
    if started and ended then
      io.write(string.format("bench-once: %d answers in %.6f s\\n", thread:get("answered"), ended - started))
    end
  end
end
"""


def find_tool(name):
    """The tool's path, or None; nginx is looked for in sbin too (not on a user's PATH)."""
    found = shutil.which(name)
    if found or name != "nginx":
        return found
    return next((p for p in NGINX_PATHS if os.access(p, os.X_OK)), None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, timeout=START_WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
        time.sleep(0.02)
    return False


class Nginx:
    """nginx as the current user, in the foreground, serving `root` on a free loopback port from a
    config written to `folder`: no access log, sendfile, as many workers as CPUs."""

    def __init__(self, binary, root, folder):
        self.binary, self.root, self.folder = binary, Path(root), Path(folder)
        self.port, self.process = free_port(), None

    def config(self):
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
        temp = "\n".join(f"  {kind}_temp_path {self.folder / kind};" for kind in
                         ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return (f"{user}daemon off;\nworker_processes auto;\npid {self.folder / 'nginx.pid'};\n"
                f"error_log {self.folder / 'error.log'} warn;\nevents {{ worker_connections 1024; }}\n"
                f"http {{\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n  keepalive_requests 100000;\n"
                f"  types {{ image/jpeg jpg; }}\n  default_type application/octet-stream;\n{temp}\n"
                f"  server {{\n    listen 127.0.0.1:{self.port};\n    root {self.root};\n  }}\n}}\n")

    def __enter__(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "nginx.conf").write_text(self.config())
        self.process = subprocess.Popen([self.binary, "-p", str(self.folder), "-e", str(self.folder / "error.log"),
                                         "-c", str(self.folder / "nginx.conf")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not wait_for_port(self.port) or self.process.poll() is not None:
            error = self.process.stderr.read() if self.process.poll() is not None else "did not listen"
            self.__exit__()
            raise RuntimeError(f"nginx did not start: {error.strip()[-300:]}")
        return self

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        if self.process is None:
            return
        workers = proc_children(self.process.pid)
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()                 # nginx's fast shutdown, its workers with it
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for pid in workers:
            stop_pid(pid, grace=2.0)
        self.process = None


def run_wrk(wrk, base, paths, folder, name, connections, seconds, repeat):
    """wrk over `paths` (one thread, `connections` connections): each path once (repeat=False: the
    run ends when all are answered, or at `seconds`), or round and round for `seconds`."""
    folder = Path(folder)
    script, listing = folder / "pages.lua", folder / f"{name}.paths"
    script.write_text(WRK_SCRIPT)
    listing.write_text("\n".join(paths) + "\n")
    done = folder / f"{name}.done"
    done.unlink(missing_ok=True)
    command = [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency",
               "-s", str(script), base, "--", str(listing), "1", "repeat" if repeat else "once", str(done)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + seconds + 60
    while process.poll() is None and time.monotonic() < deadline:
        if done.exists():
            process.send_signal(signal.SIGINT)
            break
        time.sleep(0.01)
    try:
        stdout, stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return {"error": "wrk did not end"}
    if process.returncode != 0:
        return {"error": (stderr or stdout).strip()[-300:]}
    return parse_wrk(stdout, len(paths))


def parse_wrk(text, distinct):
    """Requests/sec, the request count, latency percentiles (ms) and errors from wrk's report."""
    out = {"distinct_paths": distinct}
    match = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", text)
    if match:
        scale = {"ms": 0.001, "s": 1, "m": 60}[match.group(3)]
        out["requests"], out["seconds"] = int(match.group(1)), float(match.group(2)) * scale
    match = re.search(r"Requests/sec:\s+([\d.]+)", text)
    out["rps"] = float(match.group(1)) if match else None
    for percent, value, unit in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)", text, re.M):
        out[f"p{percent}_ms"] = float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    match = re.search(r"bench-once: (\d+) answers in ([\d.]+) s", text)
    if match:      # each path once: the script's own clock, not wrk's -d
        out["requests"], out["seconds"] = int(match.group(1)), float(match.group(2))
        out["rps"] = out["requests"] / out["seconds"] if out["seconds"] > 0 else None
    match = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["bad_status"] = int(match.group(1)) if match else 0
    match = re.search(r"Socket errors: (.*)", text)
    out["socket_errors"] = match.group(1).strip() if match else None
    return out


def curl_times(curl, urls, folder, name, keep=None):
    """One curl over every URL in turn on one kept-alive connection: per request the status, the
    bytes, time to first byte and total time (ms), from curl's own clock. `keep`: a file for the
    first answer's body."""
    config = Path(folder) / f"{name}.curl"
    outputs = [str(keep) if keep and n == 0 else "/dev/null" for n in range(len(urls))]
    config.write_text("".join(f'url = "{url}"\noutput = "{output}"\n' for url, output in zip(urls, outputs)))
    form = "%{http_code} %{size_download} %{time_starttransfer} %{time_total}\\n"
    result = subprocess.run([curl, "-s", "-K", str(config), "-w", form], capture_output=True, text=True,
                            timeout=60 + len(urls) * 5)
    rows = []
    for line in result.stdout.split("\n"):
        parts = line.split()
        if len(parts) == 4:
            rows.append({"status": int(parts[0]), "bytes": int(parts[1]),
                         "ttfb_ms": float(parts[2]) * 1000, "total_ms": float(parts[3]) * 1000})
    return rows


def summarize(rows):
    """Median and 90th percentile of time to first byte, the statuses other than 200."""
    if not rows:
        return {"error": "curl answered nothing"}
    ttfb = sorted(r["ttfb_ms"] for r in rows)
    return {"requests": len(rows), "ttfb_median_ms": statistics.median(ttfb),
            "ttfb_p90_ms": ttfb[min(len(ttfb) - 1, int(len(ttfb) * 0.9))],
            "total_median_ms": statistics.median(r["total_ms"] for r in rows),
            "bytes_median": statistics.median(r["bytes"] for r in rows),
            "bad_status": sum(1 for r in rows if r["status"] != 200)}
