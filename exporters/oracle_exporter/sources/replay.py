"""Replay source: serve recorded snapshots instead of a live database.

One snapshot per fetch, per database, in file order, holding the last one.
With ``loop=True`` the recording starts over after the last snapshot and every
counter is shifted by the sum of its increases over the recording (its value in
the last snapshot - its value in the first snapshot it appears in, plus the value
it had before each decrease: a reset, as rate() takes it) per completed pass, so
counters never go backwards. A reset inside the recording (an instance restart)
is carried on: from there on the counter is raised by the value it had before it,
so rate() sees the recorded increases, no reset, no negative value.

Which columns are counters is decided by the view registry (oracle_exporter.views:
View.counters, View.series_identity, and for NAME/VALUE views which names are
counters); COUNTERS below is its table of views with counters.
"""
from __future__ import annotations

import datetime as _dt
import json
import logging
import math
import operator
import os
import re
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Iterable

from exporter_common.config import ConfigError

from .. import views
from .. import collectors as _view_registering_collectors  # noqa: F401  (collector modules may register their own views)
from ..snapshot import Snapshot
from . import failed_snapshot
from ..views import View

log = logging.getLogger(__name__)

# The views with cumulative columns, from the one registry (oracle_exporter.views): per view
# the counter columns, the series a counter belongs to (View.series_identity) and, for
# NAME/VALUE views, which names are counters (View.is_counter_row).
COUNTERS: dict[str, View] = views.counter_views()


def _identity_getter(columns: tuple[str, ...]):
    """row -> tuple of the identity values (KeyError when a column is missing)."""
    if len(columns) == 1:
        (col,) = columns
        return lambda row: (row[col],)
    return operator.itemgetter(*columns)


# Identity tuple of a row per view, equal to tuple(row.get(c) for c in identity).
_IDENTITY = {view: _identity_getter(spec.series_identity) for view, spec in COUNTERS.items()}


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
            ident = tuple(row.get(c) for c in spec.series_identity)
            for col in spec.counters:
                value = _as_number(row.get(col))
                if value is not None:
                    key = (view, ident, col)
                    out[key] = max(out[key], value) if key in out else value
    return out


def loop_deltas(snapshots: Iterable[Snapshot]) -> dict[tuple, float]:
    """Per counter: value in the last snapshot holding it - value in the first one."""
    return loop_state(snapshots)[0]


def _column_value(rows: list[dict[str, Any]], col: str) -> int | float | None:
    """One counter column of the rows of one identity: its value, the maximum where
    several rows share the identity (GV$LOG groups of one thread), None if NULL."""
    if len(rows) == 1:
        value = rows[0].get(col)
        if type(value) is int or type(value) is float:
            return value
        return _as_number(value)
    out = None
    for row in rows:
        v = _as_number(row.get(col))
        if v is not None and (out is None or v > out):
            out = v
    return out


