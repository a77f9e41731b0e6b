"""oracle-exporter renders each database once per fetch (issue 26, point 1): several Prometheus
servers scraping within one fetch (min_interval_seconds, an HA pair) cost one run of the
collectors and get the same bytes, in every format they ask for; and those bytes are what
prometheus_client's encoders give for the families a scrape builds today (only the timing
values, which differ between two runs of the collectors, are masked)."""
from __future__ import annotations

import re

import pytest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.openmetrics import exposition as om

from exporter_common.cli import negotiate_format
from exporter_common.exposition import encode_text
from oracle_exporter.config import Settings
from oracle_exporter.demo import path
from oracle_exporter.exporter import OracleExporter, Target, load_collectors
from oracle_exporter.sources.replay import replay_sources

PROM3_ACCEPT = ("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
                "application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,"
                "text/plain;version=0.0.4;q=0.3,*/*;q=0.2")
PROM2_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
# values that differ between two runs of the collectors on the same snapshot, or between two scrapes
TIMING = re.compile(rb"^((?:oracle_collector_duration_seconds|oracle_scrape_duration_seconds|"
                    rb"oracle_snapshot_age_seconds)\{[^}]*\}) \S+$", re.M)
PER_SCRAPE = re.compile(rb"^(?:oracle_scrape_duration_seconds|oracle_snapshot_age_seconds)\{.*\n", re.M)


class Counting:
    """A collector module whose collect() calls are counted (everything else is the module's)."""

    def __init__(self, module, calls: dict):
        self._module, self._calls = module, calls

    def __getattr__(self, name):
        return getattr(self._module, name)

    def collect(self, snap, settings):
        self._calls[self._module.__name__] = self._calls.get(self._module.__name__, 0) + 1
        return self._module.collect(snap, settings)


def exporter_for(recording: str, min_interval: float, calls: dict) -> OracleExporter:
    collectors = {n: Counting(m, calls) for n, m in load_collectors().items()}
    targets = [Target(src.name, src, {"site": "dc1"} if i == 0 else {}, 10.0, min_interval=min_interval)
               for i, src in enumerate(replay_sources(str(path(recording))))]
    return OracleExporter(targets, Settings(), collectors)


def masked(body: bytes) -> bytes:
    return TIMING.sub(rb"\1 T", body)


@pytest.fixture
def rac():
    calls: dict = {}
    exporter = exporter_for("demo-rac-outage.jsonl", 3600.0, calls)
    yield exporter, calls
    exporter.close()


def test_two_scrapes_of_one_fetch_run_the_collectors_once_and_get_the_same_bytes(rac):
    exporter, calls = rac
    fmt, _ = negotiate_format({"Accept": PROM2_ACCEPT})
    first = exporter.exposition(fmt)
    ran = sum(calls.values())
    assert ran == len(exporter.collectors) * len(exporter.targets)   # every collector, each database, once
    second = exporter.exposition(fmt)
    third = exporter.exposition(fmt)
    assert sum(calls.values()) == ran                                 # not again
    assert all(t.fetches == 1 and t.renders == 1 for t in exporter.targets.values())
    # the same bytes, but for the two values that are this scrape's own (its duration, the snapshot's age)
    assert PER_SCRAPE.sub(b"", first) == PER_SCRAPE.sub(b"", second) == PER_SCRAPE.sub(b"", third)
    assert len(PER_SCRAPE.findall(first)) == 2 * len(exporter.targets)
    assert first.count(b"\n") > 1000
    # the cached lines are served as they are, not rendered again
    parts = {name: t.rendered.parts[fmt] for name, t in exporter.targets.items()}
    exporter.exposition(fmt)
    for name, t in exporter.targets.items():
        assert all(a.lines is b.lines for a, b in zip(parts[name], t.rendered.parts[fmt]))


