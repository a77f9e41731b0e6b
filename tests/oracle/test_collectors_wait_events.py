"""wait_events collector: per-event counters and latency histograms, with exact values."""
from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from oracle_sim import WAIT_CLASSES, OracleSim, collect, samples, value

from oracle_exporter.collectors import DEFAULT_HISTOGRAM_EVENTS
from oracle_exporter.snapshot import Snapshot

# The case study's wait-event table (field notes R1..R7: waits/s @ average ms, before and after the
# tuning; docs/thresholds.md tells each one). Kept here so a user's clone runs these vectors too;
# where the development workspace's field notes sit beside the repository, the table is checked
# against them.
CASE_STUDY = [
    ("R1-before", "log file parallel write", 74, 11.8), ("R1-after", "log file parallel write", 845, 0.55),
    ("R2-before", "log file sync", 72, 26.45), ("R2-after", "log file sync", 519, 2.13),
    ("R3-before", "log buffer space", 3.5, 28.6),
    ("R4-before", "log file switch (checkpoint incomplete)", 0.5, 0.38),
    ("R5-after", "latch: redo allocation", 0.002, 0.9),
    ("R6-before", "log file switch completion", 0.5, 20.82), ("R6-after", "log file switch completion", 0.02, 31.5),
    ("R7-before", "log file sequential read", 10, 7.02), ("R7-after", "log file sequential read", 10.5, 16.62),
]
FIELD_NOTES = Path(__file__).resolve().parents[3] / "shared" / "field-notes.md"


def field_note_vectors() -> list[tuple[str, str, float, float]]:
    """(id, event, waits/s, avg seconds) for every 'rate @ avg' cell of the field notes' R1..R7 table."""
    out: list[tuple[str, str, float, float]] = []
    for line in FIELD_NOTES.read_text().splitlines():
        m = re.match(r"\|\s*(R\d+)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|", line)
        if not m:
            continue
        rid, event = m.group(1), m.group(2)
        if "/" in event:          # "latch: redo allocation / latch: redo writing"
            event = event.split("/")[0].strip()
        if event not in WAIT_CLASSES:  # "log file sequential read (ARCH reading redo)": a comment in parentheses
            event = re.sub(r"\s*\([^)]*\)$", "", event)
        for col, cell in (("before", m.group(3)), ("after", m.group(4))):
            c = re.fullmatch(r"([\d.]+)/s @ ([\d.]+) ms", cell)
            if c:
                out.append((f"{rid}-{col}", event, float(c.group(1)), float(c.group(2)) / 1000))
    return out


VECTORS = [(rid, event, per_sec, ms / 1000) for rid, event, per_sec, ms in CASE_STUDY]


def rate(a: float, b: float, seconds: float) -> float:
    return (b - a) / seconds


def test_case_study_table_matches_the_field_notes():
    if not FIELD_NOTES.exists():
        pytest.skip("../shared/field-notes.md not present next to the repository")
    assert sorted(field_note_vectors()) == sorted(VECTORS)


def test_case_study_events_are_known_wait_events():
    assert {event for _, event, _, _ in VECTORS} <= set(WAIT_CLASSES)
    assert {"R1-before", "R1-after", "R2-before", "R2-after", "R6-before", "R7-after"} <= {v[0] for v in VECTORS}


