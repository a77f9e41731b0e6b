"""The simulator (oracle_sim.OracleSim) is shaped like the views it imitates:
the collector tests are only as good as the rows they run on."""
from __future__ import annotations

from oracle_exporter.config import Settings

import math

from oracle_sim import OracleSim, select_columns


# --- the generator is shaped like the views it imitates --------------------------

def test_generated_rows_have_exactly_the_selected_columns():
    from oracle_exporter.queries import build_queries
    for micro in (True, False):
        sim = OracleSim(micro_histogram=micro)
        sim.advance(15, events={"log file sync": (10, 0.002)})
        rec = sim.record()
        queries = build_queries(Settings(histogram_events=["log file sync"]),       # pdb collector off
                                fallen_back=[] if micro else ["GV$EVENT_HISTOGRAM_MICRO"])
        assert set(rec["views"]) == set(queries), "generator and build_queries disagree on the views"
        for view, query in queries.items():
            wanted = select_columns(query.sql)
            # a primary has no managed recovery: no MRP0 row in GV$MANAGED_STANDBY (issue 22)
            assert rec["views"][view] or view == "GV$MANAGED_STANDBY", view
            for row in rec["views"][view]:
                assert list(row) == wanted, (view, list(row), wanted)


def test_generated_histogram_rows_sum_to_total_waits_and_follow_bucket_rule():
    sim = OracleSim()
    sim.advance(60, events={"log file parallel write": (74, 0.0118)})
    rec = sim.record()
    (event,) = rec["views"]["GV$SYSTEM_EVENT"]
    rows = rec["views"]["GV$EVENT_HISTOGRAM_MICRO"]
    assert sum(r["WAIT_COUNT"] for r in rows) == event["TOTAL_WAITS"] == 4440
    assert event["TIME_WAITED_MICRO"] == 4440 * 11800
    durations = sim.instances[0].durations["log file parallel write"]
    for r in rows:                       # bucket n holds waits with n/2 <= d < n (d < 1 for n = 1)
        n = r["WAIT_TIME_MICRO"]
        lo = 0 if n == 1 else n / 2
        assert r["WAIT_COUNT"] == sum(1 for d in durations if lo <= d * 1e6 < n)
    assert math.isclose(sum(durations) / len(durations), 0.0118, rel_tol=1e-12)