def test_each_format_is_rendered_once_and_matches_prometheus_client(rac):
    """Prometheus 3 (OpenMetrics, allow-utf-8) and Prometheus 2 (text) scraping the same fetch: one
    cache entry per format; the bytes are prometheus_client's for the families scrape() builds."""
    exporter, calls = rac
    text, _ = negotiate_format({"Accept": PROM2_ACCEPT})
    om3, _ = negotiate_format({"Accept": PROM3_ACCEPT}, openmetrics=True)
    assert text.content_type == CONTENT_TYPE_PLAIN_0_0_4 and om3.content_type.startswith("application/openmetrics")
    body_text = exporter.exposition(text)
    body_om = exporter.exposition(om3)
    renders = {n: t.renders for n, t in exporter.targets.items()}
    assert set(exporter.targets["RACDB"].rendered.parts) == {text, om3}
    for _ in range(2):
        assert masked(exporter.exposition(text)) == masked(body_text)
        assert masked(exporter.exposition(om3)) == masked(body_om)
    assert {n: t.renders for n, t in exporter.targets.items()} == renders
    families = exporter.scrape()      # today's path on the same (reused) fetch
    assert masked(body_text) == masked(encode_text(families))
    assert masked(body_om) == masked(om.generate_latest(Listed(families), escaping=om3.escaping))
    assert body_om.endswith(b"# EOF\n") and b'database="RACDB"' in body_text and b'site="dc1"' in body_text


def test_a_new_fetch_renders_again():
    """Without min_interval every scrape is a fetch of its own: rendered again, new values."""
    calls: dict = {}
    exporter = exporter_for("demo-before.jsonl", 0.0, calls)
    try:
        fmt, _ = negotiate_format({})
        first, second = exporter.exposition(fmt), exporter.exposition(fmt)
        t = exporter.targets["DEMO"]
        assert t.fetches == 2 and t.renders == 2
        assert sum(calls.values()) == 2 * len(exporter.collectors)
        assert masked(first) != masked(second)       # the recording's second snapshot: counters moved
    finally:
        exporter.close()


def test_probe_and_metrics_share_the_rendering(rac):
    exporter, calls = rac
    fmt, _ = negotiate_format({})
    whole = exporter.exposition(fmt)
    ran = sum(calls.values())
    one = exporter.exposition(fmt, ["RACDB"])
    assert sum(calls.values()) == ran
    assert b'database="DEMO"' not in one and b'database="RACDB"' in one
    racdb = sorted(l for l in masked(whole).splitlines() if b'database="RACDB"' in l)
    assert sorted(l for l in masked(one).splitlines() if b'database="RACDB"' in l) == racdb   # families merge
    assert len(racdb) > 1000


class Listed:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def _hostile_families():
    from prometheus_client.metrics_core import (CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily,
                                                InfoMetricFamily, SummaryMetricFamily)
    c = CounterMetricFamily("ora_things", 'Help with "quotes" and \\ and\nnewline', labels=["event", "inst_id"],
                            created=1700000000.5)
    c.add_metric(['a "quoted"\\ event\nline', "1"], 12345678901234, created=1700000000.25)
    c.add_metric(["plain", "2"], 0.1)
    g = GaugeMetricFamily("ora_gauge", "g", labels=["database", "x"])     # a label of base's own
    g.add_metric(["mine", "1"], float("inf"))
    g.add_metric(["mine", "2"], float("nan"))
    g2 = GaugeMetricFamily("ora_plain", "no labels", value=-3)
    h = HistogramMetricFamily("ora_hist", "h", labels=["ev"])
    h.add_metric(["e"], [("0.001", 1), ("+Inf", 4)], 2.5)
    i = InfoMetricFamily("ora_build", "i", labels=["v"])
    i.add_metric(["1"], {"edition": "EE"})
    s = SummaryMetricFamily("ora_sum", "s", labels=["k"])
    s.add_metric(["1"], 3, 4.5)
    return [c, g, g2, h, i, s]


