"""memory.test.yml: the presence memories (recording rules that remember what existed) evaluated
on a recorded history, one rule at a time: promtool evaluates every rule at every step, so an
evaluation gap (a Prometheus restart with a long WAL replay, a vmalert restart) can only be shown
by giving a memory's own past samples, with the gap in them, as input and evaluating its rule once
(as the reviewer of issue 23 did). The file has no rule_files: each check names the rule's
expression as mixin.records renders it, so it follows every change of the rule.

Failure first: each memory outlives a 70-minute evaluation gap (rev23 #7), the databases' memory
outlives a day-long exporter outage and keeps the wallboard's tile (rev23 #15). Quiet: a memory
still forgets what left the configuration the documented way: a database the restarted exporter no
longer lists (rev23 #14c), a dropped PDB, a database gone from the exporter's output for a day (its
instance count), a multipath map whose memory the site deleted to declare a planned reduction
(rev23 #11)."""
from mixin import fleetview
from mixin import records as R
from mixin import render
from mixin.scenarios.common import HOST, ORA, sel

GAP = 70            # minutes without any rule evaluation: more than an hour


def _rule(cfg, record: str) -> str:
    for g in render.recording(cfg)["groups"]:
        for r in g["rules"]:
            if r["record"] == record:
                return r["expr"]
    raise KeyError(record)


def _labels(labels: dict) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _check(expr: str, at: str, samples: list[tuple[dict, float]]) -> dict:
    """The expression's result at `at` (+ 0 drops a metric name a comparison keeps)."""
    return {"expr": f"({expr}) + 0", "eval_time": at,
            "exp_samples": [{"labels": _labels(lab), "value": v} for lab, v in samples]}


def _s(name: str, labels: dict, values: str) -> dict:
    return {"series": sel(name, labels), "values": values}


