"""Fast recovery area (V$RECOVERY_FILE_DEST): a full FRA stops archiving, then the database.

* ``oracle_recovery_area_limit_bytes``: SPACE_LIMIT (DB_RECOVERY_FILE_DEST_SIZE).
* ``oracle_recovery_area_used_bytes``: SPACE_USED.
* ``oracle_recovery_area_reclaimable_bytes``: SPACE_RECLAIMABLE, what Oracle
  deletes on its own when it needs room (obsolete backups, archived logs
  already backed up). The space that matters is used - reclaimable.
* ``oracle_recovery_area_files``: NUMBER_OF_FILES.
* ``oracle_recovery_area_info{destination, diskgroup}``, value 1: NAME (DB_RECOVERY_FILE_DEST),
  and the ASM disk group it lives in when NAME is an ASM name ('+FRA' or '+FRA/...': ``FRA``),
  else empty. The ASM space alert credits the reclaimable bytes to that disk group.

No recovery area configured (no row, or a row with an empty NAME): no series.
V$RECOVERY_FILE_DEST describes the database (every instance shows the same
row), hence no ``inst_id`` label.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import RECOVERY_FILE_DEST
from ._common import emit, num
from ._health import clean

SPEC = Collector(
    "recovery_area", "The fast recovery area: limit, used, reclaimable (V$RECOVERY_FILE_DEST).",
    reads=(RECOVERY_FILE_DEST.name,),
    interval=60.0,      # the FRA fills over minutes (collector_intervals overrides)
    metrics=(
        Family('oracle_recovery_area_limit_bytes', "gauge", 'Size limit of the fast recovery area, bytes (V$RECOVERY_FILE_DEST.SPACE_LIMIT).', (), source='SPACE_LIMIT (DB_RECOVERY_FILE_DEST_SIZE)'),
        Family('oracle_recovery_area_used_bytes', "gauge", 'Space used in the fast recovery area, bytes (SPACE_USED).', (), source='SPACE_USED'),
        Family('oracle_recovery_area_reclaimable_bytes', "gauge", 'Used space Oracle can reclaim on its own, bytes (SPACE_RECLAIMABLE).', (), source='SPACE_RECLAIMABLE: obsolete or backed-up files Oracle deletes by itself when it needs room'),
        Family('oracle_recovery_area_files', "gauge", 'Files in the fast recovery area (NUMBER_OF_FILES).', (), source='NUMBER_OF_FILES', measure='files'),
        Family('oracle_recovery_area_info', "gauge", 'The fast recovery area\'s destination and the ASM disk group it lives in, value 1.', ('destination', 'diskgroup'), source="NAME (DB_RECOVERY_FILE_DEST); `diskgroup`: the ASM disk group of an ASM name ('+FRA' -> FRA, upper case), empty for a file system", measure='1'),
    ), doc='No recovery area configured: no series. A full FRA stops archiving (ORA-19809/ORA-00257), then every commit: the space that counts is `(oracle_recovery_area_used_bytes - oracle_recovery_area_reclaimable_bytes) / oracle_recovery_area_limit_bytes`.', title='Fast recovery area')
NAME, VIEWS = SPEC.name, SPEC.reads

# metric, column
COLUMNS = (
    ('oracle_recovery_area_limit_bytes', 'SPACE_LIMIT'),
    ('oracle_recovery_area_used_bytes', 'SPACE_USED'),
    ('oracle_recovery_area_reclaimable_bytes', 'SPACE_RECLAIMABLE'),
    ('oracle_recovery_area_files', 'NUMBER_OF_FILES'),
)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    rows = [r for r in snapshot.rows("V$RECOVERY_FILE_DEST") if clean(r.get("NAME"))]
    families = []
    for name, column in COLUMNS:
        family = SPEC.family(name)
        if rows:                        # one recovery area per database; the first row if a recording repeats it
            value = num(rows[0].get(column))
            if value is not None:
                family.add_metric([], value)
        families.append(family)
    info = SPEC.family("oracle_recovery_area_info")
    if rows:
        dest = clean(rows[0].get("NAME"))
        info.add_metric([dest, diskgroup(dest)], 1)
    families.append(info)
    yield from emit(families)


def diskgroup(dest: str) -> str:
    """The ASM disk group of a recovery area destination: '+FRA' and '+fra/ODS' are FRA (ASM names
    are case-insensitive, V$ASM_DISKGROUP shows them in upper case); a directory is ''."""
    if not dest.startswith("+"):
        return ""
    return dest[1:].split("/", 1)[0].strip().upper()
