"""exporter_common.exposition.encode_text: byte for byte prometheus_client's text
encoder (generate_latest, 0.26.0), on the exporters' real output and on hostile input,
and the HTTP/--once paths that use it.

The reference is always prometheus_client itself, run on the same families: no
expected exposition is written by hand here.
"""
from __future__ import annotations

import math
import random
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder, generate_latest
from prometheus_client.metrics_core import (CounterMetricFamily, GaugeHistogramMetricFamily, GaugeMetricFamily,
                                            HistogramMetricFamily, InfoMetricFamily, Metric,
                                            StateSetMetricFamily, SummaryMetricFamily, UnknownMetricFamily)
from prometheus_client.openmetrics import exposition as om
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry
from prometheus_client.samples import Timestamp

from exporter_common import exposition as ex
from exporter_common.cli import exposition
from exporter_common.exposition import encode_text
import make_fixtures as mf  # the dbhost tests' tree generator (tests/dbhost is on pytest's pythonpath)

REPO = Path(__file__).resolve().parents[2]

ESCAPINGS = [om.UNDERSCORES, om.DOTS, om.VALUES, om.ALLOWUTF8]


class Families:
    """A registry stand-in holding fixed families, so both encoders see the same objects."""

    def __init__(self, families):
        self.families = list(families)

    def collect(self):
        return iter(self.families)


def reference(families, escaping: str = om.UNDERSCORES) -> bytes:
    return generate_latest(Families(families), escaping=escaping)


def assert_same(families, escaping: str = om.UNDERSCORES) -> bytes:
    families = list(families)
    want = reference(families, escaping)
    got = encode_text(families, escaping)
    if got != want:   # show the first differing line, not two megabytes
        for i, (g, w) in enumerate(zip(got.split(b"\n"), want.split(b"\n"))):
            assert g == w, f"line {i + 1} differs ({escaping})"
        assert len(got) == len(want)
    # a second encoding (every series prefix now cached) is identical too
    assert encode_text(families, escaping) == want
    return want


# --------------------------------------------------------------------------- (a) oracle demo recordings

def _oracle_exporter(recording: Path):
    from oracle_exporter.cli import build_exporter, build_parser
    exporter, _ = build_exporter(build_parser().parse_args(["--replay", str(recording)]))
    return exporter


@pytest.mark.slow
@pytest.mark.parametrize("name, scrapes", [("demo-before.jsonl", 8), ("demo-after.jsonl", 8),
                                           ("demo-rac-outage.jsonl", 41)])
def test_oracle_demo_recordings(name, scrapes):
    """Every exposition the replayed recording produces, through the real collectors; the RAC
    outage recording is scraped to its end (both instances, the outage, the recovery)."""
    from oracle_exporter.demo import DEMO_DIR
    exporter = _oracle_exporter(DEMO_DIR / name)
    try:
        types, sizes = set(), set()
        for _ in range(scrapes):
            families = exporter.scrape()
            types |= {f.type for f in families}
            text = assert_same(families)
            sizes.add(text.count(b"\n"))
            assert b"# TYPE oracle_exporter_build_info gauge\n" in text
        assert {"counter", "gauge", "histogram"} <= types
        assert min(sizes) > 500   # real expositions, not an empty scrape
    finally:
        exporter.close()


def _timing_masked(body: bytes) -> bytes:
    import re
    return re.sub(rb"^((?:oracle_collector_duration_seconds|oracle_scrape_duration_seconds|"
                  rb"oracle_snapshot_age_seconds)\{[^}]*\}) \S+$", rb"\1 T", body, flags=re.M)


