"""Replay source: serve recorded snapshots instead of a live database.

One snapshot per fetch, per database, in file order, holding the last one.
With ``loop=True`` the recording starts over after the last snapshot and every
counter is shifted by (its value in the last snapshot - its value in the first
snapshot it appears in) per completed pass, so counters never go backwards.

Which columns are counters is decided by COUNTERS below, the one table of
cumulative columns (view -> identity columns, counter columns, and for
NAME/VALUE views which names are counters).
"""
from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Iterable

from exporter_common.config import ConfigError

from ..snapshot import Snapshot

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class CounterSpec:
    identity: tuple[str, ...]          # columns that identify one series of the view
    columns: tuple[str, ...]           # cumulative numeric columns
    name_column: str | None = None     # for NAME/VALUE views: the column holding the statistic name
    names: frozenset[str] | None = None  # only these names are counters (None: all names ...)
    gauges: frozenset[str] = frozenset()  # ... except these

    def is_counter_row(self, row: dict[str, Any]) -> bool:
        if self.name_column is None:
            return True
        name = row.get(self.name_column)
        if self.names is not None:
            return name in self.names
        return name not in self.gauges


# GV$SYSSTAT statistics that are current values, not cumulative (Oracle Database
# Reference, "Statistics Descriptions": class "current" statistics).
SYSSTAT_GAUGES = frozenset({
    "logons current", "opened cursors current", "session cursor cache count",
    "session pga memory", "session pga memory max", "session uga memory", "session uga memory max",
    "session stored procedure space", "workarea memory allocated",
})

# GV$PGASTAT rows that are cumulative since instance startup; the others
# (aggregate PGA target parameter, total PGA allocated, cache hit percentage, ...) are gauges.
PGASTAT_COUNTERS = frozenset({
    "over allocation count", "bytes processed", "extra bytes read/written",
    "recompute count (cumulative)",
})

COUNTERS: dict[str, CounterSpec] = {
    "GV$SYSTEM_EVENT": CounterSpec(
        ("INST_ID", "EVENT"),
        ("TOTAL_WAITS", "TOTAL_TIMEOUTS", "TIME_WAITED", "TIME_WAITED_MICRO",
         "TOTAL_WAITS_FG", "TOTAL_TIMEOUTS_FG", "TIME_WAITED_FG", "TIME_WAITED_MICRO_FG")),
    "GV$EVENT_HISTOGRAM": CounterSpec(("INST_ID", "EVENT", "WAIT_TIME_MILLI"), ("WAIT_COUNT",)),
    "GV$EVENT_HISTOGRAM_MICRO": CounterSpec(("INST_ID", "EVENT", "WAIT_TIME_MICRO"), ("WAIT_COUNT",)),
    "GV$SYSSTAT": CounterSpec(("INST_ID", "NAME"), ("VALUE",), name_column="NAME", gauges=SYSSTAT_GAUGES),
    "GV$LATCH": CounterSpec(
        ("INST_ID", "NAME"),
        ("GETS", "MISSES", "SLEEPS", "IMMEDIATE_GETS", "IMMEDIATE_MISSES", "SPIN_GETS", "WAIT_TIME")),
    # Log sequence numbers advance per redo thread: every group of a thread is
    # shifted by the same amount (the thread's highest SEQUENCE#, last - first),
    # so the CURRENT group's sequence keeps counting log switches.
    "GV$LOG": CounterSpec(("INST_ID", "THREAD#"), ("SEQUENCE#",)),
    "GV$PGASTAT": CounterSpec(("INST_ID", "NAME"), ("VALUE",), name_column="NAME", names=PGASTAT_COUNTERS),
}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_number(value: Any) -> int | float | None:
    """A counter value as a number: JSON numbers, and numeric strings ("123", "1.0E3")
    as some recorders write Oracle NUMBERs; None for NULL and anything else."""
    if _number(value):
        return value
    if isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
        if out != out or out in (float("inf"), float("-inf")):
            return None
        return int(out) if out.is_integer() else out
    return None


def counter_values(snapshot: Snapshot) -> dict[tuple, float]:
    """{(view, identity values, column): value} for every counter in a snapshot.
    Rows sharing an identity (GV$LOG groups of one thread) contribute their maximum."""
    out: dict[tuple, float] = {}
    for view, spec in COUNTERS.items():
        for row in snapshot.views.get(view, []):
            if not spec.is_counter_row(row):
                continue
            ident = tuple(row.get(c) for c in spec.identity)
            for col in spec.columns:
                value = _as_number(row.get(col))
                if value is not None:
                    key = (view, ident, col)
                    out[key] = max(out[key], value) if key in out else value
    return out


