"""``--record FILE``: append every fetched snapshot (failed ones too) as one JSON line.

Lines are written whole under a lock and flushed at once, so concurrent
fetches of several databases never interleave and a crash loses at most the
line being written. The file is the replay format (see replay.py).
"""
from __future__ import annotations

import logging
import threading

from exporter_common.config import ConfigError

from ..snapshot import Snapshot
from . import Source

log = logging.getLogger(__name__)


class Recorder:
    def __init__(self, path: str):
        self.path = path
        try:
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
