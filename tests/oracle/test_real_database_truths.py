"""Issue 11 ("oracle-exporter on real databases"): facts synthetic recordings used to hide.

Each test builds the snapshot a real database returns (or an older recording holds) and
checks the exported value against the row, never against the collector's own arithmetic."""
from __future__ import annotations

import copy
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
