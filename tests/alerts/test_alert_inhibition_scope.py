"""Issue 23 against a real Alertmanager (alerts/alertmanager.yml): inhibition hides only a
consequence (never a page under a ticket, never across exporters or same-named databases), and
grouping makes one cause one notification (an exporter losing many databases, one hang seen by
two exporters). Each test counts the notifications the webhook receives and reads Alertmanager's
own inhibitedBy, with the shipped config (only webhook URL and group_wait changed, see the
fixture in test_alert_routing.py)."""
import time

import pytest
import requests

from test_alert_routing import _Hook, _alert, alertmanager  # noqa: F401  (the fixture)

pytestmark = pytest.mark.e2e   # a real Alertmanager

EXP_A = {"job": "oracle", "instance": "oracle-a:19161"}
EXP_B = {"job": "oracle", "instance": "oracle-b:19161"}


def _sev(alert: dict, severity: str) -> dict:
    """An alert whose rule has several severities (a warning and a critical variant)."""
    return {**alert, "labels": {**alert["labels"], "severity": severity}}


def _post(url, alerts):
    r = requests.post(url + "/api/v2/alerts", json=alerts, timeout=5)
    assert r.status_code == 200, r.text


def _wait_posts(n, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline and len(_Hook.posts) < n:
        time.sleep(0.2)
    time.sleep(3)   # group_wait is 1s: anything else that would be sent has been by now


def _inhibited(url) -> set:
    return {(a["labels"]["alertname"], a["labels"].get("instance"), a["labels"].get("database"))
            for a in requests.get(url + "/api/v2/alerts", timeout=5).json() if a["status"]["inhibitedBy"]}


def test_a_filling_recovery_area_ticket_does_not_hide_the_archiver_stuck_page(alertmanager):  # noqa: F811
    """Failure first: the 85% 'filling up' ticket silenced the critical 'archiving needed' page."""
    db = {"layer": "oracle", "database": "ODS", **EXP_A}
    _post(alertmanager, [_sev(_alert("OracleRecoveryAreaFull", **db), "warning"),
                         _alert("OracleArchivingBehind", "archiving_needed_waits", inst_id="1", **db)])
    _wait_posts(2)
    assert _inhibited(alertmanager) == set()
    assert ("/pager", ["OracleArchivingBehind"]) in [(p[0], p[2]) for p in _Hook.posts]


def test_node_exporter_down_does_not_hide_all_paths_down_from_dbhost_exporter(alertmanager):  # noqa: F811
    """Failure first: NodeExporterDown (a ticket, job node) silenced LunAllPathsDown (a page from
    dbhost-exporter on the same host). It still hides node_exporter's own tickets of that host."""
    _post(alertmanager, [
        _alert("NodeExporterDown", layer="monitoring", job="node", instance="dbhost1"),
        _alert("LunAllPathsDown", layer="storage", job="dbhost", instance="dbhost1", device="dm-3", role="redo"),
        _alert("LunWriteLatencyHigh", layer="storage", job="node", instance="dbhost1", device="dm-4", role="data"),
        _alert("LunHostQueueBacklog", "host_queue", layer="storage", job="dbhost", instance="dbhost1", device="sdb")])
    _wait_posts(3)
    assert _inhibited(alertmanager) == {("LunWriteLatencyHigh", "dbhost1", None)}
    assert [p[2] for p in _Hook.posts if p[0] == "/pager"] == [["LunAllPathsDown"]]


def test_one_exporter_of_an_ha_pair_losing_its_network_does_not_hide_the_others_hang(alertmanager):  # noqa: F811
    """Failure first: two exporters watch ODS; exporter A loses its network (OracleDown, equal on
    database only) and silenced exporter B's commit-hang page."""
    _post(alertmanager, [
        _alert("OracleDown", layer="oracle", database="ODS", **EXP_A),
        _alert("OracleLogFileSyncSlow", layer="oracle", database="ODS", inst_id="1", **EXP_A),
        _alert("OracleCommitsStuck", layer="oracle", database="ODS", inst_id="1", event="log file sync", **EXP_B)])
    _wait_posts(2)
    # exporter A's own (stale) view of ODS is hidden; exporter B's page is not
    assert _inhibited(alertmanager) == {("OracleLogFileSyncSlow", "oracle-a:19161", "ODS")}
    assert sorted(p[2] for p in _Hook.posts if p[0] == "/pager") == [["OracleCommitsStuck"], ["OracleDown"]]


def test_two_databases_of_the_same_name_on_different_exporters_do_not_silence_each_other(alertmanager):  # noqa: F811
    _post(alertmanager, [
        _alert("OracleDown", layer="oracle", database="TEST", **EXP_A),
        _sev(_alert("OracleTablespaceFull", layer="oracle", database="TEST", tablespace="USERS", **EXP_B), "warning")])
    _wait_posts(2)
    assert _inhibited(alertmanager) == set()
    assert sorted(p[0] for p in _Hook.posts) == ["/pager", "/ticket"]


def test_one_exporter_losing_50_databases_for_one_reason_is_one_page(alertmanager):  # noqa: F811
    """Failure first: 50 OracleDown of one exporter (its network is gone) were 50 pages (grouped by
    database). Now one per exporter target and cause; another exporter's outage is its own page,
    and the databases that refuse the monitoring account are one ticket."""
    alerts = [_alert("OracleDown", layer="oracle", database=f"DB{i:02d}", **EXP_A) for i in range(50)]
    alerts += [_alert("OracleDown", layer="oracle", database="OTHER", **EXP_B)]
    alerts += [_alert("OracleDown", "monitoring_credentials", layer="oracle", database=f"CRED{i}", **EXP_A)
               for i in range(3)]
    _post(alertmanager, alerts)
    _wait_posts(3)
    got = sorted((p[0], p[1].get("instance"), p[1].get("cause"), len(p[2])) for p in _Hook.posts)
    assert got == [("/pager", "oracle-a:19161", None, 50), ("/pager", "oracle-b:19161", None, 1),
                   ("/ticket", "oracle-a:19161", "monitoring_credentials", 3)]


def test_one_hang_seen_by_two_exporters_is_one_page(alertmanager):  # noqa: F811
    """Failure first: the two exporters of an HA pair both see ODS's commit hang: 2 pages. Now one
    incident per database and instance; a hang of another database is a page of its own."""
    hang = dict(layer="oracle", database="ODS", inst_id="1", event="log file sync")
    _post(alertmanager, [_alert("OracleCommitsStuck", **hang, **EXP_A), _alert("OracleCommitsStuck", **hang, **EXP_B),
                         _alert("OracleCommitsStuck", **{**hang, "database": "DW"}, **EXP_A)])
    _wait_posts(2)
    got = sorted((p[0], p[1]["database"], len(p[2])) for p in _Hook.posts)
    assert got == [("/pager", "DW", 1), ("/pager", "ODS", 2)]
