"""Concurrent scrapes of the same exposition share one collection and one rendering.

50 clients (or an HA pair of Prometheus servers, or a curl during a scrape) asking for the same
exposition at the same time would each run the collectors and encode the answer: on a small
machine they queue behind each other's CPU. ``Coalescer`` runs one rendering per key (the route,
the negotiated format, the query) at a time; a request that arrives while one is in progress
waits for it and is answered with its bytes. A request that arrives after it finished starts a new
one, so no answer is older than its request: bytes are shared only with a rendering that was
still running when the request arrived (or started after it).

``CoalescedRoute`` is a route (``handler(query, headers) -> Response``) built on it. The HTTP
server asks ``route.claim(query, headers, take_slot)`` when a request arrives: a request that will
only wait for a rendering in progress takes no ``--web.max-requests`` slot (it costs no CPU while
it waits); the first one takes a slot and leads. Either is then served by
``route.joined(token, query, headers)``.

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

from .web import CLAIM_REFUSED as REFUSED, Response

__all__ = ["Coalescer", "CoalescedRoute", "Flight", "REFUSED", "Rendered", "Token"]


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

    def join_or_lead(self, key: Hashable, may_lead: Callable[[], bool] = lambda: True) -> tuple[Flight | None, bool]:
        """(flight, True) when the caller must run it (then ``finish``), (flight, False) to wait
        for it; (None, False) when there is none to wait for and ``may_lead()`` says no."""
        with self._lock:
            flight = self._flights.get(key)
            if flight is not None:
                flight.waiters += 1
                self.joins += 1
                return flight, False
            if not may_lead():
                return None, False
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


class Token:
    """A request the HTTP server's event loop attached to a flight: ``leads`` it (then it took a
    --web.max-requests slot and must run it) or waits for it (no slot)."""

    __slots__ = ("flight", "key", "leads", "arrival")

    def __init__(self, flight: Flight, key: Hashable, leads: bool):
        self.flight, self.key, self.leads, self.arrival = flight, key, leads, time.monotonic()


# A waiter without a time limit of its own waits at most this long for another request's
# answer, then renders its own (a server shutting down never leaves it hanging).
WAIT_LIMIT = 120.0


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
            return self._lead(key, flight, query, headers, arrival)
        return self._wait(flight, query, headers, arrival)

    def claim(self, query: dict, headers: dict, take_slot: Callable[[], bool]):
        """For the HTTP server's event loop, when a request arrives: a Token that waits for the
        rendering in progress for its key, or that leads a new one if ``take_slot()`` grants it a
        slot; REFUSED if it does not. The request is then served by ``joined``. Creating the flight
        here (not when a worker thread starts the request) lets a burst of requests arriving in
        one loop turn join the first one instead of each taking a slot."""
        key = self.key(query, headers)
        flight, leader = self.coalescer.join_or_lead(key, take_slot)
        return REFUSED if flight is None else Token(flight, key, leader)

    def joined(self, token: Token, query: dict, headers: dict) -> Response:
        if token.leads:
            return self._lead(token.key, token.flight, query, headers, token.arrival)
        return self._wait(token.flight, query, headers, token.arrival)

    def _lead(self, key: Hashable, flight: Flight, query: dict, headers: dict, arrival: float) -> Response:
        deadline = self.deadline(headers, arrival)
        since = min(arrival, flight.started)
        return self.coalescer.lead(key, flight, lambda: self.render(query, headers, deadline, since)).response

    def _wait(self, flight: Flight, query: dict, headers: dict, arrival: float) -> Response:
        deadline = self.deadline(headers, arrival)
        limit = WAIT_LIMIT if deadline is None else max(0.0, deadline - time.monotonic())
        if flight.wait(limit):
            rendered = flight.result()            # the leader's exception, raised here too
            if not rendered.cut_short or (deadline is not None and time.monotonic() >= deadline):
                return rendered.response
        # the leader's time limit cut it short and this request has time left, or this request's
        # own limit passed first: its own answer, from the collector runs of the rendering it
        # waited for (data no older than that rendering's start) and those still going
        return self.render(query, headers, deadline, flight.started).response
