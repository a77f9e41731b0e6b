"""The shape of the code base: no import circle, one declaration per collector, and from a metric
name its collector and its views in one hop (the metrics catalog)."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"exporters": ("exporter_common", "oracle_exporter", "dbhost_exporter", "fleetview"), ".": ("mixin",)}


def _modules() -> dict[str, Path]:
    out = {}
    for base, names in PACKAGES.items():
        for name in names:
            for path in (ROOT / base / name).rglob("*.py"):
                rel = path.relative_to(ROOT / base).with_suffix("")
                parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
                out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Project modules ``module`` imports, at any depth of the file (a lazy import inside a
    function is an edge too: it is how the views -> collectors circle used to hide)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
            hits = [n for n in names if n in known] or ([target] if target in known else [])
            out.update(hits)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
    out.discard(module)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_sees_a_lazy_circle():
    """The finder itself: a module importing another inside a function still closes a circle."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_circle_in_the_project():
    graph = import_graph()
    assert "oracle_exporter.views" in graph and "oracle_exporter.collectors.pdb" in graph
    # the views registry imports no collector (the circle this replaced: views -> collectors -> views)
    assert not {m for m in graph["oracle_exporter.views"] if m.startswith("oracle_exporter.collectors")}
    assert cycles(graph) == []


def test_every_collector_has_one_declaration_and_builds_its_families_from_it():
    """Each collector module has SPEC, and no family constructor of prometheus_client is called
    with a literal metric name anywhere else in the collector modules (the name, help and labels
    live in the declaration)."""
    from dbhost_exporter.collectors import SPECS as DBHOST
    from oracle_exporter.collectors import COLLECTORS
    assert all(getattr(m, "SPEC", None) is not None and m.SPEC.name == name for name, m in COLLECTORS.items())
    names = [s.name for s in DBHOST]
    assert names[:4] == ["lun", "zfs", "process", "memory"] and names[-1] == "exporter"
    offenders = []
    for folder in ("exporters/oracle_exporter/collectors", "exporters/dbhost_exporter/collectors"):
        for path in (ROOT / folder).glob("*.py"):
            tree = ast.parse(path.read_text())
            imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
            constructors = {"CounterMetricFamily", "GaugeMetricFamily", "HistogramMetricFamily", "InfoMetricFamily",
                            "SummaryMetricFamily", "counter", "gauge"} & imported   # a local helper is not one
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in constructors
                        and node.args and isinstance(node.args[0], ast.Constant)):
                    offenders.append(f"{path.name}:{node.lineno} {node.args[0].value}")
    assert offenders == []


def test_a_metric_name_leads_to_its_collector_and_views_in_one_hop():
    """metrics_catalog.json names, for every family, its exporter, collector and source; an
    oracle collector's entry lists the views it reads, and each view its grant."""
    doc = json.loads((ROOT / "exporters/exporter_common/metrics_catalog.json").read_text())
    assert doc["_generated"].startswith("GENERATED by `make generate`")
    entry = doc["metrics"]["oracle_redo_size_bytes_total"]
    assert (entry["exporter"], entry["collector"], entry["type"]) == ("oracle-exporter", "redo", "counter")
    assert entry["source"] == "'redo size'" and entry["labels"] == ["database", "inst_id"]
    assert entry["reads"] == ["GV$SYSSTAT", "GV$LOG", "GV$INSTANCE", "GV$SYSTEM_PARAMETER"]
    assert "GV$SYSSTAT" in doc["collectors"]["oracle-exporter:redo"]["reads"]
    assert doc["views"]["GV$SYSSTAT"]["grant"] == "SELECT ON SYS.GV_$SYSSTAT"
    hist = doc["metrics"]["oracle_wait_event_latency_seconds"]
    assert hist["series"] == [f"oracle_wait_event_latency_seconds_{s}" for s in ("bucket", "count", "sum")]
    for name, m in doc["metrics"].items():
        coll = doc["collectors"][f"{m['exporter']}:{m['collector']}"]
        assert name in coll["metrics"] and m["reads"] == coll["reads"], name
        assert m["source"] or m["collector"] == "exporter", f"{name}: no source"
        for view in coll["reads"] if m["exporter"] == "oracle-exporter" else ():
            assert view in doc["views"], f"{name}: {view} not in the catalog's views"


@pytest.mark.parametrize("flag,expected", [("missing_view", ("ORA-00942", "ORA-04043")),
                                           ("missing_column", ("ORA-00904",)),
                                           ("timeout", ("DPY-4024", "DPI-1067", "ORA-03156"))])
