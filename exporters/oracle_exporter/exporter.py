"""Scrape orchestration: snapshot -> collectors -> labelled metric families.

* Collectors run through exporter_common.runner.CollectorRunner (shared with
  dbhost-exporter): isolation, timing, success, error counts, state-change logs.
* Per database a scrape fetches one snapshot (single-flight: a scrape that
  arrives while a fetch of that database is in flight waits for that fetch and
  uses its result, so concurrent scrapes share one query set), then runs every
  enabled collector on it. A collector that raises loses only its own output.
* Fetches run in a thread pool, one worker per database, so ``/metrics`` fetches
  all databases at the same time; each database has its own deadline and a
  scrape never waits beyond it (the database then reports ``oracle_up 0``).
* Every sample gets ``database`` and the database's extra labels.

Self metrics: oracle_up, oracle_scrape_duration_seconds,
oracle_collector_duration_seconds, oracle_collector_success,
oracle_collector_cache_age_seconds (collectors with a minimum interval),
oracle_scrape_errors_total (collector="fetch" counts failed fetches),
oracle_password_expiring (live sources: the last logon's ORA-28002 warning), and
oracle_exporter_build_info.
"""
from __future__ import annotations

import logging
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Iterable

from prometheus_client.metrics_core import Metric

from exporter_common.exposition import OPENMETRICS, Format, Part, assemble_pieces, format_value, render_parts
from exporter_common.families import RowsCounter, RowsGauge, like, sample_count
from exporter_common.runner import CollectorRunner

from . import __version__
from .collectors.custom_sql import openmetrics_families
from .config import Settings
from .core import SPEC as CORE
from .intervals import collector_age, collector_interval
from .snapshot import Snapshot
from .sources import FAILED, Source, failed_snapshot, failure_reason, is_failed
from .ora_errors import GRANT_CODES, error_code
from .views import get as registered_view, grant_for

log = logging.getLogger(__name__)

