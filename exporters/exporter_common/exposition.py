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

from typing import Iterable

from prometheus_client.exposition import CONTENT_TYPE_LATEST, CONTENT_TYPE_PLAIN_0_0_4, choose_encoder
from prometheus_client.exposition import generate_latest as _generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as _om
from prometheus_client.validation import _is_valid_legacy_metric_name

__all__ = ["encode_text", "choose_text_encoder", "CONTENT_TYPE_PLAIN_0_0_4"]

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


def _go_float(d) -> str:
    """prometheus_client.utils.floatToGoString, same output."""
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
