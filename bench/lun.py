"""LUN + ZFS collectors of dbhost-exporter against node_exporter's diskstats
and zfs collectors, both as their own processes scraped over HTTP, on the
same recorded-style tree: 1,024 SCSI paths on 4 FC HBAs + 512 dm-multipath
maps (tests/dbhost/make_fixtures.py build_scale_tree) and an OpenZFS 2.2
arcstats file.

    .venv/bin/python -m bench.run --only lun
"""
from __future__ import annotations

import pathlib
import shutil
import tempfile
import time

from .common import (BenchError, Exporter, ScrapeRun, count_series, free_port, mib, progress,
                     python_cmd, ratio, samples, scrape_run)

from dbhost_exporter.demo import tree as mf   # the tests' fixture generator: the same tree shapes

N_PATHS = 1024
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
OURS_PREFIXES = ("dbhost_lun", "dbhost_scsi_host", "dbhost_zfs")
NODE_PREFIXES = ("node_disk_", "node_zfs_")


def lun_tree(path: str | None, n_paths: int = N_PATHS):
    """The scale tree at ``path`` (default $TMPDIR/dbhost-bench-lun-<n>), generated unless complete."""
    root = pathlib.Path(path) if path else pathlib.Path(tempfile.gettempdir()) / f"dbhost-bench-lun-{n_paths}"
    marker = root / ".complete"
    if not marker.exists():
        if root.exists():
            shutil.rmtree(root)
        progress(f"generating LUN tree {root} ({n_paths} SCSI paths, {n_paths // 2} multipath maps) ...")
        fx = mf.build_scale_tree(root, n_paths=n_paths)
        marker.write_text(str(n_paths))
        return fx
    return mf.Fixture(root, root / "proc", root / "sys", root / "kstat_p.txt", root / "dbhost-exporter.yml")


def node_exporter_argv(binary: str, fx, port: int) -> list[str]:
    return [binary, "--collector.disable-defaults", "--collector.diskstats", "--collector.zfs",
            f"--path.procfs={fx.procfs}", f"--path.sysfs={fx.sysfs}",
            f"--path.udev.data={fx.root / 'run' / 'udev' / 'data'}",   # absent: no udev properties
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]


def dbhost_argv(fx, port: int) -> list[str]:
    # fx.config is the tree's own config: collectors: {process: false} (lun and zfs on)
    return python_cmd("dbhost_exporter.cli") + [
        f"--path.procfs={fx.procfs}", f"--path.sysfs={fx.sysfs}", f"--config.file={fx.config}",
        f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]


def check_ours(text: bytes, n_paths: int) -> None:
    devices = n_paths + n_paths // 2
    got = len(samples(text, "dbhost_lun_info"))
    if got != devices:
        raise BenchError(f"dbhost-exporter: {got} dbhost_lun_info series, expected {devices}")
    kinds = {lab for lab, _ in samples(text, "dbhost_zfs_arc_hits_total")}
    if len(kinds) != 4:
        raise BenchError(f"dbhost-exporter: dbhost_zfs_arc_hits_total has {len(kinds)} kinds, expected 4")
    failed = [lab for lab, v in samples(text, "dbhost_collector_success") if v != 1]
    if failed:
        raise BenchError(f"dbhost-exporter: collectors failed: {failed}")


def check_node(text: bytes, n_paths: int) -> None:
    devices = n_paths + n_paths // 2
    got = len(samples(text, "node_disk_io_now"))
    if got != devices:
        raise BenchError(f"node_exporter: {got} node_disk_io_now series, expected {devices}")
    failed = [lab for lab, v in samples(text, "node_scrape_collector_success") if v != 1]
    if failed or not samples(text, "node_zfs_arc_hits"):
        raise BenchError(f"node_exporter: collectors failed {failed} or no ZFS ARC metrics")


