"""The collectors against recordings shaped like other releases and set-ups.

Every variant is produced from the OracleSim generator (test_collectors_gen.py) by a
transformation that imitates what a real release or recorder returns: multitenant
CON_ID columns and per-container rows (12.1+), V$ instead of GV$ views, extra
columns and lower-case keys, numbers as strings, NULLs, a RAC instance down, 11g
millisecond histograms, 23ai WAIT_TIME_FORMAT. The expected values come from the
plain (non-CDB, GV$, 19c) snapshot of the same simulator state, never from the
collector under test.
"""
from __future__ import annotations

import copy
import json
import shutil
import subprocess

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from oracle_exporter.snapshot import Snapshot
from oracle_sim import OracleSim, collect, samples, value

PROMTOOL = shutil.which("promtool")


def sim_record(micro: bool = True, instances=None) -> dict:
    sim = OracleSim(instances=instances, micro_histogram=micro)
    sim.advance(60, events={"log file parallel write": (74, 0.0118), "log file sync": (72, 0.02645),
                            "db file sequential read": (170, 0.010)},
                stats={"redo size": 9_450_000, "redo writes": 74, "user commits": 72, "redo write time": 0.9,
                       "redo synch time (usec)": 19_440, "redo synch writes": 72},
                latches={"redo allocation": {"GETS": 14_000, "MISSES": 3},
                         "cache buffers chains": {"GETS": 40_000, "MISSES": 20}},
                switches={1: 2})
    return sim.record()


def row_value(record: dict, view: str, column: str, inst_id: int = 1, **match) -> float:
    """The raw value of one row of the plain record (the expected value, read from the generator)."""
    (row,) = [r for r in record["views"][view] if r["INST_ID"] == inst_id
              and all(r.get(k) == v for k, v in match.items())]
    return row[column]


def snap(record: dict) -> Snapshot:
    return Snapshot.from_obj(json.loads(json.dumps(record)))


def exposition(families) -> bytes:
    class Fixed:
        def collect(self):
            return families

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())
    return generate_latest(registry)


def promtool_ok(text: bytes) -> None:
    if PROMTOOL is None:
        pytest.skip("promtool not installed")
    res = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, timeout=60)
    assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), (
        res.stdout.decode() + res.stderr.decode())


# --- generators of release / set-up variants ---------------------------------------

def as_cdb(record: dict) -> dict:
    """A 12.1+ CDB root: every row carries CON_ID 0; in addition a recorder that also
    read the per-container views adds rows for CDB$ROOT (1) and a PDB (3) with the
    same identity and smaller values, GV$SYSTEM_PARAMETER lists a PDB-modified value, and
    GV$INSTANCE / GV$LOG rows are repeated per container."""
    rec = copy.deepcopy(record)
    views = rec["views"]
    for rows in views.values():
        for row in rows:
            row.setdefault("CON_ID", 0)         # CDB_ views carry their own container
    extra = {}
    for view in ("GV$SYSSTAT", "GV$SYSTEM_EVENT", "GV$LATCH", "GV$EVENT_HISTOGRAM_MICRO", "GV$PGASTAT",
                 "GV$INSTANCE", "GV$LOG", "GV$SYSMETRIC"):
        extra[view] = []
        for con in (3, 1):                       # PDB rows listed before the root's: order must not matter
            for row in views.get(view, []):
                dup = dict(row, CON_ID=con)
                for col in ("VALUE", "TOTAL_WAITS", "TIME_WAITED_MICRO", "GETS", "MISSES", "WAIT_COUNT"):
                    if isinstance(dup.get(col), (int, float)):
                        dup[col] = dup[col] // 3
                extra[view].append(dup)
    for view, rows in extra.items():
        views[view] = rows + views[view]         # container rows first, CON_ID 0 rows last
    views["GV$SYSTEM_PARAMETER"] += [dict(r, CON_ID=3, VALUE="1048576") for r in views["GV$SYSTEM_PARAMETER"]
                              if r["NAME"] == "log_buffer"]
    return rec


def as_v_views(record: dict) -> dict:
    """A single-instance recorder that used V$ views: no GV$ names, no INST_ID column."""
    rec = copy.deepcopy(record)
    views = {}
    for name, rows in rec["views"].items():
        new = name[1:] if name.startswith("GV$") else name
        views[new] = [{k: v for k, v in r.items() if k != "INST_ID"} for r in rows]
    rec["views"] = views
    return rec


