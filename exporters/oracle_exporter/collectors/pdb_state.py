"""Open mode and restricted state of every PDB (GV$PDBS, 12.1+; on by default, read every minute).

A PDB left MOUNTED after an instance restart (no saved state, ``ALTER PLUGGABLE DATABASE ...
SAVE STATE`` forgotten) or opened RESTRICTED (a plug-in with violations, an upgrade left
half done) is the most common multitenant outage: the CDB is up, ``oracle_up`` is 1, and the
application cannot connect. GV$PDBS has one row per PDB and instance, from CDB$ROOT every PDB,
from a PDB that PDB only; a non-CDB has none (nothing is exported then).

* ``oracle_pdb_open_mode{inst_id, pdb, open_mode}``: 1 for the PDB's open mode on that
  instance, 0 for the other modes (MOUNTED, READ WRITE, READ ONLY, MIGRATE; a mode a later
  release adds gets a series of its own), so ``oracle_pdb_open_mode{open_mode="READ WRITE"} == 0``
  finds a PDB that is not open for writing on an instance, and the series never vanish while
  the PDB exists.
* ``oracle_pdb_restricted{inst_id, pdb}``: 1 when only RESTRICTED SESSION users may connect;
  absent while the PDB is MOUNTED (RESTRICTED is NULL then).

PDB$SEED (CON_ID 2, always READ ONLY) is left out; the ``pdbs`` allow-list of the pdb
collector applies here too (case-blind). On by default (OraclePdbNotOpen pages on it): one cheap
statement a minute, a row per PDB and instance. Before 12.1 (no GV$PDBS, ORA-00942) one row of
V$INSTANCE is read in its place, as for V$CONTAINERS, and nothing is exported.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..ora_errors import MISSING_VIEW
from ..views import CONTAINERS_BEFORE_12, Fallback, View, register
from ._common import emit, inst, sorted_inst
from ._health import clean, con_id

PDBS = register(View(
    "GV$PDBS", ("INST_ID", "CON_ID", "NAME", "OPEN_MODE", "RESTRICTED"),
    identity=("INST_ID", "CON_ID"), since="12.1",
    fallbacks=(Fallback(MISSING_VIEW, CONTAINERS_BEFORE_12, "no PDBs before 12.1"),),
    doc="V$PDBS, open mode and restricted state of each PDB of the instance"))

OPEN_MODES = ("MOUNTED", "READ WRITE", "READ ONLY", "MIGRATE")
SEED_CON_ID = 2

SPEC = Collector(
    "pdb_state", "Open mode and restricted state of every PDB (GV$PDBS).",
    title="PDB open mode",
    reads=(PDBS.name,),
    interval=60.0,
    doc="On by default, read every minute. A PDB left MOUNTED after an instance restart, or opened RESTRICTED, is the most common "
        "multitenant outage: the CDB is up and oracle_up is 1 while the application cannot connect. "
        "PDB$SEED is left out; the pdb collector's `pdbs` allow-list applies. A non-CDB has no rows.",
    metrics=(
        Family("oracle_pdb_open_mode", "gauge",
               "1 for the PDB's open mode on the instance, 0 for the other modes (GV$PDBS.OPEN_MODE).",
               ("inst_id", "pdb", "open_mode"), source="GV$PDBS.OPEN_MODE", since="12.1",
               note="open_mode: MOUNTED, READ WRITE, READ ONLY, MIGRATE (and any mode a later release adds)."),
        Family("oracle_pdb_restricted", "gauge",
               "1 if only users with RESTRICTED SESSION may connect to the PDB, else 0 (GV$PDBS.RESTRICTED; "
               "absent while MOUNTED).", ("inst_id", "pdb"), source="GV$PDBS.RESTRICTED", since="12.1"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def states(rows: Iterable[dict[str, Any]], allowed: Iterable[str] = ()) -> dict[tuple[str, str], tuple[str, str]]:
    """{(inst_id, pdb): (OPEN_MODE, RESTRICTED)} of the PDBs to export (seed and unnamed rows left out)."""
    wanted = {str(p).upper() for p in allowed}
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for row in rows:
        i, name = inst(row), clean(row.get("NAME"))
        if i is None or not name or con_id(row) == SEED_CON_ID or (wanted and name.upper() not in wanted):
            continue
        if not clean(row.get("OPEN_MODE")):      # unknown (NULL): no series, never "not open"
            continue
        out.setdefault((i, name), (clean(row.get("OPEN_MODE")).upper(), clean(row.get("RESTRICTED")).upper()))
    return out


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    mode = SPEC.family("oracle_pdb_open_mode")
    restricted = SPEC.family("oracle_pdb_restricted")
    found = states(snapshot.rows(PDBS.name), getattr(settings, "pdbs", None) or ())
    for i in sorted_inst({i for i, _ in found}):
        for (inst_id, pdb), (open_mode, restr) in sorted(found.items()):
            if inst_id != i:
                continue
            for m in OPEN_MODES + ((open_mode,) if open_mode and open_mode not in OPEN_MODES else ()):
                mode.add_metric([i, pdb, m], 1.0 if m == open_mode else 0.0)
            if restr in ("YES", "NO"):
                restricted.add_metric([i, pdb], 1.0 if restr == "YES" else 0.0)
    yield from emit([mode, restricted])
