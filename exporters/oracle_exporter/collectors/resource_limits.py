"""Resource limits (GV$RESOURCE_LIMIT): processes, sessions, transactions ... against their limit.

ORA-00020 (maximum number of processes exceeded) and ORA-00018 (maximum number
of sessions exceeded) refuse every new connection; alerting on
current / limit gives warning before that.

* ``oracle_resource_current_utilization{inst_id, resource}``: CURRENT_UTILIZATION.
* ``oracle_resource_max_utilization{inst_id, resource}``: MAX_UTILIZATION, the
  highest since instance start.
* ``oracle_resource_limit{inst_id, resource}``: LIMIT_VALUE. The column is text
  (VARCHAR2, blank-padded) and reads ``UNLIMITED`` for resources without a
  limit: no limit series then, so current / limit has no series rather than a
  division by a made-up number (Oracle's own exporter writes -1).

``resource`` is RESOURCE_NAME trimmed (processes, sessions, enqueue_locks,
transactions, max_shared_servers, parallel_max_servers, ...; about 20 to 30
rows per instance). In a CDB the view may list a resource per container: the
lowest CON_ID wins (the instance-wide row).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import RESOURCE_LIMIT
from ._common import emit, inst, num
from ._health import clean, lowest_container

_LABELS = ("inst_id", "resource")
SPEC = Collector(
    "resource_limits", "Use of processes, sessions, transactions ... against their limit (ORA-00020, ORA-00018).",
    reads=(RESOURCE_LIMIT.name,),
    metrics=(
        Family("oracle_resource_current_utilization", "gauge",
               "Current use of the resource (GV$RESOURCE_LIMIT.CURRENT_UTILIZATION).", _LABELS,
               source='GV$RESOURCE_LIMIT.CURRENT_UTILIZATION', measure='count'),
        Family("oracle_resource_max_utilization", "gauge",
               "Highest use of the resource since instance start (GV$RESOURCE_LIMIT.MAX_UTILIZATION).", _LABELS,
               source='MAX_UTILIZATION: highest since instance start', measure='count'),
        Family("oracle_resource_limit", "gauge",
               "Limit of the resource (GV$RESOURCE_LIMIT.LIMIT_VALUE); no series when UNLIMITED.", _LABELS,
               source="LIMIT_VALUE (text, blank-padded); **no series when it reads UNLIMITED** (Oracle's exporter writes -1 instead)", note="LIMIT_VALUE is text; UNLIMITED gives no series.", measure='count'),
    ), doc='`resource` is RESOURCE_NAME trimmed: processes, sessions, transactions, enqueue_locks, enqueue_resources, max_shared_servers, parallel_max_servers, ... (20 to 30 per instance). Headroom before ORA-00020 (processes) / ORA-00018 (sessions): `oracle_resource_current_utilization{resource=~"processes|sessions"} / oracle_resource_limit`. In a CDB a resource listed per container counts once: the lowest CON_ID (instance-wide) row.', title='Resource limits')
NAME, VIEWS = SPEC.name, SPEC.reads

def limit_value(value: Any) -> float | None:
    """LIMIT_VALUE as a number; None for UNLIMITED, NULL or anything non-numeric."""
    if isinstance(value, str) and value.strip().upper() == "UNLIMITED":
        return None
    return num(value)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    rows = lowest_container(snapshot.rows("GV$RESOURCE_LIMIT"), ("INST_ID", "RESOURCE_NAME"))
    current = SPEC.family("oracle_resource_current_utilization")
    highest = SPEC.family("oracle_resource_max_utilization")
    limit = SPEC.family("oracle_resource_limit")
    ordered = sorted(rows, key=lambda r: (num(r.get("INST_ID")) or 0, clean(r.get("RESOURCE_NAME"))))
    for row in ordered:
        i, name = inst(row), clean(row.get("RESOURCE_NAME"))
        if i is None or not name:
            continue
        for family, value in ((current, num(row.get("CURRENT_UTILIZATION"))),
                              (highest, num(row.get("MAX_UTILIZATION"))),
                              (limit, limit_value(row.get("LIMIT_VALUE")))):
            if value is not None:
                family.add_metric([i, name], value)
    yield from emit([current, highest, limit])