def test_oracle_route_serves_encode_text():
    """oracle-exporter's /metrics handler on a pinned snapshot's families: the text format bytes and
    content type prometheus_client would answer; OpenMetrics (prometheus_client's) only with
    --web.enable-openmetrics, otherwise the text format even when the scraper prefers OpenMetrics
    (Prometheus 2.x and 3.x both list it first)."""
    from oracle_exporter.cli import make_routes
    from oracle_exporter.demo import DEMO_DIR
    exporter = _oracle_exporter(DEMO_DIR / "demo-before.jsonl")
    try:
        for t in exporter.targets.values():   # the route serves the same fetch as scrape() below
            t.min_interval = 3600.0
        families = exporter.scrape()
        routes = make_routes(exporter)
        resp = routes["/metrics"]({}, {})
        assert resp.status == 200
        assert resp.content_type == CONTENT_TYPE_PLAIN_0_0_4
        # the route renders the fetch's collectors once (tests/common/test_render_once.py): the
        # timing values of that run differ from scrape()'s, everything else is byte for byte
        assert _timing_masked(resp.body) == _timing_masked(reference(families))
        prom_accept = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                       "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")   # Prometheus 2.42
        resp = routes["/metrics"]({}, {"Accept": prom_accept})
        assert resp.content_type == CONTENT_TYPE_PLAIN_0_0_4
        assert _timing_masked(resp.body) == _timing_masked(reference(families))
        routes = make_routes(exporter, openmetrics=True)
        resp = routes["/metrics"]({}, {"Accept": prom_accept})
        assert resp.content_type.startswith("application/openmetrics-text")
        assert _timing_masked(resp.body) == _timing_masked(om.generate_latest(Families(families)))
        assert resp.body.endswith(b"# EOF\n")
    finally:
        exporter.close()


# --------------------------------------------------------------------------- (b) dbhost trees

def _dbhost_registry(fx):
    from dbhost_exporter.cli import make_registry
    from dbhost_exporter.config import load_config
    return make_registry(load_config(str(fx.config)), str(fx.procfs), str(fx.sysfs))


@pytest.mark.slow
def test_dbhost_fixture_tree(tmp_path):
    fx = mf.build_tree(tmp_path / "tree")
    registry = _dbhost_registry(fx)
    first = assert_same(registry.collect())
    for step in (1, 2):   # counters move: cached series prefixes, new values
        mf.advance_tree(fx, step)
        text = assert_same(registry.collect())
        assert text != first
    assert b"dbhost_lun_info{" in first
    assert b"dbhost_zfs_arc_hits_total{" in first


@pytest.fixture(scope="module")
def scale_tree(tmp_path_factory):
    return mf.build_scale_tree(tmp_path_factory.mktemp("scale") / "tree", n_paths=1024)


@pytest.mark.slow
def test_dbhost_scale_tree(scale_tree):
    registry = _dbhost_registry(scale_tree)
    families = list(registry.collect())
    text = assert_same(families)
    series = sum(1 for line in text.split(b"\n") if line and not line.startswith(b"#"))
    assert series > 13000
    assert text.count(b"\ndbhost_lun_info{") == 1024 + 512
    # steady state: same collectors, next scrape
    assert_same(registry.collect())


@pytest.mark.slow
def test_dbhost_scale_tree_is_cheaper(scale_tree):
    """The point of the encoder: much less work than generate_latest on 13,9xx series, told by the
    function calls each makes (Python and C, counted by a profile hook: a count, not a time, so a
    loaded machine cannot fail it; the CPU ratio, about 4x, is bench.run's "lun" section). Steady
    state: the encoder's per-series text is remembered from the first call."""
    families = list(_dbhost_registry(scale_tree).collect())
    fams = Families(families)
    assert encode_text(families) == generate_latest(fams)

    def calls(fn) -> int:
        count = [0]

        def hook(frame, event, arg):
            if event in ("call", "c_call"):
                count[0] += 1
        sys.setprofile(hook)
        try:
            fn()
        finally:
            sys.setprofile(None)
        return count[0]

    ours = calls(lambda: encode_text(families))
    theirs = calls(lambda: generate_latest(fams))
    assert theirs >= 3 * ours, f"generate_latest {theirs} calls, encode_text {ours}"