def with_extra_columns_lower_case(record: dict) -> dict:
    """SELECT * style rows: columns we never select, keys in lower case, view names in lower case."""
    rec = copy.deepcopy(record)
    views = {}
    for name, rows in rec["views"].items():
        new_rows = []
        for r in rows:
            r = dict({"CON_ID": 0}, **r, WAIT_CLASS_ID=1893977003, LAST_UPDATE_TIME="2024-03-01T12:00:00")
            new_rows.append({k.lower(): v for k, v in r.items()})
        views[name.lower()] = new_rows
    rec["views"] = views
    return rec


def numbers_as_strings(record: dict) -> dict:
    """A recorder that wrote Oracle NUMBERs as text: integers as "123", floats as "1.5E3"."""
    rec = copy.deepcopy(record)
    for rows in rec["views"].values():
        for r in rows:
            for k, v in list(r.items()):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                r[k] = f"{float(v):.17E}" if isinstance(v, float) else str(v)
    return rec


VARIANTS = {"cdb": as_cdb, "v_views": as_v_views, "extra_columns_lower_case": with_extra_columns_lower_case,
            "numbers_as_strings": numbers_as_strings}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_variant_gives_exactly_the_plain_values(variant):
    record = sim_record()
    expected = samples(collect(snap(record)))
    families = collect(snap(VARIANTS[variant](record)))
    got = samples(families)                      # raises on any duplicate series
    assert got == expected
    assert value(families, "oracle_redo_size_bytes_total", inst_id="1") == row_value(
        record, "GV$SYSSTAT", "VALUE", NAME="redo size")
    promtool_ok(exposition(families))


def test_cdb_duplicates_choose_the_lowest_container_whatever_the_row_order():
    plain = sim_record()
    record = as_cdb(plain)
    families = collect(snap(record))
    # CON_ID 0 wins over the PDB rows (1/3 of the value) listed before it
    assert value(families, "oracle_wait_event_waits_total", inst_id="1", event="log file sync",
                 wait_class="Commit") == row_value(plain, "GV$SYSTEM_EVENT", "TOTAL_WAITS", EVENT="log file sync")
    assert value(families, "oracle_log_buffer_bytes", inst_id="1") == float(
        row_value(plain, "GV$SYSTEM_PARAMETER", "VALUE", NAME="log_buffer")) != 1048576
    # without a CON_ID 0 row the root (1) wins over the PDB (3)
    rec = copy.deepcopy(record)
    for view in rec["views"].values():
        view[:] = [r for r in view if r.get("CON_ID") != 0]
    fam = collect(snap(rec))
    assert value(fam, "oracle_redo_size_bytes_total", inst_id="1") == row_value(
        plain, "GV$SYSSTAT", "VALUE", NAME="redo size") // 3
    # reversed row order: same answer
    for view in rec["views"].values():
        view.reverse()
    assert samples(collect(snap(rec))) == samples(fam)


def test_exact_duplicate_rows_are_not_summed():
    record = sim_record()
    size = row_value(record, "GV$SYSSTAT", "VALUE", NAME="redo size")
    gets = sum(r["GETS"] for r in record["views"]["GV$LATCH"])
    record["views"]["GV$SYSSTAT"] += copy.deepcopy(record["views"]["GV$SYSSTAT"])
    record["views"]["GV$LATCH"] += copy.deepcopy(record["views"]["GV$LATCH"])
    families = collect(snap(record))
    assert value(families, "oracle_redo_size_bytes_total", inst_id="1") == size
    assert value(families, "oracle_latch_gets_total", inst_id="1", latch="all") == gets


def test_nulls_everywhere_skip_values_without_failing():
    record = sim_record()
    for view, rows in record["views"].items():
        for r in rows:
            for k in r:
                if k not in ("INST_ID", "EVENT", "NAME", "METRIC_NAME", "GROUP_ID", "THREAD#", "GROUP#",
                             "WAIT_TIME_MICRO", "PID", "INSTANCE_NAME"):
                    r[k] = None
    families = collect(snap(record))
    got = samples(families)
    names = {n for n, _ in got}
    # identity (info) metrics, and the session counts of instances whose sessions are all unknown: 0
    assert names == {"oracle_instance_info", "oracle_database_info", "oracle_asm_diskgroup_info",
                     "oracle_sessions_active", "oracle_sessions_blocked", "oracle_sessions_blocked_longest_seconds",
                     "oracle_sessions_blocked_by", "oracle_sessions_blocked_by_longest_seconds",
                     "oracle_long_calls",                       # no call known to run long: 0 (issue 24)
                     "oracle_recovery_area_info"}               # identity: the destination NAME (issue 23)
    assert {v for (n, _), v in got.items() if n.startswith(("oracle_sessions_", "oracle_long_calls"))} == {0.0}
    assert value(families, "oracle_instance_info", inst_id="1", instance_name="ODS1", host_name="",
                 version="", db_name="ODS", db_unique_name="", database_role="") == 1.0
    promtool_ok(exposition(families))


