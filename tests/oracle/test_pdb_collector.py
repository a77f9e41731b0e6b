"""Issue 11.1: opt-in per-PDB families from one CDB$ROOT connection (GV$CON_* views), bounded
by an allow-list and a series cap. What an operator fears first: the collector loading the
database or the TSDB (it is off by default; a CDB with many PDBs is capped whole-PDB-wise and
says so), PDB$SEED or non-CDB rows showing up as PDBs, a PDB half exported."""
from __future__ import annotations

from oracle_sim import collect, samples, value

from oracle_exporter import queries
from oracle_exporter.config import Settings
from oracle_exporter.snapshot import Snapshot

CONTAINERS = {1: "CDB$ROOT", 2: "PDB$SEED", 3: "SALES", 4: "HR", 5: "BATCH"}


def con_rows(con_ids=(1, 2, 3, 4, 5), inst_ids=(1,), db_time=None, events=None, containers=CONTAINERS):
    """Rows of every GV$CON_* view as CDB$ROOT returns them: one set per container."""
    db_time = db_time or {1: 50e6, 2: 0, 3: 900e6, 4: 300e6, 5: 120e6}
    events = events or [("log file sync", "Commit", 1000, 2_000_000), ("db file sequential read", "User I/O",
                                                                       5000, 4_000_000),
                        ("SQL*Net message from client", "Idle", 90000, 9e12)]
    views: dict[str, list[dict]] = {k: [] for k in ("GV$CON_SYS_TIME_MODEL", "GV$CON_SYSSTAT", "GV$CON_SYSTEM_EVENT",
                                                    "GV$CON_EVENT_HISTOGRAM_MICRO", "GV$CON_SYSMETRIC")}
    for i in inst_ids:
        for c in con_ids:
            views["GV$CON_SYS_TIME_MODEL"] += [
                {"INST_ID": i, "CON_ID": c, "STAT_NAME": "DB time", "VALUE": db_time[c] * i},
                {"INST_ID": i, "CON_ID": c, "STAT_NAME": "DB CPU", "VALUE": db_time[c] * i / 2}]
            views["GV$CON_SYSSTAT"] += [
                {"INST_ID": i, "CON_ID": c, "NAME": "user commits", "VALUE": 100 * c},
                {"INST_ID": i, "CON_ID": c, "NAME": "redo size", "VALUE": 1_000_000 * c}]
            for event, wclass, waits, micro in events:
                views["GV$CON_SYSTEM_EVENT"].append({"INST_ID": i, "CON_ID": c, "EVENT": event, "WAIT_CLASS": wclass,
                                                     "TOTAL_WAITS": waits * c, "TIME_WAITED_MICRO": micro * c})
            # log file sync: 60 % below 1 ms (bucket 1024 us), 30 % below 4 ms, 10 % below 16 ms
            for bound, share in ((1024, 0.6), (4096, 0.3), (16384, 0.1)):
                views["GV$CON_EVENT_HISTOGRAM_MICRO"].append(
                    {"INST_ID": i, "CON_ID": c, "EVENT": "log file sync", "WAIT_TIME_MICRO": bound,
                     "WAIT_COUNT": int(1000 * c * share)})
            views["GV$CON_EVENT_HISTOGRAM_MICRO"].append(
                {"INST_ID": i, "CON_ID": c, "EVENT": "enq: TX - row lock contention", "WAIT_TIME_MICRO": 8192,
                 "WAIT_COUNT": 3})
            views["GV$CON_SYSMETRIC"].append({"INST_ID": i, "CON_ID": c, "METRIC_NAME": "Average Active Sessions",
                                              "VALUE": db_time[c] / 1e8, "METRIC_UNIT": "Active Sessions",
                                              "INTSIZE_CSEC": 6001})
    views["V$CONTAINERS"] = [{"CON_ID": c, "NAME": n} for c, n in containers.items() if c in con_ids]
    return views


def snap(views) -> Snapshot:
    return Snapshot("cdb", "2025-03-11T09:00:00Z", views)


def pdb_of(families) -> set[str]:
    return {dict(labels).get("pdb") for (_, labels) in samples(families)} - {None}


def test_off_by_default_and_its_views_not_even_queried():
    assert not Settings().enabled("pdb")
    default = queries.build_queries(Settings())
    assert not [v for v in default if v.startswith("GV$CON_")]
    on = queries.build_queries(Settings(collectors={"pdb": True}))
    assert {"GV$CON_SYS_TIME_MODEL", "GV$CON_SYSSTAT", "GV$CON_SYSTEM_EVENT", "GV$CON_EVENT_HISTOGRAM_MICRO",
            "GV$CON_SYSMETRIC"} <= set(on)
    assert "WAIT_CLASS <> 'Idle'" in on["GV$CON_SYSTEM_EVENT"].sql        # Idle rows never leave the database


