"""Row cleaning's one-row-per-identity rule (oracle_exporter.rows) and its shortcut: rows whose
identities are already all distinct are returned without a normalised key per row. The shortcut
must give exactly what the rule gives, or a CDB that lists a parameter once per container would
double a sum, and an INST_ID recorded as "1" next to 1 would emit a series twice."""
from __future__ import annotations

import random
from decimal import Decimal

from oracle_exporter import rows as R
from oracle_exporter.snapshot import Snapshot


def _snap(view: str, rows: list[dict]) -> Snapshot:
    return Snapshot("DB", "2026-01-01T00:00:00Z", {view: rows})


def test_numeric_string_inst_id_next_to_a_number_is_one_instance():
    """INST_ID "1" (a VARCHAR2 recorder) and 1: the same instance; the lowest CON_ID row stays."""
    rows = [{"INST_ID": "1", "NAME": "user commits", "VALUE": 5, "CON_ID": 1},
            {"INST_ID": 1, "NAME": "user commits", "VALUE": 7, "CON_ID": 0}]
    assert not R._distinct(rows, ("INST_ID", "NAME"))
    assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == [rows[1]]


def test_padded_numeric_strings_are_one_identity():
    rows = [{"INST_ID": " 2", "NAME": "x", "VALUE": 1}, {"INST_ID": "2.0", "NAME": "x", "VALUE": 2}]
    assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == [rows[0]]
    for a, b in ((" 1", "  1.0"), ("+1", "+1.0"), (".5", "\t.50")):   # no plain digit first
        rows = [{"INST_ID": a, "NAME": "x", "VALUE": 1}, {"INST_ID": b, "NAME": "x", "VALUE": 2}]
        assert not R._distinct(rows, ("INST_ID", "NAME")), (a, b)
        assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == [rows[0]]


def test_int_and_float_ids_are_one_identity_lowest_con_id_wins_in_any_order():
    a = {"INST_ID": 1, "NAME": "x", "VALUE": 1, "CON_ID": 3}
    b = {"INST_ID": 1.0, "NAME": "x", "VALUE": 2, "CON_ID": 1}
    c = {"INST_ID": 2, "NAME": "x", "VALUE": 3}
    assert _snap("GV$SYSSTAT", [a, b, c]).rows("GV$SYSSTAT") == [b, c]
    assert _snap("GV$SYSSTAT", [c, b, a]).rows("GV$SYSSTAT") == [c, b]


def test_a_parameter_listed_per_container_keeps_the_cdb_row():
    rows = [{"INST_ID": 1, "NAME": "processes", "VALUE": "300", "CON_ID": c} for c in (3, 1, 0, 4)]
    assert _snap("GV$SYSTEM_PARAMETER", rows).rows("GV$SYSTEM_PARAMETER") == [rows[2]]


def test_distinct_identities_come_back_as_they_are():
    """The ordinary case (one row per statistic and instance): the very list, no copy."""
    rows = [{"INST_ID": i, "NAME": f"stat {n}", "VALUE": n} for i in (1, 2) for n in range(50)]
    snap = _snap("GV$SYSSTAT", rows)
    assert R._distinct(snap.views["GV$SYSSTAT"], ("INST_ID", "NAME"))
    assert snap.rows("GV$SYSSTAT") is snap.views["GV$SYSSTAT"]


def test_numeric_string_names_that_differ_stay_distinct_and_equal_ones_fold():
    ok = [{"INST_ID": 1, "NAME": "1", "VALUE": 1}, {"INST_ID": 1, "NAME": "2", "VALUE": 2}]
    assert R._distinct(ok, ("INST_ID", "NAME"))
    folded = [{"INST_ID": 1, "NAME": "1", "VALUE": 1}, {"INST_ID": 1, "NAME": "01", "VALUE": 2}]
    assert not R._distinct(folded, ("INST_ID", "NAME"))
    assert _snap("GV$SYSSTAT", folded).rows("GV$SYSSTAT") == [folded[0]]


def test_a_decimal_next_to_a_numeric_string_goes_through_the_rule():
    """Decimal(1) == 1 but the rule keys it as the text "1", which equals no number: only the rule
    knows, so the shortcut must not answer."""
    rows = [{"INST_ID": Decimal(1), "NAME": "a", "VALUE": 1}, {"INST_ID": 1, "NAME": "b", "VALUE": 1},
            {"INST_ID": "1", "NAME": "b", "VALUE": 2}]
    assert not R._distinct(rows, ("INST_ID", "NAME"))
    assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == rows[:2]