@pytest.mark.parametrize("rid,event,per_sec,avg", VECTORS, ids=[v[0] for v in VECTORS])
def test_rate_time_over_rate_waits_is_the_average_wait(rid, event, per_sec, avg):
    seconds = max(60, 100 / per_sec)     # rare waits (R5's 0.002/s): a window with 100 of them
    sim = OracleSim()
    sim.advance(seconds, events={event: (per_sec, avg)})
    first = collect(sim.snapshot(), names=["wait_events"])
    sim.advance(seconds, events={event: (per_sec, avg)})
    second = collect(sim.snapshot(), names=["wait_events"])
    labels = dict(inst_id="1", event=event, wait_class=WAIT_CLASSES[event])
    waits = rate(value(first, "oracle_wait_event_waits_total", **labels),
                 value(second, "oracle_wait_event_waits_total", **labels), seconds)
    time = rate(value(first, "oracle_wait_event_time_seconds_total", **labels),
                value(second, "oracle_wait_event_time_seconds_total", **labels), seconds)
    assert waits == pytest.approx(round(per_sec * seconds) / seconds, rel=1e-12)
    # integer microseconds per interval: exact to 1 us over the interval
    assert time / waits == pytest.approx(avg, abs=1e-6 / (per_sec * seconds))


def test_r1_before_exact_values():
    sim = OracleSim()
    sim.advance(60, events={"log file parallel write": (74, 0.0118)})
    a = collect(sim.snapshot(), names=["wait_events"])
    sim.advance(60, events={"log file parallel write": (74, 0.0118)})
    b = collect(sim.snapshot(), names=["wait_events"])
    lbl = dict(inst_id="1", event="log file parallel write", wait_class="System I/O")
    dw = value(b, "oracle_wait_event_waits_total", **lbl) - value(a, "oracle_wait_event_waits_total", **lbl)
    dt = value(b, "oracle_wait_event_time_seconds_total", **lbl) - value(a, "oracle_wait_event_time_seconds_total", **lbl)
    assert dw == 4440
    assert dw / 60 == 74
    assert dt == pytest.approx(52.392, abs=1e-9)
    assert (dt / 60) / (dw / 60) == pytest.approx(0.0118, abs=1e-12)


def hist_series(families, event, inst="1"):
    s = samples(families)
    buckets = sorted(((float(dict(k)["le"]), v) for (n, k), v in s.items()
                      if n == "oracle_wait_event_latency_seconds_bucket"
                      and dict(k)["event"] == event and dict(k)["inst_id"] == inst))
    count = s[("oracle_wait_event_latency_seconds_count", (("event", event), ("inst_id", inst)))]
    total = s[("oracle_wait_event_latency_seconds_sum", (("event", event), ("inst_id", inst)))]
    return buckets, count, total


@pytest.mark.parametrize("micro", [True, False], ids=["micro", "milli"])
def test_histogram_is_cumulative_in_seconds_and_inf_equals_count(micro):
    sim = OracleSim(micro_histogram=micro)
    sim.advance(60, events={"log file sync": (72, 0.02645), "log file parallel write": (74, 0.0118)})
    snap = sim.snapshot()
    fams = collect(snap, names=["wait_events"])
    durations = sim.instances[0].durations["log file sync"]
    buckets, count, total = hist_series(fams, "log file sync")
    les = [le for le, _ in buckets]
    assert les[-1] == math.inf
    unit = 1e-6 if micro else 1e-3
    top = 32 if micro else 22
    assert les[:-1] == [2 ** k * unit for k in range(0, top + 1)]       # fixed ladder, seconds
    counts = [c for _, c in buckets]
    assert counts == sorted(counts)                                     # cumulative
    assert counts[-1] == count == len(durations) == 72 * 60             # +Inf == _count == waits
    assert sum(r["WAIT_COUNT"] for r in snap.rows("GV$EVENT_HISTOGRAM_MICRO" if micro else "GV$EVENT_HISTOGRAM")
               if r["EVENT"] == "log file sync") == count
    for le, c in buckets[:-1]:                                          # independent count of the raw waits
        assert c == sum(1 for d in durations if d < le * (1 + 1e-12)), le
    assert total == pytest.approx(72 * 60 * 0.02645, abs=1e-6)           # _sum = TIME_WAITED_MICRO/1e6
    assert total / count == pytest.approx(0.02645, abs=1e-9)


