"""Demo recordings for oracle-exporter (issue 2, item 7).

The ``*.jsonl`` files next to this module are JSON Lines recordings in the
replay format (``oracle_exporter.snapshot``), produced by
``python -m oracle_exporter.demo.generate`` with a fixed seed. They are
generated, never hand-edited: tests/oracle/test_demo_recording.py
regenerates them and compares bytes.

- ``demo-before.jsonl``: database DEMO, 35 min at 15 s, the "before" column
  of field-notes section 1 (slow LGWR, 500 MB logs switching every minute).
- ``demo-after.jsonl``: the same database after the fix, 35 min at 15 s
  (the "after" column: 845 LGWR writes/s at 0.55 ms, 8 GB logs, 72 MB log buffer).
- ``demo-rac-outage.jsonl``: DEMO (before profile) and the two-instance RAC
  database RACDB, 10 min, RACDB unreachable (ORA-12170) in the middle.
- ``demo-standby.jsonl``: DEMOSB, a physical standby of DEMO, 20 min: lags of a
  second or two, then no contact with the primary (transport lag not computed,
  DATUM_TIME frozen) for six minutes, then the gap resolved and the lags shrinking.

Every recording carries the sessions and instance-health views (demo/health.py).
"""
from __future__ import annotations

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent

# file name -> generator arguments (what ``make run`` replays and what the tests regenerate)
SHIPPED: dict[str, dict[str, object]] = {
    "demo-before.jsonl": {"profile": "before", "minutes": 35, "interval": 15},
    "demo-after.jsonl": {"profile": "after", "minutes": 35, "interval": 15},
    "demo-rac-outage.jsonl": {"profile": "rac-outage", "minutes": 10, "interval": 15},
    "demo-standby.jsonl": {"profile": "standby", "minutes": 20, "interval": 15},
}


def path(name: str = "demo-before.jsonl") -> Path:
    """Path of a shipped recording (default: the one ``make run`` replays)."""
    return DEMO_DIR / name
