"""Fast Prometheus text exposition (format 0.0.4 and 1.0.0 text) for both exporters.

``encode_text(families)`` returns exactly the bytes that prometheus_client's
``prometheus_client.exposition.generate_latest`` returns for the same metric
families (same HELP/TYPE munging, ``_total``/``_info`` suffixes, ``_created``/
``_gsum``/``_gcount`` moved into trailing gauge families, label sorting and
escaping, Go float formatting), but spends far less CPU per series:

- metric and label *names* are escaped once per distinct name (the escaping
  itself is delegated to prometheus_client's own functions, so every quirk of
  its name validation is kept) and cached;
- every distinct tuple of label names (in the collector's insertion order)
  compiles once to a ``str.format`` template that already carries the sorted,
  escaped names;
- every series' ``name{labels} `` prefix is remembered, keyed by its sample
  name, label names and label values (plain tuples: no value can be mistaken
  for another), so a steady-state scrape, where series stay the same and only
  values move, formats just the value. The cache holds about one exposition's
  worth of label text and is dropped whenever it passes ``_SERIES_CAP`` series;
- values go through a local copy of ``floatToGoString``'s logic without the
  generic call chain.

OpenMetrics is not produced here: content negotiation stays with
prometheus_client (see ``exporter_common.cli.exposition``).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Iterable

from prometheus_client.exposition import CONTENT_TYPE_LATEST, CONTENT_TYPE_PLAIN_0_0_4, choose_encoder
from prometheus_client.exposition import generate_latest as _generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as _om
from prometheus_client.validation import _is_valid_legacy_metric_name

from .families import RowsHistogram

__all__ = ["encode_text", "choose_text_encoder", "CONTENT_TYPE_PLAIN_0_0_4", "negotiate", "render_parts",
           "assemble", "assemble_pieces", "Format", "Part", "TEXT", "OPENMETRICS"]

UNDERSCORES = _om.UNDERSCORES
ALLOWUTF8 = _om.ALLOWUTF8

# OpenMetrics family type -> (suffix appended to the family name, text-format TYPE).
_TYPES = {
    "counter": ("_total", "counter"),
    "info": ("_info", "gauge"),
    "stateset": ("", "gauge"),
    "gaugehistogram": ("", "histogram"),
    "unknown": ("", "untyped"),
}

# The name caches are keyed by metric/label names only, so they stay as small as the
# exporters' fixed set of names; a hard cap keeps them bounded even if a caller feeds
# unbounded names. There is one set of caches per name escaping (at most the four
# schemes prometheus_client's negotiation can return).
_CACHE_CAP = 20000
# Series prefixes (``name{labels} ``) are remembered per series: about the size of one
# exposition of label text; cleared whenever it grows past this many series.
_SERIES_CAP = 200000
# escaping -> (metric names, sample heads, label templates, series prefixes)
_by_escaping: dict[str, tuple[dict, dict, dict, dict]] = {}


def _names_for(escaping: str) -> tuple[dict, dict, dict, dict]:
    caches = _by_escaping.get(escaping)
    if caches is None:
        caches = _by_escaping[escaping] = ({}, {}, {}, {})
    return caches


def _prefix(cache: dict, key: tuple, head: tuple[str, str, str], labels: dict, templates: dict,
            escaping: str) -> str:
    """``name{k="v",...} `` of one series, remembered under ``key`` (sample name, label names,
    label values) so a steady-state scrape formats each series' labels only once."""
    keys = tuple(labels)
    tmpl = templates.get(keys) or _template(keys, escaping)
    vals = [_escape_value(v) if ("\\" in v or '"' in v or "\n" in v) else v for v in labels.values()]
    if len(cache) >= _SERIES_CAP:
        cache.clear()
    prefix = cache[key] = f"{head[0]}{tmpl.format(*vals)}{head[1]}"
    return prefix