class _Fixed:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def in_process(fx, scrapes: int) -> dict:
    """Where dbhost-exporter's scrape goes: the collectors alone vs collectors + text exposition,
    by prometheus_client's generate_latest and by exporter_common.exposition.encode_text (what the
    exporter serves), in this process, CPU seconds per steady-state scrape."""
    from prometheus_client.exposition import generate_latest

    from exporter_common.exposition import encode_text

    from prometheus_client.registry import CollectorRegistry

    from dbhost_exporter.cli import build_collectors
    from dbhost_exporter.config import load_config
    from dbhost_exporter.scrape import DbhostExporter

    cfg = load_config(str(fx.config))
    exporter = DbhostExporter(build_collectors(cfg, str(fx.procfs), str(fx.sysfs)), cfg.max_series)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    generate_latest(registry)                      # first scrape: identity cache
    exporters = [exporter]
    t0 = time.process_time()
    for _ in range(scrapes):
        for exp in exporters:
            for _fam in exp.collect():
                pass
    collect = (time.process_time() - t0) / scrapes
    t0 = time.process_time()
    for _ in range(scrapes):
        generate_latest(registry)
    full = (time.process_time() - t0) / scrapes
    families = list(registry.collect())            # one scrape, both encoders (durations differ per scrape)
    if encode_text(families) != generate_latest(_Fixed(families)):
        raise BenchError("encode_text and generate_latest disagree on the LUN tree")
    t0 = time.process_time()
    for _ in range(scrapes):
        encode_text(registry.collect())
    return {"collect": collect, "full": full, "fast": (time.process_time() - t0) / scrapes}


def measure(tree: str | None, scrapes: int, node_binary: str = NODE_EXPORTER,
            n_paths: int = N_PATHS) -> dict:
    """Both exporters on the tree: {"ours": ScrapeRun, "node": ScrapeRun or None, "node_error": str}."""
    fx = lun_tree(tree, n_paths)
    out: dict = {"tree": fx.root, "n_paths": n_paths, "node": None, "node_error": None}
    progress(f"lun: dbhost-exporter (lun+zfs collectors) on {fx.root}, 1 + {scrapes} scrapes")
    port = free_port()
    with Exporter("dbhost-exporter", dbhost_argv(fx, port), port) as exp:
        out["ours"] = scrape_run(exp, scrapes)
    check_ours(out["ours"].text, n_paths)
    out["inproc"] = in_process(fx, scrapes)
    progress(f"lun: node_exporter (diskstats+zfs collectors), 1 + {scrapes} scrapes")
    port = free_port()
    try:
        with Exporter("node_exporter", node_exporter_argv(node_binary, fx, port), port) as exp:
            out["node"] = scrape_run(exp, scrapes)
        check_node(out["node"].text, n_paths)
    except BenchError as exc:
        out["node"], out["node_error"] = None, str(exc)
        progress(f"lun: node_exporter not measured: {exc}")
    return out


def _row(name: str, r: ScrapeRun, prefixes) -> str:
    return (f"| {name} | {r.startup:.2f} | {r.first[0]:.3f} | {r.first[1]:.2f} | {r.steady_wall_median:.3f} | "
            f"{r.steady_cpu:.3f} | {count_series(r.text, prefixes)} | {count_series(r.text)} | "
            f"{r.bytes_out / 1024:.0f} | {mib(r.mem_end[0])} |")


