"""dbhost-exporter command line, config errors, HTTP serving, isolation and the series cap."""
from __future__ import annotations

import logging
import subprocess
import sys
import re
import time
import urllib.request

import pytest

import make_fixtures as mf
from dbhost_support import EXPORTER, REPO, run_once, samples, value
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from dbhost_exporter.cli import build_collectors
from dbhost_exporter.config import load_config
from dbhost_exporter.scrape import DbhostExporter
from stack.procs import free_port as _free_port


@pytest.mark.slow
@pytest.mark.parametrize("text,field,message", [
    ("lun:\n  roles:\n    - {wwid: x, device: sda, role: redo}\n", "lun.roles[0].role", "exactly one of"),
    ("lun:\n  roles:\n    - {device: sda}\n", "lun.roles[0].role", "is required"),
    ("lun:\n  include_types: [scsi, floppy]\n", "lun.include_types[1]", "must be one of"),
    ("lun:\n  identity_refresh_seconds: -1\n", "lun.identity_refresh_seconds", "must be >= 0"),
    ("max_series: 0\n", "max_series", "must be >= 1"),
    ("max_series: 2.5\n", "max_series", "whole number"),
    ("collectors: {lun: yes-please}\n", "collectors.lun", "expected true or false"),
    ("collectors: {disk: true}\n", "collectors.disk", "unknown field"),
    ("process:\n  extra_groups:\n    - {name: asm, regex: '([a-'}\n", "process.extra_groups[0].regex",
     "invalid regular expression"),
    ("zfs: {kstat_file: 5}\n", "zfs.kstat_file", "expected a non-empty string"),
    ("lun:\n  default_role: 'two words'\n", "lun.default_role", "short word"),
    ("colectors: {}\n", "colectors", "unknown field"),
    # the issue-21 review: the key inside a section is named, the known ones listed, duplicates refused
    ("memory: {x: 1}\n", "memory.x", "unknown field (nothing is configured here)"),
    ("collectors: {foo: true}\n", "collectors.foo", "unknown field (known: lun, memory, process, zfs)"),
    ("lun:\n  include_types: [scsi, scsi]\n", "lun.include_types[1]", "duplicate entry 'scsi'"),
])
def test_bad_config_exits_2_naming_file_and_field(tmp_path, text, field, message):
    cfg = tmp_path / "bad.yml"
    cfg.write_text(text)
    proc = run_once("--config.file", str(cfg), "--path.procfs", str(tmp_path), "--path.sysfs", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {cfg}: {field}: "), proc.stderr
    assert message in line
    assert "Traceback" not in proc.stderr


def test_missing_and_invalid_yaml_config(tmp_path):
    proc = run_once("--config.file", str(tmp_path / "nope.yml"))
    assert proc.returncode == 2 and "nope.yml: file not found" in proc.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text("lun: [unclosed\n")
    proc = run_once("--config.file", str(bad))
    assert proc.returncode == 2 and "invalid YAML at line" in proc.stderr and "Traceback" not in proc.stderr


def test_config_values_reach_the_collectors(tmp_path):
    cfg = tmp_path / "c.yml"
    cfg.write_text("max_series: 77\nlun:\n  include_types: [scsi, loop]\n  identity_refresh_seconds: 60\n"
                   "  roles:\n    - {multipath: redo01, role: redo}\nprocess:\n  extra_groups:\n"
                   "    - {name: asm, regex: '^asm_'}\nzfs: {kstat_file: /x/kstat.txt}\n"
                   "collectors: {process: false}\n")
    c = load_config(str(cfg))
    assert c.max_series == 77
    assert c.lun.include_types == frozenset({"scsi", "loop"})
    assert c.lun.identity_refresh_seconds == 60
    assert [(r.by, r.value, r.role) for r in c.lun.roles] == [("multipath", "redo01", "redo")]
    assert c.extra_groups == [("asm", "^asm_")]
    assert c.zfs_kstat_file == "/x/kstat.txt"
    from dbhost_exporter.collectors import MODULES
    assert [col.name for col in build_collectors(c, "/proc", "/sys")] == [n for n in MODULES if n != "process"]


def test_a_broken_collector_module_is_an_error_at_start(monkeypatch):
    """No silent fallback to fewer collectors: the import error reaches the operator."""
    import importlib

    import dbhost_exporter.cli as cli
    monkeypatch.setitem(sys.modules, "dbhost_exporter.collectors.process", None)   # import now fails
    with pytest.raises(ImportError):
        importlib.reload(cli)
    monkeypatch.undo()
    importlib.reload(cli)


class _Boom:
    name = "boom"

    def collect(self):
        yield GaugeMetricFamily("dbhost_boom_partial", "yielded before failing", value=1)
        raise RuntimeError("sysfs vanished")


class _Many:
    name = "many"

    def __init__(self, n):
        self.n = n

    def collect(self):
        a = GaugeMetricFamily("dbhost_many_a", "a", labels=["i"])
        b = GaugeMetricFamily("dbhost_many_b", "b", labels=["i"])
        for i in range(self.n):
            a.add_metric([str(i)], i)
            b.add_metric([str(i)], i)
        yield a
        yield b


def scrape(exporter):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(exporter)
    return samples(generate_latest(reg).decode())


def test_one_failing_collector_does_not_stop_the_others(caplog):
    with caplog.at_level(logging.ERROR):
        got = scrape(DbhostExporter([_Boom(), _Many(2)], max_series=100))
    assert value(got, "dbhost_collector_success", collector="boom") == 0
    assert value(got, "dbhost_collector_success", collector="many") == 1
    assert ("dbhost_boom_partial", ()) not in got          # half a scrape is not exported
    assert value(got, "dbhost_many_b", i="1") == 1
    assert any("collector boom failed: RuntimeError: sysfs vanished" in r.getMessage() for r in caplog.records)


def test_series_cap_drops_and_counts():
    exp = DbhostExporter([_Many(4)], max_series=6)       # 8 samples, 6 kept
    got = scrape(exp)
    assert len([k for k in got if k[0] in ("dbhost_many_a", "dbhost_many_b")]) == 6
    assert ("dbhost_many_b", (("i", "1"),)) in got and ("dbhost_many_b", (("i", "2"),)) not in got
    assert value(got, "dbhost_collector_dropped_series_total", collector="many") == 2
    got = scrape(exp)
    assert value(got, "dbhost_collector_dropped_series_total", collector="many") == 4
    assert value(got, "dbhost_exporter_build_info", version=__import__("dbhost_exporter").__version__) == 1


def test_serves_landing_page_and_metrics(tree):
    port = _free_port()
    proc = subprocess.Popen([*EXPORTER, "--web.listen-address", f"127.0.0.1:{port}", "--path.procfs",
                             str(tree.procfs), "--path.sysfs", str(tree.sysfs), "--config.file", str(tree.config)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                landing = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert '<a href="/metrics">Metrics</a>' in landing
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        got = samples(body)
        assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="host") == 8
        assert value(got, "dbhost_lun_samples_total", device="sda") == 1
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        assert value(samples(body), "dbhost_lun_samples_total", device="sda") == 2   # state kept across scrapes
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def test_whole_tree_with_process_collector_runs_cleanly(tmp_path):
    fx = mf.build_tree(tmp_path / "t", with_proc=True)
    cfg = tmp_path / "all.yml"
    cfg.write_text(mf.ROLES_CONFIG.replace("process: false", "process: true"))
    proc = run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs), "--config.file", str(cfg))
    assert proc.returncode == 0, proc.stderr
    got = samples(proc.stdout)
    for name in ("lun", "zfs", "process", "memory"):
        assert value(got, "dbhost_collector_success", collector=name) == 1
    assert any(k[0] == "dbhost_process_context_switches_total" for k in got)
    assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="host") == 8


