"""Issue 11 ("oracle-exporter on real databases"): facts synthetic recordings used to hide.

Each test builds the snapshot a real database returns (or an older recording holds) and
checks the exported value against the row, never against the collector's own arithmetic."""
from __future__ import annotations

import copy
import datetime as dt
import json

from oracle_exporter.snapshot import Snapshot
from oracle_sim import OracleSim, collect, samples, value


def snap_of(record: dict) -> Snapshot:
    return Snapshot.from_obj(json.loads(json.dumps(record)))


def test_parameters_come_from_gv_system_parameter_and_old_recordings_still_replay():
    record = OracleSim().record()
    assert "GV$SYSTEM_PARAMETER" in record["views"] and "GV$PARAMETER" not in record["views"]
    log_buffer = float(next(r["VALUE"] for r in record["views"]["GV$SYSTEM_PARAMETER"] if r["NAME"] == "log_buffer"))
    assert value(collect(snap_of(record)), "oracle_log_buffer_bytes", inst_id="1") == log_buffer
    # a recording made before issue 11 (GV$PARAMETER), and one of a V$ recorder (V$PARAMETER)
    old = copy.deepcopy(record)
    old["views"]["GV$PARAMETER"] = old["views"].pop("GV$SYSTEM_PARAMETER")
    assert samples(collect(snap_of(old))) == samples(collect(snap_of(record)))
    v_rec = copy.deepcopy(old)
    v_rec["views"]["V$PARAMETER"] = [{k: v for k, v in r.items() if k != "INST_ID"}
                                     for r in v_rec["views"].pop("GV$PARAMETER")]
    assert value(collect(snap_of(v_rec)), "oracle_log_buffer_bytes", inst_id="1") == log_buffer


