"""exporter_common.runner.CollectorRunner: the one collector wrapper of both exporters."""
from __future__ import annotations

import logging

from prometheus_client.core import GaugeMetricFamily

from exporter_common.runner import CollectorRunner


def fams(n: int):
    a = GaugeMetricFamily("x_a", "a", labels=["i"])
    b = GaugeMetricFamily("x_b", "b", labels=["i"])
    for i in range(n):
        a.add_metric([str(i)], i)
        b.add_metric([str(i)], i)
    return [a, b]


def test_failure_loses_only_its_output_and_logs_once_per_state_change(caplog):
    runner = CollectorRunner(logger=logging.getLogger("t"))
    state = {"fail": True}

    def flaky():
        yield from fams(1)
        if state["fail"]:
            raise OSError("gone")

    with caplog.at_level(logging.INFO, logger="t"):
        for _ in range(3):
            out = runner.run("flaky", flaky, "db1")
            assert not out.ok and out.families == [] and out.error == "OSError: gone"
        state["fail"] = False
        for _ in range(2):
            assert runner.run("flaky", flaky, "db1").ok
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["db1: collector flaky failed: OSError: gone", "db1: collector flaky recovered"]
    assert runner.error_count("flaky", "db1") == 3 and runner.error_count("flaky", "db2") == 0


def test_check_fails_a_collector_that_did_not_raise():
    runner = CollectorRunner()
    out = runner.run("c", lambda: fams(1), check=lambda: "GV$LATCH: ORA-00942")
    assert not out.ok and out.families == [] and runner.error_count("c") == 1


def test_series_cap_keeps_the_first_samples_and_counts_the_rest():
    runner = CollectorRunner(max_series=3)
    out = runner.run("many", lambda: fams(2))
    assert [len(f.samples) for f in out.families] == [2, 1] and out.dropped == 1
    runner.run("many", lambda: fams(2))
    assert runner.dropped_count("many") == 2
    assert runner.run("few", lambda: fams(1)).dropped == 0


def test_duration_is_measured_with_the_given_clock():
    ticks = iter([10.0, 10.25])
    out = CollectorRunner(clock=lambda: next(ticks)).run("c", lambda: [])
    assert out.duration == 0.25