def test_micro_histogram_has_finer_buckets_than_milli():
    def partial_buckets(micro):
        sim = OracleSim(micro_histogram=micro, seed=3)
        sim.advance(60, events={"log file parallel write": (845, 0.00055)})
        buckets, count, _ = hist_series(collect(sim.snapshot(), names=["wait_events"]), "log file parallel write")
        return [le for le, c in buckets if 0 < c < count]
    micro, milli = partial_buckets(True), partial_buckets(False)
    # 0.55 ms waits: the 1 ms bucket already holds nearly all of them in the milli view
    assert len(micro) >= 5 and all(le < 0.01 for le in micro)
    assert len(milli) <= 3
    assert min(micro) < 0.001 <= min(milli)


def test_ladder_is_stable_when_new_buckets_fill():
    sim = OracleSim()
    sim.advance(15, events={"log buffer space": (3.5, 0.0286)})
    a, _, _ = hist_series(collect(sim.snapshot(), names=["wait_events"]), "log buffer space")
    sim.advance(15, events={"log buffer space": (1, 4.0)})        # waits of seconds: new Oracle rows
    b, _, _ = hist_series(collect(sim.snapshot(), names=["wait_events"]), "log buffer space")
    assert [le for le, _ in a] == [le for le, _ in b]
    assert all(cb >= ca for (_, ca), (_, cb) in zip(a, b))      # counters never go down


def test_histograms_only_for_configured_events():
    sim = OracleSim()
    sim.advance(60, events={"log file sync": (10, 0.002), "db file sequential read": (100, 0.01)})
    snap = sim.snapshot()
    default = {dict(k)["event"] for (n, k) in samples(collect(snap, names=["wait_events"]))
               if n.startswith("oracle_wait_event_latency_seconds")}
    assert default == {"log file sync", "db file sequential read"}
    assert {"log file sync", "db file sequential read"} <= set(DEFAULT_HISTOGRAM_EVENTS)
    only = {dict(k)["event"] for (n, k) in samples(collect(snap, SimpleNamespace(histogram_events=["log file sync"],
                                                                                  latches=[]), names=["wait_events"]))
            if n.startswith("oracle_wait_event_latency_seconds")}
    assert only == {"log file sync"}
    # the per-event counters cover every event regardless of the list
    assert value(collect(snap, SimpleNamespace(histogram_events=[]), names=["wait_events"]),
                 "oracle_wait_event_waits_total", inst_id="1", event="db file sequential read",
                 wait_class="User I/O") == 100 * 60


def test_rac_instances_are_separate_series():
    sim = OracleSim([(1, "ODS1", "h1", 1), (2, "ODS2", "h2", 2)])
    sim.advance(60, events={"log file sync": (72, 0.02645)}, inst_ids=[1])
    sim.advance(0, events={"log file sync": (0, 0.0)}, inst_ids=[2])
    sim.advance(60, events={"log file sync": (519, 0.00213)}, inst_ids=[2])
    fams = collect(sim.snapshot(), names=["wait_events"])
    assert value(fams, "oracle_wait_event_waits_total", inst_id="1", event="log file sync", wait_class="Commit") == 4320
    assert value(fams, "oracle_wait_event_waits_total", inst_id="2", event="log file sync",
                 wait_class="Commit") == 31140
    _, c1, _ = hist_series(fams, "log file sync", "1")
    _, c2, _ = hist_series(fams, "log file sync", "2")
    assert (c1, c2) == (4320, 31140)


