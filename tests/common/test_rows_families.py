"""Declared families keep their samples as rows and the exposition writes the rows directly
(exporter_common.families, issue 26): what a scraper reads must stay byte for byte what
prometheus_client writes for the same families, whatever the label values hold (quotes,
backslashes, newlines, braces that a format pattern could take for its own), whatever the
database's labels are, and whether a collector read ``samples`` in between or not."""
from __future__ import annotations

import pytest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics import exposition as om

from exporter_common.declare import Family
from exporter_common.exposition import OPENMETRICS, TEXT, Format, assemble, render_parts
from exporter_common.families import (RowsCounter, RowsGauge, RowsHistogram, add_rows, drop_negative, rows_of,
                                     sample_count)
from oracle_exporter.exporter import merge

HOSTILE = 'a "quoted"\\ {0} {x} }{ event\nline'


class Listed:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def _fill(make):
    """The same samples into families built by ``make(kind, name, labels)``: declared ones (rows)
    or prometheus_client's own."""
    c = make("counter", "ora_things_total", ("event", "inst_id"))
    c.add_metric([HOSTILE, "1"], 12345678901234)
    c.add_metric(["plain", "2"], 0.1)
    c.add_metric(["neg", "3"], -1.0)
    c.add_metric(["created", "4"], 7, created=1700000000.25)      # not a row: prometheus_client's samples
    g = make("gauge", "ora_gauge", ("database", "x"))               # a label of base's own
    g.add_metric(["mine", "1"], float("inf"))
    g.add_metric(["mine", "2"], float("nan"))
    g0 = make("gauge", "ora_plain", ())
    g0.add_metric([], -3)
    g1 = make("gauge", "ora_big", ("k",))
    for v in (999999, 1000000, 1e6, 123456789.5, 1e22, -1e22, 5e-324, 0, -0.0, True):
        g1.add_metric([str(v)], v)
    h = make("histogram", "ora_hist", ("ev", "inst_id"))
    h.add_metric(["e{1}", "1"], [("0.001", 1), ("1e-06", 2.0), ("+Inf", 4)], 2.5)
    h.add_metric(["no sum", "1"], [("0.5", 1), ("+Inf", 1)], None)
    h.add_metric(["negative", "2"], [("-1", 1), ("+Inf", 3)], 9.0)
    h.add_metric(['q"uote\\', "2"], [("4294.967296", 10**7), ("+Inf", 10**7)], 1e7)
    return [c, g, g0, g1, h]


def _declared(kind, name, labels):
    return Family(name, kind, "Help with \"quotes\", \\ and {braces}\nnewline", labels).make()


def _clients(kind, name, labels):
    cls = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily, "histogram": HistogramMetricFamily}[kind]
    return cls(name, "Help with \"quotes\", \\ and {braces}\nnewline", labels=labels)


def test_declared_families_are_rows_that_read_as_prometheus_clients_samples():
    rows, clients = _fill(_declared), _fill(_clients)
    assert isinstance(rows[0], RowsCounter) and isinstance(rows[1], RowsGauge) and isinstance(rows[4], RowsHistogram)
    assert rows_of(rows[1]) is not None and rows_of(rows[0]) is None     # the created= call made it samples
    assert [sample_count(f) for f in rows] == [len(f.samples) for f in clients]
    # name, help, type, unit and every sample, in order (repr: a NaN is not equal to itself)
    assert [repr(f) for f in rows] == [repr(f) for f in clients] and rows[0] == clients[0]
    assert all(rows_of(f) is None for f in rows)


def test_drop_negative_removes_only_negative_rows():
    fam, want = _declared("counter", "ora_x_total", ("k",)), _clients("counter", "ora_x_total", ("k",))
    for f in (fam, want):
        f.add_metric(["a"], 1.0)
        f.add_metric(["b"], -2.0)
        f.add_metric(["c"], 0.0)
    drop_negative(fam)
    assert rows_of(fam) is not None and sample_count(fam) == 2
    assert [s.labels["k"] for s in fam.samples] == ["a", "c"]
    want.samples = [s for s in want.samples if s.value >= 0]
    assert fam == want