def loop_deltas(snapshots: Iterable[Snapshot]) -> dict[tuple, float]:
    """Per counter: value in the last snapshot holding it - value in the first one."""
    return loop_state(snapshots)[0]


def loop_state(snapshots: Iterable[Snapshot]) -> tuple[dict[tuple, float], dict[str, dict[tuple, "_Series"]]]:
    """(loop_deltas, series_index) in one pass over the snapshots (a recording on disk
    is read once more, not twice)."""
    first: dict[tuple, float] = {}
    last: dict[tuple, float] = {}
    series: dict[str, dict[tuple, _Series]] = {}
    for i, snap in enumerate(snapshots):
        for key, value in counter_values(snap).items():
            first.setdefault(key, value)
            last[key] = value
        _index_one(series, i, snap)
    return {key: last[key] - first[key] for key in last if last[key] != first[key]}, series


def _shift_row(row: dict[str, Any], spec: CounterSpec, view: str, ident: tuple,
               deltas: dict[tuple, float], passes: int) -> dict[str, Any]:
    row = dict(row)
    for col in spec.columns:
        delta = deltas.get((view, ident, col))
        value = _as_number(row.get(col))
        if delta and passes and value is not None:
            row[col] = value + passes * delta
    return row


@dataclass
class _Series:
    """Where one counter identity occurs in the recording, and its last rows."""
    first: int
    last: int
    rows: list[dict[str, Any]]


def series_index(snapshots: Iterable[Snapshot]) -> dict[str, dict[tuple, _Series]]:
    """{view: {identity: _Series}} for every counter identity in the recording."""
    out: dict[str, dict[tuple, _Series]] = {}
    for i, snap in enumerate(snapshots):
        _index_one(out, i, snap)
    return out


def _index_one(out: dict[str, dict[tuple, _Series]], i: int, snap: Snapshot) -> None:
    for view, spec in COUNTERS.items():
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for row in snap.views.get(view, []):
            if spec.is_counter_row(row):
                groups.setdefault(tuple(row.get(c) for c in spec.identity), []).append(row)
        known = out.setdefault(view, {})
        for ident, rows in groups.items():
            if ident in known:
                known[ident].last, known[ident].rows = i, rows
            else:
                known[ident] = _Series(i, i, rows)


def shifted(snapshot: Snapshot, deltas: dict[tuple, float], passes: int,
            index: int | None = None, series: dict[str, dict[tuple, _Series]] | None = None) -> Snapshot:
    """A copy of ``snapshot`` with every counter raised by passes * delta.

    With ``series`` (loop mode), counter series missing from this snapshot
    because they appear later in the recording (Oracle lists a wait event or a
    histogram bucket only once it has been waited on) or disappear before its
    end are filled in with their held value (the last recorded rows, shifted
    to the end of the previous pass, or of this pass), so that no counter and
    no cumulative histogram bucket drops at a wrap."""
    if (passes == 0 or not deltas) and not series:
        return snapshot
    views: dict[str, list[dict[str, Any]]] = {}
    for view, rows in snapshot.views.items():
        spec = COUNTERS.get(view)
        if spec is None:
            views[view] = rows
            continue
        new_rows = []
        present: set[tuple] = set()
        for row in rows:
            if spec.is_counter_row(row):
                ident = tuple(row.get(c) for c in spec.identity)
                present.add(ident)
                row = _shift_row(row, spec, view, ident, deltas, passes)
            new_rows.append(row)
        if series and index is not None:
            for ident, where in series.get(view, {}).items():
                if ident in present:
                    continue
                if index > where.last:
                    held = passes
                elif index < where.first and passes > 0:
                    held = passes - 1
                else:
                    continue
                new_rows.extend(_shift_row(r, spec, view, ident, deltas, held) for r in where.rows)
        views[view] = new_rows
    return Snapshot(snapshot.database, snapshot.time, views, dict(snapshot.errors))


def _open_recording(path: str):
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise ConfigError(path, None, "recording not found") from None
    except IsADirectoryError:
        raise ConfigError(path, None, "is a directory, expected a JSON Lines recording") from None
    except PermissionError:
        raise ConfigError(path, None, "permission denied") from None


