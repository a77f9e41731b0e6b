"""The alert thresholds, as the dashboards colour them.

The single source is ``alerts/thresholds.yaml`` (owned by the alert pack). It is read through
``alerts/thresholds.py``'s ``load()`` (values already in base units: seconds, ratios, per second);
if that module cannot be imported, the YAML is read directly with the same field names.

Grafana colours a value when it is >= a threshold step, so each alert comparison becomes steps:

* ``>`` / ``>=`` with value v: green below, the severity colour from v. An "eliminate" threshold
  (v = 0 with a ``rate`` noise floor) colours from the floor, which is where the alert pack
  starts counting a finding; a bare ``> 0`` (e.g. Z4 errors) colours from ``ZERO_EPSILON``.
* ``<`` / ``<=`` with value v (a floor, e.g. the latch hit ratio): the severity colour below,
  green from v (``<=``: from v + ``ZERO_EPSILON``, so v itself stays coloured).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
THRESHOLDS_YAML = REPO / "alerts" / "thresholds.yaml"
THRESHOLDS_PY = REPO / "alerts" / "thresholds.py"

ZERO_EPSILON = 1e-9
SEVERITY_COLOUR = {"critical": "red", "warning": "orange", "info": "yellow"}


class ThresholdError(Exception):
    """Raised with a message naming the file and entry when the thresholds cannot be used."""


@dataclass(frozen=True)
class Threshold:
    id: str
    value: float            # base units, as in thresholds.yaml
    unit: str
    op: str                 # > >= < <= ==
    severity: str           # critical | warning | info
    floors: tuple[tuple[str, float], ...]  # noise floors (name, value)
    source: str

    @property
    def lower_is_bad(self) -> bool:
        return self.op in ("<", "<=")

    @property
    def colour(self) -> str:
        return SEVERITY_COLOUR[self.severity]

    def floor(self, name: str) -> float | None:
        return dict(self.floors).get(name)

    @property
    def colour_at(self) -> float:
        """The step value at which a panel switches colour (see the module docstring)."""
        if self.lower_is_bad:
            return self.value + ZERO_EPSILON if self.op == "<=" else self.value
        if self.value == 0 and self.floor("rate") is not None:
            return self.floor("rate")
        if self.value == 0 and self.op == ">":
            return ZERO_EPSILON
        return self.value


def _from_module() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("_alerts_thresholds_for_dashboards", THRESHOLDS_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        raw = module.load()
    except Exception as exc:  # the module's own ThresholdError carries file/entry/field
        raise ThresholdError(str(exc)) from None
    out = {}
    for tid, t in raw.items():
        floors = tuple((n, float(f.value)) for n, f in (t.noise_floor or {}).items())
        out[tid] = Threshold(tid, float(t.value), t.unit, t.op, t.severity, floors,
                             str(THRESHOLDS_YAML.relative_to(REPO)))
    return out


def _from_yaml(path: Path) -> dict[str, Threshold]:
    src = str(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ThresholdError(f"{src}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ThresholdError(f"{src}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("thresholds"), list):
        raise ThresholdError(f"{src}: expected a mapping with a 'thresholds' list")
    out = {}
    for i, e in enumerate(doc["thresholds"]):
        if not isinstance(e, dict) or not isinstance(e.get("id"), str):
            raise ThresholdError(f"{src}: thresholds[{i}]: expected a mapping with an id")
        where = f"{src}: thresholds[{e['id']}]"
        v = e.get("value")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ThresholdError(f"{where}.value: must be a number, got {v!r}")
        if e.get("op") not in (">", ">=", "<", "<=", "=="):
            raise ThresholdError(f"{where}.op: expected one of > >= < <= ==, got {e.get('op')!r}")
        if e.get("severity") not in SEVERITY_COLOUR:
            raise ThresholdError(f"{where}.severity: expected critical, warning or info")
        floors = []
        for name, f in (e.get("noise_floor") or {}).items():
            fv = f.get("value") if isinstance(f, dict) else None
            if isinstance(fv, bool) or not isinstance(fv, (int, float)):
                raise ThresholdError(f"{where}.noise_floor.{name}.value: must be a number")
            floors.append((name, float(fv)))
        out[e["id"]] = Threshold(e["id"], float(v), str(e.get("unit", "")), e["op"], e["severity"],
                                 tuple(floors), src)
    return out


def load(path: Path | None = None) -> dict[str, Threshold]:
    """Thresholds by id (R1, R17_write, I1_red, ...), values in base units."""
    if path is not None:
        return _from_yaml(Path(path))
    if not THRESHOLDS_YAML.exists():
        raise ThresholdError(f"{THRESHOLDS_YAML}: not found (the alert pack writes it)")
    if THRESHOLDS_PY.exists():
        try:
            return _from_module()
        except ThresholdError:
            raise
        except Exception:  # module unusable (e.g. mid-edit): read the YAML ourselves
            pass
    return _from_yaml(THRESHOLDS_YAML)