def _metric_name(name: str, escaping: str) -> str:
    cache = _names_for(escaping)[0]
    value = cache.get(name)
    if value is None:
        if len(cache) >= _CACHE_CAP:
            cache.clear()
        value = cache[name] = _om.escape_metric_name(name, escaping)
    return value


def _sample_head(name: str, escaping: str) -> tuple[str, str, str]:
    """How generate_latest writes sample ``name``: (prefix when labels follow, separator
    between the labels and the value, whole prefix without labels)."""
    cache = _names_for(escaping)[1]
    if len(cache) >= _CACHE_CAP:
        cache.clear()
    escaped = _om.escape_metric_name(name, escaping)
    if escaping == ALLOWUTF8 and not _is_valid_legacy_metric_name(name):
        head = ("{" + escaped + ",", "} ", "{" + escaped + "} ")
    else:
        head = (escaped + "{", "} ", escaped + " ")
    cache[name] = head
    return head


def _template(keys: tuple[str, ...], escaping: str) -> str:
    """``k1="{i}",k2="{j}"`` with the keys sorted and escaped; {i} is the key's position in ``keys``."""
    cache = _names_for(escaping)[2]
    if len(cache) >= _CACHE_CAP:
        cache.clear()
    order = sorted(range(len(keys)), key=keys.__getitem__)
    parts = []
    for i in order:
        name = _om.escape_label_name(keys[i], escaping).replace("{", "{{").replace("}", "}}")
        parts.append(f'{name}="{{{i}}}"')
    tmpl = cache[keys] = ",".join(parts)
    return tmpl


