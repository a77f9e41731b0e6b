"""The alert thresholds, as the dashboards colour them.

The single source is ``alerts/thresholds.yaml`` (owned by the alert pack). It is read only through
``alerts/thresholds.py``'s ``load()`` (values already in base units: seconds, ratios, per second),
the same loader the rule generator uses, so the two can never read it differently.

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


def _alerts_loader():
    spec = importlib.util.spec_from_file_location("_alerts_thresholds_for_dashboards", THRESHOLDS_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(path: Path | None = None) -> dict[str, Threshold]:
    """Thresholds by id (R1, R17_write, I1_red, ...), values in base units."""
    src = Path(path) if path is not None else THRESHOLDS_YAML
    if not src.exists():
        raise ThresholdError(f"{src}: not found (the alert pack writes it)")
    try:
        raw = _alerts_loader().load(src)
    except Exception as exc:  # the alert pack's ThresholdError names file, entry and field
        raise ThresholdError(str(exc)) from None
    out = {}
    for tid, t in raw.items():
        floors = tuple((n, float(f.value)) for n, f in (t.noise_floor or {}).items())
        out[tid] = Threshold(tid, float(t.value), t.unit, t.op, t.severity, floors, str(src))
    return out
