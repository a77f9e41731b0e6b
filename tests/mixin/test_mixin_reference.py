"""docs/thresholds.md: every field-notes id a user meets (alert `field_note` labels, runbooks,
panel descriptions, thresholds.yaml) resolves there, with what it means and where its number comes
from; and the runbook links of the shipped rules open a page in the stack `make run` starts."""
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml

from mixin import config, notes
from stack.procs import free_port

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "thresholds.md").read_text()
RULES = [r for g in yaml.safe_load((ROOT / "alerts" / "alerts.rules.yml").read_text())["groups"] for r in g["rules"]]
ANCHORS = set(re.findall(r'<a id="([a-z0-9_-]+)"></a>', DOC))


def _cited_ids() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in RULES:
        out.setdefault("field_note labels", set()).update(r["labels"]["field_note"].split(","))
        out.setdefault("rule annotations", set()).update(
            notes.ID.findall(r["annotations"]["summary"] + " " + r["annotations"]["description"]))
    for p in (ROOT / "alerts").glob("*.yml"):
        out.setdefault("alerts/*.yml (comments included)", set()).update(notes.ID.findall(p.read_text()))
    for p in (ROOT / "docs" / "runbooks").glob("*.md"):
        out.setdefault("runbooks", set()).update(notes.ID.findall(p.read_text()))
    for p in (ROOT / "dashboards" / "json").glob("*.json"):
        out.setdefault("dashboards", set()).update(notes.ID.findall(p.read_text()))
    for t in config.load().thresholds.values():
        out.setdefault("thresholds.yaml", set()).update(t.notes)
    return out


def test_every_cited_id_has_a_section():
    cited = _cited_ids()
    assert len(cited["field_note labels"]) >= 20
    for where, ids in cited.items():
        missing = sorted(i for i in ids if i.lower() not in ANCHORS)
        assert not missing, f"{where} cite ids docs/thresholds.md does not explain: {missing}"


def test_every_section_says_what_was_measured():
    for _, context, rows in notes.SECTIONS:
        assert context.strip()
        for nid, title, text in rows:
            assert f'<a id="{nid.lower()}"></a>\n#### {nid}: {title}' in DOC
            assert len(text) > 40, nid
    # spot checks of the case-study numbers, in the reference's own words
    for nid, numbers in {"R1": ["11.8 ms", "0.55 ms", "2 ms"], "R2": ["26.45 ms", "2.13 ms"],
                         "R14": ["30%", "0.1%"], "Q2": ["30", "256", "5 to 10"], "Q3": ["8", "256"],
                         "I1": ["99.5%", "98%"], "M4": ["ORA-4030"], "M5": ["ORA-27102"],
                         "Z2": ["15,800 IOPS", "0.4-0.6 ms"]}.items():
        section = DOC.split(f'<a id="{nid.lower()}"></a>', 1)[1].split("<a id=", 1)[0]
        for n in numbers:
            assert n in section, (nid, n)


def test_every_threshold_has_a_row_with_its_value():
    for t in config.load().thresholds.values():
        row = next(l for l in DOC.splitlines() if f'<a id="threshold-{t.id.lower()}"></a>`{t.id}`' in l)
        assert f"| {t.for_} | {t.severity} |" in row and f"`{t.op}`" in row, row
        for n in t.notes:
            assert f"[{n}](#{n.lower()})" in row


def test_runbooks_link_their_field_notes_to_the_reference():
    for r in RULES:
        text = (ROOT / "docs" / "runbooks" / f"{r['alert']}.md").read_text()
        for n in r["labels"]["field_note"].split(","):
            assert f"[{n}](../thresholds.md#{n.lower()})" in text, (r["alert"], n)


