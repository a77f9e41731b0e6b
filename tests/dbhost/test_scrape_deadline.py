"""Issue 22.10 / 26: dbhost-exporter honours the time limit Prometheus announces
(X-Prometheus-Scrape-Timeout-Seconds) and overlapping scrapes share one collector run.

The failure the on-call engineer fears: a slow /proc or sysfs (a hung NFS mount under /proc/PID,
an HBA in error recovery) makes the whole scrape time out, so `up` goes to 0 and every host alert
goes blind at once; and an HA pair of Prometheus servers doubles the exporter's cost and, for the
process collector, counts exited processes twice."""
from __future__ import annotations

import threading
import time

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry

from dbhost_support import samples, value

from dbhost_exporter.cli import make_routes
from dbhost_exporter.scrape import DbhostExporter, deadline_scope, scrape_deadline
from exporter_common.exposition import encode_text


class _Gate:
    """A collector that blocks until released (a slow /proc), counting its runs."""

    def __init__(self, name: str):
        self.name = name
        self.release = threading.Event()
        self.entered = threading.Event()
        self.calls = 0

    def collect(self):
        self.calls += 1
        self.entered.set()
        self.release.wait(10)
        g = GaugeMetricFamily(f"dbhost_{self.name}_value", "v")
        g.add_metric([], self.calls)
        yield g


class _Quick:
    name = "quick"

    def collect(self):
        g = GaugeMetricFamily("dbhost_quick_value", "v")
        g.add_metric([], 1)
        yield g


def _scrape(exp, deadline=None):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(exp)
    with deadline_scope(deadline):
        return samples(encode_text(reg.collect()).decode())


def test_a_slow_collector_fails_at_the_announced_limit_and_the_others_are_served():
    slow = _Gate("slow")
    exp = DbhostExporter([slow, _Quick()], max_series=100)
    routes = make_routes(_registry(exp))
    t0 = time.monotonic()
    resp = routes["/metrics"]({}, {"X-Prometheus-Scrape-Timeout-Seconds": "0.7"})
    took = time.monotonic() - t0
    got = samples(resp.body.decode())
    assert resp.status == 200 and took < 0.6            # answered before Prometheus gives up
    assert value(got, "dbhost_collector_success", collector="slow") == 0
    assert value(got, "dbhost_collector_success", collector="quick") == 1
    assert value(got, "dbhost_quick_value") == 1
    assert ("dbhost_slow_value", ()) not in got
    # the next scrape, while the first run still hangs, joins it instead of starting another
    resp = routes["/metrics"]({}, {"X-Prometheus-Scrape-Timeout-Seconds": "0.7"})
    assert value(samples(resp.body.decode()), "dbhost_collector_success", collector="slow") == 0
    assert exp.runs["slow"] == 1 and slow.calls == 1
    slow.release.set()                                   # /proc answers again
    for _ in range(100):
        if exp._flights["slow"].future is None:
            break
        time.sleep(0.02)
    got = samples(routes["/metrics"]({}, {"X-Prometheus-Scrape-Timeout-Seconds": "10"}).body.decode())
    assert value(got, "dbhost_collector_success", collector="slow") == 1
    assert value(got, "dbhost_slow_value") == 2


def _registry(exp):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(exp)
    return reg


def test_without_the_header_nothing_is_cut():
    gate = _Gate("slow")
    gate.release.set()
    exp = DbhostExporter([gate], max_series=100)
    got = samples(make_routes(_registry(exp))["/metrics"]({}, {}).body.decode())
    assert value(got, "dbhost_collector_success", collector="slow") == 1


def test_overlapping_scrapes_share_one_run():
    """Two scrapes at once (HA Prometheus pair): one run of the collector, both answers carry it."""
    gate = _Gate("proc")
    exp = DbhostExporter([gate], max_series=100)
    results: list[dict] = []
    first = threading.Thread(target=lambda: results.append(_scrape(exp)))
    first.start()
    assert gate.entered.wait(5)
    second = threading.Thread(target=lambda: results.append(_scrape(exp, time.monotonic() + 5)))
    second.start()
    time.sleep(0.2)                                      # the second scrape is waiting on the run
    gate.release.set()
    first.join(5)
    second.join(5)
    assert len(results) == 2 and gate.calls == 1 and exp.runs["proc"] == 1
    assert [value(r, "dbhost_proc_value") for r in results] == [1, 1]
    assert value(_scrape(exp), "dbhost_proc_value") == 2      # later scrapes run again


def test_a_process_collector_shared_between_overlapping_scrapes_counts_an_exit_once(tmp_path):
    """The real process collector behind two overlapping HTTP scrapes: one scan."""
    from fixtures_proc import build_proc_tree, remove_process

    from dbhost_exporter.collectors.process import ProcessCollector

    root = tmp_path / "proc"
    build_proc_tree(root)
    coll = ProcessCollector(str(root))
    exp = DbhostExporter([coll], max_series=50000)
    before = _scrape(exp)
    remove_process(root, 2107)
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(_scrape(exp, time.monotonic() + 5)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    key = ("dbhost_process_cpu_seconds_total", (("mode", "user"), ("role", "lgwr"), ("sid", "ORCL")))
    assert len(results) == 4
    assert {r[key] for r in results} | {_scrape(exp)[key]} == {before[key]}


def test_scrape_deadline_parsing():
    assert scrape_deadline({}, now=100.0) is None
    assert scrape_deadline({"X-Prometheus-Scrape-Timeout-Seconds": "10"}, now=100.0) == 109.5
    assert scrape_deadline({"x-prometheus-scrape-timeout-seconds": "0.2"}, now=100.0) == 100.1
    for bad in ("", "abc", "0", "-3", "nan", "inf"):
        assert scrape_deadline({"X-Prometheus-Scrape-Timeout-Seconds": bad}, now=100.0) is None
