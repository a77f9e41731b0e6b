"""Issue 26: concurrent scrapes of dbhost-exporter share one collection and one rendering.

The failure the on-call engineer fears: 50 clients (or an HA pair plus a curl) each run the
collectors and encode the answer, queue behind each other's CPU on a 2-core host and time out;
or, the other way round, an answer shared too eagerly serves numbers older than the scrape
(a counter that moved before the scrape arrived is not seen), one scrape's error or time limit
spoils the others' answers, or scrapes that only wait are answered 503 by --web.max-requests."""
from __future__ import annotations

import http.client
import threading
import time

import pytest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry

import make_fixtures as mf
from dbhost_support import samples, value

from dbhost_exporter.cli import make_registry, make_routes
from dbhost_exporter.config import load_config
from dbhost_exporter.scrape import DbhostExporter
from exporter_common.web import Response, WebConfig, make_server

TIMEOUT = "X-Prometheus-Scrape-Timeout-Seconds"


class _Counting:
    """A quick collector counting its runs (exported as its value)."""

    def __init__(self, name: str = "quick"):
        self.name = name
        self.calls = 0

    def collect(self):
        self.calls += 1
        g = GaugeMetricFamily(f"dbhost_{self.name}_value", "v")
        g.add_metric([], self.calls)
        yield g


class _Gate:
    """A collector that blocks until released (a slow /proc), counting its runs; ``fail`` makes
    the run raise after the gate (an unreadable file)."""

    def __init__(self, name: str = "slow", fail: bool = False):
        self.name = name
        self.fail = fail
        self.release = threading.Event()
        self.entered = threading.Event()
        self.calls = 0

    def collect(self):
        self.calls += 1
        self.entered.set()
        self.release.wait(10)
        if self.fail:
            raise OSError("[Errno 5] Input/output error: '/proc/1234/stat'")
        g = GaugeMetricFamily(f"dbhost_{self.name}_value", "v")
        g.add_metric([], self.calls)
        yield g


def _routes(*collectors, extra=None):
    exp = DbhostExporter(list(collectors), max_series=1000)
    reg = CollectorRegistry(auto_describe=False)
    reg.register(exp)
    if extra is not None:
        reg.register(extra)
    return exp, make_routes(reg)


def _in_thread(fn, *args):
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    return t, out


