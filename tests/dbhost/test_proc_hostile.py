"""Hostile and broken procfs input: odd names, vanished and unreadable
files. Nothing may raise, counters may not go backwards, the exposition stays
valid for promtool."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from fixtures_proc import (ProcSpec, ThreadSpec, build_proc_tree, make_proc, proc_specs,  # noqa: E402
                           write_process)

from dbhost_exporter.collectors.process import ProcessCollector, parse_stat  # noqa: E402

TCK = os.sysconf("SC_CLK_TCK")


def scrape(coll):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in coll.collect() for s in f.samples}


def val(samples, name, sid, role, **extra):
    return samples[(name, tuple(sorted(dict(sid=sid, role=role, **extra).items())))]


def promtool_check(text: bytes) -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is installed on this machine (Debian package prometheus)"
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()


HOSTILE_COMMS = [
    b"a b c",
    b"x) R 1 2 (y",
    b"((()))",
    b'say "hi"',
    b"line\nbreak",
    b"\xff\xfe\xc3(bad",
    b"\\back\\slash",
]


@pytest.mark.parametrize("comm", HOSTILE_COMMS)
def test_parse_stat_takes_the_last_paren(comm):
    from fixtures_proc import stat_bytes
    line = stat_bytes(4242, comm, "S", 1, 123, 45, 7, 98765)
    # (comm, starttime, utime, stime, num_threads): what scan() takes from every stat it reads
    assert parse_stat(line) == (comm, 98765, 123, 45, 7)


def test_hostile_comm_and_cmdline_values_exact(tmp_path):
    specs = []
    for i, comm in enumerate(HOSTILE_COMMS):
        specs.append(make_proc(i, 8000 + i, (b"ora_lgwr_HOST",), comm, ("HOST", "lgwr")))
    # foreground with non-UTF-8 and newline in its connect description
    specs.append(make_proc(20, 8100, (b"oracleHOST (LOCAL=NO) \xff\n\"x\"",), b"oracle_8100_h\xff",
                           ("HOST", "foreground")))
    # a sched header trying to inject a value (longer than a real comm could be)
    specs.append(make_proc(21, 8200, (b"ora_dbw0_HOST",), b"x)\nnr_voluntary_switches : 999999999",
                           ("HOST", "dbw0")))
    # non-Oracle processes with nasty command lines
    specs.append(make_proc(22, 8300, (b"\xff\xfe", b"ora_lgwr_HOST"), b"\xff", None))
    # one argv element with a newline: oracle<SID>, whitespace, '(' -> a foreground of HOST
    specs.append(make_proc(23, 8301, (b"oracleHOST\n(LOCAL=NO)ora_lgwr_X",), b"o", ("HOST", "foreground")))
    for sp in specs:
        write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path), [("weird", "\ufffd")])
    reg = CollectorRegistry()
    reg.register(coll)
    text = generate_latest(reg)
    promtool_check(text)
    samples = scrape(coll)
    for role in ("lgwr", "foreground", "dbw0"):
        group = [sp for sp in specs if sp.group == ("HOST", role)]
        assert val(samples, "dbhost_process_context_switches_total", "HOST", role, kind="voluntary") == \
            sum(t.voluntary for sp in group for t in sp.threads)
        assert val(samples, "dbhost_process_processes", "HOST", role) == len(group)
    assert val(samples, "dbhost_process_processes", "HOST", "lgwr") == len(HOSTILE_COMMS)
    # the undecodable command line of 8300 matched the extra group via U+FFFD
    assert val(samples, "dbhost_process_processes", "", "weird") == 1
    assert val(samples, "dbhost_process_processes", "HOST", "foreground") == 2


def _scrape_ok(root, coll=None):
    coll = coll or ProcessCollector(str(root))
    return coll, scrape(coll)


def test_vanished_files_at_every_step(tmp_path):
    """Process exits at each point of the scan: PID dir empty, stat gone,
    cmdline gone, task dir gone, thread stat gone, thread sched+status gone."""
    base = make_proc(0, 100, (b"ora_lgwr_V",), b"ora_lgwr_V", ("V", "lgwr"), nthreads=2, tid_base=150)
    write_process(tmp_path, base)
    # 1: empty PID directory
    (tmp_path / "200").mkdir()
    # 2: stat gone
    sp = make_proc(1, 201, (b"ora_dbw0_V",), b"ora_dbw0_V", ("V", "dbw0"))
    write_process(tmp_path, sp)
    (tmp_path / "201" / "stat").unlink()
    # 3: cmdline gone
    write_process(tmp_path, make_proc(2, 202, (b"ora_ckpt_V",), b"ora_ckpt_V", ("V", "ckpt")))
    (tmp_path / "202" / "cmdline").unlink()
    # 4: task dir gone
    write_process(tmp_path, make_proc(3, 203, (b"ora_smon_V",), b"ora_smon_V", ("V", "smon")))
    shutil.rmtree(tmp_path / "203" / "task")
    # 5: one thread gone after task/ was listed (its directory is empty), 6: one thread's sched
    # and status gone
    write_process(tmp_path, make_proc(4, 204, (b"ora_pmon_V",), b"ora_pmon_V", ("V", "pmon"), nthreads=3,
                                      tid_base=250))
    for f in (tmp_path / "204" / "task" / "251").iterdir():
        f.unlink()
    (tmp_path / "204" / "task" / "252" / "sched").unlink()
    (tmp_path / "204" / "task" / "252" / "status").unlink()
    # junk at the top level
    (tmp_path / "self").symlink_to("100")
    (tmp_path / "stat").write_text("cpu 1 2 3\n")
    (tmp_path / "12ab").mkdir()
    coll, samples = _scrape_ok(tmp_path)
    assert val(samples, "dbhost_process_threads", "V", "lgwr") == 2
    assert val(samples, "dbhost_process_threads", "V", "pmon") == 1
    assert val(samples, "dbhost_process_processes", "V", "pmon") == 1
    pm = make_proc(4, 204, (b"ora_pmon_V",), b"ora_pmon_V", ("V", "pmon"), nthreads=3, tid_base=250)
    assert val(samples, "dbhost_process_migrations_total", "V", "pmon") == pm.threads[0].migrations
    groups = {dict(l)["role"] for (n, l) in samples if n == "dbhost_process_threads"}
    assert groups == {"lgwr", "pmon"}


@pytest.mark.parametrize("unreadable", ["sched", "schedstat"])
def test_unreadable_file_keeps_last_values_without_double_counting(tmp_path, unreadable):
    sp = make_proc(0, 300, (b"ora_lgwr_U",), b"ora_lgwr_U", ("U", "lgwr"), nthreads=2, tid_base=350)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    first = scrape(coll)
    # thread 351 runs (all its counters grow), and one of its files becomes unreadable
    t = sp.threads[1]
    ran = ThreadSpec(**{**t.__dict__, "utime": t.utime + 3, "voluntary": t.voluntary + 5,
                        "run_delay": t.run_delay + 1_000_000})
    write_process(tmp_path, ProcSpec(**{**sp.__dict__, "threads": (sp.threads[0], ran)}))
    path = tmp_path / "300" / "task" / "351" / unreadable
    saved = path.read_bytes()
    path.unlink()
    path.mkdir()  # reading it now fails with EISDIR (root can read any mode bits)
    second = scrape(coll)
    threads = ("dbhost_process_threads", (("role", "lgwr"), ("sid", "U")))
    cpu = ("dbhost_process_cpu_seconds_total", (("mode", "user"), ("role", "lgwr"), ("sid", "U")))
    switches = ("dbhost_process_context_switches_total", (("kind", "voluntary"), ("role", "lgwr"), ("sid", "U")))
    delay = ("dbhost_process_run_delay_seconds_total", (("role", "lgwr"), ("sid", "U")))
    if unreadable == "sched":
        # the thread keeps every last value (run delay too: one thread, one consistent state)
        # and is not counted as a thread; the process's CPU time (from stat) moves on
        assert second == first | {threads: 1, cpu: pytest.approx(first[cpu] + 3 / TCK)}
    else:
        # without schedstat it cannot be skipped: sched is read, the run values are kept
        assert second[switches] == first[switches] + 5
        assert second[delay] == first[delay]
        assert second[threads] == 2
    path.rmdir()
    path.write_bytes(saved)
    third = scrape(coll)
    assert third[switches] == first[switches] + 5
    assert third[delay] == pytest.approx(first[delay] + 0.001)
    assert third[threads] == 2
    assert scrape(coll) == third


@pytest.mark.parametrize("content", [b"", b"300 (ora_lgwr_U", b"300 (x) S 1 2", b"\x00\x00\x00",
                                     b"300 (x) S " + b"z " * 60,
                                     b"300 (ora_lgwr_U) S" + b" -5" * 50 + b"\n"])
def test_malformed_stat_is_skipped_and_carried(tmp_path, content):
    """/proc/PID/stat (identity and CPU time) becomes unparsable: the process
    keeps its last values, it is not counted as a process or its threads."""
    sp = make_proc(0, 300, (b"ora_lgwr_U",), b"ora_lgwr_U", ("U", "lgwr"), nthreads=2, tid_base=350)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    first = scrape(coll)
    saved = (tmp_path / "300" / "stat").read_bytes()
    (tmp_path / "300" / "stat").write_bytes(content)
    # the leader ran (its schedstat moved), so stat is read again
    leader = sp.threads[0]
    (tmp_path / "300" / "schedstat").write_bytes(b"%d %d %d\n" % (
        leader.runtime_ns + 1000, leader.run_delay, leader.timeslices + 1))
    second = scrape(coll)
    key = ("dbhost_process_context_switches_total", (("kind", "voluntary"), ("role", "lgwr"), ("sid", "U")))
    cpu = ("dbhost_process_cpu_seconds_total", (("mode", "user"), ("role", "lgwr"), ("sid", "U")))
    assert second[key] == first[key] == sum(t.voluntary for t in sp.threads)
    assert second[cpu] == first[cpu] == pytest.approx(sum(t.utime for t in sp.threads) / TCK)
    assert second[("dbhost_process_processes", (("role", "lgwr"), ("sid", "U")))] == 0
    # readable again: the same process (same start time and comm), nothing counted twice;
    # the leader's new run time and timeslice are counted once
    (tmp_path / "300" / "stat").write_bytes(saved)
    running = ("dbhost_process_running_seconds_total", (("role", "lgwr"), ("sid", "U")))
    slices = ("dbhost_process_timeslices_total", (("role", "lgwr"), ("sid", "U")))
    assert scrape(coll) == first | {running: pytest.approx(first[running] + 1e-6), slices: first[slices] + 1}
    assert coll.last_cmdlines_read == 0
    assert coll.last_sched_parsed == 1


@pytest.mark.parametrize("content", [b"", b"garbage\n", b"nr_voluntary_switches : x\n"])
def test_malformed_sched_is_skipped(tmp_path, content):
    sp = make_proc(0, 300, (b"ora_lgwr_U",), b"ora_lgwr_U", ("U", "lgwr"))
    write_process(tmp_path, sp)
    (tmp_path / "300" / "task" / "300" / "sched").write_bytes(content)
    samples = scrape(ProcessCollector(str(tmp_path)))
    assert ("dbhost_process_threads", (("role", "lgwr"), ("sid", "U"))) not in samples


def test_fifo_does_not_block(tmp_path):
    sp = make_proc(0, 300, (b"ora_lgwr_U",), b"ora_lgwr_U", ("U", "lgwr"))
    write_process(tmp_path, sp)
    sched = tmp_path / "300" / "task" / "300" / "sched"
    sched.unlink()
    os.mkfifo(sched)
    samples = scrape(ProcessCollector(str(tmp_path)))
    assert ("dbhost_process_threads", (("role", "lgwr"), ("sid", "U"))) not in samples


def test_unreadable_cmdline_identifies_later(tmp_path):
    sp = make_proc(0, 300, (b"ora_lgwr_U",), b"ora_lgwr_U", ("U", "lgwr"))
    write_process(tmp_path, sp)
    cmd = tmp_path / "300" / "cmdline"
    cmd.unlink()
    cmd.mkdir()
    coll = ProcessCollector(str(tmp_path))
    assert ("dbhost_process_threads", (("role", "lgwr"), ("sid", "U"))) not in scrape(coll)
    cmd.rmdir()
    cmd.write_bytes(b"ora_lgwr_U\x00")
    samples = scrape(coll)
    assert val(samples, "dbhost_process_context_switches_total", "U", "lgwr", kind="involuntary") == \
        sp.threads[0].involuntary


def test_full_fixture_exposition_passes_promtool(tmp_path):
    build_proc_tree(tmp_path)
    reg = CollectorRegistry()
    reg.register(ProcessCollector(str(tmp_path), [("listener", "tnslsnr")]))
    text = generate_latest(reg)
    promtool_check(text)
    assert text.count(b"dbhost_process_context_switches_total{") == 2 * (
        len({sp.group for sp in proc_specs() if sp.group}) + 1)


def test_missing_procfs_root_raises_oserror_for_the_cli_to_report(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(ProcessCollector(str(tmp_path / "nope")).collect())
