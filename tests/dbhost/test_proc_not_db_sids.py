"""ASM and other non-database instances never become database SIDs (review host finding 8).

A database's ASMB connects to ASM through a grid-owned foreground
``oracle+ASM_asmb_<db> (DESCRIPTION=(LOCAL=YES)(ADDRESS=(PROTOCOL=beq)))`` (Carstenbach's 12.1
``ps -eLf`` listing); ASM's own foregrounds are ``oracle+ASM1 (LOCAL=NO)``. A SID beginning with
+ or - (ASM, the ASM proxy APX, -MGMTDB) is not a database instance: such processes go to the
extra groups, as docs/dbhost-process-collector.md says."""
from __future__ import annotations

from fixtures_proc import make_proc, write_process

from dbhost_exporter.collectors.process import ProcessCollector

ASM_CLIENT = b"oracle+ASM_asmb_cdb1 (DESCRIPTION=(LOCAL=YES)(ADDRESS=(PROTOCOL=beq)))"


def groups(coll):
    return {(s.labels["sid"], s.labels["role"]): s.value for f in coll.collect()
            if f.name == "dbhost_process_threads" for s in f.samples}


def build(root):
    specs = [make_proc(0, 100, (b"ora_pmon_cdb1",), b"ora_pmon_cdb1", ("cdb1", "pmon")),
             make_proc(1, 101, (b"oraclecdb1 (LOCAL=NO)",), b"oracle_101_cdb1", ("cdb1", "foreground")),
             make_proc(2, 200, (ASM_CLIENT,), b"oracle_200_+as", None, nthreads=2, tid_base=250),
             make_proc(3, 201, (b"oracle+ASM1 (LOCAL=NO)",), b"oracle_201_+as", None),
             make_proc(4, 202, (b"oracle+APX1 (LOCAL=NO)",), b"oracle_202_+ap", None),
             make_proc(5, 203, (b"asm_pmon_+ASM1",), b"asm_pmon_+ASM1", None),
             make_proc(6, 204, (b"mdb_pmon_-MGMTDB",), b"mdb_pmon_-MGMT", None),
             make_proc(7, 205, (b"oracle-MGMTDB (LOCAL=NO)",), b"oracle_205_-mg", None),
             make_proc(8, 206, (b"ora_rbal_+ASM1",), b"ora_rbal_+ASM1", None)]
    for sp in specs:
        write_process(root, sp)


def test_asm_processes_are_not_database_sids(tmp_path):
    build(tmp_path)
    got = groups(ProcessCollector(str(tmp_path)))
    assert set(got) == {("cdb1", "pmon"), ("cdb1", "foreground")}
    assert not any(sid.startswith(("+", "-")) for sid, _ in got)


def test_asm_processes_land_in_the_configured_extra_group(tmp_path):
    build(tmp_path)
    coll = ProcessCollector(str(tmp_path), [("asm", r"^asm_|^oracle\+ASM|^ora_[a-z0-9]+_\+ASM"),
                                            ("mgmtdb", r"^mdb_|^oracle-MGMTDB")])
    got = groups(coll)
    assert got[("", "asm")] == 2 + 1 + 1 + 1      # the ASM client (2 threads), +ASM1 fg, asm_pmon, ora_rbal_+ASM1
    assert got[("", "mgmtdb")] == 2
    assert got[("cdb1", "foreground")] == 1
    assert ("", "foreground") not in got