class LoopState:
    """Builds the loop state of one database snapshot by snapshot, in the pass that
    reads the recording (``add`` per snapshot in file order, ``result`` at the end).

    Per counter identity (view, identity columns) it keeps the index of the first and
    last snapshot holding it, its rows in the last one (the held value that
    ``shifted`` fills in) and its counter values in the first one. The per-pass delta
    of each counter column is its value in the identity's last rows minus its first
    value, computed once at the end; per snapshot only the rows are grouped. A column
    that is NULL where its identity first appears takes its first value from the
    first snapshot where it is not NULL; one that is NULL in the identity's last rows
    gets no delta (a NULL is not shifted anyway)."""

    __slots__ = ("count", "series", "opening", "resets")

    def __init__(self) -> None:
        self.count = 0
        self.series: dict[str, dict[tuple, _Series]] = {}
        # (view, identity, column) -> [(index of a snapshot where it went down, the values it had
        # before that reset and every earlier one, summed)]: an instance restart inside the recording
        self.resets: dict[tuple, list[tuple[int, float]]] = {}
        # (view, identity) -> [first value of each counter column (None: not seen yet)]
        self.opening: dict[tuple, list] = {}

    def add(self, snap: Snapshot) -> None:
        i = self.count
        self.count = i + 1
        views = snap.views
        opening = self.opening
        for view, spec in COUNTERS.items():
            rows = views.get(view)
            if not rows:
                continue
            identity = spec.series_identity
            key_of = _IDENTITY[view]
            counter_row = None if spec.name_column is None else spec.is_counter_row
            groups: dict[tuple, list[dict[str, Any]]] = {}
            for row in rows:
                if counter_row is not None and not counter_row(row):
                    continue
                try:
                    ident = key_of(row)
                except KeyError:   # an identity column missing from the row: None, as row.get
                    ident = tuple([row.get(c) for c in identity])
                same = groups.get(ident)
                if same is None:
                    groups[ident] = [row]
                else:
                    same.append(row)
            known = self.series.get(view)
            if known is None:
                known = self.series[view] = {}
            for ident, same in groups.items():
                where = known.get(ident)
                if where is None:
                    known[ident] = _Series(i, i, same)
                    vals = [_column_value(same, col) for col in spec.counters]
                    known[ident].prev = list(vals)
                    if None in vals:
                        opening[(view, ident)] = vals
                    else:
                        where = known[ident]
                        where.opening = vals
                else:
                    where.last, where.rows = i, same
                    self._note_resets(i, view, ident, where, same, spec.counters)
                    vals = opening.get((view, ident))
                    if vals is not None:   # a column not seen yet (rare): look again
                        for n, col in enumerate(spec.counters):
                            if vals[n] is None:
                                vals[n] = _column_value(same, col)
                        if None not in vals:
                            where.opening = vals
                            del opening[(view, ident)]

    def deltas(self) -> dict[tuple, float]:
        """Per counter (view, identity, column): last value - first value, where not 0."""
        out: dict[tuple, float] = {}
        opening = self.opening
        for view, known in self.series.items():
            columns = COUNTERS[view].counters
            for ident, where in known.items():
                firsts = where.opening
                if firsts is None:
                    firsts = opening.get((view, ident))
                    if firsts is None:
                        continue
                for col, first in zip(columns, firsts):
                    if first is None:
                        continue
                    last = _column_value(where.rows, col)
                    if last is None:
                        continue
                    # the sum of its increases, a decrease taken as a reset (as rate() does): a
                    # recording made across an instance restart must not shift later passes down
                    resets = self.resets.get((view, ident, col))
                    delta = last - first + (resets[-1][1] if resets else 0)
                    if delta:
                        out[(view, ident, col)] = delta
        return out

    def _note_resets(self, i: int, view: str, ident: tuple, where: "_Series", rows: list[dict[str, Any]],
                     counters: Sequence[str]) -> None:
        """A counter lower than in the identity's previous rows was reset (an instance restart
        inside the recording): noted in ``resets`` with the value it had, so loop mode carries
        it on from there (``shifted``) and its per-pass delta is the sum of its increases."""
        prev = where.prev
        if prev is None:
            prev = where.prev = [None] * len(counters)
        for n, col in enumerate(counters):
            value = _column_value(rows, col)
            if value is None:
                continue
            before = prev[n]
            if before is not None and value < before:
                noted = self.resets.setdefault((view, ident, col), [])
                noted.append((i, (noted[-1][1] if noted else 0) + before))
            prev[n] = value

    def result(self) -> tuple[dict[tuple, float], dict[str, dict[tuple, "_Series"]]]:
        """(deltas, series). Series held in every snapshot (first 0, last the final
        index) are left out: ``shifted`` never fills them in, so their rows need not
        be kept."""
        deltas = self.deltas()
        end = self.count - 1
        series: dict[str, dict[tuple, _Series]] = {}
        for view, known in self.series.items():
            kept = {ident: _Series(w.first, w.last, w.rows) for ident, w in known.items()
                    if w.first != 0 or w.last != end}
            if kept:
                series[view] = kept
        return deltas, series