def test_missing_identity_column_counts_as_null():
    rows = [{"NAME": "x", "VALUE": 1}, {"INST_ID": None, "NAME": "x", "VALUE": 2}, {"INST_ID": 1, "NAME": "x"}]
    assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == [rows[0], rows[2]]


def test_unhashable_identity_value_goes_through_the_rule():
    rows = [{"INST_ID": 1, "NAME": ["a"], "VALUE": 1}, {"INST_ID": 1, "NAME": "['a']", "VALUE": 2}]
    assert not R._distinct(rows, ("INST_ID", "NAME"))
    assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == [rows[0]]


def test_huge_ints_a_float_cannot_tell_apart_go_through_the_rule():
    rows = [{"INST_ID": 2 ** 53, "NAME": "x"}, {"INST_ID": 2 ** 53 + 1, "NAME": "x"}]
    assert not R._distinct(rows, ("INST_ID", "NAME"))
    assert _snap("GV$SYSSTAT", rows).rows("GV$SYSSTAT") == [rows[0]]


_VALUES = [1, 1.0, 2, "1", " 1", "1.0", "2", "+2", "-0", 0, -0.0, 0.0, True, False, None, "", "a", " a", "a ",
           "log file sync", Decimal(1), Decimal("2.0"), float("nan"), "nan", "+nan", 2 ** 53 + 1, 2 ** 53, "٣",
           " 2", "  2.0", "+1.0", ".5", "\t.50", 0.5]


def test_shortcut_agrees_with_the_rule_on_mixed_identities():
    """Random views of ints, floats, bools, numeric and other strings, Decimals, NaN and NULLs,
    with and without CON_IDs: whenever the shortcut answers, the rule keeps every row; and
    clean_rows always returns what the rule returns."""
    rng = random.Random(26)
    answered = 0
    for _ in range(4000):
        ident = ("INST_ID", "EVENT") if rng.random() < 0.7 else ("INST_ID", "EVENT", "WAIT_TIME_MICRO")
        rows = []
        for _ in range(rng.randint(1, 6)):
            row = {c: rng.choice(_VALUES) for c in ident if rng.random() < 0.95}
            if rng.random() < 0.5:
                row["CON_ID"] = rng.choice([0, 1, 2, 3, "1", None, 1.0])
            row["WAIT_COUNT"] = rng.randint(0, 9)
            rows.append(row)
        rule = R._one_per_identity(rows, ident)
        if R._distinct(rows, ident):
            answered += 1
            assert rule is rows, rows
        view = "GV$SYSTEM_EVENT" if len(ident) == 2 else "GV$EVENT_HISTOGRAM_MICRO"
        assert _snap(view, rows).rows(view) == rule, rows
    assert answered > 1000      # the shortcut is exercised, not only its refusals


def test_values_shared_by_collectors_of_one_snapshot_are_what_each_would_compute_alone():
    """GV$SYSSTAT per instance and the parameters are computed once per snapshot and shared by
    the collectors that read them (pga, redo, load_profile, rac_gc, time_model, instance, ...):
    every collector, run after all the others on one snapshot, gives what it gives on a snapshot
    of its own, and a shared value is the same object on the second ask."""
    from oracle_exporter.collectors import COLLECTORS
    from oracle_exporter.collectors._common import inst_stats, parameters
    from oracle_sim import OracleSim, collect, samples

    sim = OracleSim([(1, "ODS1", "dbhost1", 1), (2, "ODS2", "dbhost2", 2)], groups_per_thread=2)
    shared = sim.snapshot()
    collect(shared)             # every collector once: the shared values are computed and kept
    for name in COLLECTORS:
        alone = samples(collect(sim.snapshot(), names=[name]))
        again = samples(collect(shared, names=[name]))
        assert again == alone, name
    stats = inst_stats(shared)
    assert stats is inst_stats(shared) and stats["2"]["user commits"] > 0
    assert parameters(shared) is parameters(shared) and parameters(shared)["1"]
    fresh = sim.snapshot()
    assert inst_stats(fresh) == stats and inst_stats(fresh) is not stats