def test_nulls_and_missing_views():
    snap = Snapshot.from_obj({"time": "t", "database": "d", "views": {
        "GV$SYSTEM_EVENT": [
            {"INST_ID": 1, "EVENT": "log file sync", "WAIT_CLASS": "Commit", "TOTAL_WAITS": 10,
             "TOTAL_TIMEOUTS": None, "TIME_WAITED_MICRO": None},
            {"INST_ID": None, "EVENT": "log file sync", "WAIT_CLASS": "Commit", "TOTAL_WAITS": 5,
             "TOTAL_TIMEOUTS": 0, "TIME_WAITED_MICRO": 5},
            {"INST_ID": 1, "EVENT": "db file sequential read", "WAIT_CLASS": "User I/O", "TOTAL_WAITS": 3.0,
             "TOTAL_TIMEOUTS": 0, "TIME_WAITED_MICRO": 30000.0}],
        "GV$EVENT_HISTOGRAM_MICRO": [
            {"INST_ID": 1, "EVENT": "log file sync", "WAIT_TIME_MICRO": 1024, "WAIT_COUNT": 10},
            {"INST_ID": 1, "EVENT": "db file sequential read", "WAIT_TIME_MICRO": 16384, "WAIT_COUNT": 3},
            {"INST_ID": 1, "EVENT": "db file sequential read", "WAIT_TIME_MICRO": None, "WAIT_COUNT": 9}]}})
    s = samples(collect(snap, names=["wait_events"]))
    names = {n for n, _ in s}
    assert s[("oracle_wait_event_waits_total",
              (("event", "log file sync"), ("inst_id", "1"), ("wait_class", "Commit")))] == 10
    # NULL time: no time series and no histogram (a histogram needs _sum) for that event
    assert not any(n == "oracle_wait_event_time_seconds_total" and dict(k)["event"] == "log file sync" for n, k in s)
    assert not any(n.startswith("oracle_wait_event_latency") and dict(k)["event"] == "log file sync" for n, k in s)
    assert s[("oracle_wait_event_latency_seconds_count", (("event", "db file sequential read"), ("inst_id", "1")))] == 3
    assert s[("oracle_wait_event_latency_seconds_bucket",
              (("event", "db file sequential read"), ("inst_id", "1"), ("le", "0.008192")))] == 0
    assert s[("oracle_wait_event_latency_seconds_bucket",
              (("event", "db file sequential read"), ("inst_id", "1"), ("le", "0.016384")))] == 3
    assert "oracle_wait_event_timeouts_total" in names
    # histogram view absent: counters only
    only_events = Snapshot.from_obj({"time": "t", "database": "d",
                                     "views": {"GV$SYSTEM_EVENT": snap.views["GV$SYSTEM_EVENT"]}})
    assert not any(n.startswith("oracle_wait_event_latency") for n, _ in samples(collect(only_events,
                                                                                         names=["wait_events"])))
    assert list(collect(Snapshot.from_obj({"time": "t", "database": "d", "views": {}}), names=["wait_events"])) == []


# --- 11.6: cardinality -------------------------------------------------------------------

def _event_rows():
    rows = [{"INST_ID": 1, "EVENT": "SQL*Net message from client", "WAIT_CLASS": "Idle", "TOTAL_WAITS": 9e8,
             "TOTAL_TIMEOUTS": 0, "TIME_WAITED_MICRO": 9e13},
            {"INST_ID": 1, "EVENT": "rdbms ipc message", "WAIT_CLASS": "Idle", "TOTAL_WAITS": 4e7,
             "TOTAL_TIMEOUTS": 1e6, "TIME_WAITED_MICRO": 3e12}]
    for k, (event, klass) in enumerate([("log file sync", "Commit"), ("db file sequential read", "User I/O"),
                                        ("log file parallel write", "System I/O"), ("latch free", "Other")]):
        rows.append({"INST_ID": 1, "EVENT": event, "WAIT_CLASS": klass, "TOTAL_WAITS": 1000 * (k + 1),
                     "TOTAL_TIMEOUTS": 0, "TIME_WAITED_MICRO": 10_000 * (k + 1)})
    return rows


def _events(settings=None) -> dict[str, float]:
    snap = Snapshot("db", "2025-03-11T09:00:00Z", {"GV$SYSTEM_EVENT": _event_rows()})
    fams = collect(snap, settings, names=["wait_events"])
    return {dict(labels)["event"]: v for (name, labels), v in samples(fams).items()
            if name == "oracle_wait_event_waits_total"}


