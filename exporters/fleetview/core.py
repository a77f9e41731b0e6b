"""What both pages share: the generated spec, PromQL variable substitution as Grafana does it,
a small Prometheus/Alertmanager client that counts its queries, value formatting, colours and
the verdict of a value against a threshold."""
from __future__ import annotations

import base64
import datetime as dt
import html
import json
import math
import re
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

SPEC_PATH = Path(__file__).resolve().parent / "spec.json"

# Grafana's colour names -> CSS (the wallboard's palette, legible on a dark wall screen)
CSS = {"green": "#2e7d32", "orange": "#ef6c00", "red": "#c62828", "purple": "#6a1b9a", "yellow": "#f9a825",
       "blue": "#1565c0", "grey": "#616161", "text": "#444"}


class FleetviewError(Exception):
    """One clear line for the user (bad input, unreachable upstream, no data)."""


def load_spec(path: str | Path | None = None) -> dict:
    p = Path(path) if path else SPEC_PATH
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FleetviewError(f"cannot read spec {p}: {exc.strerror}") from None
    except ValueError as exc:
        raise FleetviewError(f"spec {p} is not valid JSON: {exc}") from None


# ---------------------------------------------------------------- PromQL variables

def promql_str(value: str) -> str:
    """`value` as the inside of a double-quoted PromQL string: backslash, quote and newline escaped
    (a database name with `"` or `\\` was a parse error, rev-views #14)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def re_escape(value: str) -> str:
    """A literal for a PromQL regex inside a double-quoted string (as Grafana escapes a
    multi-value variable's value): regex metacharacters escaped, then the whole as a string."""
    return promql_str(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", value))


def substitute(expr: str, database: str = ".+", host: str = ".+", range_s: int | None = None,
               offset_s: int | None = None) -> str:
    """Grafana's interpolation of the mixin's variables: $database / $host (already a regex:
    '.+' for All, re_escape(name) for one), $__range, $__range_s and $baseline (offset)."""
    if range_s is not None:
        expr = expr.replace("$__range_s", str(int(range_s))).replace("$__range", f"{int(range_s)}s")
    if offset_s is not None:
        expr = expr.replace("$baseline", f"offset {int(offset_s)}s")
    return expr.replace("$database", database).replace("$host", host)


# ---------------------------------------------------------------- HTTP client

@dataclass
class Upstream:
    """Prometheus or Alertmanager: a base URL (user:password@ in it means basic auth), a CA
    file for TLS, a timeout; counts the requests made."""
    url: str
    ca_file: str | None = None
    insecure: bool = False
    timeout: float = 10.0
    queries: int = 0
    elapsed: float = 0.0
    name: str = "Prometheus"
    _auth: str | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self):
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FleetviewError(f"{self.name} URL must be http(s)://host:port, got {self.url!r}")
        if parts.username:
            cred = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self._auth = "Basic " + base64.b64encode(cred.encode()).decode()
            netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
            self.url = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
        self.url = self.url.rstrip("/")

    @property
    def public_url(self) -> str:
        return self.url

    def get(self, path: str, params: dict | None = None) -> object:
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        if self._auth:
            req.add_header("Authorization", self._auth)
        ctx = None
        if url.startswith("https:"):
            ctx = ssl.create_default_context(cafile=self.ca_file)
            if self.insecure:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
        with self._lock:                 # the wallboard queries concurrently
            self.queries += 1
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=ctx) as resp:
                body = resp.read()
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = json.loads(exc.read()).get("error", "")
            except Exception:
                pass
            raise FleetviewError(f"{self.name} at {self.url} answered HTTP {exc.code}"
                                 + (f": {detail}" if detail else "")) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise FleetviewError(f"{self.name} at {self.url} is unreachable: {reason}") from None
        finally:
            with self._lock:
                self.elapsed += time.monotonic() - t0
        try:
            return json.loads(body)
        except ValueError:
            raise FleetviewError(f"{self.name} at {self.url} did not answer JSON on {path}") from None

    # -- Prometheus
    def query(self, expr: str, at: float | None = None) -> list[dict]:
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        return self._result(self.get("/api/v1/query", params), "value")

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict]:
        data = self.get("/api/v1/query_range", {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                                "step": f"{step:g}"})
        return self._result(data, "values")

    def _result(self, data: object, field: str) -> list[dict]:
        """The result list of a query answer, each series checked for the shape Prometheus' API
        documents (``metric`` and ``value`` / ``values``): anything else is one FleetviewError
        naming the upstream, never a KeyError deep in a page."""
        if not isinstance(data, dict) or data.get("status") != "success":
            raise FleetviewError(f"{self.name} rejected a query: {data.get('error') if isinstance(data, dict) else data}")
        result = data.get("data", {}).get("result") if isinstance(data.get("data"), dict) else None
        ok = isinstance(result, list) and all(
            isinstance(r, dict) and isinstance(r.get("metric"), dict) and isinstance(r.get(field), list)
            and (field == "values" or len(r[field]) == 2) for r in result)
        if not ok:
            raise FleetviewError(f"{self.name} at {self.url} answered a query in an unexpected shape "
                                 f"(no data.result list of series with metric and {field})")
        return result

    def graph_url(self, expr: str, range_s: int = 3600, end: float | None = None) -> str:
        params = {"g0.expr": expr, "g0.tab": "0", "g0.range_input": f"{int(range_s)}s"}
        if end is not None:
            params["g0.end_input"] = dt.datetime.fromtimestamp(end, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        return self.url + "/graph?" + urllib.parse.urlencode(params)


def value_of(sample: dict) -> float | None:
    try:
        v = float(sample["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return None if math.isnan(v) or math.isinf(v) else v


# ---------------------------------------------------------------- formatting

_SI = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def fmt(value: float | None, unit: str) -> str:
    """A value in a Grafana unit as short text: 26.4 ms, 9.45 MB/s, 72.0 /s, 30.0%."""
    if value is None:
        return "no data"
    if unit == "percentunit":
        return f"{value * 100:.1f}%" if abs(value) < 10 else f"{value * 100:.0f}%"
    if unit == "s":
        a = abs(value)
        if a == 0:
            return "0 s"
        if a < 1e-3:
            return f"{value * 1e6:.0f} µs"
        if a < 1:
            return f"{value * 1e3:.3g} ms"
        return f"{value:.3g} s"
    suffix = {"Bps": "B/s", "bytes": "B", "ops": "/s", "wps": "/s", "x": "x"}.get(unit, "")
    a = abs(value)
    for mult, p in _SI:
        if a >= mult:
            return f"{value / mult:.3g} {p}{suffix}".replace(f" {p}/s", f"{p}/s")
    if a >= 100:
        return f"{value:.0f}{(' ' + suffix) if suffix and suffix != '/s' else suffix}"
    return f"{value:.3g}{(' ' + suffix) if suffix and suffix != '/s' else suffix}"


def colour(value: float | None, steps: list) -> str:
    """The colour of the last step the value reaches (Grafana's rule)."""
    if value is None:
        return "grey"
    c = steps[0][1]
    for v, col in steps[1:]:
        if v is not None and value >= v:
            c = col
    return c


def esc(text) -> str:
    return html.escape(str(text), quote=True)


# ---------------------------------------------------------------- verdicts

@dataclass
class Verdict:
    kind: str          # finding, ok, nodata, none, floor
    text: str


def judge(th: dict | None, value: float | None, floor_value: float | None = None,
          floor_name: str | None = None, thresholds: dict | None = None) -> Verdict:
    """A value against its threshold, as the alert compares it: FINDING (severity), ok, below the
    traffic floor the alert needs behind it, no data; '-' without a threshold."""
    if th is None:
        return Verdict("none", "-")
    if value is None:
        return Verdict("nodata", "no data")
    if floor_name:
        floor = th["floors"].get(floor_name)
        if floor is None and thresholds:     # a tier without its own floor (I1_red): its family's
            floor = next((t["floors"][floor_name] for t in thresholds.values()
                          if t["notes"] == th["notes"] and floor_name in t["floors"]), None)
        if floor is not None and (floor_value is None or floor_value < floor["value"]):
            return Verdict("floor", f"ok (traffic below {floor['value']:g} {floor['unit']})")
    at = th["colour_at"]
    if th["lower_is_bad"]:
        bad = value < at
    elif th["op"] == ">=":
        bad = value >= at
    else:
        bad = value > at
    if bad:
        return Verdict("finding", f"FINDING ({th['severity']})")
    return Verdict("ok", "ok")


def parse_duration(text: str) -> int:
    m = re.fullmatch(r"((?:\d+[smhdw])+)", text.strip())
    if not m:
        raise FleetviewError(f"not a duration like 1h, 30m or 7d: {text!r}")
    mult = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    return sum(int(n) * mult[u] for n, u in re.findall(r"(\d+)([smhdw])", text))


def parse_time(text: str) -> float:
    t = text.strip()
    if re.fullmatch(r"\d{9,11}(\.\d+)?", t):
        return float(t)
    try:
        d = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise FleetviewError(f"not a time (ISO 8601 like 2025-03-11T09:00:00Z, or unix seconds): {text!r}") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return d.timestamp()


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
