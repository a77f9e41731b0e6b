"""The documentation says what the code does.

README.md, docs/stack.md, docs/scale-out.md, docs/oracle-exporter.md,
docs/dbhost-exporter.md and docs/dbhost-process-collector.md name commands,
flags, defaults, ports, Makefile variables, example configs, error messages,
metrics, paths and links. Each test below reads the fact out of the document
and checks it against the real program (`--help`, `--once`, `make -n`, the
config loaders), so a change on either side that is not made on the other
fails here."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from e2e_support import DEMO_BEFORE, FIXTURE_GENERATOR, ROOT, build_dbhost_fixture, require
from stack import run
from stack.procs import free_ports

README = ROOT / "README.md"
DOCS = ROOT / "docs"
OWNED_DOCS = [README, DOCS / "stack.md", DOCS / "scale-out.md", DOCS / "oracle-exporter.md",
              DOCS / "dbhost-exporter.md", DOCS / "dbhost-process-collector.md"]
BIN = Path(sys.executable).parent


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _exe(name: str) -> str:
    exe = BIN / name
    if not exe.exists():
        pytest.skip(f"{exe} missing: install the project (make venv)")
    return str(exe)


def _run(argv: list[str], cwd: Path = ROOT, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, **kw)


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    out = {}
    for name, argv in (("oracle-exporter", [_exe("oracle-exporter"), "--help"]),
                       ("dbhost-exporter", [_exe("dbhost-exporter"), "--help"]),
                       ("stack.run", [sys.executable, "-m", "stack.run", "--help"])):
        res = _run(argv)
        assert res.returncode == 0, res.stderr
        out[name] = res.stdout
    return out


def _help_flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9.\-]*)", text))


def _help_default_port(text: str) -> int:
    m = re.search(r"--web\.listen-address LISTEN_ADDRESS\s+address to listen on for HTTP \(default :(\d+)\)", text)
    assert m, text
    return int(m.group(1))


def _section(text: str, heading: str) -> str:
    """The body of the markdown section whose heading line is `heading` (up to the next heading of any level)."""
    m = re.search(rf"^{re.escape(heading)}\n(.*?)(?=^#{{1,6}} |\Z)", text, re.M | re.S)
    assert m, f"no section {heading!r}"
    return m.group(1)


# --- README: the two commands, CI, make ---------------------------------------------------------

def test_readme_first_section_is_exactly_the_two_commands():
    text = _read(README)
    first = re.search(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert first.group(1) == "Quick start (fresh Debian machine)"
    blocks = re.findall(r"```sh\n(.*?)```", first.group(2), re.S)
    assert len(blocks) == 1
    commands = [line.split("#", 1)[0].strip() for line in blocks[0].splitlines()]
    assert commands == ["make run", "make test"]


def test_ci_runs_the_test_command_the_readme_names():
    lines = [l.strip() for l in _read(ROOT / ".ci" / "run").splitlines() if l.strip() and not l.startswith("#")]
    assert lines[-1] == "make test"


def _make(*args: str) -> subprocess.CompletedProcess:
    """`make -n ...` as a user runs it: not a sub-make of the `make test` that CI runs this
    test under (MAKELEVEL/MAKEFLAGS would add "Entering directory" lines)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    return _run(["make", "--no-print-directory", "-n", *args], env=env)


MAKE_TEST_PYTEST = ".venv/bin/python -m pytest -q --durations=25 -n 2 --dist loadscope --no-loadscope-reorder tests"