FETCH = "fetch"  # oracle_scrape_errors_total{collector="fetch"}: failed fetches
class _Turns:
    """One database rendered at a time: collectors and exposition are pure Python, which the GIL
    runs one thread at a time anyway; hundreds of fetch workers rendering at once only add thread
    switches (measured: a round of 100 replayed databases cost 30 % more CPU than the same renders
    in a row). A scrape's render (``urgent``) goes before a background one; a turn is waited for
    until a deadline at most."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._busy = False
        self._urgent = 0

    def take(self, urgent: bool, deadline: float | None) -> bool:
        with self._cond:
            if urgent:
                self._urgent += 1
            try:
                while self._busy or (not urgent and self._urgent):
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left)
                self._busy = True
                return True
            finally:
                if urgent:
                    self._urgent -= 1

    def give(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()


# Background refresh: a format (text, OpenMetrics) is rendered after every fetch while a scrape asked
# for it in this many seconds (with fetch on scrape: while one asked since the previous fetch).
FORMAT_KEPT_SECONDS = 600.0
FETCH_GRACE = 0.25  # seconds a scrape waits beyond the fetch budget (timeout_seconds) for the fetch's own answer




def missing_grant(view: str, code: str) -> str:
    """The grant a view needs (``SELECT ON SYS.GV_$SESSION``) when its error says it is missing, else "".
    Public synonyms GV$X / V$X point to SYS.GV_$X / SYS.V_$X, which the grant must name."""
    if code not in GRANT_CODES:
        return ""
    return grant_for(view)


def _view_error(view: str, text: str) -> str:
    grant = missing_grant(view, error_code(text))
    return f"{view}: {text}" + (f" (missing grant? GRANT {grant} TO <monitoring user>)" if grant else "")


def view_error_lines(snap: Snapshot) -> list[str]:
    return [_view_error(v, t) for v, t in sorted(snap.errors.items()) if v != "*" and not v.startswith("CUSTOM:")]


def is_blind(snap: Snapshot) -> bool:
    """The database answered but no view could be read: every statement failed (missing grants)."""
    errors = [v for v in snap.errors if v != "*" and not v.startswith("CUSTOM:")]
    read = [v for v in snap.views if not v.startswith("CUSTOM:") and v != "DUAL"]
    return bool(errors) and not read


def failed_views(module: Any, snap: Snapshot) -> set[str]:
    """The views of a collector's reads that failed in the snapshot (a view, or the fallback read
    in its place, named in ``snap.errors``)."""
    out: set[str] = set()
    if not snap.errors:
        return out
    for view in getattr(module, "VIEWS", ()):
        registered = registered_view(view)
        names = {v.name for v in registered.variants()} if registered is not None else {view}
        if (names | {view}) & set(snap.errors):
            out.add(view)
    return out


def isolated(module: Any, snap: Snapshot, families: Iterable[Metric]) -> list[Metric]:
    """Failure isolation per view (issue 22): the families of a collector that are fed by a view
    that failed in this snapshot are removed (their samples would be partial or wrong), every
    other family is kept whole. Which views feed a family is its declaration's ``views``
    (exporter_common.declare.Family; default: every view the collector reads)."""
    failed = failed_views(module, snap)
    spec = getattr(module, "SPEC", None)
    if not failed:
        return list(families)
    if spec is None:
        return []
    return [f for f in families if not failed & set(spec.fed_by(f.name))]


def _out_of_time():
    raise TimeoutError("not run: the scrape's time limit (X-Prometheus-Scrape-Timeout-Seconds) ran out")


def load_collectors() -> dict[str, Any]:
    """The collectors package's COLLECTORS table. A plain import: a broken collector module
    is an error at start (its traceback), never an exporter that silently serves less."""
    from .collectors import COLLECTORS
    return dict(COLLECTORS)


def label_clashes(targets: Iterable["Target"], collectors: dict[str, Any], settings: Any = None) -> list[str]:
    """One warning per extra label of the databases (``labels:``) that is also a label of an enabled
    collector's metric: on that metric's series the collector's value replaces the database's, or
    removes it where the collector's is empty (a ``contents: oltp`` label is not on
    oracle_tablespace_* series, whose ``contents`` is the tablespace's). The custom collector's
    labels count only with custom metrics configured. Not refused: a config that ran before an
    upgrade must still start."""
    owners: dict[str, list[str]] = {}
    for name, mod in collectors.items():
        if name == "custom" and settings is not None and not getattr(settings, "custom_queries", ()):
            continue
        spec = getattr(mod, "SPEC", None)
        for family in getattr(spec, "metrics", ()):
            for label in family.labels:
                owners.setdefault(label, []).append(family.name)
    found: dict[str, list[str]] = {}
    for target in targets:
        for label in target.labels:
            if label in owners:
                found.setdefault(label, []).append(target.name)
    out = []
    for label, dbs in sorted(found.items()):
        shown = ", ".join(sorted(set(owners[label])))
        which = ", ".join(dbs[:3]) + (f" and {len(dbs) - 3} more" if len(dbs) > 3 else "")
        out.append(f"label {label!r} of database(s) {which} is also a label of {shown}: on those series the "
                   f"collector's value replaces the database's (an empty one removes it); rename it "
                   f"(e.g. db_{label}) to keep it everywhere")
    return out


@dataclass
class Target:
    """One monitored database."""

    name: str
    source: Source
    labels: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    min_interval: float = 0.0       # seconds: a fetch started less long ago is reused, not repeated
    inflight: Future | None = field(default=None, repr=False)
    fetches: int = 0
    last: "Fetched | None" = field(default=None, repr=False)   # the last completed fetch
    noted: "Fetched | None" = field(default=None, repr=False)  # the last fetch counted in the self metrics
    last_reason: str = ""           # failure_reason of the most recent failed fetch ("" : none yet)
    render_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    rendered: "Rendered | None" = field(default=None, repr=False)   # the last fetch's exposition
    skipped: bool = False           # the last build left collectors out (scrape time limit)
    renders: int = 0                # times the collectors ran for the rendering path
    stale: "tuple[Fetched, Fetched] | None" = field(default=None, repr=False)   # (frozen fetch, its failed stand-in)
    due: bool = False               # background refresh: its slot came while a fetch ran: fetch again at its end
    inflight_started: float = 0.0
    slots: "tuple[list, list] | None" = field(default=None, repr=False)   # (rendered parts, per-scrape line heads)
    first_failed: "tuple[Future, Fetched] | None" = field(default=None, repr=False)  # (hung first fetch, stand-in)


@dataclass(frozen=True)
class Fetched:
    """A completed fetch: its snapshot and when (time.monotonic) it started and ended (0: not
    recorded, taken as its start)."""
    snapshot: Snapshot
    started: float
    ended: float = 0.0


_COLLECTOR = ("collector",)

# Self metrics whose value moves between two scrapes of the same fetch: written at every scrape.
_PER_SCRAPE = ("oracle_scrape_duration_seconds", "oracle_snapshot_age_seconds")


class Rendered:
    """One fetch of a database rendered: per format requested, its families' sample lines
    (exporter_common.exposition.Part), the per-scrape self metrics left out."""

    __slots__ = ("fetched", "parts", "requested", "cost")

    def __init__(self, fetched: Fetched):
        self.fetched = fetched
        self.cost = 0.0     # seconds from the fetch's start to the end of its rendering (background refresh)
        self.parts: dict[Format, list[Part]] = {}
        self.requested: dict[Format, float] = {}    # format -> when a scrape last asked for it


class _Families:
    """Minimal registry stand-in for prometheus_client's exposition encoders."""

    def __init__(self, families: list[Metric]):
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return iter(self.families)


