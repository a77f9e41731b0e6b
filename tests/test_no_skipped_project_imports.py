"""A broken import of the project's own code must fail the suite, never skip tests silently:
no test may `pytest.importorskip` (or skip on `importlib.util.find_spec`) a module of this
repository — the exporters' packages, mixin, stack, bench, or the test helpers on pytest's
pythonpath. importorskip stays allowed for genuinely optional third-party modules only."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPING_CALLS = {"importorskip", "find_spec"}


def project_modules() -> set[str]:
    """Top-level names importable from this repository under pytest's pythonpath."""
    paths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["pythonpath"]
    names = set()
    for entry in paths:
        base = ROOT / entry
        for child in base.iterdir():
            if child.is_dir() and (child / "__init__.py").exists():
                names.add(child.name)
            elif child.suffix == ".py" and child.stem != "__init__":
                names.add(child.stem)
    return names - {"conftest", "setup"}


def offending_calls(source: str, project: set[str], filename: str = "<test>") -> list[str]:
    """``file:line name(arg)`` for each importorskip/find_spec whose module is the project's,
    or is not a literal (so it cannot be checked)."""
    out = []
    nodes = sorted((n for n in ast.walk(ast.parse(source, filename)) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in SKIPPING_CALLS or not node.args:
            continue
        arg = node.args[0]
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            out.append(f"{filename}:{node.lineno} {name}(<not a literal>)")
        elif arg.value.split(".")[0] in project:
            out.append(f"{filename}:{node.lineno} {name}({arg.value!r})")
    return out


def test_project_module_list_is_complete():
    names = project_modules()
    assert {"oracle_exporter", "dbhost_exporter", "exporter_common", "mixin", "stack", "bench",
            "oracle_sim", "make_fixtures", "e2e_support"} <= names
    assert "pytest" not in names and "prometheus_client" not in names


def test_the_check_finds_what_it_must():
    project = project_modules()
    src = ("import pytest, importlib.util\n"
           "def test_a():\n    pytest.importorskip('oracle_exporter.collectors')\n"
           "def test_b():\n    m = pytest.importorskip('docker')\n"
           "x = importlib.util.find_spec('make_fixtures') is None\n"
           "from pytest import importorskip\nimportorskip(MODULE)\n")
    assert offending_calls(src, project) == [
        "<test>:3 importorskip('oracle_exporter.collectors')",
        "<test>:6 find_spec('make_fixtures')",
        "<test>:8 importorskip(<not a literal>)",
    ]


def test_no_test_skips_on_a_project_import():
    project = project_modules()
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        found += offending_calls(path.read_text(encoding="utf-8"), project, str(path.relative_to(ROOT)))
    assert not found, "import the project's modules plainly (a broken import must fail): " + "; ".join(found)
