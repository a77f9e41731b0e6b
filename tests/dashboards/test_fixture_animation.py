"""make_fixtures.advance_tree: the counters of the fixture host tree move by the documented
per-step increments, seen through the real readers (dbhost-exporter --once, node_exporter's
diskstats collector, the exporter's illumos kstat parser); nothing else changes, and step 0 is
the original tree byte for byte. The expectations come from the generator's constants
(ARC_STEP_KINDS, ARC_STEP, DISK_STEP, _thread_step, THREAD_STEP_OVERRIDES), never from
exporter output."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

import dash_stack as ds
import fixtures_proc
import make_fixtures as mf

DBHOST_TESTS = Path(mf.__file__).resolve().parent

N = 12


def files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, filenames in os.walk(root):
        if ".advance" in dirpath:
            continue
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                out[os.path.relpath(p, root)] = Path(p).read_bytes()
    return out


def once(fx: mf.Fixture) -> dict:
    env = dict(os.environ, PYTHONPATH=str(DBHOST_TESTS))
    proc = subprocess.run([sys.executable, "-m", "dbhost_exporter.cli", "--once", f"--path.procfs={fx.procfs}",
                           f"--path.sysfs={fx.sysfs}", f"--config.file={fx.config}"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    out = {}
    for fam in text_string_to_metric_families(proc.stdout):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def v(parsed: dict, name: str, **labels) -> float:
    return parsed[(name, tuple(sorted(labels.items())))]


@pytest.fixture
def fx(tmp_path):
    return mf.build_tree(tmp_path / "tree")


def test_step_zero_is_the_original_tree_and_only_counter_files_change(fx):
    before = files(fx.root)
    mf.advance_tree(fx, N)
    after = files(fx.root)
    assert set(after) == set(before)                     # no file appears or disappears
    changed = {p for p in before if before[p] != after[p]}
    kinds = {os.path.basename(p) for p in changed}
    assert kinds == {"arcstats", "kstat_p.txt", "diskstats", "iorequest_cnt", "iodone_cnt", "stat", "status", "sched",
                     "schedstat"}
    # every moving process file belongs to a PID of the process fixture
    pids = {str(s.pid) for s in fixtures_proc.proc_specs()}
    assert {p.split(os.sep)[1] for p in changed if p.startswith("proc" + os.sep) and p.split(os.sep)[1].isdigit()} == pids
    mf.advance_tree(fx, 0)
    assert files(fx.root) == before
    with pytest.raises(ValueError, match="step must be >= 0"):
        mf.advance_tree(fx, -1)


@pytest.mark.slow
def test_dbhost_exporter_sees_the_documented_increments(fx):
    a = once(fx)
    mf.advance_tree(fx, N)
    b = once(fx)

    def delta(name, **labels):
        return v(b, name, **labels) - v(a, name, **labels)

    for kind, (hits, iohits, misses) in mf.ARC_STEP_KINDS.items():
        assert delta("dbhost_zfs_arc_hits_total", kind=kind) == N * hits
        assert delta("dbhost_zfs_arc_iohits_total", kind=kind) == N * iohits
        assert delta("dbhost_zfs_arc_misses_total", kind=kind) == N * misses
    assert delta("dbhost_zfs_l2arc_hits_total") == N * 150
    assert delta("dbhost_zfs_l2arc_misses_total") == N * 130
    assert delta("dbhost_zfs_l2arc_feeds_total") == N
    assert delta("dbhost_zfs_l2arc_written_bytes_total") == N * (4 << 20)
    assert delta("dbhost_zfs_l2arc_errors_total", kind="checksum") == N // mf.L2_CKSUM_EVERY == 3
    assert delta("dbhost_zfs_l2arc_errors_total", kind="io") == 0
    assert delta("dbhost_zfs_arc_state_hits_total", state="mfu") == N * 2290
    # gauges stand still
    for name in ("dbhost_zfs_arc_size_bytes", "dbhost_zfs_l2arc_size_bytes"):
        assert delta(name) == 0
    # SCSI: every completed request of the path was issued and done; the LUN/host queues do not move
    for dev in ("sda", "sdb", "sdc", "sdd", "sde"):
        step = mf.DISK_STEP[dev]
        assert delta("dbhost_lun_iorequests_total", device=dev) == N * (step.reads + step.writes)
        assert delta("dbhost_lun_iodone_total", device=dev) == N * (step.reads + step.writes)
        assert delta("dbhost_lun_ioerrors_total", device=dev) == 0
        for q in ("lun", "host"):
            assert delta("dbhost_lun_inflight_requests", device=dev, queue=q) == 0
    # processes: sums of the per-thread step over the (sid, role) group
    want: dict[tuple[str, str, str], int] = {}
    for i, spec in enumerate(fixtures_proc.proc_specs()):
        if spec.group is None:
            continue
        for k, _ in enumerate(spec.threads):
            d = {**mf._thread_step(i, k), **(mf.THREAD_STEP_OVERRIDES.get(spec.pid, {}) if k == 0 else {})}
            for kind, field in (("voluntary", "voluntary"), ("involuntary", "involuntary"), ("mig", "migrations")):
                key = (*spec.group, kind)
                want[key] = want.get(key, 0) + N * d[field]
    assert len(want) == 3 * 18    # 18 (sid, role) groups: ORCL 9, DWH1 6, PROD_EAST1 3
    for (sid, role, kind), d in want.items():
        if kind == "mig":
            assert delta("dbhost_process_migrations_total", sid=sid, role=role) == d, (sid, role)
        else:
            assert delta("dbhost_process_context_switches_total", sid=sid, role=role, kind=kind) == d, (sid, role)
    # ORCL's LGWR keeps R14 "before": 30 % of its switches involuntary
    assert want[("ORCL", "lgwr", "involuntary")] / (want[("ORCL", "lgwr", "voluntary")]
                                                   + want[("ORCL", "lgwr", "involuntary")]) == 0.3


def test_illumos_kstat_text_moves_like_linux_arcstats(fx):
    from dbhost_exporter.collectors.zfs import parse_kstat_p, parse_linux_arcstats
    k0 = parse_kstat_p(fx.kstat_file.read_text())
    l0 = parse_linux_arcstats((fx.procfs / "spl/kstat/zfs/arcstats").read_text())
    mf.advance_tree(fx, N)
    k1 = parse_kstat_p(fx.kstat_file.read_text())
    l1 = parse_linux_arcstats((fx.procfs / "spl/kstat/zfs/arcstats").read_text())
    total_hits = sum(h for h, _, _ in mf.ARC_STEP_KINDS.values())
    total_misses = sum(m for _, _, m in mf.ARC_STEP_KINDS.values())
    for before, after in ((k0, k1), (l0, l1)):
        assert after["hits"] - before["hits"] == N * total_hits
        assert after["misses"] - before["misses"] == N * total_misses
        assert after["l2_hits"] - before["l2_hits"] == N * 150
        assert after["size"] == before["size"]
    assert l1["iohits"] - l0["iohits"] == N * sum(i for _, i, _ in mf.ARC_STEP_KINDS.values())
    assert "iohits" not in k1     # illumos has no iohits


@pytest.mark.skipif(not ds.NODE_EXPORTER.exists(), reason=f"node_exporter missing: {ds.NODE_EXPORTER}")
def test_node_exporter_reads_the_grown_diskstats(fx):
    """The real node_exporter on the fixture's procfs: the latency ratios the live dashboard test
    relies on (time / completed ops, per device) are the DISK_STEP ones."""
    port = ds.free_port()
    log = open(fx.root / "node.log", "wb")
    p = subprocess.Popen([str(ds.NODE_EXPORTER), f"--path.procfs={fx.procfs}", f"--path.sysfs={fx.sysfs}",
                          "--collector.disable-defaults", "--collector.diskstats",
                          f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)

    def scrape() -> dict:
        deadline = time.time() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
                break
            except OSError:
                if time.time() > deadline or p.poll() is not None:
                    raise
                time.sleep(0.1)
        out = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    try:
        a = scrape()
        mf.advance_tree(fx, N)
        b = scrape()
    finally:
        p.terminate()
        p.wait(timeout=10)
        log.close()

    def delta(name, dev):
        return v(b, name, device=dev) - v(a, name, device=dev)

    for dev, step in mf.DISK_STEP.items():
        assert delta("node_disk_reads_completed_total", dev) == N * step.reads, dev
        assert delta("node_disk_writes_completed_total", dev) == N * step.writes, dev
        assert delta("node_disk_read_time_seconds_total", dev) == pytest.approx(N * step.read_ms / 1000), dev
        assert delta("node_disk_write_time_seconds_total", dev) == pytest.approx(N * step.write_ms / 1000), dev
        assert delta("node_disk_written_bytes_total", dev) == N * step.write_sectors * 512, dev
        assert delta("node_disk_io_time_weighted_seconds_total", dev) == pytest.approx(
            N * (step.read_ms + step.write_ms) / 1000), dev
    # dm-multipath maps complete their paths' requests
    assert mf.DISK_STEP["dm-0"].writes == mf.DISK_STEP["sda"].writes + mf.DISK_STEP["sdc"].writes == 80
    # the latencies the live test checks: redo writes 0.5 ms, data reads 6 ms, arch writes 0.2 ms
    assert mf.DISK_STEP["dm-0"].write_ms / mf.DISK_STEP["dm-0"].writes == 0.0005 * 1000
    assert mf.DISK_STEP["dm-1"].read_ms / mf.DISK_STEP["dm-1"].reads == 0.006 * 1000
    assert mf.DISK_STEP["nvme0n1"].write_ms / mf.DISK_STEP["nvme0n1"].writes == 0.0002 * 1000
