"""Tablespace usage in bytes: (CDB_|DBA_)TABLESPACE_USAGE_METRICS x the tablespace's block size.

The usage view counts database blocks: USED_SPACE (blocks in use) and
TABLESPACE_SIZE (the size the tablespace may reach: autoextensible data files
count with their MAXSIZE, so autoextend is honoured). Block sizes differ per
tablespace (DB_nK_CACHE_SIZE tablespaces), so each is multiplied by
BLOCK_SIZE of its own row in (CDB_|DBA_)TABLESPACES; without that view the
db_block_size parameter (GV$SYSTEM_PARAMETER) is used.

* ``oracle_tablespace_used_bytes{container, tablespace, contents}``
* ``oracle_tablespace_max_bytes{container, tablespace, contents}``

``contents`` is CONTENTS as Oracle spells it (PERMANENT, TEMPORARY, UNDO; 21c
adds LOST WRITE PROTECTION): temp and undo are told apart from data (undo
"used" includes unexpired undo that Oracle reuses on demand: alert on it
differently). ``container`` is the container name (V$CONTAINERS.NAME:
CDB$ROOT or the PDB name) when connected to a CDB root, where the CDB_ views
list every open container; it is empty outside a CDB (CON_ID 0, or the DBA_
view). A CON_ID without a known name is given as its number.

Recording keys: ``CDB_TABLESPACE_USAGE_METRICS`` (CDB root) or
``DBA_TABLESPACE_USAGE_METRICS``; ``CDB_TABLESPACES`` / ``DBA_TABLESPACES``;
``V$CONTAINERS``. When both the CDB_ and the DBA_ usage view are present the
CDB_ one is used.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from ..views import MISSING_VIEW, Fallback, View, register
from ._common import emit, gauge, num, parameters
from ._health import clean, con_id

NAME = "tablespaces"
LABELS = ["container", "tablespace", "contents"]

# The CDB_ views exist from 12.1: in a CDB root they list every open container, in a PDB that
# PDB, in a non-CDB the database (CON_ID 0). Before 12.1 (ORA-00942) the DBA_ views are read.
DBA_USAGE = register(View("DBA_TABLESPACE_USAGE_METRICS", ("TABLESPACE_NAME", "USED_SPACE", "TABLESPACE_SIZE"),
                          identity=("TABLESPACE_NAME",), doc="tablespace usage in blocks, before 12.1"))
DBA_SPACES = register(View("DBA_TABLESPACES", ("TABLESPACE_NAME", "BLOCK_SIZE", "CONTENTS"),
                           identity=("TABLESPACE_NAME",), doc="tablespace block size and contents, before 12.1"))
USAGE = register(View(
    "CDB_TABLESPACE_USAGE_METRICS", ("CON_ID", "TABLESPACE_NAME", "USED_SPACE", "TABLESPACE_SIZE"),
    identity=("CON_ID", "TABLESPACE_NAME"), since="12.1",
    fallbacks=(Fallback(MISSING_VIEW, DBA_USAGE, "CDB_ views need 12.1"),),
    doc="tablespace usage in blocks, every container (TABLESPACE_SIZE counts autoextend up to MAXSIZE)"))
SPACES = register(View(
    "CDB_TABLESPACES", ("CON_ID", "TABLESPACE_NAME", "BLOCK_SIZE", "CONTENTS"),
    identity=("CON_ID", "TABLESPACE_NAME"), since="12.1",
    fallbacks=(Fallback(MISSING_VIEW, DBA_SPACES, "CDB_ views need 12.1"),),
    doc="tablespace block size and contents, every container"))
CONTAINERS = register(View(
    "V$CONTAINERS", ("CON_ID", "NAME"), identity=("CON_ID",), since="12.1",
    doc="V$CONTAINERS, container names (CDB$ROOT, PDB$SEED, PDBs)"))

VIEWS = (USAGE.name, SPACES.name, CONTAINERS.name, DBA_USAGE.name, DBA_SPACES.name)
MIN_INTERVAL_SECONDS = 300.0   # default; config collector_intervals overrides (the usage view scans the data dictionary: every 5 minutes)

def _pick(snapshot: Any, cdb: str, dba: str) -> list[dict[str, Any]]:
    if snapshot.has(cdb) and snapshot.rows(cdb):
        return snapshot.rows(cdb)
    return snapshot.rows(dba)


def container_names(snapshot: Any) -> dict[int, str]:
    out: dict[int, str] = {}
    for row in snapshot.rows("V$CONTAINERS"):
        cid = num(row.get("CON_ID"))
        if cid is not None and clean(row.get("NAME")):
            out.setdefault(int(cid), clean(row.get("NAME")))
    return out


def usage(snapshot: Any) -> list[tuple[str, str, str, float, float]]:
    """[(container, tablespace, contents, used_bytes, max_bytes)] sorted; rows whose
    block size or block counts are unknown are left out."""
    names = container_names(snapshot)
    spaces: dict[tuple[int, str], dict[str, Any]] = {}
    for row in _pick(snapshot, "CDB_TABLESPACES", "DBA_TABLESPACES"):
        spaces.setdefault((con_id(row), clean(row.get("TABLESPACE_NAME"))), row)
    default_block = None
    for values in parameters(snapshot).values():
        if "db_block_size" in values:
            default_block = values["db_block_size"]
            break
    out: dict[tuple[str, str], tuple[str, str, str, float, float]] = {}
    for row in _pick(snapshot, "CDB_TABLESPACE_USAGE_METRICS", "DBA_TABLESPACE_USAGE_METRICS"):
        cid, name = con_id(row), clean(row.get("TABLESPACE_NAME"))
        if not name:
            continue
        meta = spaces.get((cid, name), {})
        block = num(meta.get("BLOCK_SIZE")) or default_block
        used, size = num(row.get("USED_SPACE")), num(row.get("TABLESPACE_SIZE"))
        if not block or used is None or size is None:
            continue
        container = "" if cid == 0 else names.get(cid, str(cid))
        out.setdefault((container, name), (container, name, clean(meta.get("CONTENTS")), used * block, size * block))
    return [out[k] for k in sorted(out)]


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    used = gauge("oracle_tablespace_used_bytes",
                 "Space used in the tablespace, bytes ((CDB_|DBA_)TABLESPACE_USAGE_METRICS.USED_SPACE x block size).",
                 LABELS)
    size = gauge("oracle_tablespace_max_bytes",
                 "Size the tablespace can reach, autoextend MAXSIZE included, bytes "
                 "(TABLESPACE_USAGE_METRICS.TABLESPACE_SIZE x block size).", LABELS)
    for container, name, contents, used_b, max_b in usage(snapshot):
        used.add_metric([container, name, contents], used_b)
        size.add_metric([container, name, contents], max_b)
    yield from emit([used, size])
