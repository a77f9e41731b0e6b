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

Bounded cardinality: per instance at most ``session_events_max`` events
(setting, default 15) get their own series, chosen by the number of waiting
sessions, then by the longest wait; the key events (``histogram_events``:
log file sync, log buffer space, log file switch ... ) always get theirs while
sessions wait on them. Every other waiting session is counted under
``event="other", wait_class="other"``. Idle events (WAIT_CLASS 'Idle') are
never exported.
"""
from __future__ import annotations

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
    ), doc='One statement per scrape selects the sessions that are ACTIVE or in a non-idle wait (`STATUS = \'ACTIVE\' OR (STATE = \'WAITING\' AND WAIT_CLASS <> \'Idle\')`), leaving out the exporter\'s own session; the rows (`INST_ID, SID, TYPE, STATUS, STATE, EVENT, WAIT_CLASS, WAIT_TIME_MICRO, BLOCKING_SESSION_STATUS, BLOCKING_INSTANCE, BLOCKING_SESSION`) are aggregated in Python. These are samples of *waits in progress*: unlike GV$SYSTEM_EVENT they see a hang (LGWR stuck: no \'log file sync\' wait completes, but 40 sessions sit in one). Idle events (WAIT_CLASS \'Idle\') are never exported.\n\nCardinality: per instance at most `session_events_max` events (config, default 15) get their own `oracle_sessions_waiting*` series, ranked by waiting sessions, then longest wait; the key events of `histogram_events` (log file sync, log buffer space, log file switch completion, log file switch (checkpoint incomplete), ...) always get theirs while sessions wait on them. All other waiting sessions are counted under `event="other", wait_class="other"` (with the longest of their waits). Series exist only while sessions wait: absent means none.\n\nPromQL: commit stall (issue 12) = `max by (database, inst_id) (oracle_sessions_waiting_longest_seconds{event=~"log file sync|log file switch.*|log buffer space"}) > 30`; on-CPU share = `oracle_sessions_active{wait_class="CPU"} / ignoring(wait_class) sum without (wait_class) (oracle_sessions_active)`.', title='Sessions now')
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
    yield from emit([act, wait, longest, nblocked, blongest])
