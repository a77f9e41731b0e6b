"""The rac_gc collector (GV$SYSSTAT global cache statistics).

What an on-call engineer fears on RAC: the interconnect slowing down (every block request waits on
the remote LMS and the network) and blocks lost in transit (a NIC, a switch, UDP buffers): seen per
instance, in base units. What must stay quiet: a single instance (zeros), statistics missing."""
from __future__ import annotations

from oracle_sim import collect, samples, value

from oracle_exporter import queries
from oracle_exporter.config import Settings
from oracle_exporter.snapshot import Snapshot


def sysstat(i, **values):
    names = {"cr": "gc cr blocks received", "cr_time": "gc cr block receive time",
             "cur": "gc current blocks received", "cur_time": "gc current block receive time",
             "lost": "gc blocks lost", "corrupt": "gc blocks corrupt"}
    return [{"INST_ID": i, "NAME": names[k], "VALUE": v, "CON_ID": 0} for k, v in values.items()]


def run(rows):
    return collect(Snapshot("RACDB", "2025-03-11T09:00:00Z", {"GV$SYSSTAT": rows}), Settings(), names=["rac_gc"])


def test_the_statistics_are_asked_for_by_name():
    binds = set(queries.build_queries(Settings())["GV$SYSSTAT"].binds.values())
    assert {"gc cr blocks received", "gc cr block receive time", "gc current blocks received",
            "gc current block receive time", "gc blocks lost", "gc blocks corrupt"} <= binds


def test_two_instances_receive_times_in_seconds_and_lost_blocks():
    rows = (sysstat(1, cr=5_000_000, cr_time=210_000, cur=1_200_000, cur_time=96_000, lost=17, corrupt=0) +
            sysstat(2, cr=4_100_000, cr_time=1_640_000, cur=900_000, cur_time=450_000, lost=2_316, corrupt=3))
    fams = run(rows)
    assert value(fams, "oracle_gc_blocks_received_total", inst_id="1", kind="cr") == 5_000_000
    assert value(fams, "oracle_gc_block_receive_time_seconds_total", inst_id="1", kind="cr") == 2100.0
    assert value(fams, "oracle_gc_block_receive_time_seconds_total", inst_id="2", kind="current") == 4500.0
    # instance 2's CR blocks average 4 ms (16,400 s / 4.1 M): the interconnect of that node is slow
    avg = (value(fams, "oracle_gc_block_receive_time_seconds_total", inst_id="2", kind="cr") /
           value(fams, "oracle_gc_blocks_received_total", inst_id="2", kind="cr"))
    assert abs(avg - 0.004) < 1e-12
    assert value(fams, "oracle_gc_blocks_lost_total", inst_id="2") == 2316
    assert value(fams, "oracle_gc_blocks_corrupt_total", inst_id="2") == 3


def test_a_single_instance_has_flat_zero_series_and_missing_statistics_are_left_out():
    fams = run(sysstat(1, cr=0, cr_time=0, lost=0))
    assert value(fams, "oracle_gc_blocks_received_total", inst_id="1", kind="cr") == 0
    assert value(fams, "oracle_gc_blocks_lost_total", inst_id="1") == 0
    assert ("oracle_gc_blocks_received_total", (("inst_id", "1"), ("kind", "current"))) not in samples(fams)
    assert samples(run([])) == {}