def test_shipped_example_config_loads_and_runs(tree):
    example = REPO / "examples" / "dbhost-exporter.yml"
    cfg = load_config(str(example))
    assert [(r.by, r.role) for r in cfg.lun.roles] == [("wwid", "redo"), ("multipath", "data"),
                                                       ("multipath", "arch"), ("device", "temp")]
    proc = run_once("--path.procfs", str(tree.procfs), "--path.sysfs", str(tree.sysfs), "--config.file", str(example))
    assert proc.returncode == 0, proc.stderr
    got = samples(proc.stdout)
    assert value(got, "dbhost_lun_info", device="dm-0", hctl="", vendor="NETAPP", model="LUN C-Mode",
                 wwid="3600a098038303053453f463045727a41", multipath="redo01", role="redo") == 1
    assert value(got, "dbhost_lun_info", device="nvme0n1", hctl="", vendor="", model=mf.NVME["model"],
                 wwid=mf.NVME["wwid"], multipath="", role="temp") == 1


def test_a_regex_nested_too_deeply_is_one_config_error(tmp_path):
    """Issue 27 review: an extra group's regex of 5000 nested groups raised RecursionError (a
    3000-line traceback) instead of naming the key like any other bad regex."""
    from exporter_common.config import ConfigError
    cfg = tmp_path / "d.yml"
    cfg.write_text('process:\n  extra_groups:\n    - {name: x, regex: "' + "(" * 5000 + ")" * 5000 + '"}\n')
    with pytest.raises(ConfigError) as err:
        load_config(str(cfg))
    assert "process.extra_groups[0].regex: invalid regular expression: nested too deeply" in str(err.value)


