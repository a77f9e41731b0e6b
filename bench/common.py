"""Shared helpers of the benchmarks: run an exporter as its own process,
scrape it over HTTP, and read its CPU time and memory from /proc/PID.

CPU is utime+stime from /proc/PID/stat (all threads of the process, exited
ones included), in clock ticks (1/SC_CLK_TCK s, 10 ms here): a single scrape
is measured to one tick, the steady state as the CPU delta over all
steady-state scrapes divided by their number. Memory is VmRSS (resident now)
and VmHWM (peak resident) from /proc/PID/status.
"""
from __future__ import annotations

import os
import pathlib
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from stack.procs import free_port  # noqa: F401  (the benchmarks take their ports here)

TCK = os.sysconf("SC_CLK_TCK")
ROOT = pathlib.Path(__file__).resolve().parent.parent


class BenchError(Exception):
    """A peer could not be run or gave a wrong answer; the message says which and why."""


def progress(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def machine() -> str:
    model = ""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8", errors="replace"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = mem_total_kib()
    return (f"{platform.machine()}{' (' + model + ')' if model else ''}, {os.cpu_count()} CPUs, "
            f"{mem / 1048576:.1f} GiB RAM, Linux {platform.release()}, Python {platform.python_version()}")


def mem_total_kib() -> int:
    try:
        for line in open("/proc/meminfo", encoding="ascii"):
            if line.startswith("MemTotal:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads, exited ones included), seconds."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        rest = fh.read().rsplit(b")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / TCK


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB."""
    rss = hwm = 0
    with open(f"/proc/{pid}/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith(b"VmHWM:"):
                hwm = int(line.split()[1])
    return rss, hwm


def median(values) -> float:
    return statistics.median(values)


def count_series(text: bytes, prefixes: tuple[str, ...] | None = None) -> int:
    """Sample lines of a text exposition (optionally only those whose name starts with a prefix)."""
    n = 0
    pre = tuple(p.encode() for p in prefixes) if prefixes else None
    for line in text.splitlines():
        if not line or line.startswith(b"#"):
            continue
        if pre is None or line.startswith(pre):
            n += 1
    return n


def samples(text: bytes, name: str) -> list[tuple[bytes, float]]:
    """(label block, value) of every sample of metric ``name`` (exact name) in an exposition."""
    out = []
    key, key_brace = name.encode() + b" ", name.encode() + b"{"
    for line in text.splitlines():
        if line.startswith(key) or line.startswith(key_brace):
            head, value = line.rsplit(b" ", 1)
            out.append((head[len(name):], float(value)))
    return out


@dataclass
class ScrapeRun:
    """Measurements of one exporter process scraped over HTTP."""
    name: str
    startup: float = 0.0                      # seconds from exec to listening
    first: tuple[float, float] = (0.0, 0.0)   # (wall, CPU) of the first scrape
    steady_wall: list[float] = field(default_factory=list)
    steady_cpu_total: float = 0.0             # CPU over all steady-state scrapes
    mem_start: tuple[int, int] = (0, 0)       # (VmRSS, VmHWM) KiB when listening, before any scrape
    mem_first: tuple[int, int] = (0, 0)       # after the first scrape
    mem_end: tuple[int, int] = (0, 0)         # after the last scrape
    text: bytes = b""                         # last exposition
    bytes_out: int = 0

    @property
    def steady_n(self) -> int:
        return len(self.steady_wall)

    @property
    def steady_wall_median(self) -> float:
        return median(self.steady_wall)

    @property
    def steady_cpu(self) -> float:
        return self.steady_cpu_total / max(self.steady_n, 1)


class Exporter:
    """An exporter process listening on 127.0.0.1:<port>, killed on exit."""

    def __init__(self, name: str, argv: list[str], port: int, env: dict | None = None, timeout: float = 120):
        self.name, self.argv, self.port, self.timeout = name, argv, port, timeout
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.startup = 0.0
        self._err = tempfile.TemporaryFile()

    def __enter__(self) -> "Exporter":
        t0 = time.perf_counter()
        try:
            self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=self._err, env=self.env)
        except OSError as exc:
            raise BenchError(f"{self.name}: cannot start {self.argv[0]}: {exc}") from None
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.name} exited with status {self.proc.returncode}: {self.stderr()[-1500:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    raise BenchError(f"{self.name}: not listening on port {self.port} after {self.timeout:.0f} s")
                time.sleep(0.02)
        self.startup = time.perf_counter() - t0
        return self

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read().decode("utf-8", "replace")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._err.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def get(self, path: str = "/metrics") -> bytes:
        url = f"http://127.0.0.1:{self.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as resp:
                return resp.read()
        except (urllib.error.URLError, OSError) as exc:
            raise BenchError(f"{self.name}: GET {url} failed: {exc}; stderr: {self.stderr()[-1000:]}") from None

    def scrape(self, path: str = "/metrics") -> tuple[float, float, bytes]:
        """(wall, CPU of the exporter process, body) of one scrape."""
        c0 = cpu_seconds(self.pid)
        w0 = time.perf_counter()
        body = self.get(path)
        wall = time.perf_counter() - w0
        return wall, cpu_seconds(self.pid) - c0, body


def scrape_run(exp: Exporter, steady: int, path: str = "/metrics", before_each=None) -> ScrapeRun:
    """Measure a started exporter: memory at start, the first scrape, ``steady`` more scrapes
    (``before_each(k)`` runs before steady scrape k, outside the timed part), memory at the end."""
    run = ScrapeRun(exp.name, startup=exp.startup)
    time.sleep(0.2)  # let a lazily initialising runtime settle before the baseline
    run.mem_start = memory_kib(exp.pid)
    w, c, body = exp.scrape(path)
    run.first = (w, c)
    run.mem_first = memory_kib(exp.pid)
    cpu_total = 0.0
    for k in range(1, steady + 1):
        if before_each:
            before_each(k)
        w, c, body = exp.scrape(path)
        run.steady_wall.append(w)
        cpu_total += c
    run.steady_cpu_total = cpu_total
    run.mem_end = memory_kib(exp.pid)
    run.text = body
    run.bytes_out = len(body)
    return run


def python_cmd(module: str) -> list[str]:
    """Run one of our console scripts' modules with this interpreter (same virtualenv)."""
    return [sys.executable, "-m", module]


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f}"


def ratio(a: float, b: float) -> str:
    if b <= 0:
        return "n/a"
    return f"{a / b:.1f}x"


# process-exporter (github.com/ncabatoff/process-exporter), the peer of the process collector:
# grouping the same Oracle processes as dbhost-exporter by command line.
PE_CONFIG = """process_names:
  - name: "{{.Matches.sid}}:{{.Matches.role}}"
    cmdline:
    - '^ora_(?P<role>[a-z0-9]+)_(?P<sid>[A-Za-z0-9_$#+]+)'
  - name: "{{.Matches.sid}}:foreground"
    cmdline:
    - '^oracle(?P<sid>[A-Za-z0-9_$#+]+)( \\(.*)?$'
"""
PE_SRC = "/tmp/pe-src"
PE_BIN = "/tmp/pe-src/process-exporter"


def process_exporter_argv(binary: str, procfs: str, config: str, port: int) -> list[str]:
    return [binary, "-procfs", procfs, "-config.path", config, "-gather-smaps=false", "-threads=true",
            "-web.listen-address", f"127.0.0.1:{port}"]


def ensure_process_exporter(binary: str | None, src: str = PE_SRC) -> tuple[str | None, str]:
    """(path of a process-exporter binary or None, how it was obtained or why not).
    Uses the given binary, else builds it from the source checkout ``src`` with Go
    (`go build ./cmd/process-exporter`) unless already built there."""
    if binary:
        if os.access(binary, os.X_OK):
            return binary, f"given binary {binary}"
        return None, f"{binary} is not an executable file"
    built = os.path.join(src, "process-exporter")
    if os.access(built, os.X_OK):
        return built, f"built from source in {src}"
    if not os.path.isfile(os.path.join(src, "go.mod")):
        return None, (f"no process-exporter source checkout at {src} (clone github.com/ncabatoff/process-exporter "
                      "there, or pass --process-exporter BIN)")
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if not go:
        return None, "Go is not installed: cannot build process-exporter from source"
    progress(f"building process-exporter from source in {src} ...")
    try:
        r = subprocess.run([go, "build", "-o", built, "./cmd/process-exporter"], cwd=src,
                           capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"go build failed: {exc}"
    if r.returncode != 0 or not os.access(built, os.X_OK):
        return None, f"go build failed (exit {r.returncode}): {r.stderr.strip()[-500:]}"
    return built, f"built from source in {src} with `go build ./cmd/process-exporter`"


# Benchmarks write here unless asked (--results bench/RESULTS.md): build/ is git-ignored, so
# a run never rewrites the tracked bench/RESULTS.md by default.
TRACKED_RESULTS = pathlib.Path(__file__).resolve().parent / "RESULTS.md"
DEFAULT_RESULTS = TRACKED_RESULTS.parent.parent / "build" / "bench" / "RESULTS.md"


def write_section(path: pathlib.Path, name: str, body: str) -> None:
    """Replace (or append) the section NAME of RESULTS.md, between its <!-- bench:NAME --> markers,
    leaving every other section as it is (a new file starts from the tracked one's sections)."""
    path = pathlib.Path(path)
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    try:
        text = path.read_text()
    except OSError:
        try:
            text = TRACKED_RESULTS.read_text()
        except OSError:
            text = "# Benchmarks\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    block = f"{start}\n{body.strip(chr(10))}\n{end}"
    if start in text and end in text:
        text = text[:text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