def test_negative_counters_are_dropped_and_not_summed():
    record = sim_record()
    others = sum(r["GETS"] for r in record["views"]["GV$LATCH"] if r["NAME"] != "cache buffers chains")
    redo_alloc = row_value(record, "GV$LATCH", "GETS", NAME="redo allocation")
    for r in record["views"]["GV$LATCH"]:
        if r["NAME"] == "cache buffers chains":
            r["GETS"] = -2_147_483_000              # a 32-bit counter that wrapped
    for r in record["views"]["GV$SYSSTAT"]:
        if r["NAME"] == "redo size":
            r["VALUE"] = -5
    families = collect(snap(record))
    got = samples(families)
    assert ("oracle_latch_gets_total", (("inst_id", "1"), ("latch", "cache buffers chains"))) not in got
    assert value(families, "oracle_latch_gets_total", inst_id="1", latch="all") == others
    assert value(families, "oracle_latch_gets_total", inst_id="1", latch="redo allocation") == redo_alloc
    assert not [k for k in got if k[0] == "oracle_redo_size_bytes_total"]
    promtool_ok(exposition(families))


ODD = ['enq: TX - "row lock" contention', "back\\slash wait", "line\nbreak wait", "Über-wait ☃", ""]


def test_odd_event_names_and_unknown_wait_class_round_trip():
    record = sim_record()
    for n, name in enumerate(ODD):
        record["views"]["GV$SYSTEM_EVENT"].append({"INST_ID": 1, "EVENT": name, "WAIT_CLASS": "Brand New Class",
                                                   "TOTAL_WAITS": 10 + n, "TOTAL_TIMEOUTS": 0,
                                                   "TIME_WAITED_MICRO": 1000 * (n + 1)})
    text = exposition(collect(snap(record)))
    promtool_ok(text)
    parsed = {}
    for fam in text_string_to_metric_families(text.decode("utf-8")):
        for s in fam.samples:
            if s.name == "oracle_wait_event_waits_total" and s.labels["wait_class"] == "Brand New Class":
                parsed[s.labels["event"]] = s.value
    assert parsed == {name: 10 + n for n, name in enumerate(ODD)}


# --- histograms --------------------------------------------------------------------

def _hist(families, event, inst_id="1"):
    out = {}
    for f in families:
        if f.name != "oracle_wait_event_latency_seconds":
            continue
        for s in f.samples:
            if s.labels.get("event") == event and s.labels.get("inst_id") == inst_id:
                le = s.labels.get("le")
                key = s.name.rsplit("_", 1)[-1] if le is None else ("+Inf" if le == "+Inf" else float(le))
                out[key] = s.value
    return out


def test_11g_millisecond_histogram_with_gaps_is_cumulative_in_seconds():
    record = sim_record(micro=False)
    rows = [r for r in record["views"]["GV$EVENT_HISTOGRAM"] if r["EVENT"] == "log file sync"]
    assert {r["WAIT_TIME_MILLI"] for r in rows} <= {2 ** k for k in range(23)}
    # Oracle omits empty buckets: drop the 32 ms row, as if nothing fell into 16..32 ms
    record["views"]["GV$EVENT_HISTOGRAM"] = [r for r in record["views"]["GV$EVENT_HISTOGRAM"]
                                             if not (r["EVENT"] == "log file sync" and r["WAIT_TIME_MILLI"] == 32)]
    rows = [r for r in record["views"]["GV$EVENT_HISTOGRAM"] if r["EVENT"] == "log file sync"]
    h = _hist(collect(snap(record)), "log file sync")
    assert sorted(k for k in h if isinstance(k, float)) == [2 ** k / 1000 for k in range(23)]
    for k in range(23):
        bound = 2 ** k
        assert h[bound / 1000] == sum(r["WAIT_COUNT"] for r in rows if r["WAIT_TIME_MILLI"] <= bound)
    assert h[0.032] == h[0.016] > 0
    total = sum(r["WAIT_COUNT"] for r in rows)
    assert h["+Inf"] == h["count"] == total
    (ev,) = [r for r in record["views"]["GV$SYSTEM_EVENT"] if r["EVENT"] == "log file sync"]
    assert h["sum"] == ev["TIME_WAITED_MICRO"] / 1e6