@pytest.mark.parametrize("kind", ["text", "openmetrics"])
@pytest.mark.parametrize("escaping", [om.UNDERSCORES, om.ALLOWUTF8])
@pytest.mark.parametrize("read_first", [False, True])
def test_rows_render_as_prometheus_client_writes_the_relabelled_families(kind, escaping, read_first):
    """Two databases (one with quotes, a backslash, a newline and braces in its labels), their
    families written from rows with the database labels put in: the bytes prometheus_client's
    encoder writes for the relabelled, merged families; the same when ``samples`` was read first."""
    fmt = Format(TEXT if kind == "text" else OPENMETRICS, escaping, "")
    bases = [{"database": 'DB"{0}\\', "site": "dc\n{1}"}, {"database": "DB2"}]
    groups, relabelled = [], []
    for base in bases:
        fams = _fill(_declared)
        if read_first:
            assert all(f.samples is not None and rows_of(f) is None for f in fams)
        groups.append(render_parts(fams, fmt, base))
        for fam in _fill(_clients):
            fam.samples = [type(s)(s[0], {**base, **s[1]}, s[2], None, *s[4:]) for s in fam.samples]
            relabelled.append(fam)
    got = assemble(groups, fmt)
    merged = merge(relabelled)
    want = (generate_latest(Listed(merged), escaping=escaping) if kind == "text"
            else om.generate_latest(Listed(merged), escaping=escaping))
    assert got == want
    assert b'{0}' in got and b'\\"quoted\\"' in got      # the hostile values made it, escaped


def test_rows_without_base_labels_render_as_encode_text():
    from exporter_common.exposition import encode_text
    fmt = Format(TEXT, om.UNDERSCORES, "")
    got = assemble([render_parts(_fill(_declared), fmt)], fmt)
    assert got == encode_text(_fill(_clients)) == generate_latest(Listed(_fill(_clients)))


@pytest.mark.parametrize("kind", ["text", "openmetrics"])
def test_values_of_every_magnitude_are_written_as_prometheus_client_writes_them(kind):
    """A family whose labels need no escaping is written in one pass (values formatted inline):
    every kind of value a collector hands over (counters past 1e6 and 1e16, tiny ratios, exact
    ints on both sides of the shortcuts, bools, -0.0, NaN, infinities) must give the bytes
    prometheus_client's encoder gives."""
    import random
    from decimal import Decimal

    rng = random.Random(5)
    values = [0, -0.0, 0.0, True, False, 999999, 1000000, -999999, -1000000, 10 ** 20, -(10 ** 20), 1e6,
              999999.9999999999, 1000000.0000000001, 141056551000.0, 1526551110000.0, 1e15, 9999999999999998.0,
              1e16, 1.5e16, 1e22, -1e22, 5e-324, 1e-7, 0.1, 1 / 3, float("nan"), float("inf"), float("-inf"),
              Decimal("12.5"), Decimal(10) ** 7]
    values += [rng.choice((1, -1)) * rng.random() * 10 ** rng.randint(-8, 22) for _ in range(400)]
    values += [rng.randint(-10 ** 18, 10 ** 18) for _ in range(100)] + [float(rng.randint(0, 10 ** 17)) for _ in range(100)]
    fmt = Format(TEXT if kind == "text" else OPENMETRICS, om.UNDERSCORES, "")
    mine, theirs = _declared("gauge", "ora_values", ("n",)), _clients("gauge", "ora_values", ("n",))
    hmine, htheirs = _declared("histogram", "ora_h", ("n",)), _clients("histogram", "ora_h", ("n",))
    for n, v in enumerate(values):
        mine.add_metric([str(n)], v)
        theirs.add_metric([str(n)], v)
        if n % 7 == 0:      # buckets of every magnitude too (le values such as Oracle's ladder)
            buckets = [("1e-06", v), ("4294.967296", values[n - 1]), ("+Inf", values[n - 2])]
            hmine.add_metric([str(n)], buckets, values[n - 3])
            htheirs.add_metric([str(n)], buckets, values[n - 3])
    got = assemble([render_parts([mine, hmine], fmt, {"database": "DB"})], fmt)
    for fam in (theirs, htheirs):
        fam.samples = [type(s)(s[0], {"database": "DB", **s[1]}, s[2], None, *s[4:]) for s in fam.samples]
    want = (generate_latest(Listed([theirs, htheirs])) if kind == "text"
            else om.generate_latest(Listed([theirs, htheirs])))
    assert got == want
    assert b'n="14"} 1.41056551e+11\n' in got