def test_idle_events_are_left_out_by_default_and_can_be_asked_for():
    """Idle waits (sessions waiting for their client, background processes sleeping) are
    hundreds of series per instance on a real 19c that say nothing about the database."""
    assert set(_events()) == {"log file sync", "db file sequential read", "log file parallel write", "latch free"}
    with_idle = _events(SimpleNamespace(idle_wait_events=True, wait_events_max=0))
    assert {"SQL*Net message from client", "rdbms ipc message"} <= set(with_idle)


def test_the_event_set_is_bounded_per_instance_most_time_waited_first():
    snap = Snapshot("db", "2025-03-11T09:00:00Z", {"GV$SYSTEM_EVENT": _event_rows()})
    fams = collect(snap, SimpleNamespace(idle_wait_events=False, wait_events_max=2), names=["wait_events"])
    got = {dict(labels)["event"] for (name, labels), _ in samples(fams).items()
           if name == "oracle_wait_event_time_seconds_total"}
    assert got == {"latch free", "log file parallel write"}          # the two with the most time waited
    assert value(fams, "oracle_wait_events_omitted", inst_id="1") == 2


def test_wait_event_settings_are_read_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("PW", "x")
    from exporter_common.config import ConfigError
    from oracle_exporter.config import load_config

    cfg = tmp_path / "c.yml"
    base = "databases: [{name: a, dsn: 'h:1/s', user: u, password_env: PW}]\n"
    cfg.write_text("idle_wait_events: true\nwait_events_max: 50\n" + base)
    settings = load_config(str(cfg)).settings
    assert (settings.idle_wait_events, settings.wait_events_max) == (True, 50)
    cfg.write_text(base)
    settings = load_config(str(cfg)).settings
    assert (settings.idle_wait_events, settings.wait_events_max) == (False, 400)
    cfg.write_text("wait_events_max: -1\n" + base)
    with pytest.raises(ConfigError, match="wait_events_max"):
        load_config(str(cfg))


def test_cumulative_buckets_add_the_rows_up_to_each_bound_in_order():
    """Each ``le`` holds 0.0 plus the counts of the rows at or below it, added smallest bound
    first (the same float, bit for bit, as the step-by-step walk the exposition was checked
    against), +Inf the sum of all rows; rows above the ladder count only in +Inf."""
    import random

    from oracle_exporter.collectors.wait_events import MICRO, MILLI, _les, cumulative_buckets

    def walk(rows, ladder, scale):
        pairs = sorted(rows)
        out, acc, k = [], 0.0, 0
        for bound, le in zip(ladder, _les(ladder, scale)):
            while k < len(pairs) and pairs[k][0] <= bound:
                acc += pairs[k][1]
                k += 1
            out.append((le, acc))
        return out + [("+Inf", sum(c for _, c in pairs))]

    rng = random.Random(7)
    for _ in range(300):
        _, _, scale, ladder = rng.choice((MICRO, MILLI))
        rows = [(float(rng.choice([*ladder[:8], 3, 5, 1.5, 2 ** 40])), rng.choice([-0.0, 0.0, 1.0, 0.1, 7.0, 1e17, 3.3]))
                for _ in range(rng.randint(0, 12))]
        got = cumulative_buckets(rows, ladder, scale)
        assert [(le, repr(v)) for le, v in got] == [(le, repr(v)) for le, v in walk(rows, ladder, scale)], rows
    got = dict(cumulative_buckets([(1.0, 2.0), (4.0, 3.0), (2.0 ** 40, 5.0)], MICRO[3], 1e-6))
    assert (got["1e-06"], got["2e-06"], got["4e-06"], got["4294.967296"], got["+Inf"]) == (2.0, 2.0, 5.0, 5.0, 10.0)
    assert repr(dict(cumulative_buckets([(1.0, -0.0)], MICRO[3], 1e-6))["1e-06"]) == "0.0"