def test_make_targets_run_what_the_docs_say():
    res = _make("test")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == MAKE_TEST_PYTEST
    # docs/stack.md: make run ORACLE_CONFIG=... DBHOST_CONFIG=... RUN_ARGS="..."
    stack_md = _read(DOCS / "stack.md")
    for var in ("ORACLE_CONFIG=", "DBHOST_CONFIG=", 'RUN_ARGS="'):
        assert f"make run {var}" in stack_md
    res = _make("run", "ORACLE_CONFIG=o.yml", "DBHOST_CONFIG=d.yml", "RUN_ARGS=--node-port 29100")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1].split() == [
        ".venv/bin/python", "-m", "stack.run", "--oracle-config", "o.yml", "--dbhost-config", "d.yml",
        "--node-port", "29100"]
    res = _make("run")
    assert res.stdout.strip().splitlines()[-1].split() == [".venv/bin/python", "-m", "stack.run"]
    # make run DEMO=1 (README, docs/stack.md) is stack.run --demo; DEMO=0 is not
    assert "make run DEMO=1" in stack_md and "make run DEMO=1" in _read(README)
    assert _make("run", "DEMO=1").stdout.strip().splitlines()[-1].split()[3:] == ["--demo"]
    assert _make("run", "DEMO=0").stdout.strip().splitlines()[-1].split()[3:] == []