def test_redo_block_size_512_and_4096_and_absent_before_11_2():
    from oracle_exporter.demo import DEMO_DIR
    rac = None
    with open(DEMO_DIR / "demo-rac-outage.jsonl", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["database"] == "RACDB" and obj["views"]:
                rac = obj
                break
    fams = collect(snap_of(rac))
    sizes = {r["BLOCKSIZE"] for r in rac["views"]["GV$LOG"]}
    assert sizes == {4096}                                   # RACDB's redo is on 4 KB-sector flash
    assert value(fams, "oracle_redo_log_block_size_bytes", inst_id="1") == 4096
    assert value(fams, "oracle_redo_log_block_size_bytes", inst_id="2") == 4096
    record = OracleSim().record()
    assert value(collect(snap_of(record)), "oracle_redo_log_block_size_bytes", inst_id="1") == 512
    for row in record["views"]["GV$LOG"]:                    # an 11.1 recording: no BLOCKSIZE column
        del row["BLOCKSIZE"]
    assert not [k for k in samples(collect(snap_of(record))) if k[0] == "oracle_redo_log_block_size_bytes"]


def test_version_label_is_version_full_when_present():
    record = OracleSim().record()
    row = record["views"]["GV$INSTANCE"][0]
    assert (row["VERSION"], row["VERSION_FULL"]) == ("19.0.0.0.0", "19.21.0.0.0")
    versions = {dict(k[1])["version"] for k in samples(collect(snap_of(record))) if k[0] == "oracle_instance_info"}
    assert versions == {"19.21.0.0.0"}
    for r in record["views"]["GV$INSTANCE"]:                 # 12.2: no VERSION_FULL
        del r["VERSION_FULL"]
        r["VERSION"] = "12.2.0.1.0"
    versions = {dict(k[1])["version"] for k in samples(collect(snap_of(record))) if k[0] == "oracle_instance_info"}
    assert versions == {"12.2.0.1.0"}


def test_pgastat_recompute_count_has_its_real_name():
    from oracle_exporter import views
    assert "recompute count (total)" in views.PGASTAT.counter_names


# --- 11.2: the database host's time zone ---------------------------------------------------

def _start_time(zone_offset: str | None, startup_local: str) -> float:
    record = OracleSim().record()
    for row in record["views"]["GV$INSTANCE"]:
        row["STARTUP_TIME"] = startup_local
    if zone_offset is None:
        record["views"].pop("DUAL", None)
    else:
        record["views"]["DUAL"] = [{"SYSTIMESTAMP": f"2025-03-11T15:30:00.000000{zone_offset}"}]
    return value(collect(snap_of(record), names=["instance"]), "oracle_instance_start_time_seconds", inst_id="1")


def test_startup_time_is_the_host_wall_clock_converted_with_its_offset():
    """STARTUP_TIME is a DATE: the host's wall clock, no zone. East of UTC it used to be taken as
    UTC, putting the start in the future (negative uptime) right after a restart."""
    truth = dt.datetime(2025, 3, 11, 10, 0, tzinfo=dt.timezone.utc).timestamp()
    assert _start_time("+05:30", "2025-03-11T15:30:00") == truth          # India: started at 10:00 UTC
    assert _start_time("-07:00", "2025-03-11T03:00:00") == truth          # US Pacific (DST)
    assert _start_time("+00:00", "2025-03-11T10:00:00") == truth
    assert _start_time(None, "2025-03-11T10:00:00") == truth              # no clock row: taken as UTC
    # a recording that wrote the zone into the value itself is taken as it says
    assert _start_time("+05:30", "2025-03-11T12:00:00+02:00") == truth


def test_demo_racdb_runs_east_of_utc_and_its_start_times_are_true_unix_time():
    from oracle_exporter import demo
    from oracle_exporter.sources.replay import read_recording

    snaps = read_recording(str(demo.path("demo-rac-outage.jsonl")))["RACDB"]
    first = snaps[0]
    assert first.rows("DUAL")[0]["SYSTIMESTAMP"].endswith("+05:30")
    scrape_time = dt.datetime.fromisoformat(first.time.replace("Z", "+00:00")).timestamp()
    fams = collect(first, names=["instance"])
    for row in first.rows("GV$INSTANCE"):
        local = dt.datetime.fromisoformat(row["STARTUP_TIME"])
        want = (local - dt.timedelta(hours=5, minutes=30)).replace(tzinfo=dt.timezone.utc).timestamp()
        got = value(fams, "oracle_instance_start_time_seconds", inst_id=str(row["INST_ID"]))
        assert got == want and 0 < scrape_time - got < 30 * 86400      # started days ago, not in the future


# --- 11.6: short-lived slaves --------------------------------------------------------------

def test_slaves_are_counted_by_family_not_one_series_per_spid():
    """Jnnn, Pnnn, PZnn (also this exporter's own GV$ parallel slaves), Wnnn ... come and go with a
    new SPID each time: as oracle_background_process_info series they churned without end."""
    from oracle_exporter.collectors.instance import slave_kind

    def snap_with(procs):
        return Snapshot.from_obj({"time": "2025-03-11T09:00:00Z", "database": "db", "views": {"GV$PROCESS": [
            {"INST_ID": inst_id, "PID": n, "SPID": str(1000 + n), "PNAME": pname, "PGA_USED_MEM": 1,
             "PGA_ALLOC_MEM": 1, "PGA_MAX_MEM": 1} for n, (inst_id, pname) in enumerate(procs)]}})

    first = snap_with([(1, "LGWR"), (1, "PMON"), (1, "PSP0"), (1, "J000"), (1, "J001"), (1, "PZ99"), (2, "P00A"),
                       (2, "W003"), (2, "MMON"), (2, "M000"), (2, "QMNC"), (2, "Q002")])
    fams = collect(first, names=["instance"])
    info = {(dict(k)["inst_id"], dict(k)["pname"]) for (n, k), _ in samples(fams).items()
            if n == "oracle_background_process_info"}
    assert info == {("1", "LGWR"), ("1", "PMON"), ("1", "PSP0"), ("2", "MMON"), ("2", "QMNC")}
    counts = {(dict(k)["inst_id"], dict(k)["kind"]): v for (n, k), v in samples(fams).items()
              if n == "oracle_background_slaves"}
    assert counts == {("1", "J"): 2, ("1", "PZ"): 1, ("2", "P"): 1, ("2", "W"): 1, ("2", "M"): 1, ("2", "Q"): 1}
    # the next scrape: other slaves with other SPIDs -- the same series
    later = snap_with([(1, "LGWR"), (1, "PMON"), (1, "PSP0"), (1, "J007"), (1, "PZ98"), (1, "PZ97")])
    keys = {k for k in samples(collect(later, names=["instance"])) if k[0] == "oracle_background_slaves"}
    assert keys <= {k for k in samples(fams) if k[0] == "oracle_background_slaves"}
    assert [slave_kind(p) for p in ("CJQ0", "PXMN", "LG00", "DBW0", "ARC0", "LMS0")] == [None] * 6
