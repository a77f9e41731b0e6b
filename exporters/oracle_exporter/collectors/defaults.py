"""Defaults for the collector settings (the core's config falls back to these).

Tests and callers may pass any object as ``settings``; collectors read
``histogram_events`` and ``latches`` with ``getattr`` and fall back here.
"""
from __future__ import annotations

# Key wait events that get a latency histogram (issue 2, item 3; field-notes R1-R7, I2).
DEFAULT_HISTOGRAM_EVENTS: list[str] = [
    "log file sync",                 # R2: commit latency as sessions see it
    "log file parallel write",       # R1: LGWR write latency
    "db file sequential read",       # I2: single-block reads
    "db file scattered read",        # multiblock reads
    "direct path read",
    "direct path write",
    "log buffer space",              # R3
    "log file switch completion",    # R6
    "log file sequential read",      # R7: ARCH reading redo
    "control file parallel write",
    "log file switch (checkpoint incomplete)",  # R4
]

# Per-PDB latency histograms (pdb collector): commit and single-block read latency per PDB.
DEFAULT_PDB_HISTOGRAM_EVENTS: list[str] = ["log file sync", "db file sequential read"]

# Latches reported one by one (everything is also summed into latch="all", I1).
DEFAULT_LATCHES: list[str] = [
    "redo allocation",               # R5
    "redo writing",                  # R5
    "redo copy",
    "cache buffers chains",
    "cache buffers lru chain",
    "shared pool",
    "row cache objects",
    "enqueue hash chains",
    "session allocation",
    "messages",
    "checkpoint queue latch",
    "In memory undo latch",
]


def histogram_events(settings: object) -> list[str]:
    value = getattr(settings, "histogram_events", None)
    return list(DEFAULT_HISTOGRAM_EVENTS if value is None else value)


def latches(settings: object) -> list[str]:
    value = getattr(settings, "latches", None)
    return list(DEFAULT_LATCHES if value is None else value)
