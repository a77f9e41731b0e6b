"""Replay refuses, in one line at start (exit status 2), what it cannot serve.

The failures feared: a replay that hangs forever (a named pipe passes a start check and
``--once`` never returns), eats the host's memory (a file of zero bytes read as one line),
serves counters that go backwards (snapshots out of time order) or NaN, or dies with a
traceback (a 5,000-digit integer).
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exporter_common.config import ConfigError
from oracle_exporter.sources.replay import MAX_LINE, read_recording, replay_sources

ROOT = Path(__file__).resolve().parents[2]


def line(time: str = "2025-03-11T09:00:00Z", database: str = "prod1", value="1000") -> str:
    views = {"GV$SYSSTAT": [{"INST_ID": 1, "NAME": "user commits", "VALUE": "__V__"}]}
    return json.dumps({"time": time, "database": database, "views": views}).replace('"__V__"', value) + "\n"


def refused(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        replay_sources(str(path))
    text = str(err.value)
    assert "\n" not in text and str(path) in text
    return text


def cli(path: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "oracle_exporter", "--replay", str(path), "--once"],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def one_line_exit_2(res: subprocess.CompletedProcess, fragment: str) -> None:
    assert res.returncode == 2, res.stderr
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in res.stderr


def test_ordinary_recording_is_served(tmp_path):
    rec = tmp_path / "rec.jsonl"
    rec.write_text(line("2025-03-11T09:00:00Z") + line("2025-03-11T09:00:00Z", "prod2")
                   + line("2025-03-11T09:00:15Z", value="1200"))
    (src, other) = replay_sources(str(rec))
    assert [src.name, other.name] == ["prod1", "prod2"] and len(src.snapshots) == 2


# --------------------------------------------------------------------------- not a regular file

def test_named_pipe_is_refused_and_once_exits(tmp_path):
    fifo = tmp_path / "rec.jsonl"
    os.mkfifo(fifo)
    assert "named pipe" in refused(fifo)
    one_line_exit_2(cli(fifo, timeout=30), "named pipe")       # before: --once never returned


def test_directory_is_refused(tmp_path):
    assert "is a directory" in refused(tmp_path)


def test_device_is_refused():
    with pytest.raises(ConfigError) as err:
        replay_sources("/dev/null")
    assert "a device" in str(err.value)


def test_gzip_is_refused_by_content_whatever_the_name(tmp_path):
    for name in ("rec.jsonl.gz", "rec.jsonl"):
        rec = tmp_path / name
        rec.write_bytes(gzip.compress(line().encode()))
        assert "gzip-compressed" in refused(rec)


# --------------------------------------------------------------------------- what a recording cannot hold

def test_snapshots_out_of_time_order_are_refused(tmp_path):
    rec = tmp_path / "rec.jsonl"
    rec.write_text(line("2025-03-11T09:00:15Z") + line("2025-03-11T09:00:00Z", "prod2")
                   + line("2025-03-11T09:00:00Z", value="900"))
    text = refused(rec)
    assert "line 3" in text and "older than the one on line 1" in text and "prod1" in text


def test_time_order_compares_instants_not_text(tmp_path):
    rec = tmp_path / "rec.jsonl"      # 09:00:10+01:00 is 08:00:10Z: earlier, whatever the text says
    rec.write_text(line("2025-03-11T08:30:00Z") + line("2025-03-11T09:00:10+01:00"))
    assert "older than" in refused(rec)


@pytest.mark.parametrize("time", ["yesterday", "", "2025-13-45T99:00:00Z"])
def test_a_time_that_is_not_rfc_3339_is_refused(tmp_path, time):
    """Review finding: "time": "yesterday" was served (no order can be checked, no age computed)."""
    rec = tmp_path / "rec.jsonl"
    rec.write_text(line("2025-03-11T09:00:00Z") + line(time, value="1200"))
    text = refused(rec)
    assert "line 2" in text and "not an RFC 3339 time" in text
    one_line_exit_2(cli(rec), "not an RFC 3339 time")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_counter_is_refused(tmp_path, value):
    rec = tmp_path / "rec.jsonl"
    rec.write_text(line(value=value))
    text = refused(rec)
    assert "GV$SYSSTAT row 1: VALUE" in text and "finite" in text


def test_five_thousand_digit_integer_is_one_line(tmp_path):
    rec = tmp_path / "rec.jsonl"
    rec.write_text(line(value="9" * 5000))
    assert "more than 4300 digits" in refused(rec)
    one_line_exit_2(cli(rec), "4300 digits")


def test_integer_beyond_a_float_is_refused_anywhere(tmp_path):
    rec = tmp_path / "rec.jsonl"
    snap = {"time": "2025-03-11T09:00:00Z", "database": "prod1",
            "views": {"GV$SESSION": [{"INST_ID": 1, "SID": "__V__"}]}}
    rec.write_text(json.dumps(snap).replace('"__V__"', "7" * 400) + "\n")
    text = refused(rec)
    assert "400 digits" in text and "GV$SESSION" in text


def test_digits_inside_a_string_are_not_a_number(tmp_path):
    rec = tmp_path / "rec.jsonl"
    snap = {"time": "2025-03-11T09:00:00Z", "database": "prod1",
            "views": {"GV$SQL": [{"INST_ID": 1, "SQL_TEXT": "select '" + "1" * 400 + "' from dual"}]}}
    rec.write_text(json.dumps(snap) + "\n")
    assert len(read_recording(str(rec))["prod1"]) == 1


def test_nul_bytes_are_refused_at_once(tmp_path):
    rec = tmp_path / "rec.jsonl"
    rec.write_bytes(line().encode() + b"\x00" * 4096 + b"\n")
    text = refused(rec)
    assert "line 2" in text and "NUL" in text


def test_over_long_line_is_refused(tmp_path):
    rec = tmp_path / "rec.jsonl"
    with rec.open("wb") as fh:
        fh.write(b'{"time": "2025-03-11T09:00:00Z", "database": "prod1", "views": {}, "pad": "')
        chunk = b"x" * (1 << 20)
        for _ in range((MAX_LINE >> 20) + 1):
            fh.write(chunk)
        fh.write(b'"}\n')
    assert "longer than 64 MiB" in refused(rec)


@pytest.mark.slow
def test_a_200_mb_file_of_zero_bytes_costs_little_memory(tmp_path):
    rec = tmp_path / "zeros.jsonl"
    with rec.open("wb") as fh:
        fh.truncate(200 << 20)                    # sparse: 200 MB of zero bytes
    code = ("import resource, sys\n"
            "from oracle_exporter.sources.replay import replay_sources\n"
            "from exporter_common.config import ConfigError\n"
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n"
            f"    replay_sources({str(rec)!r})\n"
            "except ConfigError as exc:\n"
            "    print(exc)\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    message, grown_kib = res.stdout.strip().splitlines()
    assert "NUL" in message
    assert int(grown_kib) < 30 * 1024, f"peak RSS grew by {int(grown_kib) // 1024} MiB"     # before: 445-646 MB
    one_line_exit_2(cli(rec), "NUL")