def test_dbhost_once_uses_same_bytes(tmp_path):
    """dbhost-exporter --once prints the text exposition; it parses back to the same
    families prometheus_client would print for a fresh registry on the same tree."""
    fx = mf.build_tree(tmp_path / "tree", with_proc=False)
    out = subprocess.run([sys.executable, "-m", "dbhost_exporter.cli", "--once", f"--path.procfs={fx.procfs}",
                          f"--path.sysfs={fx.sysfs}", f"--config.file={fx.config}", "--log.level=error"],
                         capture_output=True, timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr.decode()
    want = reference(_dbhost_registry(fx).collect())
    # the scrape-duration gauges differ between two runs; everything else is byte-identical,
    # followed by the exporter process's own metrics (tests/common/test_process_metrics.py)
    def stable(b):
        return [line for line in b.split(b"\n") if b"duration_seconds" not in line]
    cut = out.stdout.index(b"# HELP process_")
    assert stable(out.stdout[:cut]) == stable(want)
    assert {f.name for f in text_string_to_metric_families(out.stdout[cut:].decode())} == {
        "process_virtual_memory_bytes", "process_resident_memory_bytes", "process_start_time_seconds",
        "process_cpu_seconds", "process_open_fds", "process_max_fds"}


# --------------------------------------------------------------------------- (c) hostile input, every type

HOSTILE = ['', 'plain', 'quo"te', 'back\\slash', 'new\nline', '\\"\n', 'trailing\\', '"', '\\\\n',
           'ünïcödé', '日本語', '😀 emoji', 'tab\there', 'cr\rhere', '{brace}', '{0}', '%s %d', 'a=b,c="d"',
           ' ', '\x00nul', '\u2028sep']
VALUES = [0, 1, -1, 0.0, -0.0, 1.5, -2.25, 999999, 1000000, 999999.9999999, 1e6, 1715004, 1715004.0,
          1.715004e6, 123456789.123, 1e15, 1e16, 1e17, 1.5e300, -1e6, -1715004.0, 1e-7, 5e-324, 0.1,
          2 ** 53, 2 ** 70, -(2 ** 70), True, False, math.inf, -math.inf, math.nan, 12345678901234567890]


def _all_types() -> list[Metric]:
    fams: list[Metric] = []
    c = CounterMetricFamily("t_requests", 'Help with \\ backslash\nand "newline"', labels=["path", "code"],
                            created=1700000000.5)
    for i, v in enumerate(HOSTILE):
        c.add_metric([v, str(i)], VALUES[i % len(VALUES)], created=1700000000.25 + i)
    fams.append(c)
    c2 = CounterMetricFamily("t_plain_total", "counter given with _total", value=7)
    fams.append(c2)
    g = GaugeMetricFamily("t_gauge", "gauge", labels=["v"])
    for i, v in enumerate(VALUES):
        g.add_metric([f"x{i}"], v)
    fams.append(g)
    g2 = GaugeMetricFamily("t_gauge_ts", "gauge with timestamps", labels=["k"])
    g2.add_metric(["float"], 1.0, timestamp=1715004000.123)
    g2.add_metric(["ts"], 2.0, timestamp=Timestamp(1715004000, 500000000))
    g2.add_metric(["int"], 3.0, timestamp=1715004000)
    fams.append(g2)
    h = HistogramMetricFamily("t_latency_seconds", "histogram", labels=["event"])
    h.add_metric(["log file sync"], [("0.001", 3), ("0.01", 8), ("+Inf", 10)], sum_value=0.0425)
    h.add_metric(['db "file"'], [("1e-05", 0), ("1000000.0", 4), ("+Inf", 4)], sum_value=1715004.5)
    fams.append(h)
    s = SummaryMetricFamily("t_summary_seconds", "summary", labels=["q"])
    s.add_metric(["x"], count_value=10, sum_value=math.nan)
    s.add_metric(["y"], count_value=4, sum_value=2.5)
    fams.append(s)
    fams.append(SummaryMetricFamily("t_summary2", "summary without labels", count_value=1, sum_value=0.5))
    fams.append(InfoMetricFamily("t_build", "info", value={"version": '1.0 "beta"', "path": "C:\\x\n"}))
    st = StateSetMetricFamily("t_state", "stateset", value={"on": True, "off": False, 'we"ird': True})
    fams.append(st)
    gh = GaugeHistogramMetricFamily("t_queue", "gauge histogram", labels=["lun"])
    gh.add_metric(["sda"], [("1.0", 2), ("+Inf", 5)], gsum_value=3.5)
    fams.append(gh)
    u = UnknownMetricFamily("t_untyped", "unknown", labels=["a"])
    u.add_metric(["ü"], -math.inf)
    fams.append(u)
    m = Metric("t_raw", "raw Metric with hand-made samples", "gauge")
    m.add_sample("t_raw", {"z": "1", "a": "2", "m": "3"}, 1.0)            # label order differs from sorted
    m.add_sample("t_raw", {"a": "2", "z": "1", "m": "3"}, 2.0)
    m.add_sample("t_raw_created", {}, 1700000000.0)                       # moved into a trailing gauge
    m.add_sample("t_raw", {}, 3.0)
    m.add_sample("t_raw_gsum", {"a": "x"}, 4.0)
    m.add_sample("t_raw_gcount", {"a": "x"}, 5.0)
    fams.append(m)
    fams.append(GaugeMetricFamily("t_empty", "no samples"))
    fams.append(GaugeMetricFamily("t_nohelp", ""))
    odd = Metric("t.dotted:name", "non-legacy metric name", "gauge")
    odd.add_sample("t.dotted:name", {"label.with.dots": "v", "0digit": "w", "__reserved": "x",
                                     "ünï": "y", "nl\n": "z", "{i}": "q"}, 1.0)
    odd.add_sample("t.dotted:name", {}, 2.0)
    fams.append(odd)
    trailing = Metric("t_trailing\n", "metric name ending in a newline (passes the legacy regex)", "untyped")
    trailing.add_sample("t_trailing\n", {"k": "v"}, 1.0)
    fams.append(trailing)
    return fams


@pytest.mark.parametrize("escaping", ESCAPINGS)
def test_every_type_and_hostile_labels(escaping):
    text = assert_same(_all_types(), escaping)
    if escaping == om.UNDERSCORES:
        decoded = text.decode()
        # spot checks on what the reference did, so a broken reference comparison cannot pass silently
        assert 'path="quo\\"te"' in decoded and 'path="new\\nline"' in decoded
        assert "# HELP t_requests_total Help with \\\\ backslash\\nand \"newline\"\n" in decoded
        assert "# TYPE t_requests_created gauge\n" in decoded
        assert 't_gauge{v="x8"} 1e+06\n' in decoded and 't_gauge{v="x11"} 1.715004e+06\n' in decoded
        assert 't_gauge{v="x9"} 999999.9999999\n' in decoded and 't_gauge{v="x4"} -0.0\n' in decoded
        assert 't_gauge{v="x29"} +Inf\n' in decoded and 't_gauge{v="x31"} NaN\n' in decoded
        assert 't_gauge_ts{k="ts"} 2.0 1715004000500\n' in decoded
        assert "# TYPE t_build_info gauge\n" in decoded and "# TYPE t_queue histogram\n" in decoded
        assert "# TYPE t_untyped untyped\n" in decoded
        assert 't_raw{a="2",m="3",z="1"} 1.0\n' in decoded


def test_values_one_by_one():
    """Every tricky value alone (a failure names the value)."""
    for v in VALUES + [float(2 ** 63), 1e21, 123456.7, 1234567.0, 0.000123, -0.000123, 1e5, 1e6 - 1e-9]:
        fam = GaugeMetricFamily("v", "v", labels=["k"])
        fam.add_metric(["a"], v)
        fam2 = GaugeMetricFamily("w", "w", value=v)
        assert encode_text([fam, fam2]) == reference([fam, fam2]), repr(v)


def test_cache_stays_bounded_and_correct(monkeypatch):
    monkeypatch.setattr(ex, "_SERIES_CAP", 10)
    fam = GaugeMetricFamily("bounded", "b", labels=["i"])
    for i in range(100):
        fam.add_metric([str(i)], i)
    assert_same([fam], "values")
    assert len(ex._names_for("values")[3]) <= 10


def test_same_labels_different_series_not_confused():
    """The series cache must not mix up label names and values or different sample names."""
    a = Metric("conf", "c", "gauge")
    a.add_sample("conf", {"a": "b"}, 1.0)
    a.add_sample("conf", {"b": "a"}, 2.0)
    a.add_sample("conf", {"a": "b", "c": "d"}, 3.0)
    a.add_sample("conf", {"a": "b,c=d"}, 4.0)
    a.add_sample("conf_other", {"a": "b"}, 5.0)
    text = assert_same([a]).decode()
    assert 'conf{a="b"} 1.0\nconf{b="a"} 2.0\nconf{a="b",c="d"} 3.0\nconf{a="b,c=d"} 4.0\n' in text


def test_bad_input_raises_like_prometheus_client():
    """A label value that is not a string or a value that is not a number fails in both
    encoders; ours carries the family in the error as generate_latest does."""
    bad_label = Metric("bad", "b", "gauge")
    bad_label.add_sample("bad", {"k": 5}, 1.0)
    bad_value = Metric("bad2", "b", "gauge")
    bad_value.add_sample("bad2", {}, "not a number")
    for fam in (bad_label, bad_value):
        with pytest.raises(Exception) as theirs:
            reference([fam])
        with pytest.raises(Exception) as ours:
            encode_text([fam])
        assert ours.value.args[-1] is fam
        assert theirs.value.args[-1] is fam


# --------------------------------------------------------------------------- (d) randomized

def _random_text(rng: random.Random) -> str:
    pool = ["a", "Z", "_", "0", "9", ".", ":", "-", " ", '"', "\\", "\n", "ü", "日", "😀", "{", "}", "=", ","]
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 8)))