@pytest.mark.parametrize("flag", [False, True])
def test_gzip_to_a_scraper_that_asks_unless_disable_compression(tree, flag):
    import gzip
    port = _free_port()
    proc = subprocess.Popen([*EXPORTER, "--web.listen-address", f"127.0.0.1:{port}", "--path.procfs",
                             str(tree.procfs), "--path.sysfs", str(tree.sysfs), "--config.file", str(tree.config),
                             *(["--web.disable-compression"] if flag else [])],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept-Encoding": "gzip"})
        deadline = time.monotonic() + 20
        while True:
            try:
                resp = urllib.request.urlopen(req, timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        raw = resp.read()
        assert resp.headers.get("Content-Encoding") == (None if flag else "gzip")
        # the format was chosen from Accept, the encoding from Accept-Encoding: a cache must know both
        assert resp.headers.get_all("Vary") == ["Accept" if flag else "Accept, Accept-Encoding"]
        body = (raw if flag else gzip.decompress(raw)).decode()
        assert value(samples(body), "dbhost_lun_inflight_requests", device="sda", queue="host") == 8
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_port_zero_logs_the_port_the_kernel_gave(tree):
    """`--web.listen-address 127.0.0.1:0`: the start line names the port actually listened on."""
    proc = subprocess.Popen([*EXPORTER, "--web.listen-address", "127.0.0.1:0", "--path.procfs", str(tree.procfs),
                             "--path.sysfs", str(tree.sysfs), "--config.file", str(tree.config)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        deadline = time.monotonic() + 20
        while "listening on" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        port = int(re.search(r"listening on http://127\.0\.0\.1:(\d+)", line).group(1))
        assert port != 0
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# review host finding 7: illumos/Solaris have no /sys; a zfs-only config must start there
def test_zfs_only_config_with_kstat_file_starts_without_sysfs_and_procfs(tmp_path):
    kstat = tmp_path / "arcstats.kstat"
    kstat.write_text(mf.illumos_kstat_text())
    cfg = tmp_path / "solaris.yml"
    cfg.write_text("collectors: {lun: false, process: false, memory: false}\nzfs: {kstat_file: arcstats.kstat}\n")
    proc = run_once("--config.file", str(cfg), "--path.sysfs", str(tmp_path / "no-sys"),
                    "--path.procfs", str(tmp_path / "no-proc"))
    assert proc.returncode == 0, proc.stderr
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="zfs") == 1
    assert any(k[0].startswith("dbhost_zfs_arc") for k in got)
    assert not any(k[1] and ("collector", "lun") in k[1] for k in got)


@pytest.mark.parametrize("switches,missing", [
    ("{process: false, memory: false, zfs: false}", "--path.sysfs"),      # lun on: /sys is needed
    ("{lun: false, zfs: false, memory: false}", "--path.procfs"),         # process on: /proc is needed
])
def test_a_switched_on_collector_still_needs_its_mount_point(tmp_path, switches, missing):
    cfg = tmp_path / "c.yml"
    cfg.write_text(f"collectors: {switches}\n")
    args = {"--path.sysfs": str(tmp_path), "--path.procfs": str(tmp_path)}
    args[missing] = str(tmp_path / "nope")
    proc = run_once("--config.file", str(cfg), *[x for kv in args.items() for x in kv])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {missing}: {tmp_path / 'nope'} does not exist"]
