"""A real scrape stack for the dashboard query tests, and Grafana's variable interpolation.

Starts, on loopback ports that were free a moment before:

* ``oracle-exporter --replay-loop --replay <demo-before recording>``  (job ``oracle``)
* ``oracle-exporter --replay-loop`` on the demo generator's ``rac-outage`` database (two
  instances, unreachable part of the time)                              (job ``oracle``)
* ``dbhost-exporter`` on the fixture tree of tests/dbhost/make_fixtures.py, listening on
  127.0.0.2 so its ``instance`` is a host of its own                      (job ``dbhost``)
* ``dbhost-exporter`` on this machine's /proc and /sys, 127.0.0.1, with the first real disk
  given role ``redo`` so node_exporter's diskstats join dbhost_lun_info    (job ``dbhost``)
* ``prometheus-node-exporter`` on this machine, 127.0.0.1, with the perf collector on (CPI needs
  hardware counters; see ``hardware_instructions()``)                   (job ``node``)
* ``prometheus-node-exporter`` (diskstats only) on the fixture tree, 127.0.0.2, so node_disk_* of the
  fixture devices join dbhost_lun_info roles redo/data/arch/other         (job ``node``)
* an animator thread that advances the fixture tree's counters one step per scrape interval
  (make_fixtures.advance_tree: ARC/L2ARC, diskstats, SCSI counters, process switches/migrations)
* ``prometheus`` scraping all of them every second and evaluating alerts/recording.rules.yml
  (and alerts/alerts.rules.yml when present) every second.

``missing()`` names the first piece that is not there yet, for a precise skip reason.
Every process is stopped in ``Stack.stop()``, which callers run in a ``finally``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import ctypes
import errno
import platform
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from stack.procs import free_port

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
PROMETHEUS = Path("/usr/bin/prometheus")
NODE_EXPORTER = Path("/usr/bin/prometheus-node-exporter")
DEMO = REPO / "exporters" / "oracle_exporter" / "demo" / "demo-before.jsonl"
STANDBY = REPO / "exporters" / "oracle_exporter" / "demo" / "demo-standby.jsonl"
DEMO_GENERATOR = REPO / "exporters" / "oracle_exporter" / "demo" / "generate.py"
RECORDING_RULES = REPO / "alerts" / "recording.rules.yml"
ALERT_RULES = REPO / "alerts" / "alerts.rules.yml"
FIXTURES = REPO / "tests" / "dbhost" / "make_fixtures.py"
SCRAPE_INTERVAL_S = 1


def _exe(name: str) -> Path | None:
    p = VENV_BIN / name
    if p.exists():
        return p
    found = shutil.which(name)
    return Path(found) if found else None


def missing() -> str | None:
    """The precise reason the live stack cannot run, or None."""
    for path, what in ((PROMETHEUS, "Prometheus binary"), (NODE_EXPORTER, "node_exporter binary"),
                       (FIXTURES, "dbhost fixture generator"), (RECORDING_RULES, "recording rules (alert pack)")):
        if not path.exists():
            return f"{what} missing: {path}"
    for name in ("oracle-exporter", "dbhost-exporter"):
        if _exe(name) is None:
            return f"console script {name} not installed in {VENV_BIN}"
    if not DEMO_GENERATOR.exists():
        return f"demo recording generator missing: {DEMO_GENERATOR}"
    return None


def first_real_disk() -> str | None:
    """A whole disk of this machine with completed I/O (diskstats), not loop/ram/zram/dm."""
    try:
        lines = Path("/proc/diskstats").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        f = line.split()
        name = f[2]
        if re.match(r"^(loop|ram|zram|dm-|md|sr|fd)", name) or not Path(f"/sys/block/{name}").exists():
            continue
        if int(f[3]) + int(f[7]) > 0:
            return name
    return None


REDO_IO = r"""
import mmap, os, sys, time
path, size, block = sys.argv[1], 4 << 20, 64 << 10
with open(path, "wb") as fh:
    fh.write(os.urandom(size)); fh.flush(); os.fsync(fh.fileno())