def _random_name(rng: random.Random, legacy_bias: float = 0.8) -> str:
    if rng.random() < legacy_bias:
        first = rng.choice("abcxyz_")
        return first + "".join(rng.choice("abcxyz_019:") for _ in range(rng.randint(0, 10)))
    return rng.choice("abc") + _random_text(rng)


def _random_value(rng: random.Random):
    kind = rng.randrange(8)
    if kind == 0:
        return rng.choice([math.inf, -math.inf, math.nan, 0.0, -0.0])
    if kind == 1:
        return rng.randint(-10 ** 20, 10 ** 20)
    if kind == 2:
        return rng.randint(0, 10 ** 7)
    if kind == 3:
        return float(rng.randint(0, 10 ** 9))
    if kind == 4:
        return rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20)
    if kind == 5:
        return round(rng.uniform(0, 2e6), rng.randint(0, 6))
    return rng.random() * rng.choice([1, 1000, 1e6, 1e7])


def _random_families(rng: random.Random, n: int) -> list[Metric]:
    fams = []
    for _ in range(n):
        name = _random_name(rng, 0.85)
        mtype = rng.choice(["counter", "gauge", "histogram", "summary", "info", "stateset",
                            "gaugehistogram", "unknown", "untyped"])
        fam = Metric(name, _random_text(rng), mtype)
        label_names = [_random_name(rng, 0.9) for _ in range(rng.randint(0, 4))]
        suffixes = ["", "_total", "_created", "_gsum", "_gcount", "_bucket", "_sum", "_count", "_info"]
        for _ in range(rng.randint(0, 12)):
            labels = {k: _random_text(rng) if rng.random() < 0.3 else f"v{rng.randint(0, 3)}"
                      for k in rng.sample(label_names, rng.randint(0, len(label_names)))}
            ts = rng.choice([None, None, None, rng.uniform(0, 2e9), Timestamp(rng.randint(0, 2 * 10 ** 9), 1)])
            fam.add_sample(name + rng.choice(suffixes), labels, _random_value(rng), ts)
        fams.append(fam)
    return fams