@pytest.fixture(scope="module")
def webhook(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("wh") / "n.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "stack.webhook", "--listen", f"127.0.0.1:{port}", "--log", str(log)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                requests.get(url + "/-/ready", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_runbook_urls_open_a_page_in_the_local_stack(webhook):
    """The shipped runbook_url is the stack's webhook receiver (port 19199); here it listens on
    a free port: same path, same page."""
    base = config.load().runbook_base_url
    assert base == "http://127.0.0.1:19199/docs/runbooks/"
    for r in RULES:
        url = r["annotations"]["runbook_url"].replace("http://127.0.0.1:19199", webhook)
        res = requests.get(url, timeout=5)
        assert res.status_code == 200 and res.headers["Content-Type"].startswith("text/html"), url
        assert f"<h1>{r['alert']}</h1>" in res.text
        # its field-notes links lead to an anchor that exists on the reference page
        for n in r["labels"]["field_note"].split(","):
            assert f'href="../thresholds.md#{n.lower()}"' in res.text
    page = requests.get(webhook + "/docs/thresholds.md", timeout=5).text
    assert '<a id="r13"></a>' in page and '<a id="threshold-r13_gap"></a>' in page


def test_only_docs_are_served(webhook):
    for path in ("/docs/../pyproject.toml", "/docs/%2e%2e/Makefile", "/docs/runbooks/Nope.md", "/docs/metrics.json"):
        assert requests.get(webhook + path, timeout=5).status_code == 404, path
    listing = requests.get(webhook + "/docs/runbooks/", timeout=5)
    assert listing.status_code == 200 and 'href="OracleDown.md"' in listing.text


def test_runbook_links_follow_a_webhook_on_another_port(tmp_path, webhook):
    """`make run --webhook-port N`: the rules Prometheus loads link to the receiver that runs."""
    from stack.webhook import local_runbook_rules
    names = ("recording.rules.yml", "alerts.rules.yml")
    assert local_runbook_rules(ROOT / "alerts", tmp_path / "same", "http://127.0.0.1:19199", names) is False
    assert not (tmp_path / "same").exists()
    assert local_runbook_rules(ROOT / "alerts", tmp_path / "moved", webhook, names) is True
    moved = yaml.safe_load((tmp_path / "moved" / "alerts.rules.yml").read_text())
    rules = [r for g in moved["groups"] for r in g["rules"]]
    assert [r["expr"] for r in rules] == [r["expr"] for r in RULES]          # nothing else changed
    for r in rules:
        url = r["annotations"]["runbook_url"]
        assert url == f"{webhook}/docs/runbooks/{r['alert']}.md"
    assert requests.get(rules[0]["annotations"]["runbook_url"], timeout=5).status_code == 200
    # a site pack's own runbook base is left alone
    site = tmp_path / "site"
    site.mkdir()
    for n in names:
        (site / n).write_text((ROOT / "alerts" / n).read_text().replace(
            "http://127.0.0.1:19199/docs/runbooks/", "https://git.example.com/runbooks/"))
    local_runbook_rules(site, tmp_path / "site-moved", webhook, names)
    assert (tmp_path / "site-moved" / "alerts.rules.yml").read_text() == (site / "alerts.rules.yml").read_text()


def test_fleetview_links_follow_a_fleetview_on_another_port(tmp_path):
    """`make run --fleetview-port N`: the capacity_url / wallboard_url of the rules Prometheus loads
    point at the oracle-fleetview that runs; the runbook links stay on the default receiver."""
    from stack.webhook import local_runbook_rules
    names = ("recording.rules.yml", "alerts.rules.yml")
    assert local_runbook_rules(ROOT / "alerts", tmp_path / "same", "http://127.0.0.1:19199", names,
                               "http://127.0.0.1:19180") is False
    assert local_runbook_rules(ROOT / "alerts", tmp_path / "moved", "http://127.0.0.1:19199", names,
                               "http://127.0.0.1:29180") is True
    moved = yaml.safe_load((tmp_path / "moved" / "alerts.rules.yml").read_text())
    rules = {r["alert"]: r["annotations"] for g in moved["groups"] for r in g["rules"]}
    assert rules["OracleLogFileParallelWriteSlow"]["capacity_url"] == \
        "http://127.0.0.1:29180/capacity?database={{ $labels.database }}"
    assert rules["LunWriteLatencyHigh"]["wallboard_url"] == "http://127.0.0.1:29180/wallboard"
    assert rules["OracleDown"]["runbook_url"] == "http://127.0.0.1:19199/docs/runbooks/OracleDown.md"
    assert [a for a, ann in rules.items() if "19180" in str(ann)] == []
