"""The series the pack uses that neither of this project's exporters declares: node_exporter's,
and Prometheus' own. The one place they are named (mixin.catalog checks every rule and panel
against the exporters' catalog, the recording rules and this list).

Each entry: the labels the series carries besides the scrape target's (job, instance and the
site's target_labels), and where it comes from. node_exporter metric names are those of
node_exporter 0.16.0 and later (the 2018 renaming: base units, `_total` counters); the
collectors named are enabled by default unless noted.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class External:
    labels: tuple[str, ...] | None     # None: any label (ALERTS carries each alert's own labels)
    source: str


def _node(collector: str, *labels: str, note: str = "") -> External:
    text = f"node_exporter, collector `{collector}` (Linux; names since node_exporter 0.16.0)"
    return External(tuple(labels), text + (f"; {note}" if note else ""))


NODE_EXPORTER = {
    "node_cpu_seconds_total": _node("cpu", "cpu", "mode"),
    "node_context_switches_total": _node("stat"),
    "node_uname_info": _node("uname", "domainname", "machine", "nodename", "release", "sysname", "version", note="the host's uname nodename (Oracle's GV$INSTANCE.HOST_NAME): the host side of the host-and-sid join (mixin/hostjoin.py)"),
    "node_intr_total": _node("stat"),
    "node_procs_running": _node("stat"),
    "node_memory_MemAvailable_bytes": _node("meminfo"),
    "node_memory_MemFree_bytes": _node("meminfo"),
    "node_memory_SwapFree_bytes": _node("meminfo"),
    "node_memory_SwapTotal_bytes": _node("meminfo"),
    "node_vmstat_pgfault": _node("vmstat", note="in the default --collector.vmstat.fields"),
    "node_vmstat_pgmajfault": _node("vmstat", note="in the default --collector.vmstat.fields"),
    "node_vmstat_pswpin": _node("vmstat", note="in the default --collector.vmstat.fields"),
    "node_vmstat_pswpout": _node("vmstat", note="in the default --collector.vmstat.fields"),
    "node_disk_reads_completed_total": _node("diskstats", "device"),
    "node_disk_writes_completed_total": _node("diskstats", "device"),
    "node_disk_read_bytes_total": _node("diskstats", "device"),
    "node_disk_written_bytes_total": _node("diskstats", "device"),
    "node_disk_read_time_seconds_total": _node("diskstats", "device"),
    "node_disk_write_time_seconds_total": _node("diskstats", "device"),
    "node_disk_io_time_weighted_seconds_total": _node("diskstats", "device"),
    "node_filesystem_avail_bytes": _node("filesystem", "device", "fstype", "mountpoint"),
    "node_filesystem_size_bytes": _node("filesystem", "device", "fstype", "mountpoint"),
    "node_filesystem_device_error": _node("filesystem", "device", "fstype", "mountpoint",
                                          note="1 when statfs() failed (a hung NFS mount): size and avail are then absent"),
    "node_perf_cpucycles_total": _node("perf", "cpu", note="off by default: --collector.perf; panels show "
                                                          "no data without it"),
    "node_perf_instructions_total": _node("perf", "cpu", note="off by default: --collector.perf; panels show "
                                                             "no data without it"),
}

PROMETHEUS = {
    "up": External((), "Prometheus: every scrape target's health (1 scraped, 0 failed)"),
    "scrape_duration_seconds": External((), "Prometheus: every scrape's duration"),
    "scrape_samples_scraped": External((), "Prometheus: samples a scrape returned"),
    "scrape_samples_post_metric_relabeling": External((), "Prometheus: samples kept after metric relabelling"),
    "scrape_series_added": External((), "Prometheus: new series a scrape added"),
    "ALERTS": External(None, "Prometheus: one series per pending/firing alert (alertname, alertstate and "
                             "the alert's own labels)"),
    "ALERTS_FOR_STATE": External(None, "Prometheus: when each pending/firing alert became active"),
}

EXTERNAL = {**NODE_EXPORTER, **PROMETHEUS}