def test_a_non_cdb_and_pdb_seed_export_nothing():
    non_cdb = collect(snap(con_rows(con_ids=(0,), db_time={0: 1e9}, containers={0: "DEMO"})), Settings(),
                      names=["pdb"])
    assert samples(non_cdb) == {}
    cdb = collect(snap(con_rows()), Settings(), names=["pdb"])
    assert pdb_of(cdb) == {"CDB$ROOT", "SALES", "HR", "BATCH"}             # no PDB$SEED


def test_values_units_and_labels_per_pdb_and_instance():
    fams = collect(snap(con_rows(inst_ids=(1, 2))), Settings(), names=["pdb"])
    assert value(fams, "oracle_pdb_db_time_seconds_total", inst_id="2", pdb="SALES") == 1800.0   # us -> s
    assert value(fams, "oracle_pdb_db_cpu_seconds_total", inst_id="1", pdb="HR") == 150.0
    assert value(fams, "oracle_pdb_user_commits_total", inst_id="1", pdb="SALES") == 300
    assert value(fams, "oracle_pdb_redo_bytes_total", inst_id="1", pdb="BATCH") == 5_000_000
    assert value(fams, "oracle_pdb_wait_event_time_seconds_total", inst_id="1", pdb="HR", event="log file sync",
                 wait_class="Commit") == 8.0
    assert value(fams, "oracle_pdb_average_active_sessions", inst_id="1", pdb="SALES") == 9.0
    assert not [k for k in samples(fams) if dict(k[1]).get("wait_class") == "Idle"]


def test_commit_latency_histogram_per_pdb():
    fams = collect(snap(con_rows()), Settings(), names=["pdb"])
    le = lambda b: value(fams, "oracle_pdb_wait_event_latency_seconds_bucket", inst_id="1", pdb="SALES",  # noqa: E731
                         event="log file sync", le=b)
    assert le("0.000512") == 0
    assert le("0.001024") == 1800 and le("0.004096") == 2700 and le("0.016384") == 3000 and le("+Inf") == 3000
    assert value(fams, "oracle_pdb_wait_event_latency_seconds_count", inst_id="1", pdb="SALES",
                 event="log file sync") == 3000
    assert value(fams, "oracle_pdb_wait_event_latency_seconds_sum", inst_id="1", pdb="SALES",
                 event="log file sync") == 6.0          # TIME_WAITED_MICRO of GV$CON_SYSTEM_EVENT
    events = {dict(k[1]).get("event") for k in samples(fams) if k[0].startswith("oracle_pdb_wait_event_latency")}
    assert events == {"log file sync"}                   # db file sequential read has no buckets, enq: not asked


def test_the_allow_list_names_pdbs_case_blind():
    fams = collect(snap(con_rows()), Settings(collectors={"pdb": True}, pdbs=("sales", "Hr")), names=["pdb"])
    assert pdb_of(fams) == {"SALES", "HR"}


def test_the_series_cap_leaves_out_whole_pdbs_least_db_time_first_and_says_how_many():
    everything = collect(snap(con_rows()), Settings(), names=["pdb"])
    per_pdb = {p: sum(1 for k in samples(everything) if dict(k[1]).get("pdb") == p) for p in pdb_of(everything)}
    cap = per_pdb["SALES"] + per_pdb["HR"]                # room for the two busiest PDBs
    fams = collect(snap(con_rows()), Settings(pdb_series_max=cap), names=["pdb"])
    assert pdb_of(fams) == {"SALES", "HR"}
    assert value(fams, "oracle_pdbs_omitted", inst_id="1") == 2           # BATCH and CDB$ROOT
    for p in ("SALES", "HR"):                                             # the kept ones whole
        assert sum(1 for k in samples(fams) if dict(k[1]).get("pdb") == p) == per_pdb[p]
    assert ("oracle_pdbs_omitted", (("inst_id", "1"),)) not in samples(everything)


def test_the_wait_events_per_pdb_are_the_ones_with_most_time():
    events = [(f"event {n}", "Other", 10, n * 1000) for n in range(1, 41)]
    fams = collect(snap(con_rows(con_ids=(3,), events=events)), Settings(pdb_wait_events_max=5), names=["pdb"])
    got = {dict(k[1])["event"] for k in samples(fams) if k[0] == "oracle_pdb_wait_event_waits_total"}
    assert got == {f"event {n}" for n in range(36, 41)}


def test_a_container_missing_from_v_containers_is_labelled_by_its_number():
    views = con_rows(con_ids=(3, 7), db_time={3: 1e6, 7: 2e6})
    fams = collect(snap(views), Settings(), names=["pdb"])
    assert pdb_of(fams) == {"SALES", "7"}


