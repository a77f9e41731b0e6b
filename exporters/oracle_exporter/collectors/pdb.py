"""Per-PDB statistics, waits, commit latency histograms and metrics, from one connection
to CDB$ROOT (opt-in: ``collectors: {pdb: true}``).

Read from the container views (12.2+): GV$CON_SYS_TIME_MODEL, GV$CON_SYSSTAT,
GV$CON_SYSTEM_EVENT, GV$CON_EVENT_HISTOGRAM_MICRO and GV$CON_SYSMETRIC (the PDB 60-second
metric group), with the ``pdb`` label from V$CONTAINERS.NAME. Queried from CDB$ROOT they
return a row per container (CON_ID 1 = CDB$ROOT, 3+ = the PDBs); from a PDB only that
PDB's rows; from a non-CDB only CON_ID 0, which this collector leaves to the
instance-level collectors (it exports nothing there). PDB$SEED (CON_ID 2) is skipped.

Families (labels ``inst_id``, ``pdb``):

* ``oracle_pdb_db_time_seconds_total``, ``oracle_pdb_db_cpu_seconds_total`` (time model, us);
* ``oracle_pdb_user_commits_total``, ``oracle_pdb_user_calls_total``,
  ``oracle_pdb_executions_total``, ``oracle_pdb_logical_reads_total`` (blocks),
  ``oracle_pdb_physical_reads_total`` (blocks), ``oracle_pdb_redo_bytes_total``;
* ``oracle_pdb_wait_event_waits_total`` / ``oracle_pdb_wait_event_time_seconds_total``
  ``{event, wait_class}``: non-Idle events, the ``pdb_wait_events_max`` (default 25) with the
  most time waited per PDB and instance;
* ``oracle_pdb_wait_event_latency_seconds{event}``: histogram of the ``pdb_histogram_events``
  (default log file sync and db file sequential read), buckets as the instance-level one
  (wait_events.py), ``_sum`` from GV$CON_SYSTEM_EVENT;
* ``oracle_pdb_average_active_sessions`` (GV$CON_SYSMETRIC 'Average Active Sessions').

Bounded: ``pdbs`` (allow-list of names, default every PDB and CDB$ROOT) and
``pdb_series_max`` (default 5000 series per database): when the PDBs would need more, whole
PDBs are left out, those with the least DB time first, and ``oracle_pdbs_omitted{inst_id}``
says how many. A PDB keeps all of its series or none, so no PDB shows half a picture.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..views import CON_HISTOGRAM, CON_SYSMETRIC, CON_SYSSTAT, CON_SYSTEM_EVENT, CON_TIME_MODEL
from ._common import emit, inst, num, text
from ._health import con_id
from .defaults import DEFAULT_PDB_HISTOGRAM_EVENTS
from .tablespaces import CONTAINERS, container_names
from .wait_events import MICRO, cumulative_buckets

_PDB = ("inst_id", "pdb")
_PDB_EVENT = ("inst_id", "pdb", "event", "wait_class")
SPEC = Collector(
    "pdb", "Per-PDB DB time, statistics, non-Idle waits, latency histograms and AAS from one CDB$ROOT "
           "connection (GV$CON_* views, 12.2+).",
    reads=(CON_TIME_MODEL.name, CON_SYSSTAT.name, CON_SYSTEM_EVENT.name, CON_HISTOGRAM.name, CON_SYSMETRIC.name,
           CONTAINERS.name),
    opt_in=True,          # off unless the config switches it on (collectors: {pdb: true})
    settings=(
        Setting("pdbs", [], "only these PDBs (case-blind; empty: every PDB and CDB$ROOT)", kind="names",
                doc_default="(every PDB)"),
        Setting("pdb_series_max", 5000, "series per database; beyond it whole PDBs are left out, least DB time "
                "first, and oracle_pdbs_omitted counts them (0: no limit)", kind="int", minimum=0),
        Setting("pdb_wait_events_max", 25, "non-Idle events per PDB and instance, most time waited first",
                kind="int", minimum=0),
        Setting("pdb_histogram_events", DEFAULT_PDB_HISTOGRAM_EVENTS, "events with a latency histogram per PDB",
                kind="names"),
    ),
    metrics=(
        Family("oracle_pdb_db_time_seconds_total", "counter",
               "DB time of the PDB, seconds (GV$CON_SYS_TIME_MODEL 'DB time').", _PDB,
               source="GV$CON_SYS_TIME_MODEL 'DB time'", since="12.2"),
        Family("oracle_pdb_db_cpu_seconds_total", "counter",
               "Foreground CPU of the PDB, seconds (GV$CON_SYS_TIME_MODEL 'DB CPU').", _PDB,
               source="GV$CON_SYS_TIME_MODEL 'DB CPU'", since="12.2"),
        Family("oracle_pdb_user_commits_total", "counter", "Commits in the PDB (GV$CON_SYSSTAT 'user commits').",
               _PDB, source="GV$CON_SYSSTAT 'user commits'", since="12.2", measure='commits'),
        Family("oracle_pdb_user_calls_total", "counter", "User calls in the PDB ('user calls').", _PDB,
               source="'user calls'", since="12.2", measure='calls'),
        Family("oracle_pdb_executions_total", "counter", "SQL executions in the PDB ('execute count').", _PDB,
               source="'execute count'", since="12.2", measure='executions'),
        Family("oracle_pdb_logical_reads_total", "counter",
               "Logical reads in the PDB, blocks ('session logical reads').", _PDB,
               source="'session logical reads'", since="12.2", measure='blocks'),
        Family("oracle_pdb_physical_reads_total", "counter", "Physical reads in the PDB, blocks ('physical reads').",
               _PDB, source="'physical reads'", since="12.2", measure='blocks'),
        Family("oracle_pdb_redo_bytes_total", "counter", "Redo generated in the PDB, bytes ('redo size').", _PDB,
               source="'redo size'", since="12.2"),
        Family("oracle_pdb_wait_event_waits_total", "counter",
               "Waits per non-Idle event in the PDB (GV$CON_SYSTEM_EVENT).", _PDB_EVENT,
               source='GV$CON_SYSTEM_EVENT.TOTAL_WAITS (Idle class left out in SQL)', since="12.2", measure='waits'),
        Family("oracle_pdb_wait_event_time_seconds_total", "counter",
               "Time waited per non-Idle event in the PDB, seconds (GV$CON_SYSTEM_EVENT.TIME_WAITED_MICRO/1e6).",
               _PDB_EVENT, source='TIME_WAITED_MICRO / 1e6', since="12.2"),
        Family("oracle_pdb_average_active_sessions", "gauge", "Average active sessions of the PDB over the last 60 s "
                                                             "(GV$CON_SYSMETRIC 'Average Active Sessions').", _PDB,
               source="GV$CON_SYSMETRIC 'Average Active Sessions' (60 s)", since="12.2", measure='sessions'),
        Family("oracle_pdb_wait_event_latency_seconds", "histogram",
               "Wait latency histogram per PDB of the pdb_histogram_events, seconds (GV$CON_EVENT_HISTOGRAM_MICRO made "
               "cumulative); _sum from GV$CON_SYSTEM_EVENT.", ("inst_id", "pdb", "event"),
               source='GV$CON_EVENT_HISTOGRAM_MICRO made cumulative (buckets as `oracle_wait_event_latency_seconds`); `_sum` from GV$CON_SYSTEM_EVENT', since="12.2"),
        Family("oracle_pdbs_omitted", "gauge", "PDBs of an instance left out of the per-PDB series because "
                                               "pdb_series_max would be exceeded (least DB time first); absent when "
                                               "none was.", ("inst_id",), measure='PDBs', source='PDBs left out by `pdb_series_max`; absent when none was'),
    ), doc='Off unless `collectors: {pdb: true}`. From CDB$ROOT a series per container (`pdb` = V$CONTAINERS.NAME: CDB$ROOT and each PDB; PDB$SEED never), from a PDB that PDB\'s only, from a non-CDB none. Bounded by `pdbs` (allow-list), `pdb_wait_events_max` (default 25 non-Idle events per PDB, most time waited), `pdb_histogram_events` (default log file sync, db file sequential read) and `pdb_series_max` (default 5000 per database: beyond it whole PDBs are left out, least DB time first).\n\nCommit latency per PDB: `histogram_quantile(0.99, sum by (le, pdb) (rate(oracle_pdb_wait_event_latency_seconds_bucket{event="log file sync"}[5m])))`.', title='Per PDB')
NAME, VIEWS = SPEC.name, SPEC.reads
DEFAULT_PDB_WAIT_EVENTS_MAX = SPEC.default("pdb_wait_events_max")
DEFAULT_PDB_SERIES_MAX = SPEC.default("pdb_series_max")

# metric, source name, scale
TIME_STATS = (
    ("oracle_pdb_db_time_seconds_total", "DB time", 1e-6),
    ("oracle_pdb_db_cpu_seconds_total", "DB CPU", 1e-6),
)
STATS = (
    ("oracle_pdb_user_commits_total", "user commits", 1.0),
    ("oracle_pdb_user_calls_total", "user calls", 1.0),
    ("oracle_pdb_executions_total", "execute count", 1.0),
    ("oracle_pdb_logical_reads_total", "session logical reads", 1.0),
    ("oracle_pdb_physical_reads_total", "physical reads", 1.0),
    ("oracle_pdb_redo_bytes_total", "redo size", 1.0),
)
METRICS = (
    ("oracle_pdb_average_active_sessions", "Average Active Sessions"),
)


def pdb_histogram_events(settings: Any) -> list[str]:
    value = getattr(settings, "pdb_histogram_events", None)
    return list(DEFAULT_PDB_HISTOGRAM_EVENTS if value is None else value)


NAMES = {CON_TIME_MODEL.name: tuple(s for _, s, _ in TIME_STATS), CON_SYSSTAT.name: tuple(s for _, s, _ in STATS),
         CON_HISTOGRAM.name: pdb_histogram_events, CON_SYSMETRIC.name: tuple(s for _, s in METRICS)}

Key = tuple[str, int]      # (inst_id, CON_ID)


def _by_container(rows: Iterable[dict[str, Any]], name_col: str) -> dict[Key, dict[str, float]]:
    out: dict[Key, dict[str, float]] = defaultdict(dict)
    for row in rows:
        i, cid, name, value = inst(row), con_id(row), row.get(name_col), num(row.get("VALUE"))
        if i is not None and name is not None and value is not None:
            out[(i, cid)][str(name)] = value
    return out


class _PdbSeries:
    """The samples of one (instance, PDB), kept together so a PDB is exported whole or not at all."""

    def __init__(self) -> None:
        self.samples: list[tuple[str, list[str], float]] = []
        self.histograms: list[tuple[str, list[tuple[str, float]], float]] = []
        self.db_time = 0.0

    @property
    def count(self) -> int:
        return len(self.samples) + sum(len(b) + 2 for _, b, _ in self.histograms)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    names = container_names(snapshot)
    allowed = {str(p).upper() for p in (getattr(settings, "pdbs", None) or ())}

    def pdb_name(cid: int) -> str | None:
        if cid in (0, 2):                  # non-CDB rows (instance collectors have them) and PDB$SEED
            return None
        name = names.get(cid, str(cid))
        return name if not allowed or name.upper() in allowed else None

    per: dict[Key, _PdbSeries] = defaultdict(_PdbSeries)

    def series(key: Key) -> _PdbSeries | None:
        return per[key] if pdb_name(key[1]) is not None else None

    for key, values in _by_container(snapshot.rows(CON_TIME_MODEL.name), "STAT_NAME").items():
        if (s := series(key)) is not None:
            s.db_time = values.get("DB time", 0.0)
            s.samples += [(metric, [], values[src] * scale) for metric, src, scale in TIME_STATS if src in values]
    for key, values in _by_container(snapshot.rows(CON_SYSSTAT.name), "NAME").items():
        if (s := series(key)) is not None:
            s.samples += [(metric, [], values[src] * scale) for metric, src, scale in STATS if src in values]
    for key, values in _by_container(snapshot.rows(CON_SYSMETRIC.name), "METRIC_NAME").items():
        if (s := series(key)) is not None:
            s.samples += [(metric, [], values[src]) for metric, src in METRICS if src in values]

    waits: dict[Key, dict[tuple[str, str], list[float]]] = defaultdict(dict)
    for row in snapshot.rows(CON_SYSTEM_EVENT.name):
        i, cid, event = inst(row), con_id(row), row.get("EVENT")
        total, micro = num(row.get("TOTAL_WAITS")), num(row.get("TIME_WAITED_MICRO"))
        if (i is None or event is None or text(row.get("WAIT_CLASS")) == "Idle" or total is None or micro is None
                or total < 0 or micro < 0 or series((i, cid)) is None):
            continue
        waits[(i, cid)][(str(event), text(row.get("WAIT_CLASS")))] = [total, micro]
    limit = int(getattr(settings, "pdb_wait_events_max", DEFAULT_PDB_WAIT_EVENTS_MAX))
    time_by_event: dict[tuple[str, int, str], float] = {}
    for key, events in waits.items():
        for event, wait_class in sorted(events, key=lambda e: (-events[e][1], e))[:limit or None]:
            total, micro = events[(event, wait_class)]
            per[key].samples += [("oracle_pdb_wait_event_waits_total", [event, wait_class], total),
                                 ("oracle_pdb_wait_event_time_seconds_total", [event, wait_class], micro / 1e6)]
        for (event, _), (_, micro) in events.items():
            time_by_event[(key[0], key[1], event)] = micro

    wanted = set(pdb_histogram_events(settings))
    buckets: dict[tuple[str, int, str], list[tuple[float, float]]] = defaultdict(list)
    for row in snapshot.rows(CON_HISTOGRAM.name):
        i, cid, event = inst(row), con_id(row), row.get("EVENT")
        bound, count = num(row.get("WAIT_TIME_MICRO")), num(row.get("WAIT_COUNT"))
        if (i is None or event is None or str(event) not in wanted or bound is None or count is None or count < 0
                or bound <= 0 or series((i, cid)) is None):
            continue
        buckets[(i, cid, str(event))].append((bound, count))
    _, _, scale, ladder = MICRO
    for (i, cid, event), pairs in sorted(buckets.items()):
        if (i, cid, event) in time_by_event:         # _sum from GV$CON_SYSTEM_EVENT, as the instance histogram
            per[(i, cid)].histograms.append((event, cumulative_buckets(pairs, ladder, scale),
                                             time_by_event[(i, cid, event)] / 1e6))

    cap = int(getattr(settings, "pdb_series_max", DEFAULT_PDB_SERIES_MAX))
    order = sorted(per, key=lambda k: (-per[k].db_time, k))
    kept, used = [], 0
    omitted: dict[str, int] = defaultdict(int)
    for key in order:
        n = per[key].count
        if cap and used + n > cap:
            omitted[key[0]] += 1
            continue
        kept.append(key)
        used += n

    families: dict[str, Metric] = {}
    hist = SPEC.family("oracle_pdb_wait_event_latency_seconds")
    for key in sorted(kept):
        pdb = pdb_name(key[1]) or ""
        for metric, extra, value in per[key].samples:
            if metric not in families:
                families[metric] = SPEC.family(metric)
            families[metric].add_metric([key[0], pdb, *extra], value)
        for event, cum, total in per[key].histograms:
            hist.add_metric([key[0], pdb, event], cum, total)
    left_out = SPEC.family("oracle_pdbs_omitted")
    for i, n in sorted(omitted.items()):
        left_out.add_metric([i], n)
    ordered = [families[m] for m, *_ in TIME_STATS + STATS if m in families]
    ordered += [families[m] for m in ("oracle_pdb_wait_event_waits_total", "oracle_pdb_wait_event_time_seconds_total")
                if m in families]
    ordered += [families[m] for m, *_ in METRICS if m in families]
    yield from emit([*ordered, hist, left_out])