@pytest.mark.parametrize("kind", ["text", "openmetrics"])
@pytest.mark.parametrize("escaping", [om.UNDERSCORES, om.ALLOWUTF8, om.VALUES, om.DOTS])
def test_rendered_parts_are_prometheus_clients_bytes_on_hostile_input(kind, escaping):
    """Two sources' families with their base labels put in while rendering, merged: the bytes
    prometheus_client writes for the relabelled, merged families (quotes, backslashes and
    newlines in values and help, +Inf/NaN, large integers, _created, info, histogram, summary,
    a sample label that overrides a base label)."""
    from prometheus_client.exposition import generate_latest
    from exporter_common.exposition import OPENMETRICS, TEXT, Format, assemble, render_parts
    from oracle_exporter.exporter import merge
    if kind == "openmetrics" and escaping in (om.DOTS, om.VALUES):
        assert negotiate_format({"Accept": f"application/openmetrics-text;version=1.0.0;escaping={escaping}"},
                                openmetrics=True)[0] is None
        return      # prometheus_client's own encoder answers those
    fmt = Format(TEXT if kind == "text" else OPENMETRICS, escaping, "")
    bases = [{"database": 'DB"1\\', "site": "dc\n1"}, {"database": "DB2"}]
    groups, relabelled = [], []
    for base in bases:
        fams = _hostile_families()
        groups.append(render_parts(fams, fmt, base))
        for fam in _hostile_families():
            fam.samples = [type(s)(s[0], {**base, **s[1]}, s[2], None, *s[4:]) for s in fam.samples]
            relabelled.append(fam)
    got = assemble(groups, fmt)
    merged = merge(relabelled)
    want = (generate_latest(Listed(merged), escaping=escaping) if kind == "text"
            else om.generate_latest(Listed(merged), escaping=escaping))
    assert got == want


def _rendered_by_fetch(target, timeout: float = 10.0) -> bool:
    """Wait for the fetch's worker to store its render of the target's last fetch."""
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        entry, last = target.rendered, target.last
        if entry is not None and last is not None and entry.fetched is last:
            return True
        time.sleep(0.01)
    return False


def test_the_fetch_renders_its_snapshot_so_the_scrape_only_joins_bytes():
    """A fetch renders its database in its own worker, in the format scraped lately: the scrape
    served by it runs no collector, and gets what a scrape that rendered it itself gets."""
    calls: dict = {}
    exporter = exporter_for("demo-before.jsonl", 0.0, calls)
    lazy = exporter_for("demo-before.jsonl", 0.0, {})
    try:
        fmt, _ = negotiate_format({"Accept": PROM2_ACCEPT})
        exporter.exposition(fmt)             # the first fetch: rendered by the scrape (no format asked before)
        lazy.exposition(fmt)
        t = exporter.targets["DEMO"]
        exporter._fetch_future(t).result()   # the next fetch, as a scrape starts it
        assert _rendered_by_fetch(t)
        assert t.renders == 2 and set(t.rendered.parts) == {fmt}
        ran = sum(calls.values())
        with t.lock:                          # serve that fetch, not a new one
            t.min_interval = 3600.0
        body = exporter.exposition(fmt)
        assert sum(calls.values()) == ran and t.renders == 2 and t.fetches == 2
        assert masked(PER_SCRAPE.sub(b"", body)) == masked(PER_SCRAPE.sub(b"", lazy.exposition(fmt)))
    finally:
        exporter.close()
        lazy.close()


def test_the_fetch_renders_only_the_formats_asked_for_since_the_previous_fetch():
    """Memory stays one copy per format in use: a format nobody asked for during a fetch is not
    rendered for the next one."""
    exporter = exporter_for("demo-before.jsonl", 0.0, {})
    try:
        text, _ = negotiate_format({"Accept": PROM2_ACCEPT})
        om3, _ = negotiate_format({"Accept": PROM3_ACCEPT}, openmetrics=True)
        t = exporter.targets["DEMO"]
        exporter.exposition(text)
        exporter.exposition(om3)             # a new fetch (no min_interval), asked for in OpenMetrics only
        assert set(t.rendered.parts) == {text, om3} and set(t.rendered.requested) == {om3}
        exporter._fetch_future(t).result()
        assert _rendered_by_fetch(t)
        assert set(t.rendered.parts) == {om3}
    finally:
        exporter.close()


def test_a_fetch_started_by_a_scrape_with_a_time_limit_keeps_no_render_cut_short():
    """The scraper's time limit bounds the collectors the fetch's worker runs too: a render past
    it leaves collectors out, and is not kept (the next scrape of that fetch renders it again)."""
    exporter = exporter_for("demo-before.jsonl", 0.0, {})
    try:
        fmt, _ = negotiate_format({})
        exporter.exposition(fmt)
        t = exporter.targets["DEMO"]
        before = t.rendered
        fetched = exporter._fetch_future(t, deadline=0.0).result()     # a limit already past
        import time
        end = time.monotonic() + 10
        while t.renders < 2 and time.monotonic() < end:
            time.sleep(0.01)
        with t.render_lock:
            assert t.last is fetched and t.renders == 2 and t.skipped and t.rendered is before
    finally:
        exporter.close()