def test_settings_are_validated(tmp_path, monkeypatch):
    import pytest
    from exporter_common.config import ConfigError
    from oracle_exporter.config import load_config
    monkeypatch.setenv("PW", "x")
    base = "databases: [{name: a, dsn: 'h:1/S', user: u, password_env: PW}]\n"
    cfg = tmp_path / "o.yml"
    cfg.write_text("collectors: {pdb: true}\npdbs: [SALES]\npdb_series_max: 100\npdb_wait_events_max: 3\n"
                   "pdb_histogram_events: [log file sync]\n" + base)
    s = load_config(str(cfg)).settings
    assert (s.enabled("pdb"), s.pdbs, s.pdb_series_max, s.pdb_wait_events_max, s.pdb_histogram_events) == (
        True, ["SALES"], 100, 3, ["log file sync"])
    for bad, field in (("pdbs: SALES\n", "pdbs"), ("pdb_series_max: -1\n", "pdb_series_max"),
                       ("pdb_histogram_events: [a, a]\n", "pdb_histogram_events[1]")):
        cfg.write_text(bad + base)
        with pytest.raises(ConfigError) as err:
            load_config(str(cfg))
        assert field in str(err.value)


def test_a_recording_of_the_v_con_views_without_inst_id_is_read_as_instance_1():
    """A recorder that used V$CON_* (single instance, no INST_ID) and lower-case keys: read as the
    GV$ views of the only instance, like every other V$ recording (oracle_exporter.rows)."""
    views = con_rows(con_ids=(1, 3))
    v_views = {}
    for name, rows in views.items():
        key = name[1:] if name.startswith("GV$") else name
        v_views[key] = [{k.lower(): v for k, v in r.items() if k != "INST_ID"} for r in rows]
    v_views["GV$INSTANCE"] = [{"INST_ID": 1, "INSTANCE_NUMBER": 1}]
    fams = collect(Snapshot.from_obj({"time": "2025-03-11T09:00:00Z", "database": "cdb", "views": v_views}),
                   Settings(), names=["pdb"])
    assert value(fams, "oracle_pdb_db_time_seconds_total", inst_id="1", pdb="SALES") == 900.0
    assert value(fams, "oracle_pdb_wait_event_latency_seconds_count", inst_id="1", pdb="CDB$ROOT",
                 event="log file sync") == 1000


def test_live_from_cdb_root_the_container_statements_run_and_pdb_series_come_out():
    """The live source on a CDB$ROOT session (fake connection: rows as the driver returns them,
    tuples in statement column order) with the pdb collector switched on: the GV$CON_*
    statements are issued with the declared names bound, and the exporter's exposition carries
    the per-PDB series with the database label; without the switch none of it is read."""
    from oracle_sim import FakeConnection
    from oracle_exporter.config import DatabaseConfig
    from oracle_exporter.exporter import OracleExporter, Target
    from oracle_exporter.queries import build_queries
    from oracle_exporter.sources.live import LiveSource

    def session(settings):
        views = con_rows(con_ids=(1, 3, 4))
        queries = build_queries(settings)
        rows = {v: [tuple(r[c] for c in _columns(queries[v].sql)) for r in views[v]] for v in views if v in queries}
        rows["DUAL"] = [(1, "CDB$ROOT")]                        # SYS_CONTEXT: CON_ID, CON_NAME
        return FakeConnection(rows=rows)

    def _columns(sql):
        return [c.strip() for c in sql[len("SELECT "):sql.index(" FROM ")].split(",")]

    for on in (True, False):
        settings = Settings(collectors={"pdb": on})
        conn = session(settings)
        db = DatabaseConfig("cdb1", dsn="h:1521/CDB", user="c##mon", password="pw", timeout_seconds=5)
        src = LiveSource(db, settings, connect=lambda d, t, c=conn: c)
        exp = OracleExporter([Target("cdb1", src)], settings)
        try:
            got = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in exp.scrape() for s in f.samples}
        finally:
            exp.close()
        con_sql = [sql for sql in conn.executed if "GV$CON_" in sql]
        pdb_series = {k: v for k, v in got.items() if k[0].startswith("oracle_pdb_")}
        if not on:
            assert con_sql == [] and pdb_series == {}
            continue
        assert len(con_sql) == 5
        assert list(conn.binds["GV$CON_EVENT_HISTOGRAM_MICRO"].values()) == ["log file sync", "db file sequential read"]
        key = ("oracle_pdb_db_time_seconds_total", (("database", "cdb1"), ("inst_id", "1"), ("pdb", "SALES")))
        assert pdb_series[key] == 900.0
        assert {dict(k[1])["pdb"] for k in pdb_series} == {"CDB$ROOT", "SALES", "HR"}
