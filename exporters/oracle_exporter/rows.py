"""Row cleaning between a snapshot's raw views and the collectors.

Recordings come from many releases and set-ups (11.2 to 23ai, single
instance, RAC, multitenant), so the rows of a view are made uniform before
any metric logic sees them (Snapshot.rows calls clean_rows once per view):

* **Column names** are upper case (Snapshot.from_obj already does this for
  recordings; rows built in code are covered here too). Extra columns are
  kept and ignored by the collectors.
* **V$ for GV$**: a recording that holds ``V$SYSSTAT`` but no ``GV$SYSSTAT``
  (a single-instance recorder that used the V$ views) is read as the GV$ view.
  Rows without INST_ID get the instance number of the only instance in
  GV$INSTANCE / V$INSTANCE (INSTANCE_NUMBER or INST_ID), else 1.
* **One row per identity.** Each view has identity columns (views.View.identity:
  what makes one row unique). In a multitenant container database (12.1+) the
  views carry CON_ID and a view may list an identity once per container
  (V$SYSTEM_PARAMETER-style rows for PDBs that changed a parameter, or a
  recorder that unioned per-container views). Summing those rows would count
  the CDB-wide value more than once, and emitting them would duplicate series.
  Rule, deterministic and independent of row order: for each identity keep the
  rows of the *lowest* CON_ID present, where a row without CON_ID counts as 0
  (CON_ID 0 = the whole CDB or a non-CDB, 1 = CDB$ROOT, 2 = PDB$SEED,
  3+ = PDBs); within that container the first row wins (an exact repeat of
  a row adds nothing). Identity values compare by value, so INST_ID 1, 1.0 and
  "1" are the same instance.
* **GV$PROCESS without PNAME** (a release or recorder without the column):
  for background processes (BACKGROUND = '1') the name is taken from PROGRAM,
  ``oracle@host (LGWR)`` -> ``LGWR``.
"""
from __future__ import annotations

import re
from operator import itemgetter
from typing import Any

from . import views
from . import collectors as _view_registering_collectors  # noqa: F401  (collector modules may register their own views)

_PROGRAM_NAME = re.compile(r"\(([A-Za-z0-9_$#]{1,8})\)\s*$")


def _key(value: Any) -> Any:
    """An identity value compared by value: numbers (also numeric strings) as float."""
    kind = type(value)          # the common cases first, by exact type (bool is not int here)
    if kind is int or kind is float:
        return float(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        head = value.lstrip()[:1]
        if not head or not (head.isdigit() or head in "+-."):
            return value        # a name ("log file sync"): no float() attempt, whose failure is costly
        try:
            return float(value.strip())
        except ValueError:
            return value
    return str(value)


def _con_id(row: dict[str, Any]) -> float:
    value = _key(row.get("CON_ID"))
    return value if isinstance(value, float) else 0.0


# The types whose _key respects equality (a == b implies _key(a) == _key(b)): for these, distinct
# raw identity tuples whose columns _key maps one to one are distinct keys too.
_PLAIN = frozenset((int, float, str, type(None), bool))
_EXACT = 2 ** 53                # ints up to this size are exact as floats


def _distinct(rows: list[dict[str, Any]], ident: tuple[str, ...]) -> bool:
    """True when every row's identity is its own, compared as ``_key`` compares them, told
    without a ``_key`` per row: the raw identity tuples are all distinct (set equality: 1 and
    1.0 are one, "1" and 1 two), every value is of a ``_PLAIN`` type, and ``_key`` maps each
    column's distinct values to distinct keys (so "1" and 1, or "1" and " 1", in one column
    send the caller to the per-row rule). False means "not known": the caller's rule decides."""
    try:
        raw = list(map(itemgetter(*ident), rows))
    except KeyError:            # a row without an identity column (None for the rule)
        raw = [tuple([r.get(c) for c in ident]) for r in rows] if len(ident) > 1 else [r.get(ident[0]) for r in rows]
    try:
        if len(set(raw)) != len(raw):
            return False
        for column in (zip(*raw) if len(ident) > 1 else (raw,)):
            column = tuple(column)
            kinds = set(map(type, column))
            if not _PLAIN.issuperset(kinds):
                return False
            values = set(column)
            if len(kinds) == 1:         # the usual column, of one type: told without _key
                kind = kinds.pop()
                if kind is float or kind is bool or kind is type(None):
                    continue            # _key(v) is v
                if kind is int and -_EXACT <= min(values) and max(values) <= _EXACT:
                    continue            # float(v) is exact: distinct ints, distinct floats
                if kind is str:
                    heads = "".join({v[:1] for v in values})    # first characters ("" adds none)
                    if heads.isalpha() or not any(h.isdigit() or h.isspace() or h in "+-." for h in heads):
                        continue        # no name that _key reads as a number: _key(v) is v
            if len({_key(v) for v in values}) != len(values):
                return False
    except TypeError:           # an unhashable value: the rule (which keys it by str)
        return False
    return True


def _upper(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # the distinct column names (a handful), gathered at C speed: rows mostly share them
    if all(isinstance(k, str) and k == k.upper() for k in set().union(*rows)):
        return rows
    return [{str(k).upper(): v for k, v in r.items()} for r in rows]


def _single_instance_number(snapshot: Any) -> Any:
    for view in ("GV$INSTANCE", "V$INSTANCE"):
        rows = snapshot.views.get(view) or []
        if len(rows) == 1:
            row = {str(k).upper(): v for k, v in rows[0].items()}
            for col in ("INSTANCE_NUMBER", "INST_ID"):
                if row.get(col) is not None:
                    return row[col]
    return 1


def _process_name(row: dict[str, Any]) -> dict[str, Any]:
    if "PNAME" in row:
        return row
    background = row.get("BACKGROUND")
    program = row.get("PROGRAM")
    name = None
    if str(background).strip() == "1" and isinstance(program, str):
        m = _PROGRAM_NAME.search(program)
        if m:
            name = m.group(1).upper()
    return {**row, "PNAME": name}


def clean_rows(snapshot: Any, view: str) -> list[dict[str, Any]]:
    """The cleaned rows of ``view`` (upper case name) in ``snapshot``; see the module doc."""
    raw = snapshot.views.get(view)
    if raw is None and view.startswith("GV$") and view[1:] in snapshot.views:
        number = _single_instance_number(snapshot)
        raw = [r if "INST_ID" in r else {"INST_ID": number, **r} for r in _upper(snapshot.views[view[1:]] or [])]
    if not raw:
        return []
    rows = _upper(raw)
    if view == "GV$PROCESS":
        rows = [_process_name(r) for r in rows]
    spec = views.get(view)
    ident = spec.identity if spec is not None else ()
    if not ident or _distinct(rows, ident):
        return rows
    return _one_per_identity(rows, ident)


def _one_per_identity(rows: list[dict[str, Any]], ident: tuple[str, ...]) -> list[dict[str, Any]]:
    """The module doc's rule, row by row: per identity the first row of the lowest CON_ID."""
    best: dict[tuple, tuple[float, int]] = {}   # identity -> (container, index of the kept row)
    for n, row in enumerate(rows):
        key = tuple([_key(row.get(c)) for c in ident])
        con = _con_id(row)
        have = best.get(key)
        if have is None or con < have[0]:
            best[key] = (con, n)
    if len(best) == len(rows):
        return rows
    keep = sorted(n for _, n in best.values())
    return [rows[n] for n in keep]