def test_add_rows_gives_the_family_add_metric_gives():
    """families.add_rows (collectors with hundreds of rows) keeps the rows as they are when they
    fit, else goes through add_metric: either way the samples, and the bytes, are add_metric's."""
    rows = [(("1", "log file sync"), 12.5), (("2", HOSTILE), 1e7), (("1", "x"), -1.0)]
    one, bulk = _declared("counter", "ora_w_total", ("inst_id", "event")), None
    for labels, value in rows:
        one.add_metric(labels, value)
    bulk = _declared("counter", "ora_w_total", ("inst_id", "event"))
    add_rows(bulk, iter(rows))
    assert rows_of(bulk) == rows_of(one) == rows
    assert bulk == one and repr(bulk) == repr(one)
    fmt = Format(TEXT, om.UNDERSCORES, "")
    assert render_parts([bulk], fmt, {"database": "DB"})[0].lines == render_parts([one], fmt, {"database": "DB"})[0].lines
    # a family already read as samples, labels given as lists: add_metric's way, same samples
    read = _declared("gauge", "ora_g", ("inst_id", "event"))
    assert read.samples == []
    add_rows(read, [(list(labels), value) for labels, value in rows])
    want = _clients("gauge", "ora_g", ("inst_id", "event"))
    for labels, value in rows:
        want.add_metric(labels, value)
    assert rows_of(read) is None and read == want
    # a row with a label missing is not kept as a short row: add_metric's samples
    short, want = _declared("gauge", "ora_g", ("inst_id", "event")), _clients("gauge", "ora_g", ("inst_id", "event"))
    add_rows(short, [(("1", "a"), 1.0), (("2",), 2.0)])
    want.add_metric(("1", "a"), 1.0)
    want.add_metric(("2",), 2.0)
    assert rows_of(short) is None and short == want and short.samples[1].labels == {"inst_id": "2"}


def test_copies_of_a_declaration_start_empty_and_apart():
    """Collector.family hands out copies of one prototype: what one collect added (or read as
    samples) never shows in the next copy, and each carries the declared name, help and labels."""
    from exporter_common.declare import Collector

    spec = Collector("c", "h", metrics=(Family("ora_copy_bytes", "gauge", "Copy.", ("inst_id",)),))
    first = spec.family("ora_copy_bytes")
    first.add_metric(["1"], 1.0)
    assert [s.value for s in first.samples] == [1.0]
    second, third = spec.family("ora_copy_bytes"), spec.family("ora_copy_bytes")
    second.add_metric(["2"], 2.0)
    assert rows_of(third) == [] and rows_of(second) == [(("2",), 2.0)]
    assert (third.name, third.documentation, third.type, third._labelnames) == ("ora_copy_bytes", "Copy.", "gauge",
                                                                               ("inst_id",))


@pytest.mark.parametrize("kind", ["text", "openmetrics"])
def test_histogram_buckets_that_repeat_one_count_are_written_as_prometheus_client_writes_them(kind):
    """Cumulative buckets repeat the very same count object where a bucket adds nothing (the
    renderer formats it once): every bucket, _count and _sum must still be prometheus_client's."""
    fmt = Format(TEXT if kind == "text" else OPENMETRICS, om.UNDERSCORES, "")
    big, small, nan = 137308830.0, 0.0, float("nan")
    ladders = [[("1e-06", small), ("2e-06", small), ("0.001", big), ("1.0", big), ("+Inf", big)],
               [("0.5", 7), ("1.0", 7), ("+Inf", 7)],
               [("0.5", nan), ("+Inf", nan)],
               [("0.5", 1e22), ("1.0", 1e22), ("+Inf", 10 ** 7)]]
    mine, theirs = _declared("histogram", "ora_lat", ("ev",)), _clients("histogram", "ora_lat", ("ev",))
    for n, buckets in enumerate(ladders):
        for fam in (mine, theirs):
            fam.add_metric([str(n)], buckets, 12.5)
    got = assemble([render_parts([mine], fmt, {"database": "DB"})], fmt)
    theirs.samples = [type(s)(s[0], {"database": "DB", **s[1]}, s[2], None, *s[4:]) for s in theirs.samples]
    want = generate_latest(Listed([theirs])) if kind == "text" else om.generate_latest(Listed([theirs]))
    assert got == want
    assert b'ora_lat_count{database="DB",ev="0"} 1.3730883e+08\n' in got
