"""The wallboard's alerts against a real Alertmanager (and a real Prometheus, empty: the tiles'
status is a constant expression): no all-clear when Alertmanager is missing or down
(rev-views #5), the newest first within a severity (#6), a silenced database explained on its
tile and in the side panel (#7)."""
from __future__ import annotations

import copy
import datetime as dt
import json
import re
import urllib.request

import pytest

from conftest import real_alertmanager, real_prometheus
from fleetview import wallboard
from fleetview.cli import make_routes
from fleetview.core import Upstream, load_spec
from stack.procs import free_port

pytestmark = pytest.mark.e2e

SPEC = load_spec()


@pytest.fixture(scope="module")
def prom(tmp_path_factory):
    with real_prometheus(tmp_path_factory.mktemp("prom")) as url:
        yield url


def _spec(status: dict[str, int]) -> dict:
    spec = copy.deepcopy(SPEC)
    expr = " or ".join(f'label_replace(vector({v}), "database", "{db}", "", "")' for db, v in status.items())
    for f in spec["db_tiles"]:
        if f["key"] == "status":
            f["expr"] = expr
    return spec


def _post(url: str, path: str, body) -> dict:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        text = resp.read()
    return json.loads(text) if text.strip() else {}


def _alert(name: str, db: str, severity: str, started: dt.datetime) -> dict:
    return {"labels": {"alertname": name, "database": db, "severity": severity, "job": "oracle"},
            "annotations": {"summary": f"{name} on {db}"},
            "startsAt": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "endsAt": (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}


def _page(spec, prom, am) -> str:
    resp = make_routes(spec, Upstream(prom), am)["/wallboard"]({}, {})
    assert resp.status == 200
    return resp.body.decode()


def test_no_alertmanager_or_a_dead_one_is_never_an_all_clear(prom):
    spec = _spec({"PROD": 0})
    page = _page(spec, prom, None)
    assert "None firing" not in page and "0 alerts firing" not in page
    assert "no Alertmanager configured" in page
    dead = Upstream(f"http://127.0.0.1:{free_port()}", timeout=2, name="Alertmanager")
    page = _page(spec, prom, dead)
    assert "None firing" not in page and "0 alerts firing" not in page
    assert "alerts unavailable" in page and "Alertmanager at" in page and "unreachable" in page


def test_newest_first_within_a_severity_and_silenced_databases_explained(prom, tmp_path):
    now = dt.datetime.now(dt.timezone.utc)
    with real_alertmanager(tmp_path / "am") as am_url:
        am = Upstream(am_url, name="Alertmanager")
        assert "None firing" in _page(_spec({"PROD": 0}), prom, am)       # a real all-clear says so
        old = [_alert(f"OldNoise{i:02d}", f"DB{i:02d}", "warning", now - dt.timedelta(hours=3)) for i in range(35)]
        _post(am_url, "/api/v2/alerts", old + [
            _alert("OracleTablespaceFull", "NEWDB", "warning", now),
            _alert("OracleLogFileSyncSlow", "CRITDB", "critical", now - dt.timedelta(hours=5)),
            _alert("OracleLogFileParallelWriteSlow", "DEMO", "critical", now - dt.timedelta(minutes=5))])
        _post(am_url, "/api/v2/silences", {
            "matchers": [{"name": "database", "value": "DEMO", "isRegex": False, "isEqual": True}],
            "startsAt": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "endsAt": (now + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "createdBy": "test", "comment": "maintenance"})
        board = wallboard.collect(_spec({"DEMO": 2, "CRITDB": 2, "PROD": 0}), Upstream(prom), am)
        page = wallboard.render(board, SPEC, prom)
    assert board.alerts_state == "ok"
    order = [(a["severity"], a["alertname"]) for a in board.alerts]
    assert order[0] == ("critical", "OracleLogFileSyncSlow")
    assert order[1] == ("warning", "OracleTablespaceFull")               # the newest warning, not past row 30
    assert "DEMO" not in {a["target"] for a in board.alerts}             # silenced: not in the table ...
    tiles = {t.name: t for t in board.databases}
    assert tiles["DEMO"].silenced == ["OracleLogFileParallelWriteSlow"]   # ... but explained on its tile
    assert tiles["CRITDB"].silenced == [] and tiles["PROD"].silenced == []
    assert re.search(r'data-state="CRITICAL" data-name="DEMO" data-silenced="1"', page)
    assert "DEMO · CRITICAL · silenced" in page
    assert "1 silenced in Alertmanager: DEMO: OracleLogFileParallelWriteSlow" in page
    assert "<td>OracleTablespaceFull</td>" in page and "38 alerts firing" not in page and "37 alerts firing" in page
