"""Runbooks and the alert table: one runbook per alert, citing its field notes, and
docs/alerts.md listing every alert with its threshold."""
import re

from mixin import config
from pack import ROOT, RUNBOOKS, alert_rules


def test_every_runbook_exists_and_cites_its_field_notes():
    rules = alert_rules()
    for r in rules:
        path = RUNBOOKS / f"{r['alert']}.md"
        assert path.is_file(), f"missing runbook {path}"
        text = path.read_text()
        for note in r["labels"]["field_note"].split(","):
            assert re.search(rf"\b{note}\b", text), f"{path.name} does not cite {note}"
        for section in ("## Meaning", "## Confirm", "## Causes and fixes", "## Dashboard"):
            assert section in text, f"{path.name} lacks {section}"
    names = {r["alert"] for r in rules}
    orphans = [p.name for p in RUNBOOKS.glob("*.md") if p.stem not in names and p.name != "README.md"]
    assert not orphans, orphans


def test_runbooks_point_inside_the_repository():
    """Field-notes ids are explained in docs/thresholds.md, not in a file outside the clone."""
    for path in RUNBOOKS.glob("*.md"):
        assert "shared/field-notes" not in path.read_text(), path.name


def test_docs_table_lists_every_alert():
    text = (ROOT / "docs" / "alerts.md").read_text()
    th = config.load().thresholds
    for r in alert_rules():
        assert f"[{r['alert']}](runbooks/{r['alert']}.md)" in text
    for t in th.values():
        assert f"[`{t.id}`](thresholds.md#threshold-{t.id.lower()})" in text
    row = next(l for l in text.splitlines() if l.startswith("| [OracleLogFileParallelWriteSlow]"))
    assert row.endswith("| above 2ms | 1 waits/s | 10m | warning | [R1](thresholds.md#r1) | "
                        "[`R1`](thresholds.md#threshold-r1) |")
    row = next(l for l in text.splitlines() if l.startswith("| [OracleLogFileSyncSlow]"))
    assert "| above 5ms | 1 waits/s | 10m | warning | [R2](thresholds.md#r2) |" in row
    row = next(l for l in text.splitlines() if l.startswith("| [OracleLogBufferSpaceWaits]"))
    assert "| fires above the noise floor (eliminate: healthy is 0) | 0.01 waits/s | 15m | warning |" in row


# alertfix #6 (review "alerts" finding 8): PromQL in a runbook that Prometheus rejects
# (`predict_linear(..., 4h)`: the second argument is a number of seconds) fails the on-call engineer
# at the worst moment. Every inline code span that names a metric of the pack and is a query (a
# function call or a comparison) is parsed by promtool, as the expression of a recording rule.
_PROMQL_FUNC = re.compile(
    r"\b(rate|irate|increase|sum|max|min|avg|count|last_over_time|max_over_time|min_over_time|avg_over_time|deriv|"
    r"predict_linear|topk|bottomk|label_replace|histogram_quantile|changes|resets|abs|absent|sort_desc|delta|"
    r"clamp_min|clamp_max|round|quantile_over_time|count_over_time|sum_over_time|present_over_time|timestamp|group)"
    r"\s*(by|without)?\s*\(")
_PACK_NAME = re.compile(r"\b(oracle_|dbhost_|node_|database_|database:|instance_|instance:|target:|up\{|ALERTS|pdb:|asm_)")


def runbook_promql() -> list[tuple[str, str]]:
    """(runbook, expression) of every PromQL query written in a runbook's inline code."""
    out = []
    for path in sorted(RUNBOOKS.glob("*.md")):
        for m in re.finditer(r"`([^`]+)`", path.read_text()):
            s = " ".join(m.group(1).split())
            if not _PACK_NAME.search(s) or re.search(r"\b(SELECT|FROM|ALTER|WHERE)\b", s):
                continue
            if _PROMQL_FUNC.search(s) or re.search(r"[<>]=?\s*[\d.]|==|\bunless\b|\band\b|\bor\b", s):
                out.append((path.name, s))
    return out


def _promtool_check(exprs: list[str], tmp_path) -> tuple[int, str]:
    import subprocess

    import yaml
    f = tmp_path / "runbook_promql.rules.yml"
    f.write_text(yaml.safe_dump({"groups": [{"name": "runbooks", "rules": [
        {"record": f"runbook:query{i}", "expr": e} for i, e in enumerate(exprs)]}]}))
    res = subprocess.run(["promtool", "check", "rules", str(f)], capture_output=True, text=True, timeout=60)
    return res.returncode, res.stdout + res.stderr


def test_every_runbook_promql_query_parses(tmp_path):
    found = runbook_promql()
    assert len(found) >= 30, found          # the extraction finds the runbooks' queries
    rc, out = _promtool_check([e for _f, e in found], tmp_path)
    if rc:
        bad = [f"{f}: {e}" for f, e in found if _promtool_check([e], tmp_path)[0]]
        raise AssertionError("runbook PromQL that Prometheus rejects:\n" + "\n".join(bad) + "\n" + out)


def test_the_runbook_promql_check_reports_a_bad_query(tmp_path):
    rc, out = _promtool_check(["predict_linear(oracle_tablespace_used_bytes[6h], 4h) > 0"], tmp_path)
    assert rc != 0 and "parse error" in out
