"""Thresholds: the one type, read from alerts/thresholds.yaml (the one source of truth).

    from mixin import thresholds
    t = thresholds.load()          # dict[id, Threshold], in file order
    t["R1"].value                  # 0.002 (seconds)
    t["R1"].floor("waits").value   # 1 (waits/s)
    t["R1"].colour_at              # where a dashboard panel turns orange

Values are in base units (seconds, ratios 0..1, bytes, per-second rates). The rules
(mixin.render), the promtool tests (mixin.scenarios), the docs (mixin.docs) and the
dashboards (mixin.dashboards) all read this type; nothing else parses the file.
"""

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from mixin import strict_yaml

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "alerts" / "thresholds.yaml"
SEVERITIES = ("critical", "warning", "info")
SEVERITY_COLOUR = {"critical": "red", "warning": "orange", "info": "yellow"}
ZERO_EPSILON = 1e-9
OPS = (">", ">=", "<", "<=", "==")
_DURATION = re.compile(r"^(?:\d+[smhd])+$")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_NOTE = re.compile(r"^[A-Z]\d+$")


class ThresholdError(ValueError):
    """A malformed thresholds file; the message names the file, entry and field."""


@dataclass(frozen=True)
class Floor:
    name: str
    value: float
    unit: str
    description: str


@dataclass(frozen=True)
class Threshold:
    id: str
    notes: tuple[str, ...]          # field-notes row ids, e.g. ("R17", "R7")
    alert: str
    description: str
    value: float
    unit: str
    op: str
    for_: str                       # Prometheus duration, e.g. "10m"
    severity: str
    noise_floor: dict[str, Floor] = field(default_factory=dict)

    @property
    def note(self) -> str:
        """The primary field-notes id."""
        return self.notes[0]

    def floor(self, name: str) -> Floor:
        try:
            return self.noise_floor[name]
        except KeyError:
            raise ThresholdError(f"threshold {self.id}: no noise_floor named {name!r}") from None

    def for_seconds(self) -> int:
        return duration_seconds(self.for_)

    # ---- how a dashboard colours the measure this threshold judges. Grafana colours a value
    # when it is >= a step, so each alert comparison becomes steps:
    # * `>` / `>=` with value v: green below, the severity colour from v. An "eliminate"
    #   threshold (v = 0 with a `rate` noise floor) colours from the floor, where the alert pack
    #   starts counting a finding; a bare `> 0` (e.g. Z4 errors) colours from ZERO_EPSILON.
    # * `<` / `<=` with value v (a floor, e.g. the latch hit ratio): the severity colour below,
    #   green from v (`<=`: from v + ZERO_EPSILON, so v itself stays coloured).
    @property
    def lower_is_bad(self) -> bool:
        return self.op in ("<", "<=")

    @property
    def colour(self) -> str:
        return SEVERITY_COLOUR[self.severity]

    @property
    def colour_at(self) -> float:
        """The step value at which a panel switches colour (see above)."""
        if self.lower_is_bad:
            return float(self.value) + ZERO_EPSILON if self.op == "<=" else float(self.value)
        if self.value == 0 and "rate" in self.noise_floor:
            return float(self.noise_floor["rate"].value)
        if self.value == 0 and self.op == ">":
            return ZERO_EPSILON
        return float(self.value)


def duration_seconds(text: str) -> int:
    if not _DURATION.match(text):
        raise ThresholdError(f"not a Prometheus duration: {text!r}")
    mult = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(int(n) * mult[u] for n, u in re.findall(r"(\d+)([smhd])", text))


# No measure the pack judges comes near this; a 400-digit integer is a typo, and would overflow float.
MAX_VALUE = 1e15
# A `for:` beyond a week pages nobody (Prometheus keeps pending state in memory only) and would
# make the promtool scenarios hours of one-minute steps.
MAX_FOR_SECONDS = 7 * 86400


