"""rev-views #2: the capacity report judges a RAC database per instance, as the alerts do
(OracleLogFileParallelWriteSlow, OracleLogFileSyncSlow, OracleRedoBufferAllocationRetries judge
each inst_id), against a real Prometheus. RACX: instance 1 writes redo in 10 ms (100 writes/s)
and commits in 12 ms (100/s), instance 2 in 0.5 ms and 1 ms (900/s each); 0.06 redo buffer
allocation retries/s on each instance (R10: > 0.1/s per instance). The pooled figures were
1.45 ms and 2.1 ms ("ok") and 0.12/s (a FINDING no alert raises)."""
from __future__ import annotations

import pytest

from conftest import real_prometheus
from fleetview import capacity
from fleetview.core import Upstream, load_spec

pytestmark = pytest.mark.e2e

T0 = 1795860000          # 2026-11-28T10:00:00Z
WINDOW = "2026-11-28T10:00:00Z/2026-11-28T11:00:00Z"


def _openmetrics() -> str:
    lines: dict[str, list[str]] = {}
    ora = 'database="RACX",instance="exp:19161",job="oracle"'

    def add(name, labels, rate, t):
        lines.setdefault(name, []).append(f"{name}{{{ora},{labels}}} {rate * (t - T0) + 1000.0} {t}")
    for t in range(T0 - 600, T0 + 3600 + 1, 15):
        lines.setdefault("oracle_up", []).append(f"oracle_up{{{ora}}} 1 {t}")
        for inst, (lpw, lpw_avg, sync, sync_avg) in {"1": (100, 0.010, 100, 0.012), "2": (900, 0.0005, 900, 0.001)}.items():
            add("oracle_redo_buffer_allocation_retries_total", f'inst_id="{inst}"', 0.06, t)
            for ev, w, a, cls in (("log file parallel write", lpw, lpw_avg, "System I/O"),
                                  ("log file sync", sync, sync_avg, "Commit")):
                lab = f'inst_id="{inst}",event="{ev}",wait_class="{cls}"'
                add("oracle_wait_event_waits_total", lab, w, t)
                add("oracle_wait_event_time_seconds_total", lab, w * a, t)
    return "\n".join(line for ls in lines.values() for line in ls) + "\n# EOF\n"


def test_a_slow_rac_instance_is_judged_as_the_alerts_judge_it(tmp_path):
    with real_prometheus(tmp_path / "rac", _openmetrics()) as url:
        start, end, offset = capacity.windows(WINDOW, "1d")
        rep = capacity.collect(load_spec(), Upstream(url), "RACX", start, end, offset, charts=False)
    waits = {r.label: r for s in rep.sections if s.id == "waits" for r in s.rows}
    lpw, sync = waits["log file parallel write"], waits["log file sync"]
    assert lpw.now["avg_now"] == pytest.approx(0.010, rel=0.02)         # instance 1's, not 1.45 ms pooled
    assert sync.now["avg_now"] == pytest.approx(0.012, rel=0.02)
    assert lpw.now["waits_now"] == pytest.approx(1000, rel=0.02)        # the database's total stays
    assert lpw.now["inst_waits_now"] == pytest.approx(900, rel=0.02)
    assert (lpw.verdict_now.kind, sync.verdict_now.kind) == ("finding", "finding")
    redo = {r.label: r for s in rep.sections if s.id == "redo" for r in s.rows}
    r10 = next(r for label, r in redo.items() if r.threshold == "R10")
    assert r10.now["now"] == pytest.approx(0.06, rel=0.02) and r10.verdict_now.kind == "ok"   # 0.06/s per instance
    assert {t for t, _, _ in rep.findings("now")} == {"R1", "R2"}, rep.findings("now")