def memory_tests(pack) -> list:
    cfg = pack.cfg
    tests = []
    ora = {"job": "oracle", "instance": ORA["instance"]}
    odb = {**ora, "database": "ODS"}
    end = 120 + GAP + 1          # the first evaluation after the gap
    at = f"{end}m"

    # ---------------------------------------------------------------- rev23 #7: evaluation gaps
    # a RAC node down since 1h (2 expected, 1 running), then no rule evaluation for 70 minutes:
    # the memory read itself as an instant vector and fell back to the 1 instance running
    tests.append({"name": "memory: a RAC node down, then a 70-minute evaluation gap: 2 instances still expected",
                  "interval": "1m", "input_series": [
                      _s(R.INSTANCES_EXPECTED, odb, "2x120"),
                      _s(R.INSTANCES, odb, f"2x60 1x60 _x{GAP} 1"),
                      _s("oracle_up", odb, f"1x{end}")],
                  "promql_expr_test": [_check(_rule(cfg, R.INSTANCES_EXPECTED), at, [(odb, 2)])]})
    # every path of a redo LUN gone, then the gap: the memory fell back to the 0 paths the map has,
    # and LunAllPathsDown (expected > 0) stopped paging
    dev = {"job": "dbhost", "instance": HOST, "device": "dm-3"}
    tests.append({"name": "memory: every path of a map gone, then a 70-minute evaluation gap: 4 paths still expected",
                  "interval": "1m", "input_series": [
                      _s(R.PATHS_EXPECTED, dev, "4x120"),
                      _s(R.PATHS, dev, f"4x60 0x60 _x{GAP} 0"),
                      _s("dbhost_multipath_paths", dev, f"4x60 0x{60 + GAP + 1}")],
                  "promql_expr_test": [_check(_rule(cfg, R.PATHS_EXPECTED), at, [(dev, 4)])]})
    # a target dropped from service discovery, a database lost by its exporter, a PDB whose
    # instance is down: each outlives the gap
    dbh1, dbh2 = {"job": "dbhost", "instance": HOST}, {"job": "dbhost", "instance": "dbhost2"}
    sales = {**odb, "inst_id": "1", "pdb": "SALES"}
    tests.append({"name": "memory: a vanished target, a vanished database and a PDB of a down instance outlive a "
                          "70-minute evaluation gap",
                  "interval": "1m", "input_series": [
                      _s("up", dbh1, f"1x{end}"),
                      _s(R.TARGETS_EXPECTED, dbh1, "1x120"), _s(R.TARGETS_EXPECTED, dbh2, "1x120"),
                      _s("up", ora, f"1x{end}"), _s("process_start_time_seconds", ora, f"1000x{end}"),
                      _s("oracle_up", odb, f"1x{end}"), _s("oracle_up", {**ora, "database": "ODS2"}, "1x50 stale"),
                      _s(R.DATABASES_EXPECTED, odb, "1x120"), _s(R.DATABASES_EXPECTED, {**ora, "database": "ODS2"}, "1x120"),
                      _s(R.DATABASE_EXPORTED_BY, {**ora, "database": "ODS2"}, "1000x120"),
                      _s(R.PDB_OPEN_EXPECTED, sales, "1x120")],
                  "promql_expr_test": [
                      _check(_rule(cfg, R.TARGETS_EXPECTED), at, [(dbh1, 1), (dbh2, 1), (ora, 1)]),
                      _check(_rule(cfg, R.DATABASES_EXPECTED), at, [(odb, 1), ({**ora, "database": "ODS2"}, 1)]),
                      _check(_rule(cfg, R.PDB_OPEN_EXPECTED), at, [(sales, 1)])]})

    # ---------------------------------------------------------------- still forgetting, as documented
    # rev23 #14c: ODS2 removed from the exporter's configuration: the exporter restarted (process
    # 1000 -> 5000) and answers without it: forgotten, ODS kept
    tests.append({"name": "memory: a database the restarted exporter no longer exports is forgotten (left the "
                          "configuration); the same process losing it is not",
                  "interval": "1m", "input_series": [
                      _s("up", ora, "1x21"), _s("process_start_time_seconds", ora, "1000x8 stale _ 5000x11"),
                      _s("oracle_up", odb, "1x21"), _s("oracle_up", {**ora, "database": "ODS2"}, "1x8 stale"),
                      _s(R.DATABASES_EXPECTED, odb, "1x20"), _s(R.DATABASES_EXPECTED, {**ora, "database": "ODS2"}, "1x20"),
                      _s(R.DATABASE_EXPORTED_BY, {**ora, "database": "ODS2"}, "1000x20")],
                  "promql_expr_test": [
                      _check(_rule(cfg, R.DATABASES_EXPECTED), "21m", [(odb, 1)]),
                      # before the restart (same process, ODS2 missing for 2 minutes): kept
                      _check(_rule(cfg, R.DATABASES_EXPECTED), "8m", [(odb, 1), ({**ora, "database": "ODS2"}, 1)])]})
    # a dropped PDB: its instance answers with its other PDBs and without it
    hr = {**odb, "inst_id": "1", "pdb": "HR"}
    tests.append({"name": "memory: a dropped PDB (its instance answers without it) is forgotten",
                  "interval": "1m", "input_series": [
                      _s("oracle_pdb_open_mode", {**hr, "open_mode": "READ WRITE"}, "1x31"),
                      _s("oracle_pdb_open_mode", {**sales, "open_mode": "READ WRITE"}, "0x20"),
                      _s("oracle_pdb_open_mode", {**sales, "open_mode": "MOUNTED"}, "1x20"),
                      _s(R.PDB_OPEN_EXPECTED, hr, "1x30"), _s(R.PDB_OPEN_EXPECTED, sales, "1x30")],
                  "promql_expr_test": [_check(_rule(cfg, R.PDB_OPEN_EXPECTED), "31m", [(hr, 1)])]})
    # a database out of the exporter's output for a day: its instance count is forgotten
    tests.append({"name": "memory: the instance count of a database gone from oracle_up for a day is forgotten",
                  "interval": "10m", "input_series": [
                      _s(R.INSTANCES_EXPECTED, odb, "2x155"), _s("oracle_up", odb, "1x6")],
                  "promql_expr_test": [_check(_rule(cfg, R.INSTANCES_EXPECTED), "26h", [])]})
    # rev23 #11: a planned reduction 4 -> 2 is declared by deleting the map's memory series (admin
    # API): the next evaluation learns the 2 paths the map has, so LunPathRedundancyLost resolves
    tests.append({"name": "memory: a planned path reduction declared by deleting the map's memory: 2 paths expected",
                  "interval": "1m", "input_series": [
                      _s(R.PATHS, dev, "4x60 2x10"), _s("dbhost_multipath_paths", dev, "4x60 2x10")],
                  "promql_expr_test": [_check(_rule(cfg, R.PATHS_EXPECTED), "70m", [(dev, 2)])]})

    # ---------------------------------------------------------------- rev23 #15: the wallboard's tiles
    # the exporter of W answers 2 hours, then is down (up 0, target configured) for 25 hours: the
    # instances' memory dropped W after a day without oracle_up, and the tile vanished; the
    # databases' memory keeps W (UNKNOWN) for as long as the target is configured
    wdb = {**ora, "database": "W"}
    known = fleetview.db_known_expr().replace('database=~"$database"', 'database=~".*"')
    tests.append({"name": "memory: the exporter down for 25 hours: W stays expected and keeps its wallboard tile",
                  "interval": "10m", "input_series": [
                      _s("up", ora, "1x12 0x150"), _s("oracle_up", wdb, "1x12"),
                      _s(R.DATABASES_EXPECTED, wdb, "1x162"), _s(R.INSTANCES_EXPECTED, wdb, "1x156")],
                  "promql_expr_test": [
                      _check(_rule(cfg, R.DATABASES_EXPECTED), "27h", [(wdb, 1)]),
                      _check(known, "27h", [({"database": "W"}, 1)])]})
    tests.append({"name": "memory: the exporter target removed from the scrape config: W's tile goes",
                  "interval": "10m", "input_series": [
                      _s("up", ora, "1x12"), _s("oracle_up", wdb, "1x12"), _s(R.DATABASES_EXPECTED, wdb, "1x162")],
                  "promql_expr_test": [_check(known, "27h", [])]})
    return tests