def loop_state(snapshots: Iterable[Snapshot]) -> tuple[dict[tuple, float], dict[str, dict[tuple, "_Series"]]]:
    """(loop_deltas, series_index) in one pass over the snapshots."""
    state = LoopState()
    for snap in snapshots:
        state.add(snap)
    return state.result()


def _shift_row(row: dict[str, Any], spec: View, view: str, ident: tuple,
               deltas: dict[tuple, float], passes: int, resets: dict[tuple, list] | None = None,
               index: int | None = None) -> dict[str, Any]:
    """The row with its counters raised by passes * delta and, with ``resets`` (loop mode), by
    the values they had before the resets recorded up to snapshot ``index`` (None: all of them,
    the held last rows): a counter reset inside the recording is carried on, never replayed."""
    row = dict(row)
    for col in spec.counters:
        delta = deltas.get((view, ident, col))
        noted = resets.get((view, ident, col)) if resets else None
        carried = 0
        if noted:
            carried = noted[-1][1] if index is None else next(
                (lost for at, lost in reversed(noted) if at <= index), 0)
        value = _as_number(row.get(col))
        if value is not None and ((delta and passes) or carried):
            row[col] = value + (passes * delta if delta else 0) + carried
    return row


@dataclass
class _Series:
    """Where one counter identity occurs in the recording, and its last rows."""
    first: int
    last: int
    rows: list[dict[str, Any]]
    opening: list | None = None   # counter column values where it first appears (LoopState)
    prev: list | None = None      # counter column values where it was seen last (LoopState)


def series_index(snapshots: Iterable[Snapshot]) -> dict[str, dict[tuple, _Series]]:
    """{view: {identity: _Series}} for every counter identity in the recording."""
    state = LoopState()
    for snap in snapshots:
        state.add(snap)
    return state.series


def shifted(snapshot: Snapshot, deltas: dict[tuple, float], passes: int,
            index: int | None = None, series: dict[str, dict[tuple, _Series]] | None = None,
            resets: dict[tuple, list] | None = None) -> Snapshot:
    """A copy of ``snapshot`` with every counter raised by passes * delta.

    With ``series`` (loop mode), counter series missing from this snapshot
    because they appear later in the recording (Oracle lists a wait event or a
    histogram bucket only once it has been waited on) or disappear before its
    end are filled in with their held value (the last recorded rows, shifted
    to the end of the previous pass, or of this pass), so that no counter and
    no cumulative histogram bucket drops at a wrap."""
    if (passes == 0 or not deltas) and not series and not resets:
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
                ident = tuple(row.get(c) for c in spec.series_identity)
                present.add(ident)
                row = _shift_row(row, spec, view, ident, deltas, passes, resets, index)
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
                new_rows.extend(_shift_row(r, spec, view, ident, deltas, held, resets) for r in where.rows)
        views[view] = new_rows
    return Snapshot(snapshot.database, snapshot.time, views, dict(snapshot.errors), dict(snapshot.ages),
                    dict(snapshot.skipped))


