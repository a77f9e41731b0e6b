"""Refused logons, remembered across restarts (issue 22: never lock the monitoring account).

A logon refused for its credentials (ora_errors NEW_CREDENTIALS: ORA-01017, ORA-28000 ...) is not
tried again with the same password. What identifies "the same password" is (database, user, dsn, a
salted PBKDF2-SHA-256 of the password: each configured database keeps its own refusal): not the password file's modification time, so a vault job rewriting the
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
        self._memo: dict[str, tuple[str, str]] = {}   # key -> (fast hash of the password, its PBKDF2 digest)
        self._hashing = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
        self._saving = threading.Lock()   # one write of the file at a time, outside self._lock
        self._later: set[tuple[str, str]] = set()   # (key, fast hash): digests being computed (check)
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
        """Write the file (atomically, fsync'd) without holding the store's lock: the entries are
        copied under it, the writes are one at a time (each writes the entries as they were when
        it took its turn, so the last write holds the latest)."""
        if not self.path:
            return
        with self._saving:
            with self._lock:
                data = json.dumps({"version": VERSION, "salt": self._salt, "refused": self._entries},
                                  indent=1, sort_keys=True)
            self._write(data)

    def _write(self, data: str) -> None:
        assert self.path
        try:
            folder = Path(self.path).parent
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".refusals.", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(data)
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
    def _key(user: str | None, dsn: str | None, database: str | None = None) -> str:
        """"database\0user\0dsn" (each configured database keeps its own refusal: two entries for
        one account with different passwords must not undo each other's); without a database, the
        "user\0dsn" key earlier versions wrote (still honoured when read)."""
        if database is None:
            return f"{user or ''}\0{dsn or ''}"
        return f"{database}\0{user or ''}\0{dsn or ''}"

    def _entry(self, user: str | None, dsn: str | None, database: str | None) -> tuple[str, dict | None]:
        """(key, entry) of a database, ``self._lock`` held: its own, else one an earlier version
        kept for its (user, dsn)."""
        key = self._key(user, dsn, database)
        e = self._entries.get(key)
        if e is None and database is not None:
            legacy = self._key(user, dsn)
            e = self._entries.get(legacy)
            if e is not None:
                key = legacy
        return key, e

    def digest(self, password: str | None, key: str = "") -> str:
        """PBKDF2-HMAC-SHA256 of the password with this file's salt (slow on purpose: the file
        must not be a shortcut to the password). Computed without the store's lock (a fetch of
        another database never waits for it), at most ``os.cpu_count()`` at once, and remembered
        per key (one entry per database: the memory never thrashes, whatever the number of
        databases) against a fast hash of the password, so an unchanged password is hashed once."""
        salt, text = self._salt, (password or "")
        quick = self._quick(salt, password)
        memo = self._memo.get(key)
        if memo is not None and memo[0] == quick:
            return memo[1]
        with self._hashing:
            value = hashlib.pbkdf2_hmac("sha256", text.encode(), salt.encode(), PBKDF2_ITERATIONS).hex()
        self._memo[key] = (quick, value)
        return value

    @staticmethod
    def _quick(salt: str, password: str | None) -> str:
        return hashlib.sha256(f"{salt}\0{password or ''}".encode()).hexdigest()

    def check(self, user: str | None, dsn: str | None, password: str | None,
              database: str | None = None) -> tuple[str | None, bool]:
        """(the reason this password was refused for the database, None if it was not; settled),
        never waiting for a PBKDF2: a refusal made in this process is remembered with its digest,
        and one read from the refusals file that this password has not been compared with yet is
        compared in the background and reported as still standing until then (not settled; the
        next fetch knows). So a restart with a hundred refused databases answers each at once,
        with its refusal, instead of hashing a hundred passwords within the scrape's deadline."""
        with self._lock:
            key, e = self._entry(user, dsn, database)
            if e is None:            # the usual case: no hashing on the fetch path
                return None, True
            stored, reason = e["hash"], str(e.get("reason") or "logon refused")
        memo = self._memo.get(key)
        if memo is not None:
            if memo[0] == self._quick(self._salt, password):
                return (reason if memo[1] == stored else None), True
            if memo[1] == stored:    # the refused password is known here, and this one is another
                return None, True
        self._digest_later(key, password)
        return reason, False

    def _digest_later(self, key: str, password: str | None) -> None:
        """Compute the digest of ``password`` for ``key`` in a thread of its own (once at a time)."""
        pending = (key, self._quick(self._salt, password))
        with self._lock:
            if pending in self._later:
                return
            self._later.add(pending)

        def run() -> None:
            try:
                self.digest(password, key)
            finally:
                with self._lock:
                    self._later.discard(pending)
        threading.Thread(target=run, name="refusal-digest", daemon=True).start()

    def refused(self, user: str | None, dsn: str | None, password: str | None,
                database: str | None = None) -> str | None:
        """The reason this password was refused for the database (user, dsn), None if it was not."""
        with self._lock:
            key, e = self._entry(user, dsn, database)
            if e is None:            # the usual case: no hashing on the fetch path
                return None
            stored = e["hash"]
        if self.digest(password, key) != stored:
            return None
        with self._lock:
            e = self._entry(user, dsn, database)[1]
            return str(e.get("reason") or "logon refused") if e is not None and e["hash"] == stored else None

    def refuse(self, user: str | None, dsn: str | None, password: str | None, reason: str,
               database: str | None = None) -> None:
        key = self._key(user, dsn, database)
        h = self.digest(password, key)
        with self._lock:
            old = self._entries.get(key)
            sighup = old.get("sighup", []) if old and old["hash"] == h else []
            self._entries[key] = {"hash": h, "reason": reason, "since": self.clock(), "sighup": sighup}
        self._save()

    def accepted(self, user: str | None, dsn: str | None, database: str | None = None) -> None:
        """A logon succeeded: forget the refusal of the database (and an earlier version's of its
        (user, dsn))."""
        with self._lock:
            found = [self._entries.pop(k, None) for k in {self._key(user, dsn, database), self._key(user, dsn)}]
        if any(e is not None for e in found):
            self._save()

    def locked_retry_due(self, user: str | None, dsn: str | None, every: float,
                         database: str | None = None) -> float | None:
        """The database's refusal is ORA-28000 (account locked) and was made ``every`` seconds ago
        or more: when it was made (wall clock), else None (``every`` 0: never). Oracle unlocks a
        LOCKED(TIMED) account itself after the profile's PASSWORD_LOCK_TIME, and a logon on a
        locked account counts no failed logon."""
        if every <= 0:
            return None
        with self._lock:
            e = self._entry(user, dsn, database)[1]
            if e is None or not is_locked(str(e.get("reason") or "")):
                return None
            since = float(e.get("since") or 0.0)
        return since if self.clock() - since >= every else None

    def grant_retry(self, user: str | None, dsn: str | None, database: str | None = None) -> bool:
        """SIGHUP: may the database try its refused password once more? At most SIGHUP_RETRIES
        times per SIGHUP_WINDOW_SECONDS for one refused password."""
        with self._lock:
            e = self._entry(user, dsn, database)[1]
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


def is_locked(reason: str) -> bool:
    """A refusal for ORA-28000 (account locked), as the driver or a listener words it."""
    from .ora_errors import entry
    found = entry(reason)
    return found is not None and found.code == "ORA-28000"


def shared_logons(databases) -> list[str]:
    """One warning per account (user, dsn) that several configured databases log on as: each keeps
    its own refusal (one failed logon per wrong password each, the account's FAILED_LOGIN_ATTEMPTS
    counts them together) and the database is monitored twice."""
    groups: dict[tuple[str, str], list[str]] = {}
    for db in databases:
        if getattr(db, "external_auth", False) or not db.user:
            continue
        groups.setdefault((db.user.upper(), db.dsn), []).append(db.name)
    return [f"databases {', '.join(names)} all log on as {user} to {dsn}: one database monitored "
            f"{len(names)} times; each entry keeps its own refused password (a wrong password costs one "
            f"failed logon per entry, counted together towards the account's FAILED_LOGIN_ATTEMPTS)"
            for (user, dsn), names in groups.items() if len(names) > 1]
