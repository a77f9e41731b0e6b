"""Refused logons, remembered across restarts (issue 22: never lock the monitoring account).

A logon refused for its credentials (ora_errors NEW_CREDENTIALS: ORA-01017, ORA-28000 ...) is not
tried again with the same password. What identifies "the same password" is (user, dsn, a salted PBKDF2-
SHA-256 of the password): not the password file's modification time, so a vault job rewriting the
file with the same content costs no new logon. The refusals are kept in a small JSON state file
(hashes only, never a password; written atomically, mode 0600), so a restart or a crash loop with
the same wrong password costs no new logon either.

SIGHUP (``systemctl reload``) asks for one more attempt with an unchanged refused password (the
account was unlocked, a grant added): at most ``SIGHUP_RETRIES`` times per database per
``SIGHUP_WINDOW_SECONDS``, so a reload loop cannot lock the account either.

A state file that cannot be read or parsed: one warning, start empty. One that cannot be
written: one warning, the refusals are kept in memory.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("oracle_exporter")

SIGHUP_RETRIES = 3               # attempts with an unchanged refused password that SIGHUP grants ...
SIGHUP_WINDOW_SECONDS = 3600.0   # ... per database within this window
VERSION = 1
PBKDF2_ITERATIONS = 100_000


def default_path() -> str:
    """$XDG_STATE_HOME/oracle-exporter/refusals.json, else ~/.local/state/oracle-exporter/refusals.json."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "oracle-exporter", "refusals.json")


class RefusalStore:
    """The refused (user, dsn, password hash) triples of every database; shared by the sources.
    ``path`` None (or ''): in memory only."""

    def __init__(self, path: str | None = None, clock: Callable[[], float] = time.time):
        self.path = path or None
        self.clock = clock
        self._lock = threading.Lock()
        self._salt = secrets.token_hex(16)
        self._entries: dict[str, dict[str, Any]] = {}   # "user\0dsn" -> {hash, reason, since, sighup: [t...]}
        self._write_warned = False
        self._digests: dict[tuple[str, str], str] = {}
        if self.path:
            self._load()

    # -- persistence -------------------------------------------------------
    def _load(self) -> None:
        assert self.path
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            if not isinstance(data, dict) or not isinstance(data.get("salt"), str) \
                    or not isinstance(data.get("refused"), dict):
                raise ValueError("not a refusals file")
            entries = {k: v for k, v in data["refused"].items()
                       if isinstance(v, dict) and isinstance(v.get("hash"), str)}
            self._salt, self._entries = data["salt"], entries
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            log.warning("refusals file %s unreadable (%s): starting with no refused logon", self.path, why)

    def _save(self) -> None:
        if not self.path:
            return
        data = {"version": VERSION, "salt": self._salt, "refused": self._entries}
        try:
            folder = Path(self.path).parent
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".refusals.", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(data, fh, indent=1, sort_keys=True)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            self._write_warned = False
        except OSError as exc:
            if not self._write_warned:
                log.warning("refusals file %s not writable (%s): refused logons kept in memory only "
                            "(a restart would try each refused password once more)", self.path,
                            exc.strerror or exc)
                self._write_warned = True

    # -- queries -----------------------------------------------------------
    @staticmethod
    def _key(user: str | None, dsn: str | None) -> str:
        return f"{user or ''}\0{dsn or ''}"

    def digest(self, password: str | None) -> str:
        """PBKDF2-HMAC-SHA256 of the password with this file's salt (slow on purpose: the file
        must not be a shortcut to the password); remembered per password in memory."""
        key = (self._salt, password or "")
        if key not in self._digests:
            if len(self._digests) > 64:
                self._digests.clear()
            self._digests[key] = hashlib.pbkdf2_hmac("sha256", key[1].encode(), key[0].encode(),
                                                     PBKDF2_ITERATIONS).hex()
        return self._digests[key]

    def refused(self, user: str | None, dsn: str | None, password: str | None) -> str | None:
        """The reason this password was refused for (user, dsn), None if it was not."""
        with self._lock:
            e = self._entries.get(self._key(user, dsn))
            if e is None:            # the usual case: no hashing on the fetch path
                return None
            if e["hash"] != self.digest(password):
                return None
            return str(e.get("reason") or "logon refused")

    def refuse(self, user: str | None, dsn: str | None, password: str | None, reason: str) -> None:
        with self._lock:
            key = self._key(user, dsn)
            old = self._entries.get(key)
            h = self.digest(password)
            sighup = old.get("sighup", []) if old and old["hash"] == h else []
            self._entries[key] = {"hash": h, "reason": reason, "since": self.clock(), "sighup": sighup}
            self._save()

    def accepted(self, user: str | None, dsn: str | None) -> None:
        """A logon succeeded: forget the refusal of (user, dsn)."""
        with self._lock:
            if self._entries.pop(self._key(user, dsn), None) is not None:
                self._save()

    def grant_retry(self, user: str | None, dsn: str | None) -> bool:
        """SIGHUP: may (user, dsn) try its refused password once more? At most SIGHUP_RETRIES
        times per SIGHUP_WINDOW_SECONDS for one refused password."""
        with self._lock:
            e = self._entries.get(self._key(user, dsn))
            if e is None:
                return True
            now = self.clock()
            recent = [t for t in e.get("sighup", []) if now - t < SIGHUP_WINDOW_SECONDS]
            if len(recent) >= SIGHUP_RETRIES:
                e["sighup"] = recent
                return False
            e["sighup"] = recent + [now]
            self._save()
            return True
