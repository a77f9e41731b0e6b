"""Demo recordings for oracle-exporter (issue 2, item 7).

The ``*.jsonl`` files next to this module are JSON Lines recordings in the
replay format (``oracle_exporter.snapshot``), produced by
``python -m oracle_exporter.demo.generate`` with a fixed seed. They are
generated, never hand-edited and never committed (19 MB of text that every change
of the generator would rewrite): ``path()`` writes a missing one on first use,
``python -m oracle_exporter.demo`` (``make demo``) writes them all, and
tests/oracle/test_demo_recording.py checks the generator is deterministic.

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

import hashlib
import os
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent

# file name -> generator arguments (what ``make run`` replays and what the tests regenerate)
SHIPPED: dict[str, dict[str, object]] = {
    "demo-before.jsonl": {"profile": "before", "minutes": 35, "interval": 15},
    "demo-after.jsonl": {"profile": "after", "minutes": 35, "interval": 15},
    "demo-rac-outage.jsonl": {"profile": "rac-outage", "minutes": 10, "interval": 15},
    "demo-standby.jsonl": {"profile": "standby", "minutes": 20, "interval": 15},
}


def _checkout() -> bool:
    """True when this module sits in a source checkout (the repository's pyproject.toml two
    levels above the package folder) whose demo folder can be written."""
    root = DEMO_DIR.parents[2] if len(DEMO_DIR.parents) > 2 else DEMO_DIR
    return (root / "pyproject.toml").is_file() and os.access(DEMO_DIR, os.W_OK)


def source_digest() -> str:
    """A digest of the oracle_exporter package's Python sources: the generator reads the view
    registry, the collectors' declarations and the demo models, so a recording made by other
    sources is stale."""
    h = hashlib.sha256()
    package = DEMO_DIR.parent
    for p in sorted(package.rglob("*.py")):
        h.update(str(p.relative_to(package)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _stamp(target: Path) -> Path:
    return target.with_name(f".{target.name}.source")


def _fresh(target: Path, digest: str) -> bool:
    try:
        return target.exists() and _stamp(target).read_text(encoding="utf-8").strip() == digest
    except OSError:
        return False


def _generate(name: str, target: Path, digest: str) -> None:
    from .generate import write  # noqa: PLC0415 (only when a recording is missing)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            write(out=fh, **SHIPPED[name])
        os.replace(tmp, target)     # atomic: a concurrent reader never sees half a recording
        _stamp(target).write_text(digest + "\n", encoding="utf-8")
    finally:
        tmp.unlink(missing_ok=True)


def path(name: str = "demo-before.jsonl", cache_dir: Path | None = None) -> Path:
    """Path of a demo recording (default: the one ``make run`` replays), generated on first use.

    In a checkout the recording is written next to this module (git ignores it) and written
    again when the package's sources change (a stamp beside it holds their digest), so an edit of
    the generator never leaves a stale recording behind. An installed package is not written to:
    the recording is generated, with the same seed and arguments, into ``cache_dir`` (default
    ``$XDG_CACHE_HOME/oracle-exporter/demo``, else ``~/.cache/oracle-exporter/demo``) once per
    version of the sources and reused."""
    if name not in SHIPPED:
        raise ValueError(f"unknown demo recording {name!r}; known: {', '.join(SHIPPED)}")
    digest = source_digest()
    here = DEMO_DIR / name
    if cache_dir is None and _checkout():
        target = here          # a checkout: beside the module, remade when the sources change
    elif here.exists():
        return here            # shipped beside an installed module by a packager: used as it is
    else:
        if cache_dir is None:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            cache_dir = Path(base) / "oracle-exporter" / "demo"
        target = Path(cache_dir) / name
    if not _fresh(target, digest):
        _generate(name, target, digest)
    return target


def ensure_all() -> list[Path]:
    """Every shipped recording, generated where missing (tests and ``make demo``)."""
    return [path(name) for name in SHIPPED]
