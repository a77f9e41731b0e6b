"""The Makefile as a new user meets it (issue 27): `make deps` installs what is
missing and never stops, disables or reconfigures a service; `make help` lists
every target; `make reset` removes the stack state and keeps .venv.

The commands run against fake `dpkg-query`, `apt-get`, `sudo` and `systemctl`
first on PATH, each recording its arguments, so nothing is installed or changed."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from e2e_support import ROOT

FAKES = {
    # every package reported missing, so make deps takes its install branch
    "dpkg-query": "exit 1",
    "apt-get": 'echo "apt-get $*" >> "$CALLS"',
    "sudo": 'echo "sudo $*" >> "$CALLS"; exec "$@"',
    "systemctl": 'echo "systemctl $*" >> "$CALLS"',
    "service": 'echo "service $*" >> "$CALLS"',
    "update-rc.d": 'echo "update-rc.d $*" >> "$CALLS"',
    "invoke-rc.d": 'echo "invoke-rc.d $*" >> "$CALLS"',
    "deb-systemd-helper": 'echo "deb-systemd-helper $*" >> "$CALLS"',
}


def _make_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        p = bin_dir / name
        p.write_text(f"#!/bin/sh\n{body}\n")
        p.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["CALLS"] = str(tmp_path / "calls")
    return env


def _copy_makefile(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    work.mkdir()
    shutil.copy(ROOT / "Makefile", work / "Makefile")
    return work


def test_make_deps_installs_missing_packages_and_touches_no_service(tmp_path):
    env = _make_env(tmp_path)
    work = _copy_makefile(tmp_path)
    res = subprocess.run(["make", "--no-print-directory", "deps", "SUDO=sudo"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    commands = [c.split()[0] for c in calls if not c.startswith("sudo ")]
    # what ran: apt-get update, then one apt-get install of every package, and nothing else
    assert commands == ["apt-get", "apt-get"], calls
    assert calls[-1].split()[:5] == ["apt-get", "install", "-y", "--no-install-recommends", "python3-venv"]
    assert "prometheus-alertmanager" in calls[-1].split()
    # no service manager was called, before or after the install
    assert not [c for c in calls if re.search(r"systemctl|service|rc\.d|systemd", c.split()[0]
                                              if not c.startswith("sudo ") else c.split()[1])], calls
    assert "installing Debian packages" in res.stdout


def test_makefile_has_no_service_commands():
    """Alongside the behavioural test above: no recipe names a service manager at all."""
    text = (ROOT / "Makefile").read_text()
    recipes = "\n".join(l for l in text.splitlines() if l.startswith("\t"))
    assert not re.search(r"\b(systemctl|service|update-rc\.d|invoke-rc\.d)\b", recipes)


def test_make_help_lists_every_target():
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    res = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    listed = set(re.findall(r"^  make (\S+)", res.stdout, re.M))
    phony = set(re.search(r"^\.PHONY: (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split())
    assert phony - {"dashboards", "docs"} <= listed, res.stdout
    assert {"run", "test", "reset", "clean", "bench", "deps"} <= listed
    # plain `make` is `make help`, not an install
    res2 = subprocess.run(["make", "--no-print-directory"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=30)
    assert res2.stdout == res.stdout


def test_make_reset_removes_the_state_and_keeps_the_venv(tmp_path):
    env = _make_env(tmp_path)
    work = _copy_makefile(tmp_path)
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "bin" / "python").write_text("keep me")
    (work / ".state" / "prometheus" / "data").mkdir(parents=True)
    (work / ".state" / "webhook").mkdir()
    (work / ".state" / "webhook" / "notifications.jsonl").write_text("{}\n")
    res = subprocess.run(["make", "--no-print-directory", "reset"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert not (work / ".state").exists()
    assert (work / ".venv" / "bin" / "python").read_text() == "keep me"
    res = subprocess.run(["make", "--no-print-directory", "clean"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0 and not (work / ".venv").exists()


def test_make_reset_is_refused_while_a_run_holds_the_state(tmp_path):
    """Issue 27 review: `make reset` under a running `make run` deleted its state and its lock, and a
    second run then started beside the first. While the lock is held (flock, as stack.run takes it),
    reset says so and deletes nothing."""
    import fcntl
    env = _make_env(tmp_path)
    work = _copy_makefile(tmp_path)
    (work / ".state" / "webhook").mkdir(parents=True)
    (work / ".state" / "lock").write_text("4242\n")
    fd = os.open(work / ".state" / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        res = subprocess.run(["make", "--no-print-directory", "reset"], cwd=work, env=env, capture_output=True,
                             text=True, timeout=30)
        assert res.returncode != 0 and "a make run is using .state (pid 4242)" in res.stderr, res.stderr
        assert (work / ".state" / "webhook").exists()
    finally:
        os.close(fd)
    res = subprocess.run(["make", "--no-print-directory", "reset"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0 and not (work / ".state").exists(), res.stderr


def test_first_run_pip_is_quiet(tmp_path):
    """The first `make run` installs the virtualenv with quiet pip (measured: 2 lines of output,
    down from about 50): every pip command of the recipe is -q, and a failure says how to see
    the details. Runs `make -n` on a fresh checkout copy (nothing installed)."""
    work = _copy_makefile(tmp_path)
    (work / "pyproject.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    res = subprocess.run(["make", "--no-print-directory", "-n", "venv"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    pip = [l for l in res.stdout.splitlines() if l.startswith(".venv/bin/python -m pip install")]
    assert len(pip) == 2 and all(" -q " in l and "--disable-pip-version-check" in l for l in pip), pip
    assert "rerun with details" in res.stdout