# The longest line a replay reads: a snapshot of a large RAC database is a few MB; a longer
# "line" is not a recording (a binary file, a file of zero bytes, a dump without newlines).
MAX_LINE = 64 << 20
_CHUNK = 1 << 20               # lines are read in pieces of this size, never whole at once
_GZIP_MAGIC = b"\x1f\x8b"
_LONG_DIGITS = re.compile(rb"[0-9]{309}")   # a number no float holds (1.8e308): look closer
_FLOAT_MAX_INT = 2 ** 1024


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_recording(path: str):
    """The recording, opened for reading. Only a regular file: a replay reads it twice (an
    index at start, then each snapshot by its offset), which a named pipe, a device or a
    directory cannot serve (a pipe would pass a start check and then block forever)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigError(path, None, "recording not found") from None
    except PermissionError:
        raise ConfigError(path, None, "permission denied") from None
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(path, None, f"is {_kind(mode)}, expected a JSON Lines recording (a regular file: "
                                      "the replay indexes it at start and reads each snapshot again by offset)")
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise ConfigError(path, None, "recording not found") from None
    except IsADirectoryError:
        raise ConfigError(path, None, "is a directory, expected a JSON Lines recording") from None
    except PermissionError:
        raise ConfigError(path, None, "permission denied") from None


def _lines(path: str, fh):
    """(line number, raw line) of the recording, each line read in pieces of _CHUNK bytes and
    refused as soon as it holds a NUL byte (no JSON text does) or passes MAX_LINE, so that a
    file that is not a recording costs at most MAX_LINE of memory (a file of zero bytes: one piece)."""
    lineno = 0
    while True:
        lineno += 1
        parts: list[bytes] = []
        size = 0
        while True:
            piece = fh.readline(_CHUNK)
            if not piece:
                break
            if b"\x00" in piece:
                raise ConfigError(path, f"line {lineno}", "holds NUL bytes: not a JSON Lines recording")
            size += len(piece)
            if size > MAX_LINE:
                raise ConfigError(path, f"line {lineno}", f"longer than {MAX_LINE >> 20} MiB: not a recording "
                                                          "(a snapshot is one line of a few MB at most)")
            parts.append(piece)
            if piece.endswith(b"\n"):
                break
        if not parts:
            return
        yield lineno, parts[0] if len(parts) == 1 else b"".join(parts)


def _instant(text: str) -> float | None:
    """Seconds since the epoch of a snapshot's RFC 3339 time; None when it is not one."""
    try:
        t = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.timestamp()


def _huge_int(obj: Any) -> str | None:
    """Where the parsed line holds an integer no float can hold, described; None if nowhere."""
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _FLOAT_MAX_INT:
            return f"{where[:80]} is an integer of {len(str(abs(value)))} digits, beyond what a float holds"
    return None


