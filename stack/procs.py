"""Process management shared by ``make run`` (stack/run.py) and the end-to-end
tests: start each component in its own process group with its output in a log
file, wait until its HTTP endpoint answers, and stop the whole group (SIGTERM,
then SIGKILL) in reverse start order, also when something failed half-way.

Components also die with their supervisor when it cannot clean up (kill -9,
OOM killer): each is started with a parent-death signal (Linux
``prctl(PR_SET_PDEATHSIG, SIGKILL)``), so no component outlives the process
that started it and keeps its port."""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import random
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Sequence


_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl
except (OSError, AttributeError):   # not Linux: no parent-death signal, stop_all still stops everything
    _prctl = None


def _die_with(parent_pid: int) -> Callable[[], None]:
    """preexec_fn: in the child, after fork and before exec, ask the kernel for SIGKILL
    when the parent dies; if it already died (between fork and prctl), exit at once.

    The signal fires when the *thread* that forked exits, so start components from a
    thread that lives as long as the supervisor (stack.run and the tests use the main thread)."""
    def preexec() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)
    return preexec


class StackError(Exception):
    """A component could not be started or did not become ready; the message says why."""


def http_get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """GET url; (status, body). Connection errors give status 0."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


def http_json(url: str, timeout: float = 5.0, data: Any = None) -> Any:
    """GET (or POST JSON when data is given) and decode the JSON answer; raise StackError on failure."""
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raise StackError(f"{url}: HTTP {exc.code}: {exc.read()[:300]!r}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise StackError(f"{url}: {exc}") from None


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on host:port (or the port cannot be bound)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def check_ports(ports: dict[str, int], host: str = "127.0.0.1") -> None:
    """Fail with one clear message naming every component whose port is taken."""
    taken = [f"{name} ({host}:{port})" for name, port in ports.items() if port_in_use(host, port)]
    if taken:
        raise StackError("port already in use: " + ", ".join(taken)
                         + "; stop what uses it or choose other ports (python -m stack.run --help)")


PORTS_FROM = 20000      # free_ports picks from here up to the kernel's ephemeral range


def _ephemeral_low(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> int | None:
    try:
        with open(path) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _worker_span(low: int, high: int) -> tuple[int, int]:
    """[low, high), or under pytest-xdist (PYTEST_XDIST_WORKER gwI of PYTEST_XDIST_WORKER_COUNT N)
    the I-th of N equal slices of it: a port one worker picked and released is never the pick of
    another worker before its program binds it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if worker.startswith("gw") and worker[2:].isdigit() and count.isdigit() and int(worker[2:]) < int(count):
        size = (high - low) // int(count)
        if size >= 20:
            start = low + int(worker[2:]) * size
            return start, start + size
    return low, high


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """n distinct TCP ports free now (released before return), for programs started next to bind.
    Chosen at random below the kernel's ephemeral range (net.ipv4.ip_local_port_range) when it
    leaves room: a port of that range (what bind to port 0 gives) is also what the kernel hands
    out as the local end of any outgoing connection on the machine, so one can be taken between
    this call and the program's bind (seen: a test's node_exporter refused with "address already
    in use"); a port below it is only ever taken by an explicit bind. Otherwise kernel-assigned."""
    low = _ephemeral_low()
    span = _worker_span(PORTS_FROM, low) if low is not None and low - PORTS_FROM >= 1000 else None
    socks, ports = [], []
    pick = random.SystemRandom()        # two test workers never share a sequence
    try:
        tries = 0
        while len(ports) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            candidate = 0
            if span is not None and tries < 50 * n:
                candidate = pick.randrange(*span)
                tries += 1
            try:
                s.bind((host, candidate))
            except OSError:
                s.close()
                continue
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def free_port(host: str = "127.0.0.1") -> int:
    """One port as ``free_ports`` picks it (every test and benchmark takes its ports here)."""
    return free_ports(1, host)[0]


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.25,
               alive: Callable[[], None] | None = None) -> Any:
    """Poll check() until it returns a truthy value; raise StackError naming `what` on timeout.

    ``alive`` is called on every round and should raise when a process the
    wait depends on has died, so a crash is reported at once with its log."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        if alive is not None:
            alive()
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise StackError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class Proc:
    """One component: argv, a log file, an optional readiness URL."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, ready_url: str | None = None,
                 env: dict[str, str] | None = None, cwd: Path | None = None):
        """ready_url: the component is ready when a GET of it answers 200."""
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log_path = Path(log_path)
        self.ready_url = ready_url
        self.env = env
        self.cwd = cwd
        self.popen: subprocess.Popen | None = None

    def start(self) -> "Proc":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update(self.env or {})
        with open(self.log_path, "ab") as log:
            log.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} starting: {' '.join(self.argv)}\n".encode())
            log.flush()
            try:
                # start_new_session: own process group, so stop() reaches every child
                # and a Ctrl-C in the terminal reaches only stack.run, which then stops
                # the components in order. _die_with: gone when the supervisor dies.
                self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, env=env, cwd=self.cwd,
                                              start_new_session=True, preexec_fn=_die_with(os.getpid()))
            except OSError as exc:
                raise StackError(f"{self.name}: cannot start {self.argv[0]}: {exc.strerror}") from None
        return self

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def check_alive(self) -> None:
        if self.popen is not None and self.popen.poll() is not None:
            raise StackError(f"{self.name} exited with status {self.popen.returncode}; "
                             f"last lines of {self.log_path}:\n{self.log_tail()}")

    def wait_ready(self, timeout: float = 30.0) -> None:
        if not self.ready_url:
            return
        wait_until(lambda: http_get(self.ready_url, timeout=1.0)[0] == 200, timeout,
                   f"{self.name} at {self.ready_url}", alive=self.check_alive)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM the process group, SIGKILL it after timeout; return the exit status."""
        p = self.popen
        if p is None:
            return None
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(5)
        # children that outlived their leader (same group) go too
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return p.returncode


class Supervisor:
    """Starts components in order and stops all of them in reverse order.

    Use as a context manager (or call stop_all in a finally): every process it
    started is stopped when the block exits, whether by success, exception or
    signal."""

    def __init__(self, log: Callable[[str], None] | None = None):
        self.procs: list[Proc] = []
        self.log = log or (lambda msg: None)

    def start(self, proc: Proc, ready_timeout: float = 30.0) -> Proc:
        self.log(f"starting {proc.name} ...")
        self.procs.append(proc)
        proc.start()
        proc.wait_ready(ready_timeout)
        self.log(f"{proc.name} ready (pid {proc.pid})" + (f" at {proc.ready_url}" if proc.ready_url else ""))
        return proc

    def check_alive(self) -> None:
        for p in self.procs:
            p.check_alive()

    def stop_all(self) -> None:
        for p in reversed(self.procs):
            if p.popen is not None:
                was_running = p.running()
                p.stop()
                if was_running:
                    self.log(f"stopped {p.name}")
        self.procs.clear()

    def __enter__(self) -> "Supervisor":
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()