def test_23ai_micro_histogram_with_wait_time_format_column():
    record = sim_record()
    for r in record["views"]["GV$EVENT_HISTOGRAM_MICRO"]:
        n = r["WAIT_TIME_MICRO"]
        r["WAIT_TIME_FORMAT"] = f"{n} microsecond" + ("s" if n > 1 else "")
        r["LAST_UPDATE_TIME"] = "2024-03-01T12:01:00.123456+00:00"
        r["LAST_UPDATE_TIME_FORMAT"] = None
        r["CON_ID"] = 0
    plain = samples(collect(snap(sim_record())))
    assert samples(collect(snap(record))) == plain


def test_micro_view_lacking_an_event_falls_back_to_the_milli_view_for_it():
    micro = sim_record(micro=True)
    milli = sim_record(micro=False)
    micro["views"]["GV$EVENT_HISTOGRAM"] = milli["views"]["GV$EVENT_HISTOGRAM"]
    micro["views"]["GV$EVENT_HISTOGRAM_MICRO"] = [r for r in micro["views"]["GV$EVENT_HISTOGRAM_MICRO"]
                                                  if r["EVENT"] != "db file sequential read"]
    fam = collect(snap(micro))
    h_seq = _hist(fam, "db file sequential read")
    h_sync = _hist(fam, "log file sync")
    assert 0.001 in h_seq and 1e-06 not in h_seq                   # millisecond ladder for this one
    assert 1e-06 in h_sync                                         # microsecond ladder kept
    assert h_seq["+Inf"] == row_value(milli, "GV$SYSTEM_EVENT", "TOTAL_WAITS", EVENT="db file sequential read")
    assert h_sync["+Inf"] == row_value(micro, "GV$SYSTEM_EVENT", "TOTAL_WAITS", EVENT="log file sync")
    promtool_ok(exposition(fam))


# --- RAC ------------------------------------------------------------------------------

RAC = [(1, "ODS1", "dbhost1", 1), (2, "ODS2", "dbhost2", 2), (3, "ODS3", "dbhost3", 3)]


def test_rac_instance_down_keeps_the_others_and_labels_by_inst_id_string():
    record = sim_record(instances=RAC)
    views = record["views"]
    # instance 3 down: GV$ views return rows of instances 1 and 2 only, yet GV$LOG still
    # lists thread 3's groups (control file), read through instances 1 and 2.
    for name, rows in views.items():
        if name != "V$DATABASE":
            rows[:] = [r for r in rows if r.get("INST_ID") != 3]
    for r in views["GV$SYSSTAT"]:
        r["INST_ID"] = str(r["INST_ID"])       # INST_ID as text
    families = collect(snap(record))
    got = samples(families)
    switches = {dict(k[1])["inst_id"]: v for k, v in got.items() if k[0] == "oracle_redo_log_switches_total"}
    cur = {r["THREAD#"]: r["SEQUENCE#"] for r in views["GV$LOG"] if r["STATUS"] == "CURRENT"}
    assert switches == {"1": cur[1], "2": cur[2]}
    assert value(families, "oracle_redo_size_bytes_total", inst_id="2") == row_value(
        sim_record(instances=RAC), "GV$SYSSTAT", "VALUE", inst_id=2, NAME="redo size")
    assert {dict(k[1])["instance_name"] for k in got if k[0] == "oracle_instance_info"} == {"ODS1", "ODS2"}
    promtool_ok(exposition(families))


def test_rac_without_gv_instance_maps_thread_n_to_instance_n():
    record = sim_record(instances=RAC[:2])
    del record["views"]["GV$INSTANCE"]
    families = collect(snap(record))
    cur = {r["THREAD#"]: r["SEQUENCE#"] for r in record["views"]["GV$LOG"] if r["STATUS"] == "CURRENT"}
    assert value(families, "oracle_redo_log_switches_total", inst_id="1") == cur[1]
    assert value(families, "oracle_redo_log_switches_total", inst_id="2") == cur[2]


# --- units ------------------------------------------------------------------------------