def _parse_line(path: str, lineno: int, raw: bytes, validate: bool = True) -> Snapshot | None:
    """One recording line -> Snapshot (None for a blank line); ConfigError naming the line otherwise.
    A line that is not JSON raises json.JSONDecodeError for the caller to judge (truncated last line).
    ``validate`` False: a line read again from a file unchanged since it was validated (the
    checks of the values, two thirds of a read, are not repeated)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, f"line {lineno}", f"not UTF-8 text ({exc.reason})") from None
    if not line.strip():
        return None
    if not validate:
        try:
            return Snapshot.from_obj(json.loads(line))
        except (ValueError, RecursionError, TypeError, AttributeError) as exc:
            raise ConfigError(path, f"line {lineno}", f"not a snapshot: {exc}") from None
    try:
        obj = json.loads(line)
    except RecursionError:     # hundreds of nested brackets: no recorder writes that
        raise ConfigError(path, f"line {lineno}", "invalid JSON: nested too deeply") from None
    except json.JSONDecodeError:
        raise
    except ValueError:         # an integer of more than 4300 digits (Python's int conversion limit)
        raise ConfigError(path, f"line {lineno}", "holds an integer of more than 4300 digits, beyond what a "
                                                  "float holds: not a recorded value") from None
    if _LONG_DIGITS.search(raw):
        huge = _huge_int(obj)
        if huge:
            raise ConfigError(path, f"line {lineno}", huge)
    try:
        snap = Snapshot.from_obj(obj)
    except ValueError as exc:
        raise ConfigError(path, f"line {lineno}", f"not a snapshot: {exc}") from None
    if not snap.database.strip():
        raise ConfigError(path, f"line {lineno}", 'field "database" is empty')
    if _instant(snap.time) is None:      # the order check and the served age need a time
        raise ConfigError(path, f"line {lineno}", f'field "time" is not an RFC 3339 time: {snap.time[:40]!r}')
    bad = _not_a_number(snap)
    if bad:
        raise ConfigError(path, f"line {lineno}", bad)
    return snap


def _not_a_number(snap: Snapshot) -> str | None:
    """The first counter value (a cumulative column of the view registry) that is neither
    NULL, a number nor a numeric string, described; None when every one is a number. A
    recording is rejected for it rather than the value silently dropped at a scrape."""
    for view, rows in snap.views.items():
        spec = views.get(view)
        if spec is None:
            continue
        counters = spec.counters if view in COUNTERS else ()
        identity = tuple(dict.fromkeys((*spec.identity, *(spec.series_identity if view in COUNTERS else ()))))
        for i, row in enumerate(rows, 1):
            for col in identity:      # they key rows and series: a list or object there is no identity
                if isinstance(row.get(col), (list, dict)):
                    return f"{view} row {i}: {col} is not a single value: {json.dumps(row[col])[:40]}"
            for col in counters:
                value = row.get(col)
                if value is None:
                    continue
                num = _as_number(value)
                if num is None:
                    return f"{view} row {i}: {col} is not a number: {str(value)[:40]!r}"
                if type(num) is float and not math.isfinite(num):    # JSON NaN / Infinity / 1e400
                    return f"{view} row {i}: {col} is {num!r}: a counter must be a finite number"
    return None


def _scan(path: str, keep: bool, loops: dict[str, LoopState] | None = None) -> dict[str, list]:
    """Read a recording once, validating every line.

    Returns {database: [Snapshot, ...]} (keep=True) or {database: [byte offset of each
    line, ...]} (keep=False). With ``loops`` (a dict, filled in here), every snapshot
    also goes into its database's LoopState in the same pass. A line that is not valid JSON is an error naming the
    line, except for a last line without its terminating newline: a recorder killed
    mid-write leaves such a partial line (the recorder writes each snapshot as one
    line ending in a newline), which is skipped with a warning so that the rest of
    the recording stays usable. A complete line (newline-terminated) that is not
    JSON is corruption and stays an error."""
    by_db: dict[str, list] = {}
    pending: tuple[int, json.JSONDecodeError] | None = None
    last_time: dict[str, tuple[float, str, int]] = {}     # database -> (instant, time text, line)
    with _open_recording(path) as fh:
        if fh.read(2) == _GZIP_MAGIC:
            raise ConfigError(path, None, "is gzip-compressed: decompress it first (gunzip -k FILE); a replay "
                                          "reads snapshots by their offset in the file")
        fh.seek(0)
        offset = 0
        for lineno, raw in _lines(path, fh):
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
            instant = _instant(snap.time)
            if instant is not None:
                before = last_time.get(snap.database)
                if before is not None and instant < before[0]:
                    raise ConfigError(path, f"line {lineno}",
                                      f"snapshot of {snap.database} at {snap.time} is older than the one on line "
                                      f"{before[2]} ({before[1]}): a replay serves each database's snapshots "
                                      "in time order; sort the recording by time")
                last_time[snap.database] = (instant, snap.time, lineno)
            by_db.setdefault(snap.database, []).append(snap if keep else here)
            if loops is not None:
                state = loops.get(snap.database)
                if state is None:
                    state = loops[snap.database] = LoopState()
                state.add(snap)
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


class RecordingChanged(RuntimeError):
    """The recording was rewritten or cut under a running replay: the indexed line is not
    the snapshot it was. The replay then serves failed snapshots saying so (oracle_up 0, one
    log line per state change) until the exporter is restarted on the new file."""


class RecordedSnapshots(Sequence):
    """The snapshots of one database in a recording, read from the file on access.

    Holds only the byte offset of each line (8 bytes a snapshot), so a replay of a
    recording of any size needs the memory of one snapshot, not of the whole file."""

    def __init__(self, path: str, database: str, offsets: list[int], identity: tuple | None = None):
        """``identity``: the file's (device, inode, size, mtime) when it was validated; a read
        from the same file unchanged skips the value checks (None: every read checks)."""
        self.path, self.database, self.offsets, self.identity = path, database, offsets, identity
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        offset = self.offsets[index]
        with self._lock, _open_recording(self.path) as fh:
            same = self.identity is not None and _identity(os.fstat(fh.fileno())) == self.identity
            fh.seek(offset)
            raw = fh.readline(MAX_LINE + 1)
        try:
            with _DECODING:
                snap = _parse_line(self.path, 0, raw, validate=not same)
        except (json.JSONDecodeError, ConfigError) as exc:
            raise RecordingChanged(f"{self.path}: the recording changed under the replay (the line at byte {offset} "
                                   f"is no longer the snapshot it was: {exc}); restart the exporter to replay "
                                   f"the new file") from None
        if snap is None or snap.database != self.database:
            raise RecordingChanged(f"{self.path}: the recording changed under the replay (the line at byte {offset} "
                                   f"is no longer a snapshot of {self.database}); restart the exporter to replay "
                                   f"the new file")
        return snap


def _identity(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _stat_identity(path: str) -> tuple | None:
    try:
        return _identity(os.stat(path))
    except OSError:
        return None


# One snapshot decoded at a time: JSON decoding is pure CPU under the GIL; hundreds of fetch workers
# decoding at once only add thread switches.
_DECODING = threading.Lock()


def index_recording(path: str, loops: dict[str, LoopState] | None = None) -> dict[str, RecordedSnapshots]:
    """Validate a recording and index it: {database: RecordedSnapshots} in first-appearance order
    (and, with ``loops``, each database's LoopState from the same pass). The file's identity
    before and after the scan is kept when it did not change meanwhile: later reads of the same
    file then skip the value checks this scan made."""
    before = _stat_identity(path)
    offsets = _scan(path, keep=False, loops=loops)
    identity = before if before is not None and _stat_identity(path) == before else None
    return {db: RecordedSnapshots(path, db, found, identity) for db, found in offsets.items()}


class ReplaySource:
    """Serves one database's recorded snapshots, one per fetch."""

    def __init__(self, name: str, snapshots: Sequence[Snapshot], loop: bool = False,
                 state: LoopState | None = None):
        """``state``: the loop state of exactly these snapshots, built while they were
        read (replay_sources); without it, loop mode reads them once more to build it."""
        if not snapshots:
            raise ValueError(f"no snapshots for database {name!r}")
        if state is not None and state.count != len(snapshots):
            raise ValueError(f"loop state of {state.count} snapshots for {len(snapshots)} snapshots")
        self.name = name
        self.snapshots = snapshots
        self.loop = loop
        self.resets: dict[tuple, list] = {}
        if not loop:
            self.deltas, self.series = {}, None
        else:
            if state is None:
                state = LoopState()
                for snap in snapshots:
                    state.add(snap)
            self.resets = state.resets
            self.deltas, self.series = state.result()
        self.position = 0  # index of the next snapshot to serve
        self.passes = 0    # completed passes over the recording (loop mode)
        self._lock = threading.Lock()

    def fetch(self) -> Snapshot:
        with self._lock:
            try:
                recorded = self.snapshots[self.position]
            except (RecordingChanged, ConfigError, OSError) as exc:   # rewritten, cut or removed under the replay
                return failed_snapshot(self.name, f"replay: {exc}")
            snap = shifted(recorded, self.deltas, self.passes, self.position, self.series, self.resets)
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
    loops: dict[str, LoopState] | None = {} if loop else None
    recording = index_recording(path, loops)
    names = list(recording)
    if only is not None:
        names = [n for n in names if n in set(only)]
    return [ReplaySource(n, recording[n], loop, loops[n] if loops is not None else None) for n in names]