def _number(src: str, where: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ThresholdError(f"{src}: {where}: must be a number, got {value!r}")
    if isinstance(value, int) and abs(value) > MAX_VALUE:
        raise ThresholdError(f"{src}: {where}: must be at most {MAX_VALUE:g}, got a {len(str(abs(value)))}-digit number")
    if not math.isfinite(value):     # .inf would never fire (or always), .nan never compares
        raise ThresholdError(f"{src}: {where}: must be a finite number, got {value!r}")
    if abs(value) > MAX_VALUE:
        raise ThresholdError(f"{src}: {where}: must be at most {MAX_VALUE:g}, got {value!r}")
    return value


def _str(src: str, where: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ThresholdError(f"{src}: {where}: must be a non-empty string, got {value!r}")
    return value


def _value(src: str, where: str, value, unit: str) -> float:
    """A threshold or noise-floor value: a number, never negative (every measure the pack judges
    is a count, a rate, a ratio or a time); a boolean measure's value is 0 or 1."""
    value = _number(src, where, value)
    if value < 0:
        raise ThresholdError(f"{src}: {where}: must not be negative, got {value!r}")
    if unit == "boolean" and value not in (0, 1):
        raise ThresholdError(f"{src}: {where}: a boolean threshold is 0 or 1, got {value!r}")
    return value


def _duration(src: str, where: str, value) -> str:
    dur = _str(src, where, value)
    if len(dur) > 32 or not _DURATION.match(dur):
        raise ThresholdError(f"{src}: {where}: not a Prometheus duration: {dur[:40]!r} (like 90s, 10m, 1h30m)")
    if duration_seconds(dur) > MAX_FOR_SECONDS:
        raise ThresholdError(f"{src}: {where}: at most 7d, got {dur!r}")
    return dur


# What a site may change of one shipped threshold (mixin.config: `thresholds: {R2: {value: 0.004}}`).
# The rest (id, alert, op, unit, note, description) is what the rule means, not a site's choice.
SITE_FIELDS = ("value", "for", "severity", "noise_floor")


def override(t: Threshold, changes, src: str, where: str) -> Threshold:
    """`t` with a site's changes applied: {value, for, severity, noise_floor: {NAME: {value}}}, each
    optional. Errors name `src` and the key path (`where` is e.g. `thresholds.R2`)."""
    if not isinstance(changes, dict) or not changes:
        raise ThresholdError(f"{src}: {where}: expected a mapping of the fields to change "
                             f"({', '.join(SITE_FIELDS)}), e.g. {{value: {fmt(t.value)}}}, got {changes!r}")
    for key in changes:
        if key not in SITE_FIELDS:
            why = "cannot be changed by a site" if key in _FIELDS else "unknown field"
            raise ThresholdError(f"{src}: {where}.{key}: {why} (known: {', '.join(SITE_FIELDS)})")
    kw: dict = {}
    if "value" in changes:
        kw["value"] = _value(src, f"{where}.value", changes["value"], t.unit)
    if "for" in changes:
        kw["for_"] = _duration(src, f"{where}.for", changes["for"])
    if "severity" in changes:
        if changes["severity"] not in SEVERITIES:
            raise ThresholdError(f"{src}: {where}.severity: expected one of {', '.join(SEVERITIES)}, "
                                 f"got {changes['severity']!r}")
        kw["severity"] = changes["severity"]
    if "noise_floor" in changes:
        nf = changes["noise_floor"]
        if not isinstance(nf, dict) or not nf:
            raise ThresholdError(f"{src}: {where}.noise_floor: expected a mapping of floor name -> {{value: N}}, "
                                 f"got {nf!r}")
        floors = dict(t.noise_floor)
        for name, f in nf.items():
            fw = f"{where}.noise_floor.{name}"
            if name not in floors:
                known = ", ".join(floors) or "none"
                raise ThresholdError(f"{src}: {fw}: unknown noise floor (known: {known})")
            if not isinstance(f, dict) or not f:
                raise ThresholdError(f"{src}: {fw}: expected {{value: N}}, got {f!r}")
            for key in f:
                if key != "value":
                    raise ThresholdError(f"{src}: {fw}.{key}: unknown field (known: value)")
            floors[name] = replace(floors[name], value=_value(src, f"{fw}.value", f["value"], floors[name].unit))
        kw["noise_floor"] = floors
    return replace(t, **kw)


def fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else format(v, ".10g")


_FIELDS = ("id", "note", "alert", "description", "value", "unit", "op", "for", "severity", "noise_floor")


def load(path: str | Path | None = None) -> dict[str, Threshold]:
    """Read and validate the thresholds file; keys are threshold ids, in file order."""
    src = str(path or DEFAULT_PATH)
    try:
        doc = strict_yaml.load_file(src)
    except strict_yaml.YamlError as exc:
        raise ThresholdError(str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("thresholds"), list):
        raise ThresholdError(f"{src}: expected a mapping with a 'thresholds' list")
    if doc.get("version") != 1:
        raise ThresholdError(f"{src}: version: expected 1, got {doc.get('version')!r}")
    known = set(_FIELDS)
    out: dict[str, Threshold] = {}
    for i, raw in enumerate(doc["thresholds"]):
        where = f"thresholds[{i}]"
        if not isinstance(raw, dict):
            raise ThresholdError(f"{src}: {where}: expected a mapping")
        tid = raw.get("id")
        if not isinstance(tid, str) or not _ID.match(tid):
            raise ThresholdError(f"{src}: {where}.id: expected an identifier like R1 or R17_write, got {tid!r}")
        where = f"thresholds[{tid}]"
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ThresholdError(f"{src}: {where}: unknown field(s) {', '.join(unknown)}")
        if tid in out:
            raise ThresholdError(f"{src}: {where}: duplicate id")
        notes = tuple(n.strip() for n in _str(src, f"{where}.note", raw.get("note")).split(","))
        for n in notes:
            if not _NOTE.match(n):
                raise ThresholdError(f"{src}: {where}.note: {n!r} is not a field-notes id like R1 or Q3")
        op = raw.get("op")
        if op not in OPS:
            raise ThresholdError(f"{src}: {where}.op: expected one of {', '.join(OPS)}, got {op!r}")
        sev = raw.get("severity")
        if sev not in SEVERITIES:
            raise ThresholdError(f"{src}: {where}.severity: expected one of {', '.join(SEVERITIES)}, got {sev!r}")
        dur = _duration(src, f"{where}.for", raw.get("for"))
        floors: dict[str, Floor] = {}
        nf = raw.get("noise_floor") or {}
        if not isinstance(nf, dict):
            raise ThresholdError(f"{src}: {where}.noise_floor: expected a mapping of name -> {{value, unit, description}}")
        for name, f in nf.items():
            fw = f"{where}.noise_floor.{name}"
            if not isinstance(f, dict) or set(f) - {"value", "unit", "description"}:
                raise ThresholdError(f"{src}: {fw}: expected a mapping with value, unit, description")
            funit = _str(src, f"{fw}.unit", f.get("unit"))
            floors[name] = Floor(name, _value(src, f"{fw}.value", f.get("value"), funit), funit,
                                 _str(src, f"{fw}.description", f.get("description")))
        out[tid] = Threshold(
            id=tid, notes=notes, alert=_str(src, f"{where}.alert", raw.get("alert")),
            description=_str(src, f"{where}.description", raw.get("description")),
            value=_value(src, f"{where}.value", raw.get("value"), _str(src, f"{where}.unit", raw.get("unit"))),
            unit=_str(src, f"{where}.unit", raw.get("unit")), op=op, for_=dur, severity=sev,
            noise_floor=floors)
    return out
