"""Sessions now: what is on CPU, what is stuck in which wait, who is blocked (GV$SESSION).

Averages of completed waits (GV$SYSTEM_EVENT) cannot see a hang: while LGWR is
stuck no 'log file sync' wait completes. GV$SESSION shows the waits in
progress. One statement per scrape selects the sessions that are ACTIVE or in a
non-idle wait (contract "Sessions and instance health"); everything else
happens here, on the rows:

* ``oracle_sessions_active{inst_id, wait_class}``: user (foreground) sessions
  with STATUS 'ACTIVE' that are on CPU (STATE other than 'WAITING': the last
  wait has ended; wait_class ``CPU``) or waiting on a non-idle event (the
  event's WAIT_CLASS). Sampled each scrape, it is the average-active-sessions
  profile of ASH and comparable with DB time / elapsed (background sessions are
  left out as DB time leaves them out). ``CPU`` is always exported, 0 included.
* ``oracle_sessions_waiting{inst_id, event, wait_class}``: sessions of any type
  (LGWR and the other background processes included) with STATE 'WAITING' on a
  non-idle event; ``oracle_sessions_waiting_longest_seconds`` is the longest
  of those waits so far (WAIT_TIME_MICRO / 1e6: the time spent in the current
  wait).
* ``oracle_sessions_blocked{inst_id}``: sessions with BLOCKING_SESSION_STATUS
  'VALID' (a known blocker holds what they wait for);
  ``oracle_sessions_blocked_longest_seconds{inst_id}`` the longest such wait.
  Both exported for every instance, 0 when nothing is blocked.
* ``oracle_sessions_blocked_by{inst_id, blocker_kind}`` /
  ``oracle_sessions_blocked_by_longest_seconds``: the same, split by what blocks
  (the immediate blocker, BLOCKING_INSTANCE/BLOCKING_SESSION): ``user`` (a user
  session: row lock, enqueue), ``lgwr``, ``ckpt``, ``dbwr``, ``arch`` (those
  background processes: a commit waiting on LGWR, a log switch on the archiver),
  ``background`` (another one). The blocker's row says it (TYPE, PROGRAM
  "oracle@host (LGWR)"); the statement reads every background session and every
  session holding a transaction, so a blocker without a row is a user session,
  unless the blocked session waits on a redo event (a recording made before the
  blockers' rows were read: 'log file sync' is LGWR's). ``user`` is exported for
  every instance, 0 included.
* ``oracle_session_blocker_blocked_sessions{inst_id, sid, serial, username,
  program, blocker_kind}`` / ``oracle_session_blocker_blocked_longest_seconds``:
  the root blockers (FINAL_BLOCKING_*, 11.2+; else the immediate blocker) with
  how many sessions they hold up and the longest of those waits. Bounded: only
  blockers whose victims have waited at least ``session_blocker_min_wait_seconds``
  (setting, default 10 s), at most ``session_blockers_max`` (default 5) of them,
  most victims first. ``inst_id`` is the blocker's instance.

Bounded cardinality: per instance at most ``session_events_max`` events
(setting, default 15) get their own series, chosen by the number of waiting
sessions, then by the longest wait; the key events (``histogram_events``:
log file sync, log buffer space, log file switch ... ) always get theirs while
sessions wait on them. Every other waiting session is counted under
``event="other", wait_class="other"``. Idle events (WAIT_CLASS 'Idle') are
never exported.
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..views import SESSION
from ._common import emit, inst, num, sorted_inst
from ._health import clean
from .defaults import histogram_events

_EVENT = ("inst_id", "event", "wait_class")
SPEC = Collector(
    "sessions", "Sessions now: on CPU, waiting on which event, blocked (GV$SESSION, sampled each scrape).",
    reads=(SESSION.name,),
    settings=(
        Setting("session_events_max", 15, "events per instance with their own oracle_sessions_waiting* series "
                "(most sessions first; the histogram_events always); the rest are summed as event=\"other\"",
                kind="int", minimum=0),
        Setting("session_blockers_max", 5, "root blockers exported with oracle_session_blocker_* (most blocked "
                "sessions first)", kind="int", minimum=0),
        Setting("session_blocker_min_wait_seconds", 10.0, "a root blocker is exported only when one of the "
                "sessions it blocks has waited at least this long (seconds)", kind="number", minimum=0),
    ),
    metrics=(
        Family("oracle_sessions_active", "gauge",
               "User sessions active now by wait class, CPU when on CPU (GV$SESSION STATUS 'ACTIVE', idle waits "
               "excluded; sampled each scrape).", ("inst_id", "wait_class"), source='user sessions (TYPE \'USER\') with STATUS \'ACTIVE\': on CPU (STATE not \'WAITING\') as `wait_class="CPU"`, else by the WAIT_CLASS of their non-idle wait. A sampled average-active-sessions profile, comparable with `oracle_average_active_sessions` (DB time based, so background sessions are left out here too). `CPU` is always exported (0 included), other classes while sessions are in them', measure='sessions'),
        Family("oracle_sessions_waiting", "gauge",
               "Sessions (background included) waiting now on a non-idle event (GV$SESSION STATE 'WAITING'); "
               "top events only, the rest as event=\"other\".", _EVENT, source="sessions of any type (LGWR, DBWn ... included) with STATE 'WAITING' on a non-idle event, per event; top events only (below)", measure='sessions'),
        Family("oracle_sessions_waiting_longest_seconds", "gauge",
               "Longest wait in progress on the event, seconds (max GV$SESSION.WAIT_TIME_MICRO / 1e6).", _EVENT,
               source='longest wait in progress on that event: max WAIT_TIME_MICRO / 1e6 (11.1+) of those sessions', since="11.1"),
        Family("oracle_sessions_blocked", "gauge",
               "Sessions blocked by another session now (GV$SESSION BLOCKING_SESSION_STATUS 'VALID').", ("inst_id",),
               source="sessions with BLOCKING_SESSION_STATUS 'VALID' (a known session holds what they wait for); 0 when none, for every instance", measure='sessions'),
        Family("oracle_sessions_blocked_longest_seconds", "gauge",
               "Longest wait of a blocked session so far, seconds (0 when none is blocked).", ("inst_id",),
               source='longest current wait of a blocked session (WAIT_TIME_MICRO / 1e6); 0 when none'),
        Family("oracle_sessions_blocked_by", "gauge",
               "Sessions blocked now by what blocks them: user (a user session: row lock, enqueue), lgwr, ckpt, "
               "dbwr, arch or background (another background process).", ("inst_id", "blocker_kind"),
               source="sessions with BLOCKING_SESSION_STATUS 'VALID' by the immediate blocker's kind: its row's TYPE "
                      "and PROGRAM (`oracle@host (LGWR)`); a blocker without a row is a user session (the statement "
                      "reads every background session and every transaction holder) unless the blocked session waits "
                      "on a redo event; `user` exported for every instance, 0 included", measure='sessions'),
        Family("oracle_sessions_blocked_by_longest_seconds", "gauge",
               "Longest wait of a session blocked by that kind of blocker, seconds.", ("inst_id", "blocker_kind"),
               source="longest WAIT_TIME_MICRO / 1e6 of the sessions of oracle_sessions_blocked_by; 0 for `user` "
                      "when none"),
        Family("oracle_session_blocker_blocked_sessions", "gauge",
               "Sessions a root blocker holds up now (top blockers only, see session_blockers_max).",
               ("inst_id", "sid", "serial", "username", "program", "blocker_kind"),
               source="sessions whose FINAL_BLOCKING_INSTANCE/SESSION (11.2+; else the immediate blocker) is this "
                      "session; only blockers whose victims waited at least `session_blocker_min_wait_seconds` "
                      "(default 10 s), the `session_blockers_max` (default 5) with most victims; serial, username "
                      "and program from the blocker's own row (empty when it has none); inst_id is the blocker's",
               measure='sessions', since="11.2"),
        Family("oracle_session_blocker_blocked_longest_seconds", "gauge",
               "Longest wait of a session held up by that root blocker, seconds.",
               ("inst_id", "sid", "serial", "username", "program", "blocker_kind"),
               source="longest WAIT_TIME_MICRO / 1e6 of the blocker's victims (same series as "
                      "oracle_session_blocker_blocked_sessions)", since="11.2"),
    ), doc='One statement per scrape selects the sessions that are ACTIVE or in a non-idle wait (`STATUS = \'ACTIVE\' OR (STATE = \'WAITING\' AND WAIT_CLASS <> \'Idle\')`), leaving out the exporter\'s own session; the rows (`INST_ID, SID, TYPE, STATUS, STATE, EVENT, WAIT_CLASS, WAIT_TIME_MICRO, BLOCKING_SESSION_STATUS, BLOCKING_INSTANCE, BLOCKING_SESSION`) are aggregated in Python. These are samples of *waits in progress*: unlike GV$SYSTEM_EVENT they see a hang (LGWR stuck: no \'log file sync\' wait completes, but 40 sessions sit in one). Idle events (WAIT_CLASS \'Idle\') are never exported.\n\nCardinality: per instance at most `session_events_max` events (config, default 15) get their own `oracle_sessions_waiting*` series, ranked by waiting sessions, then longest wait; the key events of `histogram_events` (log file sync, log buffer space, log file switch completion, log file switch (checkpoint incomplete), ...) always get theirs while sessions wait on them. All other waiting sessions are counted under `event="other", wait_class="other"` (with the longest of their waits). Series exist only while sessions wait: absent means none.\n\nWho blocks (issue 22): besides those sessions the statement reads every background session and every session holding a transaction (`OR TYPE = \'BACKGROUND\' OR TADDR IS NOT NULL`; columns `SERIAL#, USERNAME, PROGRAM, FINAL_BLOCKING_SESSION_STATUS, FINAL_BLOCKING_INSTANCE, FINAL_BLOCKING_SESSION` added after the contracted ones), so that a blocker\'s own row is there: `oracle_sessions_blocked_by{blocker_kind}` tells a row lock held by a user session (`user`) from a commit waiting on LGWR (`lgwr`), a log switch on the archiver (`arch`) or a checkpoint (`ckpt`, `dbwr`); OracleSessionsBlocked judges `user` only. The root blockers (FINAL_BLOCKING_*) are exported with their SID, SERIAL#, USERNAME and PROGRAM, bounded: `session_blockers_max` (default 5) of those whose victims waited at least `session_blocker_min_wait_seconds` (default 10 s).\n\nPromQL: commit stall (issue 12) = `max by (database, inst_id) (oracle_sessions_waiting_longest_seconds{event=~"log file sync|log file switch.*|log buffer space"}) > 30`; on-CPU share = `oracle_sessions_active{wait_class="CPU"} / ignoring(wait_class) sum without (wait_class) (oracle_sessions_active)`.', title='Sessions now')
NAME, VIEWS = SPEC.name, SPEC.reads

DEFAULT_EVENTS_MAX = SPEC.default("session_events_max")
OTHER = "other"
IDLE = "idle"


def events_max(settings: Any) -> int:
    value = getattr(settings, "session_events_max", None)
    return DEFAULT_EVENTS_MAX if value is None else max(0, int(value))


def _waiting(row: dict[str, Any]) -> bool:
    return clean(row.get("STATE")).upper() == "WAITING"


def _idle(row: dict[str, Any]) -> bool:
    return clean(row.get("WAIT_CLASS")).lower() == IDLE


def _seconds(row: dict[str, Any]) -> float:
    micro = num(row.get("WAIT_TIME_MICRO"))
    return max(0.0, micro / 1e6) if micro is not None else 0.0


def summarize(rows: Iterable[dict[str, Any]], key_events: Iterable[str] = (), limit: int = DEFAULT_EVENTS_MAX):
    """Aggregate GV$SESSION rows: returns (active, waiting, blocked, instances) where
    active = {inst: {wait_class: n}}, waiting = {inst: {(event, wait_class): [n, longest_s]}}
    (already cut to ``limit`` events plus the key events, the rest under ("other", "other")),
    blocked = {inst: [n, longest_s]}, instances = every inst_id seen."""
    active: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    waits: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(dict)
    blocked: dict[str, list[float]] = {}
    seen: set[tuple[str, Any]] = set()
    instances: set[str] = set()
    for row in rows:
        i = inst(row)
        if i is None:
            continue
        instances.add(i)
        sid = num(row.get("SID"))
        if sid is not None:                 # a session listed twice (per container) counts once
            if (i, sid) in seen:
                continue
            seen.add((i, sid))
        waiting = _waiting(row)
        if waiting and _idle(row):
            continue
        wait_class = clean(row.get("WAIT_CLASS")) or "Other"
        if clean(row.get("STATUS")).upper() == "ACTIVE" and clean(row.get("TYPE")).upper() != "BACKGROUND":
            active[i]["CPU" if not waiting else wait_class] += 1
        if waiting:
            event = clean(row.get("EVENT"))
            if event:
                slot = waits[i].setdefault((event, wait_class), [0, 0.0])
                slot[0] += 1
                slot[1] = max(slot[1], _seconds(row))
            if clean(row.get("BLOCKING_SESSION_STATUS")).upper() == "VALID":
                b = blocked.setdefault(i, [0, 0.0])
                b[0] += 1
                b[1] = max(b[1], _seconds(row))
    keys = set(key_events)
    waiting: dict[str, dict[tuple[str, str], list[float]]] = {}
    for i, events in waits.items():
        ranked = sorted(events, key=lambda k: (-events[k][0], -events[k][1], k))
        kept = [k for k in ranked if k[0] in keys]
        kept += [k for k in ranked if k[0] not in keys][:max(0, limit - len(kept))]
        out = {k: list(events[k]) for k in kept}
        rest = [events[k] for k in ranked if k not in out]
        if rest:
            out[(OTHER, OTHER)] = [sum(r[0] for r in rest), max(r[1] for r in rest)]
        waiting[i] = out
    return ({i: dict(v) for i, v in active.items()}, waiting, blocked, instances)


USER = "user"
KINDS = (USER, "lgwr", "ckpt", "dbwr", "arch", "background")
DEFAULT_BLOCKERS_MAX = SPEC.default("session_blockers_max")
DEFAULT_BLOCKER_MIN_WAIT = SPEC.default("session_blocker_min_wait_seconds")
# events a session waits on for a background process (the kind when the blocker's row is missing)
REDO_EVENT_KIND = (("log file switch (archiving needed)", "arch"), ("log file switch (checkpoint incomplete)", "ckpt"),
                   ("log file sync", "lgwr"), ("log buffer space", "lgwr"), ("log file switch", "lgwr"))
_PNAME = re.compile(r"\(([A-Z0-9]+)\)\s*$")


def background_kind(program: str) -> str:
    """lgwr / ckpt / dbwr / arch / background from PROGRAM ("oracle@db1 (LGWR)")."""
    m = _PNAME.search(program.upper())
    name = m.group(1) if m else ""
    if name == "LGWR" or re.fullmatch(r"LG\d\d", name):
        return "lgwr"
    if name == "CKPT":
        return "ckpt"
    if re.fullmatch(r"DBW[0-9A-Z]|BW\d\d", name):
        return "dbwr"
    if re.fullmatch(r"ARC[0-9A-Z]", name):
        return "arch"
    return "background"


def _key(i: Any, sid: Any) -> tuple[str, int] | None:
    i, sid = num(i), num(sid)
    return None if i is None or sid is None else (str(int(i)), int(sid))


def blocker_kind(blocker: dict[str, Any] | None, blocked: dict[str, Any]) -> str:
    if blocker is not None:
        if clean(blocker.get("TYPE")).upper() == "BACKGROUND":
            return background_kind(clean(blocker.get("PROGRAM")))
        return USER
    event = clean(blocked.get("EVENT")).lower()
    return next((kind for prefix, kind in REDO_EVENT_KIND if event.startswith(prefix)), USER)


def blockers(rows: Iterable[dict[str, Any]], min_wait: float = DEFAULT_BLOCKER_MIN_WAIT,
             limit: int = DEFAULT_BLOCKERS_MAX):
    """Who blocks: returns (by_kind, top) where by_kind = {inst: {kind: [n, longest_s]}} (the
    blocked session's instance, immediate blocker) and top = [(blocker labels, n, longest_s)] of at
    most ``limit`` root blockers whose victims waited at least ``min_wait`` seconds."""
    rows = list(rows)
    by_sid: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        k = _key(row.get("INST_ID"), row.get("SID"))
        if k is not None:
            by_sid.setdefault(k, row)
    by_kind: dict[str, dict[str, list[float]]] = defaultdict(dict)
    roots: dict[tuple[str, int], list[Any]] = {}
    for k, row in by_sid.items():
        if not _waiting(row) or clean(row.get("BLOCKING_SESSION_STATUS")).upper() != "VALID":
            continue
        secs = _seconds(row)
        b = _key(row.get("BLOCKING_INSTANCE"), row.get("BLOCKING_SESSION"))
        kind = blocker_kind(by_sid.get(b) if b else None, row)
        slot = by_kind[k[0]].setdefault(kind, [0, 0.0])
        slot[0] += 1
        slot[1] = max(slot[1], secs)
        root = b
        if clean(row.get("FINAL_BLOCKING_SESSION_STATUS")).upper() == "VALID":
            root = _key(row.get("FINAL_BLOCKING_INSTANCE"), row.get("FINAL_BLOCKING_SESSION")) or b
        if root is None:
            continue
        r = roots.setdefault(root, [0, 0.0, None])
        r[0] += 1
        r[1] = max(r[1], secs)
        if root == b:
            r[2] = kind
    top = []
    for root, (n, secs, kind) in roots.items():
        if secs < min_wait:
            continue
        row = by_sid.get(root)
        if row is not None:
            kind = (background_kind(clean(row.get("PROGRAM"))) if clean(row.get("TYPE")).upper() == "BACKGROUND"
                    else USER)
        serial = num(row.get("SERIAL#")) if row is not None else None
        labels = (root[0], str(root[1]), "" if serial is None else str(int(serial)),
                  clean(row.get("USERNAME")) if row is not None else "",
                  clean(row.get("PROGRAM")) if row is not None else "", kind or USER)
        top.append((labels, n, secs))
    top.sort(key=lambda t: (-t[1], -t[2], t[0]))
    return {i: dict(v) for i, v in by_kind.items()}, top[:max(0, limit)]


def blockers_max(settings: Any) -> int:
    value = getattr(settings, "session_blockers_max", None)
    return DEFAULT_BLOCKERS_MAX if value is None else max(0, int(value))


def blocker_min_wait(settings: Any) -> float:
    value = getattr(settings, "session_blocker_min_wait_seconds", None)
    return DEFAULT_BLOCKER_MIN_WAIT if value is None else max(0.0, float(value))


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    if not snapshot.has("GV$SESSION"):
        return
    active, waiting, blocked, instances = summarize(snapshot.rows("GV$SESSION"), histogram_events(settings),
                                                    events_max(settings))
    instances |= {i for i in (inst(r) for r in snapshot.rows("GV$INSTANCE")) if i is not None}
    act = SPEC.family("oracle_sessions_active")
    wait = SPEC.family("oracle_sessions_waiting")
    longest = SPEC.family("oracle_sessions_waiting_longest_seconds")
    nblocked = SPEC.family("oracle_sessions_blocked")
    blongest = SPEC.family("oracle_sessions_blocked_longest_seconds")
    for i in sorted_inst(instances):
        classes = active.get(i, {})
        act.add_metric([i, "CPU"], float(classes.get("CPU", 0)))
        for wc in sorted(c for c in classes if c != "CPU"):
            act.add_metric([i, wc], float(classes[wc]))
        for (event, wc), (n, secs) in sorted(waiting.get(i, {}).items()):
            wait.add_metric([i, event, wc], float(n))
            longest.add_metric([i, event, wc], secs)
        n, secs = blocked.get(i, (0, 0.0))
        nblocked.add_metric([i], float(n))
        blongest.add_metric([i], secs)
    by_kind, top = blockers(snapshot.rows("GV$SESSION"), blocker_min_wait(settings), blockers_max(settings))
    nby = SPEC.family("oracle_sessions_blocked_by")
    lby = SPEC.family("oracle_sessions_blocked_by_longest_seconds")
    for i in sorted_inst(instances | set(by_kind)):
        kinds = by_kind.get(i, {})
        for kind in KINDS:
            if kind in kinds or kind == USER:
                n, secs = kinds.get(kind, (0, 0.0))
                nby.add_metric([i, kind], float(n))
                lby.add_metric([i, kind], secs)
    victims = SPEC.family("oracle_session_blocker_blocked_sessions")
    vlongest = SPEC.family("oracle_session_blocker_blocked_longest_seconds")
    for labels, n, secs in top:
        victims.add_metric(list(labels), float(n))
        vlongest.add_metric(list(labels), secs)
    yield from emit([act, wait, longest, nblocked, blongest, nby, lby, victims, vlongest])