buf = mmap.mmap(-1, block)
try:
    rfd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
except OSError:
    rfd = os.open(path, os.O_RDONLY)
wfd = os.open(path, os.O_WRONLY)
i = 0
while True:
    off = (i % (size // block)) * block
    os.pwrite(wfd, os.urandom(block), off); os.fsync(wfd)
    try:
        os.preadv(rfd, [buf], ((i * 7) % (size // block)) * block)
    except OSError:
        os.posix_fadvise(rfd, 0, 0, os.POSIX_FADV_DONTNEED); os.pread(rfd, block, off)
    i += 1
    time.sleep(0.2)
"""


# perf_event_open(2) syscall numbers; PERF_TYPE_HARDWARE = 0, PERF_COUNT_HW_INSTRUCTIONS = 1
_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241, "ppc64le": 319, "s390x": 331, "riscv64": 241}


def hardware_instructions() -> tuple[bool | None, str]:
    """Can this machine count retired instructions (what node_exporter's perf collector needs for
    node_perf_instructions_total)? Opens the hardware event with perf_event_open(2) for this
    process, user space only (the least privileged form). (True, ...) if it opens, (False, why)
    if the kernel refuses, (None, why) if the probe cannot run on this architecture."""
    nr = _PERF_EVENT_OPEN.get(platform.machine())
    if nr is None:
        return None, f"no perf_event_open syscall number known for {platform.machine()}"
    # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type, size, config, sample_period,
    # sample_type, read_format, flags (disabled = bit 0, exclude_kernel = bit 5, exclude_hv = bit 6)
    attr = struct.pack("=IIQQQQQ", 0, 64, 1, 0, 0, 0, (1 << 0) | (1 << 5) | (1 << 6)).ljust(64, b"\0")
    buf = ctypes.create_string_buffer(attr, 64)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(nr), buf, ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1),
                      ctypes.c_ulong(0))
    if fd >= 0:
        os.close(fd)
        return True, "perf_event_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS) succeeded"
    err = ctypes.get_errno()
    pmus = sorted(os.listdir("/sys/bus/event_source/devices")) if os.path.isdir("/sys/bus/event_source/devices") else []
    return False, (f"perf_event_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS) fails with "
                   f"{errno.errorcode.get(err, err)} ({os.strerror(err)}): no hardware PMU is exposed "
                   f"(/sys/bus/event_source/devices: {', '.join(pmus) or 'none'}), so node_exporter's perf "
                   f"collector exports only its software counters")


class Animator:
    """Advances a fixture tree one step every ``interval`` seconds in a thread (stop() joins it)."""

    def __init__(self, fixture, advance, interval: float):
        self.fixture, self.advance, self.interval = fixture, advance, interval
        self.step = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fixture-animator", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.advance(self.fixture, self.step + 1)
                self.step += 1
            except Exception as e:  # surfaced by the tests through .errors
                self.errors.append(f"step {self.step + 1}: {type(e).__name__}: {e}")
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)


# this machine's host exporters are scraped as the demo database's host (GV$INSTANCE.HOST_NAME
# of the demo recording, up to the first dot): the dashboards join host and Oracle on host AND sid
REAL_HOST = "dbhost01"


def demo_sid(recording: Path) -> str:
    """INSTANCE_NAME of the first instance in the recording (the host exporter's sid)."""
    with open(recording, encoding="utf-8") as fh:
        for line in fh:
            snap = json.loads(line)
            rows = snap.get("views", {}).get("GV$INSTANCE") or []
            if rows and rows[0].get("INSTANCE_NAME"):
                return rows[0]["INSTANCE_NAME"]
    raise RuntimeError(f"{recording}: no GV$INSTANCE row with INSTANCE_NAME")


class Stack:
    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.prom_url = ""
        self.notes: list[str] = []
        self.real_disk: str | None = None
        self.animator: Animator | None = None
        self.fixture = None

    # ------------------------------------------------------------ processes
    def _start(self, name: str, argv: list[str], env: dict | None = None,
               executable: str | None = None) -> subprocess.Popen:
        with open(self.workdir / f"{name}.log", "wb") as log:
            p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir,
                                 env=env, start_new_session=True, executable=executable)
        self.procs.append((name, p))
        return p

    def stop(self) -> None:
        if self.animator is not None:
            self.animator.stop()
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.time() + 10
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        self.procs.clear()

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def start(self) -> None:
        wd = self.workdir
        # oracle-exporter on the demo recording
        demo = DEMO
        if not demo.exists():
            demo = wd / "demo-before.jsonl"
            subprocess.run([sys.executable, "-m", "oracle_exporter.demo.generate", "--profile", "before",
                            "--out", str(demo), "--quiet"], check=True, cwd=REPO, timeout=120)
            self.notes.append(f"{DEMO} absent: generated the same recording with the demo generator")
        p_ora = free_port()
        # the on-call signals (issue 24) the demo carries: the opt-in alert log, and a backup policy
        # for DEMO so the backup-age panel has its ratio
        demo_cfg = wd / "oracle-demo.yml"
        demo_cfg.write_text("collectors: {alert_log: true}\nbackup_policy:\n"
                            "  DEMO: {full: 8d, incremental: 26h, archivelog: 2h}\ndatabases:\n"
                            "  - {name: DEMO, dsn: 'demo:1521/DEMO', user: u, password_env: PATH}\n")
        self._start("oracle-exporter", [str(_exe("oracle-exporter")), "--config.file", str(demo_cfg),
                                        "--replay", str(demo), "--replay-loop",
                                        f"--web.listen-address=127.0.0.1:{p_ora}"])
        # A second database: the demo generator's two-instance RAC database with an outage
        # (unreachable snapshots: empty views, errors {"*": ORA-12170}), looping, so the database
        # variable has two values and one of them is down part of the time.
        rac_all = wd / "rac-outage.jsonl"
        subprocess.run([sys.executable, "-m", "oracle_exporter.demo.generate", "--profile", "rac-outage",
                        "--minutes", "2", "--interval", "15", "--out", str(rac_all), "--quiet"],
                       check=True, cwd=REPO, timeout=120)
        self.rac = wd / "rac.jsonl"
        demo_dbs = {json.loads(line)["database"] for line in open(demo, encoding="utf-8")}
        with open(rac_all, encoding="utf-8") as src, open(self.rac, "w", encoding="utf-8") as dst:
            dst.writelines(line for line in src if json.loads(line)["database"] not in demo_dbs)
        p_rac = free_port()
        rac_cfg = wd / "oracle-rac.yml"           # RACDB is a CDB: the opt-in per-PDB collector on
        rac_cfg.write_text("collectors: {pdb: true}\ndatabases:\n"
                           "  - {name: RACDB, dsn: 'racdb:1521/RACDB', user: u, password_env: PATH}\n")
        self._start("oracle-exporter-rac", [str(_exe("oracle-exporter")), "--config.file", str(rac_cfg),
                                            "--replay", str(self.rac), "--replay-loop",
                                            f"--web.listen-address=127.0.0.1:{p_rac}"])
        # A third: the demo Data Guard standby (DEMOSB, demo/health.py: its transport breaks in the
        # middle of the recording), so the standby panels have a standby to show.
        self.standby = STANDBY
        p_sb = free_port()
        self._start("oracle-exporter-standby", [str(_exe("oracle-exporter")), "--replay", str(STANDBY),
                                                "--replay-loop", f"--web.listen-address=127.0.0.1:{p_sb}"])

        # dbhost-exporter on the fixture tree, as host 127.0.0.2
        import make_fixtures  # noqa: PLC0415  (tests/dbhost, on pytest's pythonpath)
        fx = make_fixtures.build_tree(wd / "tree")
        # the counters move one step per scrape interval, so ratios of rates are defined
        self.fixture = fx
        self.animator = Animator(fx, make_fixtures.advance_tree, SCRAPE_INTERVAL_S)
        self.animator.start()
        cfg = wd / "dbhost-fixture.yml"
        cfg.write_text(fx.config.read_text().replace("process: false", "process: true"))
        p_fx = free_port("127.0.0.2")
        env = dict(os.environ, PYTHONPATH=str(FIXTURES.parent))
        self._start("dbhost-fixture", [str(_exe("dbhost-exporter")), f"--path.procfs={fx.procfs}",
                                       f"--path.sysfs={fx.sysfs}", f"--config.file={cfg}",
                                       f"--web.listen-address=127.0.0.2:{p_fx}"], env=env)

        # A real process that the host exporter classifies as the demo instance's LGWR
        # (command line ora_lgwr_<SID>): it sleeps 5 ms in a loop, so its context switches and
        # migrations move and the sid -> database joins have something to join.
        self.sid = demo_sid(demo)
        self._start("fake-lgwr", [f"ora_lgwr_{self.sid}", "-c",
                                  "import time\nwhile True:\n    time.sleep(0.005)\n"],
                    executable=sys.executable)
        # ...and one of its dedicated-server foregrounds (argv[0] `oracle<SID> (LOCAL=NO)`), so the
        # sessions' run-queue wait per dispatch has a process behind it too
        self._start("fake-foreground", [f"oracle{self.sid} (LOCAL=NO)", "-c",
                                        "import time\nwhile True:\n    time.sleep(0.005)\n"],
                    executable=sys.executable)

        # Real I/O on this machine's disk (the one given role redo below), so the redo LUN's
        # read and write latency have completed requests to divide by: every 0.2 s write 64 KiB
        # + fsync, and read 64 KiB back with O_DIRECT (page-cache hits would not reach the disk).
        self._start("redo-io", [sys.executable, "-c", REDO_IO, str(wd / "redo-io.dat")])

        # dbhost-exporter and node_exporter on this machine, as host 127.0.0.1
        self.real_disk = first_real_disk()
        real_cfg = wd / "dbhost-real.yml"
        roles = f"    - {{device: {self.real_disk}, role: redo}}\n" if self.real_disk else ""
        real_cfg.write_text("collectors: {lun: true, zfs: true, process: true}\nlun:\n"
                            "  include_types: [scsi, multipath, nvme, virtio, xen, other]\n  default_role: data\n"
                            + ("  roles:\n" + roles if roles else ""))
        p_real = free_port()
        self._start("dbhost-real", [str(_exe("dbhost-exporter")), f"--config.file={real_cfg}",
                                    f"--web.listen-address=127.0.0.1:{p_real}"])
        p_node = free_port()
        self._start("node-exporter", [str(NODE_EXPORTER), "--collector.perf",
                                      f"--web.listen-address=127.0.0.1:{p_node}"])
        # node_exporter's diskstats on the fixture tree, as host 127.0.0.2 (joins dbhost-fixture)
        p_node_fx = free_port("127.0.0.2")
        self._start("node-exporter-fixture", [str(NODE_EXPORTER), f"--path.procfs={fx.procfs}",
                                              f"--path.sysfs={fx.sysfs}", "--collector.disable-defaults",
                                              "--collector.diskstats",
                                              f"--web.listen-address=127.0.0.2:{p_node_fx}"])

        rule_files = [str(RECORDING_RULES)] + ([str(ALERT_RULES)] if ALERT_RULES.exists() else [])
        host_relabel = [{"source_labels": ["__address__"], "regex": "(.+):\\d+",
                         "target_label": "instance", "replacement": "$1"},
                        # this machine runs the demo instance's (fake) LGWR: it is the recording's host,
                        # so the host-and-sid joins have something to join (GV$INSTANCE.HOST_NAME)
                        {"source_labels": ["instance"], "regex": "127\\.0\\.0\\.1",
                         "target_label": "instance", "replacement": REAL_HOST}]
        config = {
            "global": {"scrape_interval": f"{SCRAPE_INTERVAL_S}s", "scrape_timeout": f"{SCRAPE_INTERVAL_S}s",
                       "evaluation_interval": f"{SCRAPE_INTERVAL_S}s"},
            "rule_files": rule_files,
            "scrape_configs": [
                {"job_name": "oracle", "static_configs": [{"targets": [f"127.0.0.1:{p_ora}", f"127.0.0.1:{p_rac}",
                                                                      f"127.0.0.1:{p_sb}"]}]},
                {"job_name": "dbhost", "static_configs": [{"targets": [f"127.0.0.2:{p_fx}", f"127.0.0.1:{p_real}"]}],
                 "relabel_configs": host_relabel},
                {"job_name": "node", "static_configs": [{"targets": [f"127.0.0.1:{p_node}", f"127.0.0.2:{p_node_fx}"]}],
                 "relabel_configs": host_relabel},
            ],
        }
        (wd / "prometheus.yml").write_text(json.dumps(config, indent=1))  # JSON is valid YAML
        p_prom = free_port()
        self.prom_url = f"http://127.0.0.1:{p_prom}"
        self._start("prometheus", [str(PROMETHEUS), f"--config.file={wd / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={wd / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{p_prom}",
                                   "--storage.tsdb.retention.time=1h", "--log.level=warn"])

    # ------------------------------------------------------------ Prometheus HTTP API
    def api(self, path: str, **params) -> dict:
        url = f"{self.prom_url}/api/v1/{path}?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:  # 400/422 carry a JSON error body
            return json.loads(e.read())

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}:\n{self.log(name)}")
            try:
                r = self.api("targets")
                active = r["data"]["activeTargets"]
                if active and all(t["health"] == "up" for t in active):
                    return
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"targets not all up after {timeout}s: "
                           + json.dumps([(t['labels'], t['health'], t['lastError'])
                                         for t in self.api('targets')['data']['activeTargets']]))

    def wait_for(self, expr: str, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.api("query", query=expr)
            if r.get("status") == "success" and r["data"]["result"]:
                return
            time.sleep(0.5)
        raise RuntimeError(f"no data for {expr} after {timeout}s")


# ---------------------------------------------------------------- Grafana interpolation

# Grafana's variable syntax: $var, [[var]], [[var:fmt]], ${var}, ${var.field}, ${var:fmt}
VARIABLE_RE = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}")
_REGEX_SPECIAL = re.compile(r"([$^*{}\[\]'+?.()|])")


def prom_regex_escape(value: str) -> str:
    """Grafana's prometheusSpecialRegexEscape: a literal inside a double-quoted PromQL regex."""
    return _REGEX_SPECIAL.sub(r"\\\\\1", value.replace("\\", "\\\\\\\\"))


def grafana_duration(seconds: float) -> str:
    s = int(round(seconds))
    if s % 3600 == 0:
        return f"{s // 3600}h"
    if s % 60 == 0:
        return f"{s // 60}m"
    return f"{s}s"


def interpolate(expr: str, values: dict[str, list[str] | str], multi: set[str],
                range_s: float, interval_s: float, scrape_s: float) -> str:
    """Replace variables the way Grafana's Prometheus data source does.

    values: variable -> list (query variables) or str (custom/textbox, used raw);
    multi: names of multi-value/include-all variables (formatted "(a|b)", regex-escaped);
    built-ins $__range, $__interval, $__rate_interval = max($__interval + scrape, 4 x scrape).
    """
    builtins = {
        "__range": grafana_duration(range_s), "__range_s": str(int(range_s)),
        "__range_ms": str(int(range_s * 1000)), "__interval": grafana_duration(interval_s),
        "__interval_ms": str(int(interval_s * 1000)),
        "__rate_interval": grafana_duration(max(interval_s + scrape_s, 4 * scrape_s)),
    }

    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(2) or m.group(4)
        if name in builtins:
            return builtins[name]
        if name not in values:
            return m.group(0)  # unknown (e.g. label_replace's $1): Grafana leaves it
        v = values[name]
        if isinstance(v, str):
            return v
        if len(v) == 1:
            return prom_regex_escape(v[0])
        return "(" + "|".join(prom_regex_escape(x) for x in v) + ")"

    return VARIABLE_RE.sub(repl, expr)