def test_time_statistics_units():
    record = sim_record()
    # an 11.2 instance: no 'redo write time (usec)' in V$STATNAME, 'redo synch time (usec)' present
    record["views"]["GV$SYSSTAT"] = [r for r in record["views"]["GV$SYSSTAT"] if r["NAME"] != "redo write time (usec)"]
    assert row_value(record, "GV$SYSSTAT", "VALUE", NAME="redo synch time") > 0
    families = collect(snap(record))
    # 'redo write time' is centiseconds when no '(usec)' variant is recorded
    assert value(families, "oracle_redo_write_time_seconds_total", inst_id="1") == pytest.approx(
        row_value(record, "GV$SYSSTAT", "VALUE", NAME="redo write time") / 100)
    # 'redo synch time (usec)' is preferred over 'redo synch time' and is in microseconds
    assert value(families, "oracle_redo_synch_time_seconds_total", inst_id="1") == pytest.approx(
        row_value(record, "GV$SYSSTAT", "VALUE", NAME="redo synch time (usec)") / 1e6)


def test_process_names_from_program_when_pname_is_absent():
    record = sim_record()
    rows = record["views"]["GV$PROCESS"]
    expected = {(str(r["INST_ID"]), r["PNAME"], r["SPID"]) for r in rows}
    record["views"]["GV$PROCESS"] = [
        {"INST_ID": r["INST_ID"], "PID": r["PID"], "SPID": r["SPID"], "PROGRAM": f"oracle@dbhost1 ({r['PNAME']})",
         "BACKGROUND": "1", "PGA_USED_MEM": r["PGA_USED_MEM"], "PGA_ALLOC_MEM": r["PGA_ALLOC_MEM"],
         "PGA_MAX_MEM": r["PGA_MAX_MEM"]} for r in rows]
    record["views"]["GV$PROCESS"].append({"INST_ID": 1, "PID": 99, "SPID": "9999", "PROGRAM": "oracle@dbhost1 (TNS V1-V3)",
                                          "BACKGROUND": None, "PGA_USED_MEM": 1, "PGA_ALLOC_MEM": 1, "PGA_MAX_MEM": 1})
    got = samples(collect(snap(record)))
    procs = {(dict(k[1])["inst_id"], dict(k[1])["pname"], dict(k[1])["spid"])
             for k in got if k[0] == "oracle_background_process_info"}
    assert procs == expected


def test_once_output_of_every_variant_in_one_recording_passes_promtool(tmp_path, core):
    """All variants as databases of one recording, through the real CLI (--once)."""
    plain = sim_record()
    nulls = copy.deepcopy(plain)
    for rows in nulls["views"].values():
        for r in rows:
            for k in r:
                if k not in ("INST_ID", "EVENT", "NAME", "METRIC_NAME", "THREAD#", "GROUP#", "WAIT_TIME_MICRO"):
                    r[k] = None
    odd = copy.deepcopy(plain)
    odd["views"]["GV$SYSTEM_EVENT"] += [{"INST_ID": 1, "EVENT": name, "WAIT_CLASS": "Brand New Class",
                                         "TOTAL_WAITS": 1, "TOTAL_TIMEOUTS": 0, "TIME_WAITED_MICRO": 5} for name in ODD]
    rac = sim_record(instances=RAC)
    for name, rows in rac["views"].items():
        if name != "V$DATABASE":
            rows[:] = [r for r in rows if r.get("INST_ID") != 3]
    records = {"plain": plain, "nulls": nulls, "odd": odd, "rac_down": rac, "milli_11g": sim_record(micro=False),
               **{name: fn(plain) for name, fn in VARIANTS.items()}}
    path = tmp_path / "variants.jsonl"
    with path.open("w") as fh:
        for name, rec in records.items():
            fh.write(json.dumps(dict(rec, database=name)) + "\n")
    res = core.run_cli("--replay", str(path), "--once")
    assert res.returncode == 0, res.stderr
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for fam in text_string_to_metric_families(res.stdout) for s in fam.samples}
    for name in records:
        assert got[("oracle_up", (("database", name),))] == 1.0
        for collector in ("wait_events", "redo", "pga", "latches", "load_profile", "host_load", "instance"):
            assert got[("oracle_collector_success", (("collector", collector), ("database", name)))] == 1.0
    size = row_value(plain, "GV$SYSSTAT", "VALUE", NAME="redo size")
    for name in VARIANTS:
        assert got[("oracle_redo_size_bytes_total", (("database", name), ("inst_id", "1")))] == size
    promtool_ok(res.stdout.encode())
