"""Helpers of the session and instance-health collectors (sessions, resource_limits,
tablespaces, recovery_area, dataguard, archive_dest, asm).

Values come as Oracle returns them (live) or as recorded (JSON Lines): numbers
may be ints, floats, Decimals or numeric strings; INTERVAL and DATE values of
V$DATAGUARD_STATS are VARCHAR2 strings. Nothing here raises on odd input: an
unparseable value is None and the sample is skipped.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Iterable

from ._common import num

# '+00 00:00:05', '+01 02:03:04', '-00 00:00:01', '+000 00:00:05.250' (INTERVAL DAY TO SECOND as text)
_INTERVAL = re.compile(r"^\s*([+-])?\s*(\d+)\s+(\d{1,2}):(\d{1,2}):(\d{1,2}(?:\.\d*)?)\s*$")
# 'HH:MI:SS' without days (seen in hand-made recordings)
_HMS = re.compile(r"^\s*([+-])?(\d+):(\d{1,2}):(\d{1,2}(?:\.\d*)?)\s*$")


def interval_seconds(value: Any) -> float | None:
    """Seconds of an Oracle INTERVAL DAY TO SECOND value.

    V$DATAGUARD_STATS.VALUE is VARCHAR2 text such as ``+00 00:00:05`` (UNIT
    'day(2) to second(0) interval'); days count 86400 s. A live fetch of a
    real INTERVAL column arrives as a number of seconds (the live source turns
    timedelta into seconds), which is accepted as it is. NULL, empty or
    malformed text is None: the lag is not computed."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return num(value)
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if not isinstance(value, str) or not value.strip():
        return None
    m = _INTERVAL.match(value)
    if m:
        sign, days, hours, minutes, seconds = m.groups()
        hours_i, minutes_i, seconds_f = int(hours), int(minutes), float(seconds)
    else:
        m = _HMS.match(value)
        if not m:
            return None
        sign, hours, minutes, seconds = m.groups()
        days, hours_i, minutes_i, seconds_f = "0", int(hours), int(minutes), float(seconds)
    if minutes_i > 59 or seconds_f >= 60 or (m.re is _INTERVAL and hours_i > 23):
        return None
    total = int(days) * 86400 + hours_i * 3600 + minutes_i * 60 + seconds_f
    return -total if sign == "-" else total


# V$DATAGUARD_STATS.TIME_COMPUTED / DATUM_TIME: VARCHAR2, standby-local time, 'MM/DD/YYYY HH24:MI:SS'
# (11.2 onwards) or 'DD-MON-YYYY HH24:MI:SS' (10.2, English month abbreviations).
_MDY = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*$")
_DMONY = re.compile(r"^\s*(\d{1,2})-([A-Za-z]{3})-(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*$")
_MONTHS = {m: n for n, m in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
                                       "DEC"), start=1)}


def local_wallclock(value: Any) -> _dt.datetime | None:
    """A naive datetime (the database host's wall clock) from a DATE as recorded
    (ISO 8601, with or without offset; an offset is dropped: only the wall
    clock reading is kept) or from V$DATAGUARD_STATS' 'MM/DD/YYYY HH24:MI:SS'
    or 'DD-MON-YYYY HH24:MI:SS'."""
    if isinstance(value, _dt.datetime):
        return value.replace(tzinfo=None)
    if not isinstance(value, str) or not value.strip():
        return None
    m = _MDY.match(value)
    d = _DMONY.match(value)
    if m or d:
        if m:
            month, day, year, hour, minute, second = (int(g) for g in m.groups())
        else:
            day, mon, year, hour, minute, second = d.groups()
            if mon.upper() not in _MONTHS:
                return None
            month, day, year = _MONTHS[mon.upper()], int(day), int(year)
            hour, minute, second = int(hour), int(minute), int(second)
        try:
            return _dt.datetime(year, month, day, hour, minute, second)
        except ValueError:
            return None
    try:
        moment = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=None)


def host_utc_offset(snapshot: Any) -> _dt.timedelta | None:
    """The database host's UTC offset from the ``DUAL`` row (SYSTIMESTAMP with its
    offset, read once per fetch; contract "Real-database truths"), or None."""
    for row in snapshot.rows("DUAL"):
        value = row.get("SYSTIMESTAMP")
        if isinstance(value, _dt.datetime) and value.tzinfo is not None:
            return value.utcoffset()
        if isinstance(value, str) and value.strip():
            try:
                moment = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                return None
            return moment.utcoffset()
    return None


_EPOCH = _dt.datetime(1970, 1, 1)
_NO_OFFSET = _dt.timedelta(0)


def local_to_unix(value: Any, offset: _dt.timedelta | None) -> float | None:
    """Unix seconds of a host-local DATE; without a known offset the wall clock is taken as UTC; None
    for a date the offset takes out of the calendar (read as NULL, not a failed collector)."""
    if type(value) is str and value[:4].isdigit():
        # ISO 8601 as recorded ('2025-03-08T06:12:47'): three digits first, so neither of
        # local_wallclock's MM/DD/YYYY or DD-MON-YYYY patterns can match; the same reading
        # without the datetime.replace calls ((wall - epoch) is what .timestamp() computes)
        try:
            wall = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if wall.tzinfo is not None:
            wall = wall.replace(tzinfo=None)
    else:
        wall = local_wallclock(value)
        if wall is None:
            return None
    try:
        return (wall - (offset or _NO_OFFSET) - _EPOCH).total_seconds()
    except OverflowError:       # 0001-01-01 with a positive offset, 9999-12-31 with a negative one: unknown
        return None


def con_id(row: dict[str, Any]) -> int:
    value = num(row.get("CON_ID"))
    return int(value) if value is not None else 0


def lowest_container(rows: Iterable[dict[str, Any]], identity: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per identity: the row of the lowest CON_ID (0 = the whole instance),
    never a sum (contract "Real-database truths"); first row wins within a container."""
    best: dict[tuple, tuple[int, int]] = {}
    rows = list(rows)
    for n, row in enumerate(rows):
        key = tuple(_ident(row.get(c)) for c in identity)
        con = con_id(row)
        have = best.get(key)
        if have is None or con < have[0]:
            best[key] = (con, n)
    return [rows[n] for n in sorted(n for _, n in best.values())]


def _ident(value: Any) -> Any:
    number = num(value)
    if number is not None:
        return number
    return value.strip() if isinstance(value, str) else value


def clean(value: Any) -> str:
    """A VARCHAR2 label value with Oracle's blank padding removed; NULL is ''."""
    if value.__class__ is str:      # the usual case first
        return value.strip()
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()
