"""Concurrent scrapes of the same exposition share one collection and one rendering.

50 clients (or an HA pair of Prometheus servers, or a curl during a scrape) asking for the same
exposition at the same time would each run the collectors and encode the answer: on a small
machine they queue behind each other's CPU. ``Coalescer`` runs one rendering per key (the route,
the negotiated format, the query) at a time; a request that arrives while one is in progress
waits for it and is answered with its bytes. A request that arrives after it finished starts a new
one, so no answer is older than its request: bytes are shared only with a rendering that was
still running when the request arrived (or started after it).

``CoalescedRoute`` is a route (``handler(query, headers) -> Response``) built on it. The HTTP
server asks ``route.pending(query, headers)`` before admitting a request: a request that will only
wait for a rendering in progress takes no ``--web.max-requests`` slot (it costs no CPU while it
waits), and is then served by ``route.joined(token, query, headers)``.

A rendering reports whether the time limit of the scrape that led it cut a collector short
(``Rendered.cut_short``); a waiter then does not take those bytes while it has time of its own
left: it renders its own answer (which joins the collector runs still going, see
dbhost_exporter.scrape). A waiter whose own time limit passes first stops waiting and renders what
is ready by then. An exception of the rendering is raised in every request that waited for it.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Hashable

from .web import Response

__all__ = ["Coalescer", "CoalescedRoute", "Flight", "Rendered"]


@dataclass
class Rendered:
    response: Response
    cut_short: bool = False       # a collector was cut short by the leading scrape's time limit


class Flight:
    """One rendering in progress (or just finished), shared by the requests that arrived during it."""

    __slots__ = ("_done", "_value", "_error", "waiters", "started")

    def __init__(self) -> None:
        self.started = time.monotonic()     # what it collects is no older than this
        self._done = threading.Event()
        self._value = None
        self._error: BaseException | None = None
        self.waiters = 0

    def wait(self, timeout: float | None) -> bool:
        return self._done.wait(timeout)

    def result(self):
        if self._error is not None:
            raise self._error
        return self._value

    def _finish(self, value, error: BaseException | None) -> None:
        self._value, self._error = value, error
        self._done.set()


class Coalescer:
    """Single flight per key: ``join(key)`` the flight in progress, or ``lead(key, fn)``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[Hashable, Flight] = {}
        self.runs = 0           # renderings started (tests, benchmarks)
        self.joins = 0          # requests answered by a rendering another request led

    def join(self, key: Hashable) -> Flight | None:
        """The flight in progress for ``key``, counted as joined; None if there is none."""
        with self._lock:
            flight = self._flights.get(key)
            if flight is not None:
                flight.waiters += 1
                self.joins += 1
            return flight

    def join_or_lead(self, key: Hashable) -> tuple[Flight, bool]:
        """(flight, True) when the caller must run it (then ``finish``), (flight, False) to wait."""
        with self._lock:
            flight = self._flights.get(key)
            if flight is not None:
                flight.waiters += 1
                self.joins += 1
                return flight, False
            flight = self._flights[key] = Flight()
            self.runs += 1
            return flight, True

    def finish(self, key: Hashable, flight: Flight, value=None, error: BaseException | None = None) -> None:
        """End a flight: from now on a request for ``key`` starts a new one; its waiters get
        ``value`` (or ``error`` raised)."""
        with self._lock:
            if self._flights.get(key) is flight:
                del self._flights[key]
        flight._finish(value, error)

    def lead(self, key: Hashable, flight: Flight, fn: Callable[[], object]):
        try:
            value = fn()
        except BaseException as exc:
            self.finish(key, flight, error=exc)
            raise
        self.finish(key, flight, value)
        return value


class CoalescedRoute:
    """A route whose answers are shared between concurrent requests with the same key.

    ``key(query, headers)``: what makes two answers the same (format, query), never credentials;
    ``render(query, headers, deadline, since) -> Rendered``: one answer, due by ``deadline``
    (time.monotonic(), None: no limit), made of data collected no earlier than ``since``;
    ``deadline(headers, arrival)``: when a request that arrived at ``arrival`` must be answered."""

    def __init__(self, key: Callable[[dict, dict], Hashable],
                 render: Callable[[dict, dict, float | None, float], Rendered],
                 deadline: Callable[[dict, float], float | None] = lambda headers, arrival: None):
        self.key = key
        self.render = render
        self.deadline = deadline
        self.coalescer = Coalescer()

    def __call__(self, query: dict, headers: dict) -> Response:
        arrival = time.monotonic()
        key = self.key(query, headers)
        flight, leader = self.coalescer.join_or_lead(key)
        if leader:
            deadline = self.deadline(headers, arrival)
            return self.coalescer.lead(key, flight, lambda: self.render(query, headers, deadline, arrival)).response
        return self._wait(flight, query, headers, arrival)

    def pending(self, query: dict, headers: dict):
        """A token for ``joined`` when a rendering for this request is in progress, else None."""
        flight = self.coalescer.join(self.key(query, headers))
        return None if flight is None else (flight, time.monotonic())

    def joined(self, token, query: dict, headers: dict) -> Response:
        flight, arrival = token
        return self._wait(flight, query, headers, arrival)

    def _wait(self, flight: Flight, query: dict, headers: dict, arrival: float) -> Response:
        deadline = self.deadline(headers, arrival)
        if flight.wait(None if deadline is None else max(0.0, deadline - time.monotonic())):
            rendered = flight.result()            # the leader's exception, raised here too
            if not rendered.cut_short or (deadline is not None and time.monotonic() >= deadline):
                return rendered.response
        # the leader's time limit cut it short and this request has time left, or this request's
        # own limit passed first: its own answer, from the collector runs of the rendering it
        # waited for (data no older than that rendering's start) and those still going
        return self.render(query, headers, deadline, flight.started).response