def _parse_line(path: str, lineno: int, raw: bytes) -> Snapshot | None:
    """One recording line -> Snapshot (None for a blank line); ConfigError naming the line otherwise.
    A line that is not JSON raises json.JSONDecodeError for the caller to judge (truncated last line)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, f"line {lineno}", f"not UTF-8 text ({exc.reason})") from None
    if not line.strip():
        return None
    obj = json.loads(line)
    try:
        snap = Snapshot.from_obj(obj)
    except ValueError as exc:
        raise ConfigError(path, f"line {lineno}", f"not a snapshot: {exc}") from None
    if not snap.database.strip():
        raise ConfigError(path, f"line {lineno}", 'field "database" is empty')
    return snap


def _scan(path: str, keep: bool) -> dict[str, list]:
    """Read a recording once, validating every line.

    Returns {database: [Snapshot, ...]} (keep=True) or {database: [byte offset of each
    line, ...]} (keep=False). A line that is not valid JSON is an error naming the
    line, except for a last line without its terminating newline: a recorder killed
    mid-write leaves such a partial line (the recorder writes each snapshot as one
    line ending in a newline), which is skipped with a warning so that the rest of
    the recording stays usable. A complete line (newline-terminated) that is not
    JSON is corruption and stays an error."""
    by_db: dict[str, list] = {}
    pending: tuple[int, json.JSONDecodeError] | None = None
    with _open_recording(path) as fh:
        offset = 0
        for lineno, raw in enumerate(fh, 1):
            here, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            if pending is not None:
                bad_line, exc = pending
                raise ConfigError(path, f"line {bad_line}", f"invalid JSON: {exc.msg} (column {exc.colno})")
            try:
                snap = _parse_line(path, lineno, raw)
            except json.JSONDecodeError as exc:
                if raw.endswith(b"\n"):  # a complete line that is not JSON: corrupt, not cut short
                    raise ConfigError(path, f"line {lineno}",
                                      f"invalid JSON: {exc.msg} (column {exc.colno})") from None
                pending = (lineno, exc)    # no newline: only the last line can lack one
                continue
            if snap is None:
                continue
            by_db.setdefault(snap.database, []).append(snap if keep else here)
    if pending is not None:
        bad_line, exc = pending
        log.warning("%s: line %d is not valid JSON (%s, column %d), most likely cut short by a recorder that "
                    "stopped mid-write; skipping it", path, bad_line, exc.msg, exc.colno)
    if not by_db:
        raise ConfigError(path, None, "recording holds no snapshots")
    return by_db


def read_recording(path: str) -> dict[str, list[Snapshot]]:
    """Parse a JSON Lines recording -> {database: [snapshots in file order]} (all in memory).
    Any malformed line is a ConfigError naming the file and the line number, except a
    partial last line (see _scan). replay_sources uses index_recording instead."""
    return _scan(path, keep=True)


class RecordedSnapshots(Sequence):
    """The snapshots of one database in a recording, read from the file on access.

    Holds only the byte offset of each line (8 bytes a snapshot), so a replay of a
    recording of any size needs the memory of one snapshot, not of the whole file."""

    def __init__(self, path: str, database: str, offsets: list[int]):
        self.path, self.database, self.offsets = path, database, offsets
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        offset = self.offsets[index]
        with self._lock, _open_recording(self.path) as fh:
            fh.seek(offset)
            raw = fh.readline()
        try:
            snap = _parse_line(self.path, 0, raw)
        except (json.JSONDecodeError, ConfigError) as exc:
            raise RuntimeError(f"{self.path}: the line at byte {offset} changed since it was read: {exc}") from None
        if snap is None or snap.database != self.database:
            raise RuntimeError(f"{self.path}: the line at byte {offset} changed since it was read")
        return snap


def index_recording(path: str) -> dict[str, RecordedSnapshots]:
    """Validate a recording and index it: {database: RecordedSnapshots} in first-appearance order."""
    return {db: RecordedSnapshots(path, db, offsets) for db, offsets in _scan(path, keep=False).items()}


class ReplaySource:
    """Serves one database's recorded snapshots, one per fetch."""

    def __init__(self, name: str, snapshots: Sequence[Snapshot], loop: bool = False):
        if not snapshots:
            raise ValueError(f"no snapshots for database {name!r}")
        self.name = name
        self.snapshots = snapshots
        self.loop = loop
        self.deltas, self.series = loop_state(snapshots) if loop else ({}, None)
        self.position = 0  # index of the next snapshot to serve
        self.passes = 0    # completed passes over the recording (loop mode)
        self._lock = threading.Lock()

    def fetch(self) -> Snapshot:
        with self._lock:
            snap = shifted(self.snapshots[self.position], self.deltas, self.passes, self.position, self.series)
            if self.position + 1 < len(self.snapshots):
                self.position += 1
            elif self.loop:
                self.position = 0
                self.passes += 1
            return snap

    def close(self) -> None:
        pass


def replay_sources(path: str, loop: bool = False, only: Iterable[str] | None = None) -> list[ReplaySource]:
    """One ReplaySource per database in the recording (first-appearance order)."""
    recording = index_recording(path)
    names = list(recording)
    if only is not None:
        names = [n for n in names if n in set(only)]
    return [ReplaySource(n, recording[n], loop) for n in names]