def _cause(error: str | None) -> str | None:
    """What a failed fetch's log line is deduplicated on: its reason (failure_reason: connection
    refused, logon denied, ...), so the same outage is logged once, not every scrape with a new
    backoff delay or time in its text; an error of no known reason by its text with the numbers
    masked."""
    if error is None:
        return None
    if error.startswith("connected but blind"):
        return "connected but blind"
    reason = failure_reason(error)
    return reason if reason != "other" else "other: " + re.sub(r"\d+(\.\d+)?", "#", error)


def _own_start(fut: Future, fetched: Fetched, started: float) -> float:
    """Where a database's oracle_scrape_duration_seconds is counted from, so that it is that
    database's own time (the wait for its fetch, then its collectors), never the wait for the
    databases before it in the scrape, which are waited for in turn: ``now`` minus the time the
    scrape waited for this database's fetch (until it ended, or until its deadline when it had
    not), minus nothing for a fetch that had ended before the scrape started (reused)."""
    now = time.monotonic()
    if not fut.done() or fut.result() is not fetched:   # not ended by its deadline: waited for all along
        return started
    ended = fetched.ended or fetched.started
    return now - min(max(0.0, ended - started), now - started)


def _done(fetched: Fetched) -> Future:
    """A future that already holds ``fetched``."""
    fut: Future = Future()
    fut.set_result(fetched)
    return fut


def _family(name: str) -> Metric:
    """An empty family of the exporter's own declared metric (oracle_exporter.core)."""
    return CORE.metric(name).empty()


_OWN: dict[tuple[str, tuple[str, ...]], Metric] = {}


def _own(name: str, labels: tuple[str, ...] = ()) -> Metric:
    """An empty family of the exporter's own declared gauge or counter ``name`` keeping its
    samples as rows of ``labels``: the database's labels are not in them (the renderer writes
    them in, ``_relabel`` adds them for the scrape path), as in the collectors' families."""
    proto = _OWN.get((name, labels))
    if proto is None:
        decl = CORE.metric(name)
        cls = RowsCounter if decl.type == "counter" else RowsGauge
        proto = _OWN[(name, labels)] = cls(decl.family_name, decl.help, labels, unit=decl.unit)
    return like(proto)


def _relabel(fam: Metric, base: dict[str, str]) -> None:
    """The database's labels written into every sample of ``fam`` (the scrape path)."""
    # (name, labels, value, timestamp, exemplar, ...): built directly, _replace is slow
    fam.samples = [type(s)(s[0], {**base, **s[1]}, s[2], None, *s[4:]) for s in fam.samples]


def merge(families: Iterable[Metric]) -> list[Metric]:
    """One family per name: samples of several databases end up together."""
    out: dict[tuple[str, str], Metric] = {}
    order: list[Metric] = []
    for fam in families:
        key = (fam.name, fam.type)
        have = out.get(key)
        if have is None:
            copy = Metric(fam.name, fam.documentation, fam.type, fam.unit)
            copy.samples = list(fam.samples)
            out[key] = copy
            order.append(copy)
        else:
            have.samples.extend(fam.samples)
    return order


