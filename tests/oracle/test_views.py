"""The view registry (oracle_exporter.views): one description per view, from which the SQL,
row cleaning, replay counters and fallbacks derive."""
from __future__ import annotations

import pytest

from oracle_exporter import views
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.replay import COUNTERS
from oracle_sim import OracleSim, collect, samples


def rac_two_threads() -> OracleSim:
    return OracleSim([(1, "ODS1", "dbhost1", 1), (2, "ODS2", "dbhost2", 2)], groups_per_thread=3)


def test_gv_log_row_identity_is_the_group_not_the_thread():
    """V$LOG has one row per redo log group (GROUP# is unique in the database; each group
    belongs to one THREAD#) and GV$LOG repeats every group once per instance. Keying rows by
    (INST_ID, THREAD#) would keep one group per thread and lose the others' metrics."""
    snap = rac_two_threads().snapshot()
    rows = snap.rows("GV$LOG")
    assert len(rows) == 2 * 2 * 3                      # 2 instances x 2 threads x 3 groups
    assert {(r["INST_ID"], r["GROUP#"]) for r in rows} == {(i, g) for i in (1, 2) for g in range(1, 7)}
    got = samples(collect(snap, names=["redo"]))
    groups = {dict(labels)["group"] for (name, labels) in got if name == "oracle_redo_log_group_size_bytes"}
    assert groups == {str(g) for g in range(1, 7)}
    assert views.LOG.identity == ("INST_ID", "THREAD#", "GROUP#")


def test_gv_log_identity_folds_container_repeats_of_one_group():
    """A CDB recorder that lists a group once per container: one row per group survives."""
    rec = rac_two_threads().record()
    rec["views"]["GV$LOG"] = [dict(r, CON_ID=c) for r in rec["views"]["GV$LOG"] for c in (0, 1)]
    snap = Snapshot.from_obj(rec)
    assert len(snap.rows("GV$LOG")) == 12 and {r["CON_ID"] for r in snap.rows("GV$LOG")} == {0}


def test_gv_log_sequence_counts_per_thread():
    """SEQUENCE# advances per redo thread: replay shifts all groups of a thread together."""
    assert COUNTERS["GV$LOG"].series_identity == ("INST_ID", "THREAD#")


def test_every_counter_view_is_registered_with_an_identity():
    for name, view in COUNTERS.items():
        assert views.get(name) is view and view.identity, name


def test_a_fallback_is_a_registered_view_or_a_variant_of_the_same_name():
    for name, view in views.all_views().items():
        for fb in view.fallbacks:
            assert fb.codes and all(c.startswith("ORA-") for c in fb.codes)
            assert fb.use.name == name or views.get(fb.use.name) is fb.use, (name, fb.use.name)


def test_statement_of_a_name_filtered_view_binds_every_name_once():
    q = views.SYSMETRIC.statement(["Current OS Load", "Average Active Sessions", "Current OS Load"])
    assert q.sql == ("SELECT INST_ID, METRIC_NAME, VALUE, METRIC_UNIT, GROUP_ID, INTSIZE_CSEC, CON_ID FROM "
                     "GV$SYSMETRIC WHERE GROUP_ID = :grp AND METRIC_NAME IN (:n0, :n1)")
    before_12_1 = views.SYSMETRIC.statement(["Current OS Load"], con_id=False)
    assert before_12_1.sql.startswith("SELECT INST_ID, METRIC_NAME, VALUE, METRIC_UNIT, GROUP_ID, INTSIZE_CSEC FROM ")
    assert q.binds == {"grp": 2, "n0": "Current OS Load", "n1": "Average Active Sessions"}


def test_register_refuses_a_second_definition_and_bad_columns():
    with pytest.raises(ValueError, match="registered twice"):
        views.register(views.View("GV$LOG", ("INST_ID",)))
    with pytest.raises(ValueError, match="identity"):
        views.register(views.View("GV$X_TEST", ("A",), identity=("B",)))
    assert views.get("GV$X_TEST") is None


def test_row_orders_columns_like_the_statement_and_refuses_strangers():
    assert list(views.row("GV$SYSTEM_PARAMETER", VALUE="1", NAME="cpu_count", INST_ID=1)) == ["INST_ID", "NAME", "VALUE"]
    with pytest.raises(ValueError, match="CON_ID"):
        views.row("GV$SYSTEM_PARAMETER", VALUE="1", NAME="cpu_count", INST_ID=1, CON_ID=0)