def _escape_value(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


_EXPONENTS = tuple(f"e+{dot - 1:02d}" for dot in range(17))     # by the position of repr's dot


def _go_float(d) -> str:
    """prometheus_client.utils.floatToGoString, same output."""
    if type(d) is float:                 # the usual values first
        if d < 1e6:
            if d - d == 0.0:             # finite, below the exponent switch: repr
                return repr(d)
        elif d < 1e16:                   # repr is d.dddd (no exponent): Go's exponent form
            s = repr(d)
            dot = s.find(".")
            return f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.") + _EXPONENTS[dot]
    if type(d) is not float:
        d = float(d)
    s = repr(d)
    last = s[-1]
    if last == "f":                      # 'inf' / '-inf'
        return "+Inf" if d > 0 else "-Inf"
    if last == "n":                      # 'nan'
        return "NaN"
    if d > 0:
        dot = s.find(".")
        if dot > 6:
            mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.")
            return f"{mantissa}e+{dot - 1:02d}"
    return s


format_value = _go_float     # a sample value as the text and OpenMetrics formats write it


def _help(doc: str) -> str:
    return doc.replace("\\", "\\\\").replace("\n", "\\n")


def encode_text(families: Iterable[Metric], escaping: str = UNDERSCORES) -> bytes:
    """The Prometheus text exposition of ``families`` (e.g. ``registry.collect()``):
    byte for byte what ``generate_latest`` produces, for any name ``escaping``."""
    out: list[str] = []
    append = out.append
    _, heads, templates, prefixes = _names_for(escaping)
    go_float = _go_float
    for metric in families:
        try:
            name = metric.name
            suffix, ttype = _TYPES.get(metric.type, ("", metric.type))
            shown = _metric_name(name + suffix, escaping)
            doc = _help(metric.documentation)
            append(f"# HELP {shown} {doc}\n# TYPE {shown} {ttype}\n")
            special = {name + "_created": "_created", name + "_gsum": "_gsum", name + "_gcount": "_gcount"}
            om_lines: dict[str, list[str]] | None = None
            for sname, labels, value, ts, _exemplar, _native in metric.samples:
                head = heads.get(sname) or _sample_head(sname, escaping)
                vtype = type(value)
                if vtype is int and -1000000 < value < 1000000:
                    val = f"{value}.0"
                elif vtype is float and value < 1e6 and value - value == 0.0:
                    val = repr(value)        # finite, below floatToGoString's exponent switch
                else:
                    val = go_float(value)
                if ts is not None:
                    val = f"{val} {int(float(ts) * 1000):d}"
                if labels:
                    key = (sname, *labels, *labels.values())
                    prefix = prefixes.get(key)
                    if prefix is None:
                        prefix = _prefix(prefixes, key, head, labels, templates, escaping)
                    line = f"{prefix}{val}\n"
                else:
                    line = f"{head[2]}{val}\n"
                if sname in special:
                    if om_lines is None:
                        om_lines = {}
                    om_lines.setdefault(special[sname], []).append(line)
                else:
                    append(line)
        except Exception as exception:
            # as generate_latest does: the failing family travels with the error
            exception.args = (exception.args or ("",)) + (metric,)
            raise
        if om_lines:
            for suf, lines in sorted(om_lines.items()):
                extra = _metric_name(name + suf, escaping)
                append(f"# HELP {extra} {doc}\n# TYPE {extra} gauge\n")
                out.extend(lines)
    return "".join(out).encode("utf-8")


def choose_text_encoder(accept: str):
    """prometheus_client's content negotiation, with its text-format encoder
    replaced by ``encode_text``: returns (encoder(registry) -> bytes, content type).
    OpenMetrics (and anything else) stays prometheus_client's."""
    encoder, content_type = choose_encoder(accept)
    if encoder is _generate_latest:
        return (lambda registry: encode_text(registry.collect())), content_type
    if getattr(encoder, "func", None) is _generate_latest and content_type.startswith(CONTENT_TYPE_LATEST):
        escaping = encoder.keywords.get("escaping", UNDERSCORES)
        return (lambda registry: encode_text(registry.collect(), escaping)), content_type
    return encoder, content_type


# --------------------------------------------------------------------------- rendered once, served often
#
# oracle-exporter renders each database's families once per fetch into ``Part``s (one family's sample
# lines of one database, already bytes) and assembles a scrape's answer from them: a family's header,
# then its part of every database, in the order ``merge`` would give. The database's labels are put
# in while the lines are written (``base``), never by rebuilding samples. A declared family that kept
# its samples as rows (exporter_common.families) is written from the rows by line writers compiled
# once per family, label set and database label names (``_writers``): no Sample, label dict or
# format pattern per sample. The bytes are those that
# generate_latest (text) or prometheus_client's OpenMetrics generate_latest would give for the
# merged families.

TEXT = "text"
OPENMETRICS = "openmetrics"


class Format(tuple):
    """(kind: TEXT or OPENMETRICS, name escaping, content type)."""

    __slots__ = ()

    def __new__(cls, kind: str, escaping: str, content_type: str):
        return tuple.__new__(cls, (kind, escaping, content_type))

    kind = property(lambda self: self[0])
    escaping = property(lambda self: self[1])
    content_type = property(lambda self: self[2])


def negotiate(accept: str):
    """prometheus_client's content negotiation: (Format, None) for the formats rendered here,
    (None, (encoder, content type)) for anything else (OpenMetrics 2.0 with native histograms:
    prometheus_client's own encoder on the families)."""
    encoder, content_type = choose_encoder(accept)
    if encoder is _generate_latest:
        return Format(TEXT, UNDERSCORES, content_type), None
    func = getattr(encoder, "func", None)
    keywords = getattr(encoder, "keywords", None) or {}
    escaping = keywords.get("escaping", UNDERSCORES)
    if func is _generate_latest:
        return Format(TEXT, escaping, content_type), None
    if func is _om.generate_latest and keywords.get("version", "1.0.0") == "1.0.0" and escaping in (
            UNDERSCORES, ALLOWUTF8):     # (prometheus_client writes values/dots sample names its own way)
        return Format(OPENMETRICS, escaping, content_type), None
    return None, (encoder, content_type)


def _local_template(keys: tuple, base: dict, base_keys: tuple, templates: dict, escaping: str):
    """The template of base's labels followed by ``keys``; a tuple (not a template) when a name
    of ``keys`` is one of base's (the sample's value wins: merged per sample)."""
    if base_keys and not base.keys().isdisjoint(keys):
        return ("merge",)
    full = base_keys + keys
    return templates.get(full) or _template(full, escaping)


class Part:
    """One family's samples of one source (a database), rendered: ``lines`` (bytes), and in the text
    format the ``_created``/``_gsum``/``_gcount`` lines that go into trailing families."""

    __slots__ = ("key", "meta", "lines", "trailing")

    def __init__(self, key, meta, lines: bytes, trailing):
        self.key, self.meta, self.lines, self.trailing = key, meta, lines, trailing


def _legacy(name: str) -> bool:
    return _is_valid_legacy_metric_name(name)


def render_parts(families: Iterable[Metric], fmt: Format, base: dict[str, str] | None = None) -> list[Part]:
    """Each family's sample lines. With ``base`` (the database's labels) every sample is written as
    if its labels were ``{**base, **labels}`` and without its timestamp: what oracle-exporter's
    relabelling gave, without building a sample. Raises ValueError for a name the OpenMetrics fast
    path does not cover (callers then use prometheus_client)."""
    escaping = fmt.escaping
    om = fmt.kind == OPENMETRICS
    _, heads, templates, _prefixes = _names_for(escaping)
    go_float = _go_float
    base = base or {}
    base_keys = tuple(base)
    base_vals = [_escape_value(v) if ("\\" in v or '"' in v or "\n" in v) else v for v in base.values()]
    base_escaped = dict(zip(base_keys, base_vals))
    base_tmpl = (templates.get(base_keys) or _template(base_keys, escaping)) if base_keys else ""
    local: dict[tuple, object] = {}     # the sample's label names -> template (base's names first)
    base_tuple = tuple(base_vals)
    parts: list[Part] = []
    for metric in families:
        name = metric.name
        if om and not _legacy(name):
            raise ValueError(f"OpenMetrics fast path: metric name {name!r}")
        rows = getattr(metric, "_rows", None)     # families.rows_of(metric), without the call
        if rows is not None:
            try:
                lines = _rows_lines(metric, rows, om, heads, escaping, base_keys, base_tuple)
            except Exception as exception:
                exception.args = (exception.args or ("",)) + (metric,)
                raise
            if lines is not None:
                parts.append(Part((name, metric.type), (name, metric.documentation, metric.type, metric.unit),
                                  lines.encode("utf-8"), None))
                continue
        special = () if om else {name + "_created": "_created", name + "_gsum": "_gsum",
                                 name + "_gcount": "_gcount"}
        out: list[str] = []
        append = out.append
        trailing: dict[str, list[str]] | None = None
        try:
            for sname, labels, value, ts, _exemplar, _native in metric.samples:
                head = heads.get(sname)
                if head is None:
                    if om and not _legacy(sname):
                        raise ValueError(f"OpenMetrics fast path: sample name {sname!r}")
                    head = _sample_head(sname, escaping)
                vtype = type(value)
                if vtype is int and -1000000 < value < 1000000:
                    val = f"{value}.0"
                elif vtype is float and value < 1e6 and value - value == 0.0:
                    val = repr(value)
                else:
                    val = go_float(value)
                if ts is not None and not base_keys:
                    val = f"{val} {ts}" if om else f"{val} {int(float(ts) * 1000):d}"
                if labels:
                    lk = tuple(labels)
                    tmpl = local.get(lk)
                    if tmpl is None:
                        tmpl = local[lk] = _local_template(lk, base, base_keys, templates, escaping)
                    raw = labels.values()
                    joined = "".join(raw)
                    if "\\" in joined or '"' in joined or "\n" in joined:
                        raw = [_escape_value(v) for v in raw]
                    if tmpl.__class__ is str:
                        line = f"{head[0]}{tmpl.format(*base_vals, *raw)}{head[1]}{val}\n"
                    else:           # a label of the sample's own replaces one of base's
                        merged = {**base_escaped, **dict(zip(lk, raw))}
                        t2 = templates.get(tuple(merged)) or _template(tuple(merged), escaping)
                        line = f"{head[0]}{t2.format(*merged.values())}{head[1]}{val}\n"
                elif base_keys:
                    line = f"{head[0]}{base_tmpl.format(*base_vals)}{head[1]}{val}\n"
                else:
                    line = f"{head[2]}{val}\n"
                if special and sname in special:
                    if trailing is None:
                        trailing = {}
                    trailing.setdefault(special[sname], []).append(line)
                else:
                    append(line)
        except Exception as exception:
            exception.args = (exception.args or ("",)) + (metric,)
            raise
        meta = (name, metric.documentation, metric.type, metric.unit)
        parts.append(Part((name, metric.type), meta, "".join(out).encode("utf-8"),
                          {k: "".join(v).encode("utf-8") for k, v in trailing.items()} if trailing else None))
    return parts


# (label names, escaping) -> [(position in the names, escaped name)] in the order they are written
_ORDERS: dict[tuple, list[tuple[int, str]]] = {}


def _order(keys: tuple[str, ...], escaping: str) -> list[tuple[int, str]]:
    got = _ORDERS.get((keys, escaping))
    if got is None:
        if len(_ORDERS) >= _CACHE_CAP:
            _ORDERS.clear()
        got = _ORDERS[(keys, escaping)] = [(i, _om.escape_label_name(keys[i], escaping))
                                           for i in sorted(range(len(keys)), key=keys.__getitem__)]
    return got


def _compile(segments: list, args: str):
    """A function of ``args`` that returns the concatenation of ``segments``: literal text (str),
    ``("b", i)`` base's i-th (escaped) value, ``("l", j)`` the row's j-th label value, ``("v",)``
    the value. Built once per family and label set: a line is then one f-string, no
    ``str.format`` pattern parsed per sample. The literals are the function's globals, never
    part of its source."""
    merged: list = []
    for seg in segments:
        if isinstance(seg, str) and merged and isinstance(merged[-1], str):
            merged[-1] += seg
        elif not (isinstance(seg, str) and not seg):
            merged.append(seg)
    names: dict[str, str] = {}
    fields = []
    for seg in merged:
        if isinstance(seg, str):
            key = f"k{len(names)}"
            names[key] = seg
            fields.append("{" + key + "}")
        elif seg[0] == "v":
            fields.append("{v}")
        else:
            fields.append(f"{{{seg[0]}[{int(seg[1])}]}}")
    return eval(f"lambda {args}: f'{''.join(fields)}'", names)  # noqa: S307 (fields: names and indices only)


def _labels(keys: tuple[str, ...], nbase: int, escaping: str) -> list:
    """The segments (see ``_compile``) of ``k="v",...`` for ``keys``: base's names first (``b``), then
    the row's (``l``), in the order they are written."""
    segments: list = []
    for n, (i, label) in enumerate(_order(keys, escaping)):
        segments.append(("," if n else "") + f'{label}="')
        segments.append(("b", i) if i < nbase else ("l", i - nbase))
        segments.append('"')
    return segments


# (sample name, label names, histogram, base's label names, escaping, OpenMetrics) -> line writers
_WRITERS: dict[tuple, tuple | None] = {}
# (family class, name, label names, base's label names, escaping, OpenMetrics) -> its _writers: one
# lookup per family rendered
_FAMILY_WRITERS: dict[tuple, tuple | None] = {}
_NONE = object()
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _writers(name: str, sname: str, names: tuple[str, ...], histogram: bool, base_keys: tuple, om: bool,
             heads: dict, escaping: str) -> tuple | None:
    """A declared family's line writers, for every database: a counter's or a gauge's
    ``(line(b, l, v),)``; a histogram's ``(bucket line up to its le value (b, l), after it up to
    the value (b, l), _count line (b, l, v), _sum line (b, l, v))``; ``b``: base's escaped values,
    ``l``: the row's, ``v``: the value written. None when the rows cannot be written directly (a
    label name repeated or one of base's: ``render_parts``' sample loop merges those)."""
    key = (sname, names, histogram, base_keys, escaping, om)
    if key in _WRITERS:
        return _WRITERS[key]
    got = None
    if len(set(names)) == len(names) and set(base_keys).isdisjoint(names) and not (histogram and "le" in names):
        nbase = len(base_keys)
        keys = base_keys + names

        def line(head: tuple[str, str, str]):
            if not keys:
                return _compile([head[2], ("v",), "\n"], "b, l, v")
            return _compile([head[0], *_labels(keys, nbase, escaping), head[1], ("v",), "\n"], "b, l, v")

        if histogram:
            head = _head(name + "_bucket", om, heads, escaping)
            segments = _labels(keys + ("le",), nbase, escaping)
            at = segments.index(("l", len(names)))      # the le value's segment
            got = (_compile([head[0], *segments[:at]], "b, l"), _compile([*segments[at + 1:], head[1]], "b, l"),
                   line(_head(name + "_count", om, heads, escaping)), line(_head(name + "_sum", om, heads, escaping)))
        else:
            got = (line(_head(sname, om, heads, escaping)),)
    if len(_WRITERS) >= _CACHE_CAP:
        _WRITERS.clear()
    _WRITERS[key] = got
    return got


def _head(sname: str, om: bool, heads: dict, escaping: str) -> tuple[str, str, str]:
    head = heads.get(sname)
    if head is None:
        if om and not _legacy(sname):
            raise ValueError(f"OpenMetrics fast path: sample name {sname!r}")
        head = _sample_head(sname, escaping)
    return head


def _rows_lines(metric, rows: list, om: bool, heads: dict, escaping: str, base_keys: tuple, base_vals: tuple) -> str | None:
    """The sample lines of a family kept as rows (exporter_common.families), the very lines the
    sample loop of ``render_parts`` writes for its samples; None when the rows cannot be written
    directly."""
    key = (metric.__class__, metric.name, metric._labelnames, base_keys, escaping, om)
    writers = _FAMILY_WRITERS.get(key, _NONE)
    if writers is _NONE:
        name = metric.name
        sname = name + "_total" if metric.type == "counter" else name
        writers = _writers(name, sname, metric._labelnames, isinstance(metric, RowsHistogram), base_keys, om, heads,
                           escaping)
        if len(_FAMILY_WRITERS) >= _CACHE_CAP:
            _FAMILY_WRITERS.clear()
        _FAMILY_WRITERS[key] = writers
    if writers is None:
        return None
    histogram = len(writers) == 4
    b = base_vals
    out: list[str] = []
    append = out.append
    go_float = _go_float
    if not histogram:
        write = writers[0]
        for labels, value in rows:
            vtype = type(value)
            if vtype is float and value < 1e6 and value - value == 0.0:
                val = repr(value)
            elif vtype is int and -1000000 < value < 1000000:
                val = f"{value}.0"
            else:
                val = go_float(value)
            if labels:
                joined = "".join(labels)
                if "\\" in joined or '"' in joined or "\n" in joined:
                    labels = [_escape_value(v) for v in labels]
            append(write(b, labels, val))
        return "".join(out)
    before, after, count_line, sum_line = writers
    for labels, buckets, sum_value, counted in rows:
        if labels:
            joined = "".join(labels)
            if "\\" in joined or '"' in joined or "\n" in joined:
                labels = [_escape_value(v) for v in labels]
        pre = before(b, labels)      # the bucket line up to its le value, this row's labels in
        post = after(b, labels)      # from the le value's closing quote to the value
        les = list(map(_FIRST, buckets))
        joined = "".join(les)
        if "\\" in joined or '"' in joined or "\n" in joined:
            les = [_escape_value(le) for le in les]
        vals = []
        last = _NONE
        for value in map(_SECOND, buckets):
            if value is not last:    # cumulative counts repeat (the very object) where buckets add nothing
                last = value
                vtype = type(value)
                if vtype is float and value < 1e6 and value - value == 0.0:
                    val = repr(value)
                elif vtype is int and -1000000 < value < 1000000:
                    val = f"{value}.0"
                else:
                    val = go_float(value)
            vals.append(val)
        # the bucket lines (pre, le, post, value, newline each) joined at once
        segments = [pre, "", post, "", "\n"] * len(les)
        segments[1::5] = les
        segments[3::5] = vals
        append("".join(segments))
        if counted:
            append(count_line(b, labels, val))      # the +Inf bucket's value, written
            append(sum_line(b, labels, go_float(sum_value)))
    return "".join(out)


_HEADERS: dict[tuple, bytes] = {}


def _header(meta: tuple, fmt: Format, suffix: str | None = None) -> bytes:
    key = (meta, fmt.kind, fmt.escaping, suffix)
    got = _HEADERS.get(key)
    if got is not None:
        return got
    name, doc, mtype, unit = meta
    if fmt.kind == OPENMETRICS:
        empty = Metric(name, doc, mtype, unit)
        got = _om.generate_latest(_Listed([empty]), escaping=fmt.escaping)[:-len(b"# EOF\n")]
    elif suffix is None:
        sfx, ttype = _TYPES.get(mtype, ("", mtype))
        shown = _metric_name(name + sfx, fmt.escaping)
        got = f"# HELP {shown} {_help(doc)}\n# TYPE {shown} {ttype}\n".encode("utf-8")
    else:
        extra = _metric_name(name + suffix, fmt.escaping)
        got = f"# HELP {extra} {_help(doc)}\n# TYPE {extra} gauge\n".encode("utf-8")
    if len(_HEADERS) >= _CACHE_CAP:
        _HEADERS.clear()
    _HEADERS[key] = got
    return got


class _Listed:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def assemble(groups: Iterable[list[Part]], fmt: Format, tail: Iterable[Metric] = ()) -> bytes:
    """One exposition of several sources' parts: families merged by (name, type) in the order they
    first appear (oracle_exporter.exporter.merge), then ``tail`` (families of no source: build info,
    process metrics) as they are; OpenMetrics ends with ``# EOF``."""
    return b"".join(assemble_pieces(groups, fmt, tail))


def assemble_pieces(groups: Iterable[list[Part]], fmt: Format, tail: Iterable[Metric] = ()) -> list[bytes]:
    """``assemble`` in its pieces, not joined (the HTTP layer writes them as they are)."""
    order: dict[tuple, list[Part]] = {}
    for parts in groups:
        for part in parts:
            have = order.get(part.key)
            if have is None:
                order[part.key] = [part]
            else:
                have.append(part)
    out: list[bytes] = []
    text = fmt.kind == TEXT
    for parts in order.values():
        meta = parts[0].meta
        out.append(_header(meta, fmt))
        out.extend(p.lines for p in parts)
        if text:
            suffixes = sorted({s for p in parts if p.trailing for s in p.trailing})
            for suf in suffixes:
                out.append(_header(meta, fmt, suf))
                out.extend(p.trailing[suf] for p in parts if p.trailing and suf in p.trailing)
    tail = list(tail)
    if text:
        if tail:
            out.append(encode_text(tail, fmt.escaping))
    else:
        out.append(_om.generate_latest(_Listed(tail), escaping=fmt.escaping))
    return out
