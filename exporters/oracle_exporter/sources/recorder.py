"""``--record FILE``: append every fetched snapshot (failed ones too) as one JSON line.

Lines are written whole under a lock and flushed at once, so concurrent
fetches of several databases never interleave and a crash loses at most the
line being written. The file is the replay format (see replay.py).
"""
from __future__ import annotations

import json
import logging
import os
import threading

from exporter_common.config import ConfigError

from ..snapshot import Snapshot
from . import Source

log = logging.getLogger(__name__)


def mend_tail(path: str) -> str:
    """Make a recording end on a whole line before appending to it: an exporter killed in the
    middle of a write (OOM, SIGKILL) and restarted with the same --record would glue its first
    snapshot onto the cut line, and replay refuses a cut line that is not the last. A last line
    that is whole JSON but lacks its newline gets it; a cut one is removed. What was done ("" if
    nothing)."""
    try:
        fh = open(path, "rb+")
    except FileNotFoundError:
        return ""
    with fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return ""
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return ""
        keep, pos = 0, size
        while pos > 0:
            step = min(1 << 16, pos)
            pos -= step
            fh.seek(pos)
            i = fh.read(step).rfind(b"\n")
            if i >= 0:
                keep = pos + i + 1
                break
        fh.seek(keep)
        tail = fh.read()
        try:
            json.loads(tail)
        except ValueError:
            fh.truncate(keep)
            return f"its last line was cut ({size - keep} bytes, an exporter killed while writing): removed"
        fh.seek(size)
        fh.write(b"\n")
        return "its last line lacked its newline: added"


class Recorder:
    def __init__(self, path: str):
        self.path = path
        try:
            mended = mend_tail(path)
            if mended:
                log.warning("recording %s: %s, so the snapshots appended now stay replayable", path, mended)
            self._fh = open(path, "a", encoding="utf-8")
        except OSError as exc:
            raise ConfigError("--record", None, f"cannot open {path!r} for appending: {exc.strerror}") from None
        self._lock = threading.Lock()
        self.written = 0

    def write(self, snapshot: Snapshot) -> None:
        line = snapshot.to_json() + "\n"
        with self._lock:
            try:
                self._fh.write(line)
                self._fh.flush()
                self.written += 1
            except (OSError, ValueError) as exc:  # disk full, closed file: keep serving metrics
                log.error("cannot append snapshot of %s to %s: %s", snapshot.database, self.path, exc)

    def close(self) -> None:
        with self._lock:
            self._fh.close()


class RecordingSource:
    """Wraps a source; every snapshot it fetches is also appended to the recording."""

    def __init__(self, inner: Source, recorder: Recorder):
        self.inner = inner
        self.name = inner.name
        self.recorder = recorder

    def fetch(self) -> Snapshot:
        snap = self.inner.fetch()
        self.recorder.write(snap)
        return snap

    def close(self) -> None:
        self.inner.close()