def _wait_for(cond, limit: float = 5.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def test_two_concurrent_scrapes_get_one_collection_and_the_same_bytes():
    quick, gate = _Counting(), _Gate()
    exp, routes = _routes(quick, gate)        # quick runs first, then the gate holds the scrape
    metrics = routes["/metrics"]
    first, out1 = _in_thread(metrics, {}, {})
    assert gate.entered.wait(5)
    second, out2 = _in_thread(metrics, {}, {})
    assert _wait_for(lambda: metrics.coalescer.joins == 1)   # the second waits for the first's answer
    gate.release.set()
    first.join(5)
    second.join(5)
    assert out1[0].body == out2[0].body and out1[0].status == 200
    # one collection: the quick collector, done before the second scrape arrived, did not run again
    assert quick.calls == 1 and gate.calls == 1 and metrics.coalescer.runs == 1
    got = samples(out2[0].body.decode())
    assert value(got, "dbhost_quick_value") == 1 and value(got, "dbhost_slow_value") == 1
    # the shared collection is reported once, as a success of each collector
    assert value(got, "dbhost_collector_success", collector="slow") == 1
    assert exp.runner.error_count("slow") == 0


def test_a_scrape_arriving_after_a_collection_finished_sees_the_file_as_it_is_now(tmp_path):
    """Real collectors on the fixture tree: host_busy changes between two scrapes; the second
    scrape must show the new value, not the first scrape's bytes."""
    fx = mf.build_tree(tmp_path / "tree", with_proc=False)
    routes = make_routes(make_registry(load_config(None), str(fx.procfs), str(fx.sysfs)))
    busy = fx.sysfs / "class/scsi_host/host2/host_busy"
    got = samples(routes["/metrics"]({}, {TIMEOUT: "10"}).body.decode())
    assert value(got, "dbhost_scsi_host_busy", host="host2") == 41
    busy.write_text("7\n")
    got = samples(routes["/metrics"]({}, {TIMEOUT: "10"}).body.decode())
    assert value(got, "dbhost_scsi_host_busy", host="host2") == 7
    assert routes["/metrics"].coalescer.runs == 2 and routes["/metrics"].coalescer.joins == 0


def test_a_scrape_arriving_after_a_collector_ran_does_not_reuse_it_even_during_another_collection():
    """A scrape with another query arrives while a collection is running, after its quick collector
    ran: it shares the slow collector's run in progress but runs the quick one again."""
    quick, gate = _Counting(), _Gate()
    exp, routes = _routes(quick, gate)
    metrics = routes["/metrics"]
    first, out1 = _in_thread(metrics, {}, {})
    assert gate.entered.wait(5)
    second, out2 = _in_thread(metrics, {"collect[]": ["x"]}, {})   # another query: its own collection
    assert _wait_for(lambda: quick.calls == 2)
    gate.release.set()
    first.join(5)
    second.join(5)
    assert gate.calls == 1 and metrics.coalescer.runs == 2
    assert value(samples(out1[0].body.decode()), "dbhost_quick_value") == 1
    assert value(samples(out2[0].body.decode()), "dbhost_quick_value") == 2


def test_a_failing_collector_is_reported_once_and_to_every_waiter():
    gate = _Gate("proc", fail=True)
    exp, routes = _routes(_Counting(), gate)
    metrics = routes["/metrics"]
    threads = [_in_thread(metrics, {}, {})]
    assert gate.entered.wait(5)
    threads += [_in_thread(metrics, {}, {}) for _ in range(3)]
    assert _wait_for(lambda: metrics.coalescer.joins == 3)
    gate.release.set()
    for t, _ in threads:
        t.join(5)
    answers = [out[0] for _, out in threads]
    assert {a.status for a in answers} == {200} and len({a.body for a in answers}) == 1
    got = samples(answers[0].body.decode())
    assert value(got, "dbhost_collector_success", collector="proc") == 0
    assert value(got, "dbhost_collector_success", collector="quick") == 1
    assert exp.runner.error_count("proc") == 1 and gate.calls == 1


class _Broken:
    """Registered next to the exporter: raises outside the collector runner (a rendering bug)."""

    def __init__(self, gate: _Gate):
        self.gate = gate

    def collect(self):
        self.gate.release.wait(10)
        raise RuntimeError("rendering failed")


def test_a_failed_rendering_fails_every_waiter_and_the_next_scrape_starts_afresh():
    gate = _Gate()
    exp, routes = _routes(gate, extra=_Broken(gate))
    metrics = routes["/metrics"]
    threads = [_in_thread(lambda: _raises(metrics))]
    assert gate.entered.wait(5)
    threads += [_in_thread(lambda: _raises(metrics)) for _ in range(2)]
    assert _wait_for(lambda: metrics.coalescer.joins == 2)
    gate.release.set()
    for t, _ in threads:
        t.join(5)
    assert [out[0] for _, out in threads] == ["RuntimeError: rendering failed"] * 3
    assert metrics.coalescer.runs == 1
    assert _raises(metrics) == "RuntimeError: rendering failed" and metrics.coalescer.runs == 2


def _raises(route) -> str:
    try:
        route({}, {})
    except RuntimeError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "no error"


def test_a_waiter_past_its_time_limit_is_answered_and_the_others_still_get_the_collection():
    quick, gate = _Counting(), _Gate()
    exp, routes = _routes(quick, gate)
    metrics = routes["/metrics"]
    leader, out_leader = _in_thread(metrics, {}, {TIMEOUT: "30"})
    assert gate.entered.wait(5)
    t0 = time.monotonic()
    hurried, out_hurried = _in_thread(metrics, {}, {TIMEOUT: "1.1"})
    patient, out_patient = _in_thread(metrics, {}, {})
    assert _wait_for(lambda: metrics.coalescer.joins == 2)
    hurried.join(5)
    assert time.monotonic() - t0 < 1.1                  # answered within its own limit
    got = samples(out_hurried[0].body.decode())
    assert value(got, "dbhost_collector_success", collector="slow") == 0
    assert value(got, "dbhost_collector_success", collector="quick") == 1   # the run it shared
    assert value(got, "dbhost_quick_value") == 1
    gate.release.set()
    leader.join(5)
    patient.join(5)
    assert out_leader[0].body == out_patient[0].body
    got = samples(out_patient[0].body.decode())
    assert value(got, "dbhost_collector_success", collector="slow") == 1
    assert value(got, "dbhost_slow_value") == 1
    assert quick.calls == 1 and gate.calls == 1 and metrics.coalescer.runs == 1


def test_a_leader_cut_short_by_its_limit_does_not_cut_short_a_waiter_with_time_left():
    gate = _Gate()
    exp, routes = _routes(_Counting(), gate)
    metrics = routes["/metrics"]
    hurried, out_hurried = _in_thread(metrics, {}, {TIMEOUT: "1.1"})
    assert gate.entered.wait(5)
    patient, out_patient = _in_thread(metrics, {}, {TIMEOUT: "30"})
    assert _wait_for(lambda: metrics.coalescer.joins == 1)
    hurried.join(5)
    assert value(samples(out_hurried[0].body.decode()), "dbhost_collector_success", collector="slow") == 0
    time.sleep(0.1)
    assert patient.is_alive()                   # still waiting for the slow collector's run
    gate.release.set()
    patient.join(5)
    got = samples(out_patient[0].body.decode())
    assert value(got, "dbhost_collector_success", collector="slow") == 1
    assert value(got, "dbhost_slow_value") == 1 and gate.calls == 1


# -- over HTTP: --web.max-requests counts the scrapes that collect, not those that wait ----------

@pytest.fixture
def server():
    started = []

    def start(routes, max_requests):
        srv = make_server("127.0.0.1:0", routes, WebConfig(), max_requests)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        started.append(srv)
        return srv.server_address[1]

    yield start
    for srv in started:
        srv.shutdown()
        srv.server_close()


def _get(port: int, path: str = "/metrics") -> tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    c.request("GET", path)
    r = c.getresponse()
    out = r.status, r.read()
    c.close()
    return out


def test_scrapes_waiting_for_a_collection_take_no_request_slot(server):
    quick, gate = _Counting(), _Gate()
    exp, routes = _routes(quick, gate)
    routes["/slow"] = lambda q, h: (gate.release.wait(10), Response(200, b"ok\n"))[1]
    port = server(routes, 2)
    leader, out_leader = _in_thread(_get, port)
    assert gate.entered.wait(5)
    other, out_other = _in_thread(_get, port, "/slow")     # the second slot, not shareable
    time.sleep(0.2)
    waiters = [_in_thread(_get, port) for _ in range(5)]
    assert _wait_for(lambda: routes["/metrics"].coalescer.joins == 5)
    assert _get(port, "/slow")[0] == 503                     # both slots are taken
    gate.release.set()
    for t, _ in [(leader, None), (other, None), *waiters]:
        t.join(10)
    statuses = [out_leader[0][0]] + [out[0][0] for _, out in waiters]
    assert statuses == [200] * 6 and out_other[0][0] == 200
    assert len({out_leader[0][1]} | {out[0][1] for _, out in waiters}) == 1
    assert quick.calls == 1 and gate.calls == 1
    assert _get(port)[0] == 200 and quick.calls == 2         # slots given back; a fresh collection


def test_a_waiter_without_a_time_limit_stops_waiting_for_a_leader_that_never_runs(monkeypatch):
    """A leader attached in the event loop whose worker never starts (a server shutting down
    cancels queued work) must not hang the scrapes that wait for it."""
    from exporter_common import coalesce

    monkeypatch.setattr(coalesce, "WAIT_LIMIT", 0.3)
    quick = _Counting()
    exp, routes = _routes(quick)
    metrics = routes["/metrics"]
    leader = metrics.claim({}, {}, lambda: True)           # its worker never runs
    waiter = metrics.claim({}, {}, lambda: False)          # joins: needs no slot
    assert leader.leads and not waiter.leads
    t0 = time.monotonic()
    resp = metrics.joined(waiter, {}, {})
    assert 0.25 < time.monotonic() - t0 < 3
    assert value(samples(resp.body.decode()), "dbhost_quick_value") == 1 and quick.calls == 1