@pytest.mark.parametrize("seed", range(6))
def test_random_families(seed):
    rng = random.Random(seed)
    families = _random_families(rng, 150)
    for escaping in ESCAPINGS:
        assert_same(families, escaping)
    assert sum(len(f.samples) for f in families) > 500


# --------------------------------------------------------------------------- negotiation

def _registry(families) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)

    class Fixed:
        def collect(self):
            return iter(families)

    registry.register(Fixed())
    return registry


@pytest.mark.parametrize("accept", [
    "",
    "text/plain; version=0.0.4",
    "text/plain;version=1.0.0;escaping=allow-utf-8",
    "text/plain;version=1.0.0;escaping=dots",
    "text/plain;version=1.0.0",
    "application/openmetrics-text; version=1.0.0; charset=utf-8",
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
    "application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,"
    "text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
    "application/openmetrics-text",
])
def test_exposition_negotiates_like_prometheus_client(accept):
    """With --web.enable-openmetrics: exactly prometheus_client's negotiation."""
    families = _all_types()
    registry = _registry(families)
    encoder, content_type = choose_encoder(accept)
    resp = exposition(registry, {"Accept": accept} if accept else {}, openmetrics=True)
    assert resp.status == 200
    assert resp.content_type == content_type
    assert resp.body == encoder(registry)
    plain = encoder is generate_latest or (isinstance(encoder, partial) and encoder.func is generate_latest)
    ours = ex.choose_text_encoder(accept)[0]
    if plain:   # the text format is ours, OpenMetrics stays prometheus_client's
        assert ours is not generate_latest and getattr(ours, "func", None) is not generate_latest
    else:
        assert ours.func is om.generate_latest


