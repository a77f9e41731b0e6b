"""A snapshot: the rows of every GV$ view fetched for one database at one time.

This is the only thing collectors see. A live fetch and a replayed recording
produce the same object, so they produce the same metrics. The JSON Lines
recording format (docs/recording-format.md, contract) is::

    {"time": "<RFC3339>", "database": "<name>",
     "views": {"GV$SYSTEM_EVENT": [{"INST_ID": 1, "EVENT": "...", ...}], ...}}

plus the optional key ``"errors": {"<VIEW>": "ORA-00942: ..."}`` for views
that failed in that fetch (the contract allows additions around its names), and
``"ages": {"<VIEW>": seconds}`` for views served from the live source's cache
(a collector's minimum interval, oracle_exporter.intervals): how old those rows are, and
``"skipped": {"<VIEW>": "<why>"}`` for views deliberately not read in that fetch (issue 22: a
data dictionary view on a MOUNTED standby or a closed PDB, ORA-01219): not an error, so a replay
of the recording produces the same metrics (no view error, the collector succeeds).
"""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any


_MISSING = object()


@dataclass
class Snapshot:
    database: str
    time: str
    views: dict[str, list[dict[str, Any]]]
    errors: dict[str, str] = field(default_factory=dict)
    ages: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)   # views not read on purpose, and why
    # seconds each view's statement took in a live fetch (not recorded: a replay has none)
    durations: dict[str, float] = field(default_factory=dict, compare=False)
    _clean: dict[str, list[dict[str, Any]]] = field(default_factory=dict, init=False, repr=False, compare=False)
    # values several collectors derive from the same rows (GV$SYSSTAT per instance, parameters)
    _derived: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def derived(self, key: Any, build: Any) -> Any:
        """``build()``, computed once per snapshot under ``key`` and shared by the collectors
        that ask for it: read only."""
        got = self._derived.get(key, _MISSING)
        if got is _MISSING:
            got = self._derived[key] = build()
        return got

    def rows(self, view: str) -> list[dict[str, Any]]:
        """Rows of a view as collectors should see them (empty when not fetched).

        Cleaned by oracle_exporter.rows.clean_rows (computed once per view):
        a V$ view stands in for its missing GV$ view (INST_ID filled in),
        rows repeated per container (CON_ID) or repeated outright are reduced
        to one per identity, and GV$PROCESS rows without PNAME get the name
        from PROGRAM. ``views`` keeps the rows exactly as fetched/recorded."""
        got = self._clean.get(view)     # the usual call: an upper case name, already cleaned
        if got is not None:
            return got
        key = view.upper()
        if key not in self._clean:
            from .rows import clean_rows
            self._clean[key] = clean_rows(self, key)
        return self._clean[key]

    def has(self, view: str) -> bool:
        """True if the view (or, for a GV$ view, its V$ counterpart) was fetched."""
        key = view.upper()
        return key in self.views or (key.startswith("GV$") and key[1:] in self.views)

    def to_json(self) -> str:
        obj: dict[str, Any] = {"time": self.time, "database": self.database, "views": self.views}
        if self.errors:
            obj["errors"] = self.errors
        if self.ages:
            obj["ages"] = self.ages
        if self.skipped:
            obj["skipped"] = self.skipped
        return json.dumps(obj, separators=(",", ":"), default=_json_default, ensure_ascii=False)

    @classmethod
    def from_obj(cls, obj: Any) -> "Snapshot":
        """Validate one decoded JSON object; raise ValueError naming what is wrong."""
        if not isinstance(obj, dict):
            raise ValueError("expected a JSON object")
        for key, kind in (("time", str), ("database", str), ("views", dict)):
            if not isinstance(obj.get(key), kind):
                raise ValueError(f'field "{key}" missing or not a {kind.__name__}')
        views: dict[str, list[dict[str, Any]]] = {}
        for name, rows in obj["views"].items():
            if rows is None:  # a view recorded as null: not fetched
                continue
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise ValueError(f'views["{name}"] must be a list of row objects')
            if all(type(k) is str and k == k.upper() for k in set().union(*rows)):
                views[name.upper()] = list(rows)    # column names already upper case (a recorder's): rows as they are
            else:
                views[name.upper()] = [{str(k).upper(): v for k, v in r.items()} for r in rows]
        errors = obj.get("errors") or {}
        if not isinstance(errors, dict):
            raise ValueError('field "errors" must be an object')
        ages = obj.get("ages") or {}
        if not isinstance(ages, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                 for v in ages.values()):
            raise ValueError('field "ages" must be an object of numbers')
        skipped = obj.get("skipped") or {}
        if not isinstance(skipped, dict):
            raise ValueError('field "skipped" must be an object')
        return cls(obj["database"], obj["time"], views, {str(k).upper(): str(v) for k, v in errors.items()},
                   {str(k).upper(): float(v) for k, v in ages.items()},
                   {str(k).upper(): str(v) for k, v in skipped.items()})


def _json_default(value: Any) -> Any:
    """Values as Oracle returns them: dates/timestamps as ISO 8601, Decimals as numbers."""
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    try:
        from decimal import Decimal
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot record value of type {type(value).__name__}")


def now_rfc3339() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