def test_the_ora_error_table_is_the_one_source_of_codes(flag, expected):
    from oracle_exporter import ora_errors, views
    from oracle_exporter.sources import live
    assert ora_errors.codes(flag) == expected
    assert views.MISSING_VIEW is ora_errors.MISSING_VIEW and live._TIMEOUT_CODES is ora_errors.TIMEOUT_CODES
    assert set(ora_errors.GRANT_CODES) == {"ORA-00942", "ORA-04043", "ORA-01031"}


def test_failure_reasons_come_from_the_table():
    from oracle_exporter.sources import failure_reason
    assert failure_reason("ORA-01017: invalid username/password; logon denied") == "logon denied"
    assert failure_reason("ORA-28001: the password has expired") == "password expired"     # issue 22
    assert failure_reason("DPY-6005: cannot connect to database.; DPY-6000: Listener refused connection. "
                          "(Similar to ORA-1017)") == "logon denied"
    assert failure_reason("DPY-6005: cannot connect to database.; DPY-4011: closed") == "connection closed"
    assert failure_reason("DPY-4011: the database or network closed the connection") == "session lost"
    assert failure_reason("ORA-99999: no such thing") == "other"


def test_whether_a_refused_logon_is_retried_comes_from_the_table_alone():
    """Issue 22: the codes a logon is not retried for (retry "new credentials") are listed once, in
    ora_errors.ERRORS; the live source asks the table (retry_for) and names no code itself."""
    import ast
    import re

    from oracle_exporter import ora_errors
    refused = {e.code for e in ora_errors.ERRORS if e.retry == ora_errors.NEW_CREDENTIALS}
    assert {"ORA-01017", "ORA-28000", "ORA-28001", "ORA-01045"} <= refused
    tree = ast.parse((ROOT / "exporters/oracle_exporter/sources/live.py").read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr)}
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in docs]
    named = {c for text in strings for c in re.findall(r"(?:ORA|DPY)-\d{4,5}", text)}
    assert not named & (refused | {"DPY-6000"}), named


def test_the_hand_written_config_docs_state_the_declared_defaults():
    """docs/oracle-exporter.md and docs/dbhost-exporter.md describe the config files by hand; every
    number or switch they give as a setting's value is the declared default (one source)."""
    import re

    from dbhost_exporter.collectors import SPECS as DBHOST
    from oracle_exporter import core
    from oracle_exporter.collectors import SPECS as ORACLE
    oracle_doc = (ROOT / "docs/oracle-exporter.md").read_text()
    dbhost_doc = (ROOT / "docs/dbhost-exporter.md").read_text()
    checked = 0
    for spec in (*ORACLE, core.SPEC):
        for s in spec.settings:
            if s.kind not in ("int", "number", "bool"):
                continue
            m = re.search(rf"^{re.escape(s.key)}: (\S+)", oracle_doc, re.M)
            if m:       # the hand-written reference shows it: with the declared default
                assert m.group(1) == s.shown_default, (s.key, m.group(1), s.shown_default)
                checked += 1
    for spec in DBHOST:
        for s in spec.settings:
            key = s.key if spec.name == "exporter" else f"{spec.name}.{s.key}"
            m = re.search(rf"^\| `{re.escape(key)}` \| `([^`]*)`", dbhost_doc, re.M)
            if m and s.kind in ("int", "number", "bool"):
                assert m.group(1) == s.shown_default, (key, m.group(1), s.shown_default)
                checked += 1
    assert checked >= 10


def test_the_declared_process_metrics_are_prometheus_clients_own():
    """exporter_common.process declares the process_* families for the catalog and the docs; they
    must be exactly what prometheus_client's process collector emits (names, types, help)."""
    from prometheus_client.process_collector import ProcessCollector

    from exporter_common.process import SPEC
    emitted = {(f.name + ("_total" if f.type == "counter" else ""), f.type, f.documentation)
               for f in ProcessCollector(registry=None).collect()}
    assert emitted == {(f.name, f.type, f.help) for f in SPEC.metrics}


def test_a_setting_declared_twice_or_over_an_exporter_key_is_refused_by_name():
    from exporter_common.declare import Collector, Setting, settings_of
    from oracle_exporter import config
    a = Collector("a", "A.", settings=(Setting("x_max", 1, "x", kind="int"),))
    b = Collector("b", "B.", settings=(Setting("x_max", 2, "x", kind="int"),))
    with pytest.raises(ValueError, match="setting x_max declared by a and b"):
        settings_of([a, b])
    assert {"databases", "timeout_seconds", "collectors"} <= config.CONFIG_KEYS
    assert not set(config.COLLECTOR_SETTINGS) & config.CONFIG_KEYS
