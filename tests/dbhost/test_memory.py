"""memory collector (issue 14.6, field notes M5 and M1): System V shared memory limits and
segments, huge pages. Failure first: a damaged file fails the collector with one line and
the other collectors keep serving; then the values of the fixture tree; then the real
kernel: a segment created here appears in /proc/sysvipc/shm as the collector reads it."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import subprocess

import pytest

import make_fixtures as mf
from dbhost_support import run_once, samples, value

from dbhost_exporter.collectors.memory import (MemoryCollector, parse_meminfo_hugepages, parse_single_int,
                                               parse_sysvipc_shm)
from dbhost_exporter.demo import tree


def once(fx: mf.Fixture) -> subprocess.CompletedProcess:
    return run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config))


def failed_lines(proc) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if "collector memory failed" in ln]


DAMAGE = {
    "shmmax not a number": ("sys/kernel/shmmax", "4294967295x\n", r"shmmax: not a number"),
    "shmall empty": ("sys/kernel/shmall", "", r"shmall: not a number"),
    "sysvipc without header": ("sysvipc/shm", "         0      32768   640  8388608\n", r"no 'key shmid perms size' header"),
    "sysvipc row cut short": ("sysvipc/shm", None, r"shm line 3: not a segment row"),
    "hugepages not a number": ("meminfo", None, r"meminfo line \d+: not a number"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_file_fails_the_memory_collector_with_one_line(tmp_path, case):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    rel, text, message = DAMAGE[case]
    path = fx.procfs / rel
    if text is None and rel == "sysvipc/shm":
        lines = path.read_text().splitlines(True)
        lines[2] = lines[2][:30] + "\n"
        text = "".join(lines)
    elif text is None:
        text = path.read_text().replace("HugePages_Free:       60", "HugePages_Free:      6O")
    path.write_text(text)
    proc = once(fx)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="memory") == 0
    assert value(got, "dbhost_collector_success", collector="lun") == 1
    assert not any(k[0].startswith(("dbhost_shm", "dbhost_memory", "dbhost_kernel_shm")) for k in got)
    lines = failed_lines(proc)
    assert len(lines) == 1 and re.search(message, lines[0]) and rel.split("/")[-1] in lines[0], proc.stderr


def test_missing_files_leave_their_series_out_and_the_collector_succeeds(tmp_path):
    """A kernel without System V IPC has no sysvipc/ and no shm* sysctls; a recorded tree may lack them."""
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    for rel in ("sys/kernel/shmmax", "sys/kernel/shmall", "sys/kernel/shmmni", "sysvipc/shm"):
        (fx.procfs / rel).unlink()
    proc = once(fx)
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="memory") == 1
    assert not any(k[0].startswith(("dbhost_shm", "dbhost_kernel_shm")) for k in got)
    assert value(got, "dbhost_memory_hugepages", state="total") == tree.HUGEPAGES["total"]
    assert failed_lines(proc) == []


def test_collector_can_be_switched_off(tmp_path):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    import yaml
    doc = yaml.safe_load(fx.config.read_text())        # a second `collectors:` key is an error (issue 27)
    doc.setdefault("collectors", {})["memory"] = False
    fx.config.write_text(yaml.safe_dump(doc))
    proc = once(fx)
    assert proc.returncode == 0, proc.stderr
    got = samples(proc.stdout)
    assert not any(k[0].startswith(("dbhost_shm", "dbhost_memory", "dbhost_kernel_")) and k[0] != "dbhost_kernel_info"
                   for k in got)
    assert ("dbhost_collector_success", (("collector", "memory"),)) not in got


def test_fixture_values_are_the_limits_segments_and_huge_pages_written(tmp_path):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    got = samples(once(fx).stdout)
    page = os.sysconf("SC_PAGE_SIZE")
    assert value(got, "dbhost_kernel_shmmax_bytes") == tree.SHM_LIMITS["shmmax"]
    assert value(got, "dbhost_kernel_shmall_bytes") == tree.SHM_LIMITS["shmall"] * page
    assert value(got, "dbhost_kernel_shmmni") == tree.SHM_LIMITS["shmmni"]
    assert value(got, "dbhost_kernel_page_size_bytes") == page
    assert value(got, "dbhost_shm_segments") == len(tree.SHM_SEGMENTS)
    assert value(got, "dbhost_shm_bytes") == sum(seg[2] for seg in tree.SHM_SEGMENTS)
    for state in ("total", "free", "reserved", "surplus"):
        assert value(got, "dbhost_memory_hugepages", state=state) == tree.HUGEPAGES[state]
    assert value(got, "dbhost_memory_hugepage_size_bytes") == tree.HUGEPAGES["size_kb"] * 1024
    # M5 on the demo host: every segment fits shmmax and all of them fit shmall
    assert max(seg[2] for seg in tree.SHM_SEGMENTS) <= value(got, "dbhost_kernel_shmmax_bytes")
    assert value(got, "dbhost_shm_bytes") <= value(got, "dbhost_kernel_shmall_bytes")


def test_parsers_name_what_is_wrong():
    assert parse_single_int(None, "x") is None
    assert parse_single_int("18446744073692774399\n", "x") == 18446744073692774399   # the kernel's default
    with pytest.raises(ValueError, match="x: not a number"):
        parse_single_int("-1\n", "x")
    assert parse_sysvipc_shm(" key shmid perms size cpid lpid nattch\n", "s") == (0, 0)
    with pytest.raises(ValueError, match="no 'key shmid perms size' header"):
        parse_sysvipc_shm("", "s")
    assert parse_meminfo_hugepages("MemTotal: 1 kB\nHugePages_Total: 5\nHugepagesize: 2048 kB\n") == {
        "HugePages_Total": 5, "Hugepagesize": 2048 * 1024}
    with pytest.raises(ValueError, match="line 1"):
        parse_meminfo_hugepages("HugePages_Total:\n")


# --- the real kernel -------------------------------------------------------------------------

def _libc():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    libc.shmget.restype = ctypes.c_int
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    return libc


def _real(collector: MemoryCollector) -> dict[str, float]:
    return {s.name + "".join(f"{{{v}}}" for v in s.labels.values()): s.value
            for fam in collector.collect() for s in fam.samples}


@pytest.mark.skipif(not os.path.exists("/proc/sysvipc/shm"), reason="kernel without System V IPC")
def test_a_segment_created_here_is_counted_from_the_real_proc():
    IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
    size = 3 * 1024 * 1024 + 4096
    collector = MemoryCollector("/proc")
    before = _real(collector)
    libc = _libc()
    shmid = libc.shmget(IPC_PRIVATE, size, IPC_CREAT | 0o600)
    if shmid < 0:
        pytest.skip(f"shmget: {os.strerror(ctypes.get_errno())}")
    try:
        during = _real(collector)
    finally:
        assert libc.shmctl(shmid, IPC_RMID, None) == 0
    after = _real(collector)
    assert during["dbhost_shm_segments"] == before["dbhost_shm_segments"] + 1
    assert during["dbhost_shm_bytes"] == before["dbhost_shm_bytes"] + size
    assert after["dbhost_shm_segments"] == before["dbhost_shm_segments"]
    assert during["dbhost_kernel_shmmax_bytes"] == int(open("/proc/sys/kernel/shmmax").read())
    assert during["dbhost_kernel_page_size_bytes"] == os.sysconf("SC_PAGE_SIZE")
    # the huge page size is the kernel's (the unit of HugePages_*)
    with open("/proc/meminfo") as f:
        kb = int(re.search(r"^Hugepagesize:\s+(\d+) kB$", f.read(), re.M).group(1))
    assert during["dbhost_memory_hugepage_size_bytes"] == kb * 1024
