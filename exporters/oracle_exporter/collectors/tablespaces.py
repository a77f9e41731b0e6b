"""Tablespace usage in bytes: (CDB_|DBA_)TABLESPACE_USAGE_METRICS x the tablespace's block size.

The usage view counts database blocks: USED_SPACE (blocks in use) and
TABLESPACE_SIZE (the size the tablespace may reach: autoextensible data files
count with their MAXSIZE, so autoextend is honoured). Block sizes differ per
tablespace (DB_nK_CACHE_SIZE tablespaces), so each is multiplied by
BLOCK_SIZE of its own row in (CDB_|DBA_)TABLESPACES; without that view the
db_block_size parameter (GV$SYSTEM_PARAMETER) is used.

* ``oracle_tablespace_used_bytes{container, tablespace, contents}``
* ``oracle_tablespace_max_bytes{container, tablespace, contents}``
* ``oracle_tablespace_info{container, tablespace, contents, status}``: STATUS of
  (CDB_|DBA_)TABLESPACES (ONLINE, READ ONLY, OFFLINE), value 1. A READ ONLY tablespace
  cannot grow and an OFFLINE one cannot be written: the rules never judge their fullness
  (a closed year's tablespace is 100 % full by design).

The maximum size is TABLESPACE_SIZE as each release computes it: on 11.2 and 12.1 the sum
of the data files' MAXSIZE (autoextensible) or size; on 19c (and later) it is also
capped by the free space of the file system or ASM disk group holding the files, so the
maximum shrinks while the storage fills and "percent used" rises with other databases'
growth (watch the storage too: ASM or file system alerts). TEMPORARY tablespaces have no
row in the usage view before 12.1.

Release paths: 12.1+ in a CDB root the CDB_ views (CON_ID, container names from
V$CONTAINERS); in a non-CDB or a PDB the CDB_ views answer with CON_ID 0 / that PDB;
before 12.1 (11.2: no CON_ID, no CDB_ views, no V$CONTAINERS) the DBA_ views, read in
their place by the live source (ORA-00942 fallbacks), with ``container=""``.

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

from exporter_common.declare import Collector, Family

from ..views import CONTAINERS, CONTAINERS_BEFORE_12, DBA_TS_SPACES, DBA_TS_USAGE, TS_SPACES, TS_USAGE
from ._common import emit, num, parameters
from ._health import clean, con_id

LABELS = ("container", "tablespace", "contents")
SPEC = Collector(
    "tablespaces", "Tablespace used and maximum bytes, autoextend included ((CDB_|DBA_)TABLESPACE_USAGE_METRICS).",
    reads=(TS_USAGE.name, TS_SPACES.name, CONTAINERS.name, DBA_TS_USAGE.name, DBA_TS_SPACES.name,
           CONTAINERS_BEFORE_12.name),
    interval=300.0,     # the usage view scans the data dictionary: every 5 minutes (collector_intervals overrides)
    metrics=(
        Family("oracle_tablespace_used_bytes", "gauge",
               "Space used in the tablespace, bytes ((CDB_|DBA_)TABLESPACE_USAGE_METRICS.USED_SPACE x block size).",
               LABELS, source='USED_SPACE (blocks) x BLOCK_SIZE of the tablespace',
               note="container is empty outside a CDB; contents is PERMANENT, TEMPORARY or UNDO."),
        Family("oracle_tablespace_max_bytes", "gauge",
               "Size the tablespace can reach, autoextend MAXSIZE included, bytes "
               "(TABLESPACE_USAGE_METRICS.TABLESPACE_SIZE x block size).", LABELS,
               source='TABLESPACE_SIZE (blocks) x BLOCK_SIZE: the size the tablespace can reach, autoextensible files counted at MAXSIZE; on 19c (and later) Oracle also caps it at the free space of the file system or ASM disk group holding the files; on 11.2 and 12.1 it is the sum of MAXSIZE'),
        Family("oracle_tablespace_info", "gauge",
               "Tablespace status (ONLINE, READ ONLY, OFFLINE from (CDB_|DBA_)TABLESPACES.STATUS), value 1.",
               (*LABELS, "status"), source='STATUS of (CDB_|DBA_)TABLESPACES: ONLINE, READ ONLY, OFFLINE; the alert rules never judge the fullness of a READ ONLY or OFFLINE tablespace',
               measure='1'),
    ), doc='Connected to a CDB root the exporter reads `CDB_TABLESPACE_USAGE_METRICS` and `CDB_TABLESPACES` (every open container) and names containers from `V$CONTAINERS` (`container="CDB$ROOT"`, `"SALES"`, ...; a CON_ID without a name is given as its number); anywhere else (non-CDB, a PDB, 11g) `DBA_TABLESPACE_USAGE_METRICS` / `DBA_TABLESPACES` with `container=""`. Block sizes are per tablespace (non-default block size tablespaces exist); without the tablespaces view the `db_block_size` parameter is used, and without either the tablespace is left out rather than guessed. `contents` is Oracle\'s CONTENTS: `PERMANENT`, `TEMPORARY`, `UNDO` (21c: `LOST WRITE PROTECTION`). Undo "used" includes unexpired undo that Oracle reuses on demand and temp "used" is sort space in use: alert on PERMANENT by percent and days-to-full (`predict_linear(oracle_tablespace_used_bytes[6h], 4*86400) > oracle_tablespace_max_bytes`), on TEMPORARY/UNDO differently. Fetched every 5 minutes by default (see collector intervals).\n\nMaximum size per release: on 11.2 and 12.1 TABLESPACE_SIZE is the sum of the data files\' MAXSIZE (autoextensible) or size; on 19c (and later) Oracle also caps it at the free space of the file system or ASM disk group holding the files, so the maximum shrinks while the storage fills (other databases\' growth raises this tablespace\'s percent used: see the ASM alerts). `oracle_tablespace_info{status}` carries STATUS (ONLINE, READ ONLY, OFFLINE): the rules never judge READ ONLY or OFFLINE tablespaces. 11.2 (thick mode): no CON_ID, no CDB_ views, no V$CONTAINERS; the DBA_ views are read in their place (V$INSTANCE in place of V$CONTAINERS, its rows unused) and `container` is empty.', title='Tablespaces')
NAME, VIEWS = SPEC.name, SPEC.reads

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


def statuses(snapshot: Any) -> list[tuple[str, str, str, str]]:
    """[(container, tablespace, contents, status)] sorted, from (CDB_|DBA_)TABLESPACES."""
    names = container_names(snapshot)
    out: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for row in _pick(snapshot, "CDB_TABLESPACES", "DBA_TABLESPACES"):
        cid, name, status = con_id(row), clean(row.get("TABLESPACE_NAME")), clean(row.get("STATUS")).upper()
        if not name or not status:
            continue
        container = "" if cid == 0 else names.get(cid, str(cid))
        out.setdefault((container, name), (container, name, clean(row.get("CONTENTS")), status))
    return [out[k] for k in sorted(out)]


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
    used = SPEC.family("oracle_tablespace_used_bytes")
    size = SPEC.family("oracle_tablespace_max_bytes")
    for container, name, contents, used_b, max_b in usage(snapshot):
        used.add_metric([container, name, contents], used_b)
        size.add_metric([container, name, contents], max_b)
    info = SPEC.family("oracle_tablespace_info")
    for container, name, contents, status in statuses(snapshot):
        info.add_metric([container, name, contents, status], 1.0)
    yield from emit([used, size, info])