def section(res: dict, scrapes: int) -> list[str]:
    ours: ScrapeRun = res["ours"]
    node: ScrapeRun | None = res["node"]
    n = res["n_paths"]
    lines = [
        "## LUN and ZFS collectors vs node_exporter",
        "",
        f"Command: `.venv/bin/python -m bench.run --only lun` ({scrapes} steady-state scrapes per exporter). "
        f"Tree: {n} SCSI paths on 4 FC HBAs (2 paths per LUN) + {n // 2} dm-multipath maps, "
        "`/proc/diskstats` for all of them and an OpenZFS 2.2 `arcstats`, generated by "
        "`tests/dbhost/make_fixtures.py build_scale_tree()` (the test fixtures' shapes) on the local file "
        "system (page cache warm).",
        "",
        "- dbhost-exporter: `python -m dbhost_exporter.cli --path.procfs --path.sysfs --config.file` "
        "(config `collectors: {process: false}`: lun and zfs on), its own process, scraped over HTTP;",
        f"- node_exporter: `{NODE_EXPORTER}` (the Debian package) `--collector.disable-defaults "
        "--collector.diskstats --collector.zfs --path.procfs --path.sysfs` (and `--path.udev.data` pointing "
        "at a directory the tree lacks, so no udev properties), scraped over HTTP.",
        "",
        "Wall: time of the HTTP GET (median over the steady-state scrapes). CPU: the exporter process's "
        "utime+stime delta from /proc/PID/stat (first scrape: one scrape, 10 ms ticks; steady state: "
        "total over all steady-state scrapes / their number). Series: sample lines in the exposition, "
        "domain = `dbhost_lun*`, `dbhost_scsi_host*`, `dbhost_zfs*` resp. `node_disk_*`, `node_zfs_*`; "
        "RSS after the last scrape.",
        "",
        "| exporter | startup s | first wall s | first CPU s | steady wall s | steady CPU s | domain series "
        "| all series | KiB/scrape | RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        _row("dbhost-exporter (lun + zfs)", ours, OURS_PREFIXES),
    ]
    if node:
        lines.append(_row("node_exporter (diskstats + zfs)", node, NODE_PREFIXES))
    ip = res["inproc"]
    nser = max(count_series(ours.text), 1)
    slow, fast = ip["full"] - ip["collect"], ip["fast"] - ip["collect"]
    lines += ["", f"Inside dbhost-exporter (same collectors in the benchmark process, CPU per steady-state "
              f"scrape): collectors {ip['collect']:.3f} s; collectors + text exposition by "
              f"`exporter_common.exposition.encode_text` (what the exporter serves for the text format and "
              f"`--once`) {ip['fast']:.3f} s, by prometheus_client's `generate_latest` {ip['full']:.3f} s "
              f"(byte-identical output, checked). The exposition of {count_series(ours.text)} series takes "
              f"{fast:.3f} s ({fast / nser * 1e6:.1f} us a series) with encode_text, {slow:.3f} s "
              f"({slow / nser * 1e6:.1f} us a series) with generate_latest: "
              f"{ratio(slow, fast) if fast > 0 else 'n/a'} cheaper."]
    lines += ["", "Ratios (node_exporter / dbhost-exporter; above 1 means dbhost-exporter is cheaper):", ""]
    if node:
        lines += [
            f"- steady state: wall {ratio(node.steady_wall_median, ours.steady_wall_median)}, "
            f"CPU {ratio(node.steady_cpu, ours.steady_cpu)}",
            f"- first scrape: wall {ratio(node.first[0], ours.first[0])}, "
            f"CPU {ratio(node.first[1], ours.first[1])}",
            f"- series: {ratio(count_series(node.text, NODE_PREFIXES), count_series(ours.text, OURS_PREFIXES))} "
            f"(domain), exposition size {ratio(node.bytes_out, ours.bytes_out)}",
            f"- resident memory after {scrapes + 1} scrapes: {ratio(node.mem_end[0], ours.mem_end[0])} "
            f"(VmHWM {ratio(node.mem_end[1], ours.mem_end[1])})",
            f"- per device (steady CPU / {n + n // 2} block devices): dbhost-exporter "
            f"{ours.steady_cpu / (n + n // 2) * 1e6:.0f} us, node_exporter {node.steady_cpu / (n + n // 2) * 1e6:.0f} us",
        ]
    else:
        lines.append(f"- node_exporter: not measured ({res['node_error']})")
    lines += [
        "",
        "Notes:",
        "",
        "- The two do different work on purpose: node_exporter parses one file (`/proc/diskstats`, 18 series per "
        "device) plus `arcstats` as untyped gauges; dbhost-exporter does not repeat diskstats and instead "
        "reads per SCSI path `device_busy`, `iorequest_cnt`, `iodone_cnt`, `ioerr_cnt`, per dm map `inflight`, "
        "per HBA `host_busy` (about 4,600 small sysfs files a scrape on this tree; identity and configured "
        "limits are cached and refreshed now and then, see tests/dbhost/test_lun_scrape_cost.py), and types "
        "arcstats. The ratio is the price of the extra per-LUN files, next to the peer that a host "
        "runs anyway.",
        "- dbhost-exporter's first scrape also resolves every device's identity (symlinks, vendor, model, "
        "wwid, multipath slaves, queue limits).",
        "- The text exposition is `exporter_common.exposition.encode_text`: byte for byte prometheus_client's "
        "`generate_latest` (tests/common/test_exposition.py), but it remembers each series' `name{labels} ` "
        "text between scrapes, so a steady-state scrape formats only values; that memo holds about 3 MiB "
        "(tracemalloc) on this tree. Prometheus asks for OpenMetrics first, but both "
        "exporters answer in this text format unless started with `--web.enable-openmetrics` (as "
        "node_exporter does), so real scrapes get this cost.",
        "- The machine was shared with other jobs (2 CPUs); wall times are noisy, CPU times less so.",
        "",
    ]
    return lines