class OracleExporter:
    def __init__(self, targets: list[Target], settings: Settings,
                 collectors: dict[str, ModuleType | Any] | None = None, refresh_interval: float = 0.0):
        """``refresh_interval`` (refresh_interval_seconds; 0: fetch on scrape): once ``start_refresh``
        is called, every database is fetched in the background that often, and scrapes serve the
        last completed fetch without waiting for one."""
        names = [t.name for t in targets]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate database names in {names}")
        self.targets = {t.name: t for t in targets}
        self.settings = settings
        all_collectors = load_collectors() if collectors is None else dict(collectors)
        self.collectors = {n: m for n, m in all_collectors.items() if settings.enabled(n)}
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(targets)), thread_name_prefix="fetch")
        self.runner = CollectorRunner(logger=log, describe=lambda db, name: f"database {db}: " + (
            name if name == FETCH else f"collector {name}"))
        for t in targets:
            for name in (FETCH, *self.collectors):
                self.runner.register(name, t.name)
        self.refresh_interval = refresh_interval
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        self._turns = _Turns()
        self._background = threading.Lock()     # background renders queue here, one at a time for a turn
        self._formats: dict[Format, float] = {}  # format -> when a scrape last asked for it
        for line in label_clashes(self.targets.values(), self.collectors, settings):
            log.warning("%s", line)

    # -- fetching ------------------------------------------------------------
    def _fetch_future(self, target: Target, deadline: float | None = None) -> Future:
        """The fetch a scrape of this database waits for: the one in flight, else the last
        completed one when it started less than min_interval ago, else a new one. A new fetch
        renders its snapshot in its own worker, as soon as it is taken (``_prerender``), in the
        formats asked for since the previous fetch; ``deadline``: the time limit of the scrape
        that started it, which bounds those collectors as it bounds the scrape's own.
        With background refresh (``refresh_interval``), the last completed fetch whatever its
        age (the refresher replaces it), unless it is so old that the refresher must have been
        unable to replace it (``_stale``); a scrape starts a fetch only before the first one."""
        with target.lock:
            last = target.last
            if self.refresh_interval > 0 and last is not None:
                return _done(self._stale(target, last))
            if target.inflight is not None:
                if self.refresh_interval > 0 and last is None:
                    return self._first(target)
                return target.inflight
            if last is not None and time.monotonic() - last.started < target.min_interval:
                return _done(last)
            return self._begin(target, deadline)

    def _first(self, target: Target) -> Future:
        """Background refresh, no fetch completed yet (``target.lock`` held): the first fetch to
        wait for, until it has run past its budget; then a failed snapshot saying so, the same
        one for every scrape (counted and logged once), so that a first fetch that never ends
        does not hold up every scrape by a budget each."""
        fut = target.inflight
        assert fut is not None
        waited = time.monotonic() - target.inflight_started
        if waited <= target.timeout + FETCH_GRACE:
            return fut
        first = target.first_failed
        if first is None or first[0] is not fut:
            first = target.first_failed = (fut, Fetched(failed_snapshot(
                target.name, f"timeout: no snapshot within {target.timeout + FETCH_GRACE:.3g} s (the first fetch "
                             "has not ended)"), target.inflight_started))
        return _done(first[1])

    def _stale_limit(self, target: Target) -> float:
        return 2 * (self.refresh_interval + target.timeout) + FETCH_GRACE

    def _stale(self, target: Target, last: Fetched) -> Fetched:
        """Background refresh: ``last``, or a failed snapshot once no fetch has ended for two
        refresh intervals plus two fetch budgets (a fetch that never returns, a refresher that
        stopped; a database slower than the interval, fetched back to back within its budget,
        stays within it): a frozen snapshot must not keep a database looking up."""
        limit = self._stale_limit(target)
        stale = target.stale
        if time.monotonic() - (last.ended or last.started) <= limit or (stale is not None and stale[1] is last):
            return last
        if stale is None or stale[0] is not last:     # one failed fetch per frozen snapshot, not per scrape
            stale = target.stale = (last, Fetched(failed_snapshot(
                target.name, f"timeout: no fetch ended within {limit:.3g} s (background refresh every "
                             f"{self.refresh_interval:g} s, fetch budget {target.timeout:g} s)"), last.started,
                last.ended))
        return stale[1]

    def _begin(self, target: Target, deadline: float | None) -> Future:
        """Start a fetch of ``target`` (``target.lock`` held, no fetch in flight); its future."""
        fut: Future = Future()
        target.inflight = fut
        target.inflight_started = time.monotonic()
        target.fetches += 1
        # background refresh: the fetch counts as running until it is rendered (the refresher then
        # never starts a database's next fetch while its last one waits for its turn to render)
        hold = self.refresh_interval > 0

        def run() -> None:
            started = time.monotonic()
            try:
                snap = target.source.fetch()
            except Exception as exc:  # a source bug must not take the exporter down
                log.exception("database %s: fetch raised", target.name)
                snap = failed_snapshot(target.name, f"fetch raised {type(exc).__name__}: {exc}")
            result = Fetched(snap, started, time.monotonic())
            with target.lock:
                if not hold:
                    target.inflight = None
                target.last = result
            fut.set_result(result)
            try:
                self._prerender(target, result, deadline)
            except Exception:  # the scrape renders it then, and meets the error itself
                log.exception("database %s: rendering after the fetch raised", target.name)
            finally:
                if hold:
                    with target.lock:
                        target.inflight = None
                        # its slot came while it ran, and the database itself (not a render turn of
                        # a busy exporter) took longer than the interval: fetched back to back
                        again = (target.due and not self._stop.is_set()
                                 and result.ended - result.started >= self.refresh_interval)
                        target.due = False
                        if again:
                            self._begin(target, None)

        try:
            self._pool.submit(run)
        except RuntimeError:            # closed: shutting down
            target.inflight = None
            fut.set_result(Fetched(failed_snapshot(target.name, "exporter shutting down"), time.monotonic()))
        return fut

    # -- background refresh (refresh_interval_seconds) -----------------------
    def start_refresh(self) -> None:
        """With a refresh interval: start the thread that fetches every database once per
        interval, the databases' fetches spread evenly over it (500 databases every 15 s: one
        fetch started every 30 ms, not 500 at once). Idempotent; ``close`` stops it."""
        if self.refresh_interval <= 0 or self._refresher is not None or not self.targets:
            return
        self._refresher = threading.Thread(target=self._refresh_loop, name="refresh", daemon=True)
        self._refresher.start()

    def _refresh_loop(self) -> None:
        targets = list(self.targets.values())
        interval = self.refresh_interval
        step = interval / len(targets)
        anchor, lap = time.monotonic(), 0
        while True:
            for i, target in enumerate(targets):
                wait = anchor + lap * interval + i * step - time.monotonic()
                if self._stop.wait(max(0.0, wait)):
                    return
                try:
                    self.refresh(target)
                except Exception:  # never let one database stop the others' refresh
                    log.exception("database %s: starting the background fetch raised", target.name)
            lap += 1
            if time.monotonic() > anchor + (lap + 1) * interval:   # far behind (suspended, overloaded):
                anchor, lap = time.monotonic(), 0                   # start a new lap now, no burst to catch up

    def refresh(self, target: Target) -> bool:
        """One background fetch of ``target``, unless one is still running or being rendered (a
        database slower than the interval is then fetched again as soon as it is done: back to
        back, never twice at once) or a scrape fetched it less than half an interval ago (the
        first scrape after a start). True if started."""
        with target.lock:
            if self._stop.is_set():
                return False
            if target.inflight is not None:
                target.due = True
                return False
            last = target.last
            if last is not None and time.monotonic() - last.started < self.refresh_interval / 2:
                return False
            self._begin(target, None)
            return True

    def _prerender(self, target: Target, fetched: Fetched, deadline: float | None) -> None:
        """Render a fetch in the formats scrapes asked for since the previous fetch, right after
        it is taken (in the fetch's worker, while other databases are still being fetched), so a
        scrape serving it only joins bytes. A scrape that gets to the fetch first renders it
        itself (``_parts``): either way once; a format not asked for lately is not rendered."""
        if self.refresh_interval > 0:
            self._render_background(target, fetched)
            return
        with target.render_lock:
            entry = target.rendered
            if entry is None or entry.fetched is fetched or not entry.requested:
                return
            formats = set(entry.requested)
            entry = Rendered(fetched)
            entry.parts = self._render(target, fetched, formats, time.monotonic(), deadline)
            if not target.skipped:          # a render cut short by a time limit is not kept
                target.rendered = entry

    def _render_background(self, target: Target, fetched: Fetched) -> None:
        """Background refresh: render the fetch in every format a scrape asked for in the last
        FORMAT_KEPT_SECONDS (of any database: one that has not been rendered yet, or whose last
        render a scrape's time limit cut short, is rendered too), one background render at a
        time and after any scrape's."""
        now = time.monotonic()
        formats = {f for f, t in list(self._formats.items()) if now - t < FORMAT_KEPT_SECONDS}
        if not formats:
            return
        with self._background, target.render_lock:
            entry = target.rendered
            if entry is not None and entry.fetched is fetched:     # a scrape rendered it meanwhile
                return
            if target.last is not fetched:     # a newer fetch is already in: render that one instead
                return
            entry = Rendered(fetched)
            entry.parts = self._render(target, fetched, formats, time.monotonic(), None, urgent=False)
            entry.cost = time.monotonic() - fetched.started
            entry.requested = dict.fromkeys(formats, now)
            if not target.skipped:
                target.rendered = entry

    def _wait(self, target: Target, fut: Future, deadline: float, started: float) -> Fetched:
        """The fetch's result by the deadline; if it is still running then, the last completed
        fetch (its age is exported), else a failed snapshot."""
        try:
            return fut.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            with target.lock:
                last = target.last
            if last is not None:
                return last
            waited = max(0.0, deadline - started)
            return Fetched(failed_snapshot(target.name, f"timeout: no snapshot within {waited:.3g} s"), started)

    # -- collecting ----------------------------------------------------------
    def _run_collectors(self, target: Target, snap: Snapshot, base: dict[str, str],
                        deadline: float | None = None, relabel: bool = True) -> tuple[list, list]:
        """[(name, Outcome)] of every enabled collector on the snapshot, and their families
        labelled with ``base``. A collector also fails when a view it reads failed. Past
        ``deadline`` (the scraper's time limit) the remaining collectors are not run: they
        fail with the reason, so the answer is not later than one collector past the limit."""
        outcomes, out = [], []
        for name, mod in self.collectors.items():
            def view_errors(mod=mod) -> str | None:
                failed = [_view_error(v, snap.errors[v]) for v in getattr(mod, "VIEWS", ()) if v in snap.errors]
                return "; ".join(failed) or None
            if deadline is not None and time.monotonic() >= deadline:
                collect = _out_of_time
                target.skipped = True
            else:
                collect = lambda mod=mod: isolated(mod, snap, mod.collect(snap, self.settings))  # noqa: E731
            outcome = self.runner.run(name, collect, target.name, check=view_errors, keep=True)
            outcomes.append(outcome)
            for fam in outcome.families:
                if relabel:
                    _relabel(fam, base)
                out.append(fam)
        return outcomes, out

    def _collect(self, target: Target, fetched: Fetched, started: float,
                 deadline: float | None = None) -> list[Metric]:
        own, out = self._build(target, fetched, started, deadline)
        return [*own, *out]

    def _build(self, target: Target, fetched: Fetched, started: float, deadline: float | None = None,
               relabel: bool = True) -> tuple[list[Metric], list[Metric]]:
        """(the database's self metric families, its collectors' families); their samples carry
        the database's labels only with ``relabel`` (the rendering path writes them in as it
        renders)."""
        target.skipped = False
        snap = fetched.snapshot
        base = {"database": target.name, **target.labels}
        up = _own("oracle_up")
        duration = _own("oracle_collector_duration_seconds", _COLLECTOR)
        success = _own("oracle_collector_success", _COLLECTOR)
        failed = is_failed(snap)
        blind = not failed and is_blind(snap)
        up.add_metric((), 0.0 if failed or blind else 1.0)
        reason = snap.errors.get(FAILED) if failed else (
            f"connected but blind: every view failed ({'; '.join(view_error_lines(snap))})" if blind else None)
        with target.lock:   # count and log each fetch once, however many scrapes serve it
            new, target.noted = fetched is not target.noted, fetched
        if new:
            self.runner.note(FETCH, reason, target.name, cause=_cause(reason))
            if failed or blind:
                target.last_reason = (failure_reason(snap.errors.get(FAILED, "")) if failed
                                      else "connected but blind")
        state = self._fetch_state(fetched, failed or blind, target.last_reason,
                                  getattr(target.source, "password_expiring", None))
        failed = failed or blind
        view_errors = _own("oracle_view_errors", ("view",))
        error_info = _own("oracle_view_error_info", ("view", "code", "grant"))
        for view, text in sorted(snap.errors.items()):
            if view == FAILED or view.startswith("CUSTOM:"):
                continue
            view_errors.add_metric((view,), 1.0)
            code = error_code(text)
            error_info.add_metric((view, code, missing_grant(view, code)), 1.0)
        outcomes, out = ([], []) if failed else self._run_collectors(target, snap, base, deadline, relabel)
        age = _own("oracle_collector_cache_age_seconds", _COLLECTOR)
        for outcome in outcomes:
            labels = (outcome.name,)
            duration.add_metric(labels, outcome.duration)
            success.add_metric(labels, 1.0 if outcome.ok else 0.0)
            mod = self.collectors[outcome.name]
            if collector_interval(outcome.name, mod, self.settings) > 0:
                age.add_metric(labels, collector_age(mod, snap.ages))
        errors = _own("oracle_scrape_errors_total", _COLLECTOR)
        for name in (FETCH, *self.collectors):
            errors.add_metric((name,), float(self.runner.error_count(name, target.name)))
        scrape = _own("oracle_scrape_duration_seconds")
        scrape.add_metric((), time.monotonic() - started)
        extra = [fam for fam in (age, view_errors, error_info) if sample_count(fam)]
        own = [up, scrape, duration, success, errors, *extra, *state]
        if relabel:
            for fam in own:
                _relabel(fam, base)
        return own, out

    def _fetch_state(self, fetched: Fetched, failed: bool, last_reason: str,
                     expiring: bool | None = None) -> list[Metric]:
        """Why a database is (or last was) down, whether its password expires soon (``expiring``:
        the live source's last logon warned, None for a source without logons), how old the
        served snapshot is, what each view cost (without the database's labels, as ``_build``)."""
        snap = fetched.snapshot
        reason = _family("oracle_last_error_info")
        reason.add_sample("oracle_last_error_info", {"reason": last_reason}, 1.0)
        age = _own("oracle_snapshot_age_seconds")
        views = _own("oracle_view_query_duration_seconds", ("view",))
        state = [reason]
        if expiring is not None:
            gauge = _own("oracle_password_expiring")
            gauge.add_metric((), 1.0 if expiring else 0.0)
            state.append(gauge)
        if failed:
            return state
        age.add_metric((), max(0.0, time.monotonic() - fetched.started))
        for view, seconds in snap.durations.items():
            views.add_metric((view,), seconds)
        return [*state, age, views]

    def _start(self, names: Iterable[str] | None, timeout: float | None) -> tuple[float, list, float | None]:
        """The fetches of a scrape of the named databases (all when None), started concurrently:
        (start time, [(target, future, deadline)], the collectors' deadline)."""
        targets = [self.targets[n] for n in (names if names is not None else self.targets)]
        started = time.monotonic()
        # the scraper's own limit also bounds the collectors (none is started past it)
        collect_deadline = None if timeout is None else started + timeout
        futures = []
        for t in targets:
            # a live fetch stops itself at t.timeout and says why; wait a little longer for its answer
            limit = t.timeout + FETCH_GRACE if timeout is None else min(t.timeout + FETCH_GRACE, timeout)
            futures.append((t, self._fetch_future(t, collect_deadline), started + limit))
        return started, futures, collect_deadline

    def scrape(self, names: Iterable[str] | None = None, timeout: float | None = None) -> list[Metric]:
        """Scrape the named databases (all when None) concurrently; merged families.
        ``timeout`` (e.g. Prometheus' scrape timeout) shortens every database's deadline."""
        started, futures, collect_deadline = self._start(names, timeout)
        families: list[Metric] = []
        for t, fut, deadline in futures:
            fetched = self._wait(t, fut, deadline, started)
            families.extend(self._collect(t, fetched, _own_start(fut, fetched, started), collect_deadline))
        info = _family("oracle_exporter_build_info")
        info.add_sample("oracle_exporter_build_info", {"version": __version__}, 1.0)
        return merge([*families, info])

    # -- rendering (the HTTP path) -------------------------------------------
    def exposition(self, fmt: Format, names: Iterable[str] | None = None, timeout: float | None = None,
                   tail: Iterable[Metric] = ()) -> bytes:
        """``exposition_pieces`` joined."""
        return b"".join(self.exposition_pieces(fmt, names, timeout, tail))

    def exposition_pieces(self, fmt: Format, names: Iterable[str] | None = None, timeout: float | None = None,
                          tail: Iterable[Metric] = ()) -> list[bytes]:
        """The bytes ``scrape`` + the encoder would give, each database's collectors run and
        rendered once per fetch: a scrape that reuses a fetch (``min_interval_seconds``, a fetch in
        flight, a deadline that serves the last snapshot) reuses its bytes, in every format
        asked for since. Only the scrape duration and snapshot age are written per scrape.
        ``tail``: families after the databases' (process metrics)."""
        self._formats[fmt] = time.monotonic()
        started, futures, collect_deadline = self._start(names, timeout)
        groups = []
        for t, fut, deadline in futures:
            ready = self._ready(t, fmt) if self.refresh_interval > 0 else None
            if ready is not None:
                groups.append(self._per_scrape(t, ready.fetched, ready.parts[fmt], fmt, started, ready.cost))
                continue
            fetched = self._wait(t, fut, deadline, started)
            groups.append(self._parts(t, fetched, fmt, _own_start(fut, fetched, started), collect_deadline))
        info = _family("oracle_exporter_build_info")
        info.add_sample("oracle_exporter_build_info", {"version": __version__}, 1.0)
        return assemble_pieces(groups, fmt, [info, *tail])

    def _ready(self, target: Target, fmt: Format) -> Rendered | None:
        """Background refresh: the last rendered fetch of ``target`` in ``fmt``, taken without a
        lock, when it is not stale: a scrape never waits for a fetch that completed but is still
        being rendered in its worker (it serves the one before, a few ms older). None: render
        (the first scrape in a format, or a stale database)."""
        entry = target.rendered
        if entry is None or fmt not in entry.parts or self._stale(target, entry.fetched) is not entry.fetched:
            return None
        entry.requested[fmt] = time.monotonic()
        return entry

    def _parts(self, target: Target, fetched: Fetched, fmt: Format, started: float,
               deadline: float | None) -> list[Part]:
        with target.render_lock:    # concurrent scrapes of one database: one renders, the others reuse
            entry = target.rendered
            if entry is None or entry.fetched is not fetched:
                formats = {fmt, *(entry.requested if entry is not None else ())}
                entry = Rendered(fetched)
                entry.parts = self._render(target, fetched, formats, started, deadline)
            elif fmt not in entry.parts:     # a format first asked for since this fetch was rendered
                entry.parts.update(self._render(target, fetched, {fmt}, started, deadline))
            entry.requested[fmt] = time.monotonic()
            if not entry.cost:
                entry.cost = time.monotonic() - fetched.started
            if not target.skipped:          # a render cut short by a time limit is not kept
                target.rendered = entry
            parts = entry.parts[fmt]
        return self._per_scrape(target, fetched, parts, fmt, started,
                                entry.cost if self.refresh_interval > 0 else None)

    def _render(self, target: Target, fetched: Fetched, formats: set[Format], started: float,
                deadline: float | None, urgent: bool = True) -> dict[Format, list[Part]]:
        """``formats`` of the fetch, in a render turn (``_Turns``); a turn not had by ``deadline``
        renders the self metrics only, every collector failed for the time limit (not kept)."""
        got = self._turns.take(urgent, deadline)
        try:
            target.renders += 1
            own, out = self._build(target, fetched, started, deadline, relabel=False)
            base = {"database": target.name, **target.labels}
            # OpenMetrics: the counters of Oracle's metric files (bare names, no _total) as unknown
            return {fmt: render_parts([*own, *(openmetrics_families(out) if fmt.kind == OPENMETRICS else out)],
                                      fmt, base)
                    for fmt in formats}
        finally:
            if got:
                self._turns.give()

    def _per_scrape(self, target: Target, fetched: Fetched, parts: list[Part], fmt: Format,
                    started: float, duration: float | None = None) -> list[Part]:
        """``parts`` with the scrape duration and snapshot age of this scrape; ``duration``
        (background refresh): the served fetch's own, from its start to its rendering's end."""
        now = time.monotonic()
        slots = self._slots(target, parts, fmt)
        if slots is not None:       # the two lines from their rendered heads: no family built per scrape
            out = list(parts)
            for i, name, head in slots:
                if name != _PER_SCRAPE[0]:
                    value = max(0.0, now - fetched.started)
                else:
                    value = now - started if duration is None else duration
                part = out[i]
                out[i] = Part(part.key, part.meta, head + format_value(value).encode() + b"\n", None)
            return out
        base = {"database": target.name, **target.labels}
        out = list(parts)
        for i, part in enumerate(out):
            name = part.key[0]
            if name in _PER_SCRAPE and part.lines:
                fam = _family(name)
                if name != _PER_SCRAPE[0]:
                    value = max(0.0, now - fetched.started)
                else:
                    value = now - started if duration is None else duration
                fam.add_sample(name, dict(base), value)
                out[i] = render_parts([fam], fmt)[0]
        return out

    def _slots(self, target: Target, parts: list[Part], fmt: Format) -> list | None:
        """[(index, name, line head)] of the per-scrape families in ``parts``, made once per
        rendered ``parts`` (a render writes them with one sample of value 1: the head is that
        line up to its value); None when a line is not of that shape (the slow path then)."""
        cached = target.slots
        if cached is not None and cached[0] is parts:
            return cached[1]
        base = {"database": target.name, **target.labels}
        slots = []
        for i, part in enumerate(parts):
            name = part.key[0]
            if name in _PER_SCRAPE and part.lines:
                fam = _family(name)
                fam.add_sample(name, dict(base), 1.0)
                line = render_parts([fam], fmt)[0].lines
                if not line.endswith(b" 1.0\n") or line.count(b"\n") != 1:
                    return None
                slots.append((i, name, line[:-4]))
        target.slots = (parts, slots)
        return slots

    def registry(self, names: Iterable[str] | None = None, timeout: float | None = None) -> _Families:
        return _Families(self.scrape(names, timeout))

    def close(self, grace: float = 0.0) -> int:
        """Stop the refresh and the fetch pool, close the sources; the number of fetches still
        running after ``grace`` seconds (a source that does not return)."""
        self._stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for t in self.targets.values():
            try:
                t.source.close()
            except Exception:
                log.exception("database %s: close failed", t.name)
        end = time.monotonic() + grace
        while True:
            running = sum(1 for t in self.targets.values() if t.inflight is not None and not t.inflight.done())
            if not running or time.monotonic() >= end:
                return running
            time.sleep(0.05)

    def expect(self, fmt: Format) -> None:
        """Background refresh: render every fetch in ``fmt`` from the start (the format the usual
        scrape asks for), before any scrape asked for it."""
        # kept two minutes unless a scrape asks for it (Prometheus 3 asks for another text format)
        self._formats.setdefault(fmt, time.monotonic() - FORMAT_KEPT_SECONDS + 120.0)
