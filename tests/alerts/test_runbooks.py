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