def test_make_quick_and_make_test_run_ruff_and_what_the_readme_says():
    """make test: ruff, then every test; make quick: ruff, the mixin check, then the tests not
    marked e2e, kernel or slow (README); every marker it names is registered in pyproject.toml."""
    test = _make("test").stdout.strip().splitlines()
    assert test[-2:] == [".venv/bin/python -m ruff check .", MAKE_TEST_PYTEST]
    # two pytest-xdist workers by default (README); TEST_WORKERS=0 is one process
    readme_text = _read(README)
    assert "pytest-xdist" in readme_text and "`make test TEST_WORKERS=0`" in readme_text
    serial = _make("test", "TEST_WORKERS=0").stdout.strip().splitlines()[-1]
    assert serial == MAKE_TEST_PYTEST.replace(" -n 2 ", " -n 0 ")
    quick = _make("quick").stdout.strip().splitlines()
    assert quick[-3:] == [".venv/bin/python -m ruff check .", ".venv/bin/python -m mixin.generate --check",
                          '.venv/bin/python -m pytest -q -m "not e2e and not kernel and not slow" tests']
    readme = _read(README)
    assert "`make quick`" in readme and "`python -m mixin.generate --check`" in readme
    for marker in ("e2e", "kernel", "slow"):
        assert f"`{marker}`" in readme
    import tomllib
    pyproject = tomllib.loads(_read(ROOT / "pyproject.toml"))
    markers = {m.split(":")[0] for m in pyproject["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"e2e", "kernel", "slow"} <= markers
    assert any(dep.startswith("ruff==") for dep in pyproject["project"]["optional-dependencies"]["test"])


def test_apt_packages_in_readme_are_the_ones_make_installs():
    makefile = _read(ROOT / "Makefile")
    pkgs = re.search(r"^APT_PACKAGES := (.+)$", makefile, re.M).group(1).split()
    readme = _read(README)
    m = re.search(r"Both commands install the Debian packages they need \((.*?); via", readme, re.S)
    assert m, "README no longer lists the Debian packages make installs"
    assert re.findall(r"`([\w.+-]+)`", m.group(1)) == pkgs


# --- flags and defaults -------------------------------------------------------------------------

def test_oracle_exporter_flag_table_matches_help(helps):
    text = _read(DOCS / "oracle-exporter.md")
    rows = re.findall(r"^\| `(--[^`]+)`(?: / `(--[^`]+)`)? \|\s*([^|]*?)\s*\|", _section(text, "## Running"), re.M)
    documented = {f.split()[0] for row in rows for f in row[:2] if f}
    assert documented == _help_flags(helps["oracle-exporter"]) - {"--help", "--version"}
    from oracle_exporter.cli import build_parser
    defaults = vars(build_parser().parse_args([]))
    table = {row[0].split()[0]: row[2].strip() for row in rows}
    assert table["--web.listen-address"] == f"`{defaults['listen_address']}`" == "`:19161`"
    assert table["--web.telemetry-path"] == f"`{defaults['telemetry_path']}`"
    assert table["--log.level"] == f"`{defaults['log_level']}` / `{defaults['log_format']}`"
    assert table["--replay-loop"] == "off" and defaults["replay_loop"] is False


def test_dbhost_exporter_usage_matches_help(helps):
    text = _read(DOCS / "dbhost-exporter.md")
    block = re.search(r"```\n(dbhost-exporter .*?)```", _section(text, "## Running"), re.S).group(1)
    assert _help_flags(block) == _help_flags(helps["dbhost-exporter"]) - {"--help"}
    # the defaults shown in the usage block are the real ones
    shown = dict(re.findall(r"\[(--[\w.-]+) ([^\]|]+?)(?:\|[^\]]*)?\]", block))
    assert shown["--web.listen-address"] == f":{_help_default_port(helps['dbhost-exporter'])}"
    assert shown["--path.procfs"] == "/proc" and "(default /proc)" in helps["dbhost-exporter"]
    assert shown["--path.sysfs"] == "/sys" and "(default /sys)" in helps["dbhost-exporter"]
    assert shown["--web.telemetry-path"] == "/metrics" and "(default /metrics)" in helps["dbhost-exporter"]
    from exporter_common.cli import base_parser
    assert shown["--log.level"] == vars(base_parser("x", "x", 1).parse_args([]))["log_level"]


def test_stack_run_options_in_docs_exist(helps):
    have = _help_flags(helps["stack.run"])
    for doc in (README, DOCS / "stack.md"):
        text = _read(doc)
        for args in re.findall(r'RUN_ARGS="([^"]+)"', text):
            flags = set(re.findall(r"--[a-z][\w-]*", args))
            assert flags and flags <= have, f"{doc.name}: {flags - have}"
    # `--<component>-port` for every component, with the default the docs list
    for comp, port in run.DEFAULT_PORTS.items():
        assert f"--{comp}-port" in have and f"(default {port})" in helps["stack.run"]


def test_unit_and_compose_commands_use_existing_flags(helps):
    for unit, exe in (("oracle-exporter.service", "oracle-exporter"), ("dbhost-exporter.service", "dbhost-exporter")):
        text = _read(ROOT / "deploy" / "systemd" / unit).replace("\\\n", " ")
        execstart = re.search(r"^ExecStart=(.+)$", text, re.M).group(1)
        flags = {f.split("=")[0] for f in re.findall(r"--[\w.-]+(?:=\S*)?", execstart)}
        assert flags <= _help_flags(helps[exe]), (unit, flags - _help_flags(helps[exe]))
    compose = yaml.safe_load(_read(ROOT / "compose" / "docker-compose.yml"))
    for svc in ("oracle-exporter", "dbhost-exporter"):
        cmd = compose["services"][svc]["command"]
        assert cmd[0] == svc
        flags = {a.split("=")[0] for a in cmd[1:]}
        assert flags <= _help_flags(helps[svc]), (svc, flags - _help_flags(helps[svc]))


# --- ports -------------------------------------------------------------------------------------

def test_ports_in_readme_equal_the_code_defaults(helps):
    text = _read(README)
    defaults = dict(re.findall(r"^\| (oracle-exporter|dbhost-exporter) \| `:(\d+)` \|$", text, re.M))
    assert defaults == {"oracle-exporter": str(_help_default_port(helps["oracle-exporter"])),
                        "dbhost-exporter": str(_help_default_port(helps["dbhost-exporter"]))}
    assert int(defaults["oracle-exporter"]) == run.DEFAULT_PORTS["oracle"]
    assert int(defaults["dbhost-exporter"]) == run.DEFAULT_PORTS["dbhost"]
    # the make run table: component -> URL port
    comp_of = {"Prometheus": "prometheus", "Alertmanager": "alertmanager", "webhook receiver": "webhook",
               "oracle-exporter": "oracle", "dbhost-exporter": "dbhost", "node_exporter": "node",
               "fleet wallboard": "fleetview"}
    urls = re.findall(r"^\| ([\w -]+?)(?: \(.*\))? \| http://127\.0\.0\.1:(\d+)(/\S*)? \|$",
                      _section(text, "## Running the stack"), re.M)
    assert {comp_of[name]: int(port) for name, port, _ in urls} == run.DEFAULT_PORTS


def test_ports_in_stack_md_equal_the_code_defaults():
    table = _section(_read(DOCS / "stack.md"), "## `make run` (no Docker)")
    rows = dict(re.findall(r"^\| ([\w -]+) \| (\d+) \|", table, re.M))
    comp_of = {"webhook receiver": "webhook", "oracle-exporter": "oracle", "dbhost-exporter": "dbhost",
               "node_exporter": "node", "Alertmanager": "alertmanager", "Prometheus": "prometheus",
               "fleet wallboard": "fleetview"}
    assert {comp_of[k]: int(v) for k, v in rows.items()} == run.DEFAULT_PORTS


def test_compose_ports_in_docs_equal_the_compose_file():
    compose = yaml.safe_load(_read(ROOT / "compose" / "docker-compose.yml"))
    published = {}
    for name, svc in compose["services"].items():
        for p in svc.get("ports") or []:
            host_port = int(str(p).split(":")[1])
            published.setdefault(name, []).append(host_port)
    assert published == {"oracle": [1521], "oracle-exporter": [19161], "prometheus": [19090],
                         "alertmanager": [19093, 19199], "grafana": [13000]}
    readme = " ".join(_read(README).split())
    for label, port in (("Prometheus", 19090), ("Alertmanager", 19093), ("the webhook receiver", 19199),
                        ("Grafana", 13000)):
        assert f"{label} ({port})" in readme
    assert "http://localhost:13000/d/oracle-wallboard" in readme
    assert (ROOT / "dashboards" / "json" / "oracle-wallboard.json").exists()
    uid = yaml.safe_load(_read(ROOT / "dashboards" / "json" / "oracle-wallboard.json"))["uid"]
    assert uid == "oracle-wallboard"
    # host-network services: their listen flags carry the documented ports
    assert "--web.listen-address=:19162" in compose["services"]["dbhost-exporter"]["command"]
    assert "--web.listen-address=:19100" in compose["services"]["node-exporter"]["command"]


def test_node_collectors_in_docs_equal_make_run_and_compose():
    text = _read(DOCS / "stack.md")
    m = re.search(r"--collector\.disable-defaults` plus ([a-z, ]+) \(", text)
    documented = [c.strip() for c in m.group(1).split(",")]
    assert documented == run.NODE_COLLECTORS
    compose = yaml.safe_load(_read(ROOT / "compose" / "docker-compose.yml"))
    cmd = compose["services"]["node-exporter"]["command"]
    assert [a.removeprefix("--collector.") for a in cmd if a.startswith("--collector.")
            and a != "--collector.disable-defaults"] == run.NODE_COLLECTORS
    assert "--path.rootfs=/host" in cmd
    assert compose["services"]["node-exporter"]["pid"] == "host"


# --- example configs and documented errors ------------------------------------------------------

def test_example_oracle_config_loads_and_its_lists_are_the_defaults(tmp_path, monkeypatch):
    from oracle_exporter.config import DEFAULT_HISTOGRAM_EVENTS, DEFAULT_LATCHES, load_config
    src = ROOT / "examples" / "oracle-exporter.yml"
    doc = yaml.safe_load(_read(src))
    pw = tmp_path / "prod1.password"
    pw.write_text("s3cret\n")
    text = _read(src).replace(doc["databases"][0]["password_file"], str(pw))
    (tmp_path / "o.yml").write_text(text)
    monkeypatch.setenv(doc["databases"][1]["password_env"], "other")
    cfg = load_config(str(tmp_path / "o.yml"))
    assert [(d.name, d.dsn, d.password) for d in cfg.databases] == [
        ("prod1", "db1.example.com:1521/PROD1", "s3cret"), ("rac2", "rac-scan.example.com:1521/RAC2", "other")]
    # "Default: the list below" (example) and "default: the 11 key events in examples/..." (docs)
    assert doc["histogram_events"] == list(DEFAULT_HISTOGRAM_EVENTS)
    assert sorted(doc["latches"]) == sorted(DEFAULT_LATCHES)
    assert "the 11 key events in examples/oracle-exporter.yml" in _read(DOCS / "oracle-exporter.md")
    assert len(DEFAULT_HISTOGRAM_EVENTS) == 11
    listed = re.search(r"# default: (redo allocation.*?)\n(?!\s+#)", _read(DOCS / "oracle-exporter.md"), re.S)
    names = [n.strip() for n in re.sub(r"\n\s+#", " ", listed.group(1)).split(",")]
    assert sorted(names) == sorted(DEFAULT_LATCHES) and len(names) == len(DEFAULT_LATCHES)
    listed = re.search(r"on/off by name: (.*?) \(all on by default", _read(DOCS / "oracle-exporter.md"), re.S)
    assert sorted(doc["collectors"]) == sorted(
        c.strip() for c in re.sub(r"\n\s+#", " ", listed.group(1)).split(","))


def test_example_dbhost_configs_load_and_run(tmp_path):
    from dbhost_exporter.config import load_config
    cfg = load_config(str(ROOT / "examples" / "dbhost-exporter.yml"))
    assert [(r.by, r.value, r.role) for r in cfg.lun.roles] == [
        ("wwid", "3600a098038303053453f463045727a41", "redo"), ("multipath", "data01", "data"),
        ("multipath", "arch01", "arch"), ("device", "nvme0n1", "temp")]
    assert cfg.max_series == 50000
    # docs/dbhost-exporter.md's defaults table: the documented defaults are the loader's
    table = _section(_read(DOCS / "dbhost-exporter.md"), "## Configuration")
    rows = dict(re.findall(r"^\| `([\w.{},]+)` \| `?([^|`]+)`? \|", table, re.M))
    (tmp_path / "empty.yml").write_text("{}\n")
    empty = load_config(str(tmp_path / "empty.yml"))
    assert rows["max_series"] == str(empty.max_series)
    assert rows["lun.identity_refresh_seconds"] == str(int(empty.lun.identity_refresh_seconds))
    assert rows["lun.default_role"] == empty.lun.default_role
    assert set(rows["lun.include_types"].strip("[]").split(", ")) == set(empty.lun.include_types)
    # and the example runs (this host's /proc and /sys): one exposition, exit 0
    res = _run([_exe("dbhost-exporter"), "--config.file", str(ROOT / "examples" / "dbhost-exporter.yml"), "--once"])
    assert res.returncode == 0, res.stderr
    assert "dbhost_collector_success{collector=\"lun\"} 1.0" in res.stdout


def test_documented_error_messages_are_the_real_ones(tmp_path):
    ora_doc = _read(DOCS / "oracle-exporter.md")
    ora_msg = re.search(r"e\.g\. `(error: oracle\.yml: [^`]+)`", ora_doc).group(1)
    (tmp_path / "oracle.yml").write_text(
        "databases:\n"
        "  - {name: prod1, dsn: 'h:1521/A', user: u, password_env: X_PW}\n"
        "  - {name: prod1, dsn: 'h:1521/B', user: u, password_env: X_PW}\n")
    res = _run([_exe("oracle-exporter"), "--config.file", "oracle.yml", "--once"], cwd=tmp_path,
               env={"PATH": "/usr/bin:/bin", "X_PW": "x"})
    assert (res.returncode, res.stderr.strip(), res.stdout) == (2, ora_msg, "")

    dbh_doc = _read(DOCS / "dbhost-exporter.md")
    dbh_msg = re.search(r"e\.g\. `(error: dbhost\.yml: [^`]+)`", dbh_doc).group(1)
    (tmp_path / "dbhost.yml").write_text("lun:\n  roles:\n    - {role: redo}\n")
    res = _run([_exe("dbhost-exporter"), "--config.file", "dbhost.yml", "--once"], cwd=tmp_path)
    assert (res.returncode, res.stderr.strip(), res.stdout) == (2, dbh_msg, "")

    # "Without --config.file and --replay the exporter exits with status 2 and says what to give."
    assert "Without `--config.file` and `--replay` the exporter exits with status 2" in ora_doc
    res = _run([_exe("oracle-exporter")])
    assert res.returncode == 2 and "--config.file FILE" in res.stderr and "--replay FILE" in res.stderr


# --- metrics the docs name exist -----------------------------------------------------------------

def _exposed_names(exposition: str) -> set[str]:
    names = set()
    for m in re.finditer(r"^# TYPE (\S+) (\w+)$", exposition, re.M):
        name, kind = m.groups()
        names.add(name)
        if kind == "counter":
            names.add(name + "_total")
        if kind == "histogram":
            names |= {name + s for s in ("_bucket", "_count", "_sum")}
        if kind == "info":
            names.add(name + "_info")
    return names


def _doc_metric_names(text: str, prefix: str) -> set[str]:
    return set(re.findall(rf"`({prefix}_[a-z0-9_]+)(?=[`{{ ])", text))


def test_oracle_metrics_named_in_the_docs_are_exposed(tmp_path):
    """Every metric oracle-exporter.md names is exposed: by the demo with the default settings, or
    (the opt-in pdb collector) by the demo's CDB RACDB with `collectors: {pdb: true}`."""
    require(DEMO_BEFORE, "oracle-exporter demo recording")
    res = _run([_exe("oracle-exporter"), "--replay", str(DEMO_BEFORE), "--once"])
    assert res.returncode == 0, res.stderr
    exposed = _exposed_names(res.stdout)
    assert not [n for n in exposed if n.startswith("oracle_pdb_")]        # opt-in: off by default
    cfg = tmp_path / "pdb.yml"
    cfg.write_text("collectors: {pdb: true}\npdb_series_max: 600\ndatabases:\n"       # 600: some PDBs left out
                   "  - {name: RACDB, dsn: 'racdb:1521/RACDB', user: u, password_env: UNUSED_PW}\n")
    rac = _run([_exe("oracle-exporter"), "--config.file", str(cfg), "--replay",
                str(DEMO_BEFORE.with_name("demo-rac-outage.jsonl")), "--once"], env={**os.environ, "UNUSED_PW": "x"})
    assert rac.returncode in (0, 1), rac.stderr           # 1: DEMO or RACDB may be down in the first snapshot
    pdb_names = {n for n in _exposed_names(rac.stdout) if n.startswith(("oracle_pdb", "oracle_pdbs"))}
    assert "oracle_pdb_wait_event_latency_seconds_bucket" in pdb_names
    exposed |= pdb_names
    # the standby's own (issue 22): apply running, delay, snapshot standby
    sb = _run([_exe("oracle-exporter"), "--replay", str(DEMO_BEFORE.with_name("demo-standby.jsonl")), "--once"])
    assert sb.returncode == 0, sb.stderr
    exposed |= {n for n in _exposed_names(sb.stdout) if n.startswith("oracle_dataguard_")}
    assert {"oracle_dataguard_apply_running", "oracle_dataguard_apply_delay_seconds"} <= exposed
    # the opt-in alert log (issue 24) on DEMO, whose recording carries V$DIAG_ALERT_EXT
    log_cfg = tmp_path / "alert-log.yml"
    log_cfg.write_text("collectors: {alert_log: true}\ndatabases:\n"
                       "  - {name: DEMO, dsn: 'demo:1521/DEMO', user: u, password_env: UNUSED_PW}\n")
    al = _run([_exe("oracle-exporter"), "--config.file", str(log_cfg), "--replay", str(DEMO_BEFORE), "--once"],
              env={**os.environ, "UNUSED_PW": "x"})
    assert al.returncode == 0, al.stderr
    exposed |= {n for n in _exposed_names(al.stdout) if n.startswith("oracle_alert_log_")}
    assert "oracle_alert_log_errors_total" in exposed
    # only while a view fails (the demo's views all answer): tests/oracle/test_view_isolation.py
    exposed |= {"oracle_view_errors"}
    # live only (a replay has no logon): the ORA-28002 warning of the last logon, declared in the
    # exporter's own SPEC and exposed by a live source (tests/oracle/test_lockout.py)
    from oracle_exporter import core
    live_only = {"oracle_password_expiring"}
    assert live_only <= {f.name for f in core.SPEC.metrics}
    named = _doc_metric_names(_read(DOCS / "oracle-exporter.md"), "oracle")
    assert len(named) >= 6
    assert named <= exposed | live_only, sorted(named - exposed - live_only)


def test_dbhost_metrics_named_in_the_docs_are_exposed(tmp_path):
    require(FIXTURE_GENERATOR, "dbhost-exporter fixture generator")
    exposed = set()
    for tree in ("golden", "paths"):   # paths: NVMe native multipath (ANA), failed SCSI paths
        fx = build_dbhost_fixture(tmp_path / tree, tree)
        res = _run([_exe("dbhost-exporter"), "--path.procfs", fx["procfs"], "--path.sysfs", fx["sysfs"],
                    "--config.file", fx["config"], "--once"])
        assert res.returncode == 0, res.stderr
        exposed |= _exposed_names(res.stdout)
    for doc in ("dbhost-exporter.md", "dbhost-process-collector.md"):
        named = _doc_metric_names(_read(DOCS / doc), "dbhost")
        assert len(named) >= 5, doc
        assert named <= exposed, (doc, sorted(named - exposed))


# --- links and paths -----------------------------------------------------------------------------

@pytest.mark.parametrize("doc", OWNED_DOCS, ids=lambda p: p.name)
def test_every_relative_link_resolves(doc):
    links = re.findall(r"\]\(([^)\s]+)\)", _read(doc))
    local = [l.split("#", 1)[0] for l in links if not re.match(r"[a-z]+://", l) and not l.startswith("#")]
    missing = [l for l in local if not (doc.parent / l).exists()]
    assert not missing, missing


_REPO_PATH = re.compile(r"`((?:compose|deploy|stack|tests|docs|alerts|dashboards|exporters|examples|bench)"
                        r"/[\w./-]+?)(?::[\w:]+)?`")


@pytest.mark.parametrize("doc", OWNED_DOCS, ids=lambda p: p.name)
def test_every_repository_path_named_exists(doc):
    paths = set(_REPO_PATH.findall(_read(doc)))
    assert paths, f"{doc.name} names no repository path in backticks"
    missing = sorted(p for p in paths if not (ROOT / p.rstrip("/")).exists())
    assert not missing, missing


# --- issue 16.7: docs that drifted ------------------------------------------------------------------

def test_grafana_prometheus_url_in_docs_is_the_compose_one():
    """Every PROMETHEUS_URL the docs give points at the port Prometheus really listens on:
    the compose service's (http://prometheus:PORT) or make run's (127.0.0.1:PORT)."""
    compose = yaml.safe_load(_read(ROOT / "compose" / "docker-compose.yml"))
    compose_url = compose["services"]["grafana"]["environment"]["PROMETHEUS_URL"]
    compose_port = int(compose_url.rsplit(":", 1)[1])
    assert f"{compose_port}:{compose_port}" in " ".join(compose["services"]["prometheus"]["ports"])
    found = 0
    for doc in [README, *sorted(DOCS.glob("*.md")), ROOT / "dashboards" / "provisioning" / "datasources" / "prometheus.yml"]:
        for host, port in re.findall(r"PROMETHEUS_URL\S*?[:=]\s*`?(?:\$\{PROMETHEUS_URL:-)?https?://([\w.]+):(\d+)",
                                     _read(doc)):
            found += 1
            want = compose_port if host == "prometheus" else run.DEFAULT_PORTS["prometheus"]
            assert int(port) == want, f"{doc.name}: PROMETHEUS_URL {host}:{port}, Prometheus listens on {want}"
    assert found >= 2


def test_oracle_down_runbook_quotes_what_the_exporter_logs_by_default(tmp_path):
    """The OracleDown runbook tells on-call where the cause is: the exporter logs it at the
    default level with python-oracledb's thin-mode DPY- code; the runbook must say so and quote
    that code (not ask for debug logging, not only ORA- codes)."""
    port = free_ports(1)[0]     # nothing listens: connection refused
    cfg = tmp_path / "o.yml"
    cfg.write_text("timeout_seconds: 3\nconnect_timeout_seconds: 2\ndatabases:\n"
                   f"  - {{name: LOST, dsn: '127.0.0.1:{port}/NOPE', user: u, password_env: HOME}}\n")
    res = _run([_exe("oracle-exporter"), "--config.file", str(cfg), "--once"])
    line = next(l for l in res.stderr.splitlines() if "connect failed" in l)
    assert "level=warning" in line
    code = re.search(r"(DPY-\d+): ([^;]+);", line)
    assert code, line
    runbook = _read(DOCS / "runbooks" / "OracleDown.md")
    confirm = _section(runbook, "## Confirm")
    assert "debug" not in confirm
    assert "level=warning" in confirm and f"{code.group(1)}: {code.group(2)}" in confirm


def test_compose_commands_use_the_docker_compose_debian_installs():
    """Issue 27: Debian's docker-compose 1.29 (what `make deps` installs) answers
    `docker compose up` with `unknown command`: every command in the docs and compose files
    is `docker-compose ...` (the plugin's spelling only as an aside)."""
    makefile = _read(ROOT / "Makefile")
    assert "docker-compose" in re.search(r"^APT_PACKAGES := (.+)$", makefile, re.M).group(1).split()
    files = [README, *sorted(DOCS.glob("*.md")), ROOT / "compose" / "docker-compose.yml",
             ROOT / "compose" / "scale-out" / "docker-compose.yml"]
    bad = []
    for f in files:
        for n, line in enumerate(_read(f).splitlines(), 1):
            # `docker compose` followed by a subcommand or -f, outside "plugin: docker compose ..." asides
            for m in re.finditer(r"docker compose (up|down|-f|config|ps|logs)\b", line):
                if not re.search(r"(plugin|Docker's compose plugin)[^.]*$", line[:m.start()]):
                    bad.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()}")
    assert bad == []
    exe = shutil.which("docker-compose")
    if exe:       # the installed one knows every subcommand the docs use
        for sub in ("up", "down", "config"):
            res = subprocess.run([exe, "help", sub], capture_output=True, text=True, timeout=60)
            assert res.returncode == 0 and "Usage:" in res.stdout, (sub, res.stderr)


def test_readme_stack_links_are_the_ones_debian_serves():
    """The README's Prometheus alerts link is /classic/alerts (2.42's UI; /alerts is a 404
    there) and Alertmanager is reached through its API and amtool (no UI in Debian's
    package); tests/e2e/test_make_run.py GETs every link the banner prints."""
    text = _read(README)
    assert "http://127.0.0.1:19090/classic/alerts" in text
    assert "http://127.0.0.1:19093/api/v2/alerts" in text
    assert "amtool --alertmanager.url=http://127.0.0.1:19093 alert query" in text
    assert not re.search(r"http://127\.0\.0\.1:19090/alerts\b", text + _read(DOCS / "stack.md"))


def test_oracle_down_runbook_explains_every_reason_the_page_can_quote():
    """The OracleDown page ends with oracle_last_error_info's reason (issue 27); its runbook's
    table has a row for each reason the exporter can export (and no invented one)."""
    from oracle_exporter.sources import _REASONS
    reasons = {r for r, _ in _REASONS} | {"connected but blind"}
    text = _section(_read(DOCS / "runbooks" / "OracleDown.md"), "## The page says why")
    rows = re.findall(r"^\| ([^|]+?) \| [^|]+ \|$", text, re.M)
    listed = {r.strip() for row in rows[1:] for r in row.split(",")}
    assert listed - {"reason", "---"} == reasons


def test_example_configs_use_the_user_the_monitoring_sql_creates():
    """Issue 27: the example configs said c##monitor, docs/oracle-monitoring-user.sql creates
    oramon: a user following both got ORA-01017. Every example, deploy and compose config and
    the reference in docs/oracle-exporter.md name the user the SQL creates."""
    sql = _read(DOCS / "oracle-monitoring-user.sql")
    (created,) = re.findall(r"^CREATE USER (\w+)", sql, re.M | re.I)
    files = [ROOT / "examples" / "oracle-exporter.yml", ROOT / "deploy" / "oracle-exporter.yml",
             ROOT / "compose" / "oracle-exporter" / "oracle-exporter.yml", DOCS / "oracle-exporter.md",
             README, DOCS / "stack.md"]
    users = {(f.name, u) for f in files for u in re.findall(r"^\s*(?:- )?user: ([^\s#]+)", _read(f), re.M)}
    assert users and {u.lower() for _, u in users} == {created.lower()}, users
    # and the common-user spelling the SQL suggests for a CDB root
    assert f"C##{created.upper()}" in sql