@pytest.mark.parametrize("accept", [
    "application/openmetrics-text; version=1.0.0; charset=utf-8",
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "application/openmetrics-text",
])
def test_exposition_is_text_unless_openmetrics_is_enabled(accept):
    """By default (like node_exporter) the text format, whatever the scraper prefers."""
    families = _all_types()
    registry = _registry(families)
    resp = exposition(registry, {"Accept": accept})
    assert resp.content_type == CONTENT_TYPE_PLAIN_0_0_4
    assert resp.body == generate_latest(registry)


def test_values_from_a_million_up_are_written_as_floattogostring_writes_them():
    """format_value takes a shortcut from 1e6 to 1e16 (Go's exponent form, 1.234567e+06): counters
    and byte counts, whole or not, at the bounds and between, give floatToGoString's text."""
    from prometheus_client.utils import floatToGoString

    from exporter_common.exposition import format_value

    rng = random.Random(26)
    values = [1e6, 1e6 - 1, 999999.9999999999, 1000000.0000000001, 1e15, 1e16, 1e16 - 2, 9999999999999998.0,
              1.5e16, 2.0 ** 53, 1234567.0, 137308830.0, 10000000.5, float("inf"), float("-inf"), -1e7, -1e16]
    values += [float(rng.randint(10 ** 6, 10 ** 17)) for _ in range(3000)]
    values += [rng.randint(1, 999) * 10.0 ** rng.randint(4, 15) for _ in range(2000)]
    values += [rng.random() * 10 ** rng.randint(5, 17) for _ in range(3000)]
    assert [format_value(v) for v in values] == [floatToGoString(v) for v in values]
    assert format_value(137308830.0) == "1.3730883e+08" and format_value(1e6) == "1e+06"
