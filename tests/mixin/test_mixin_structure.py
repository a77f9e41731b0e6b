"""The package's shape: ordinary imports only, no module reaching into another's privates."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "mixin").rglob("*.py"))
TESTS = sorted((ROOT / "tests" / "alerts").glob("*.py")) + sorted((ROOT / "tests" / "dashboards").glob("*.py")) + \
    sorted((ROOT / "tests" / "mixin").glob("*.py"))


def test_no_private_names_imported_across_modules():
    for path in SOURCES + TESTS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__future__"]
                assert not private, f"{path.relative_to(ROOT)} imports {private} from {node.module}"


def test_no_loading_by_file_path_and_no_sys_path_edits():
    for path in SOURCES + TESTS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                assert node.attr != "spec_from_file_location", path.relative_to(ROOT)
                if node.attr in ("insert", "append") and isinstance(node.value, ast.Attribute):
                    assert node.value.attr != "path", f"{path.relative_to(ROOT)}: sys.path.{node.attr}"


def test_python_lives_in_the_package_not_beside_the_data():
    """alerts/ and dashboards/ hold data (sources and generated files); the code is mixin/."""
    assert not list((ROOT / "alerts").rglob("*.py"))
    assert not list((ROOT / "dashboards").rglob("*.py"))


def test_scenarios_are_one_module_per_rule_test_file():
    """mixin/scenarios/ has one module per alerts/tests/<section>.test.yml, plus the shared helpers."""
    modules = {p.stem for p in (ROOT / "mixin" / "scenarios").glob("*.py")} - {"__init__", "common"}
    assert modules == {p.name.split(".")[0] for p in (ROOT / "alerts" / "tests").glob("*.test.yml")}
    assert not (ROOT / "mixin" / "scenarios.py").exists()
    for p in (ROOT / "mixin" / "scenarios").glob("*.py"):
        assert len(p.read_text().splitlines()) < 400, p
