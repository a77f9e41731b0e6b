"""The exporter over real HTTP: replay advancing one snapshot per scrape, loops,
/probe, the landing page, basic auth and TLS from --web.config.file."""
from __future__ import annotations


import bcrypt
import pytest
import requests

from exporter_common.web import load_web_config
from oracle_exporter.cli import make_routes
from oracle_exporter.config import Settings
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.sources.replay import ReplaySource, read_recording


def redo(snap) -> float:
    (v,) = [r["VALUE"] for r in snap.rows("GV$SYSSTAT") if r["NAME"] == "redo size" and r["INST_ID"] == 1]
    return float(v)


REDO_METRIC = "oracle_redo_size_bytes_total"


def test_replay_over_http_advances_one_snapshot_per_scrape(recording, exporter_process, core):
    snaps = read_recording(str(recording))["db1"]
    p = exporter_process("--replay", str(recording))
    values, ups = [], []
    for _ in range(4):
        r = requests.get(p.url + "/metrics", timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
        values.append(core.sample(r.text, REDO_METRIC, database="db1", inst_id="1"))
        ups.append((core.sample(r.text, "oracle_up", database="db1"), core.sample(r.text, "oracle_up", database="db2")))
    assert values == [redo(snaps[0]), redo(snaps[1]), redo(snaps[2]), redo(snaps[2])]
    assert values[1] - values[0] == 141_750_000  # 15 s at 9.45 MB/s
    assert ups == [(1.0, 0.0)] * 4


def test_probe_advances_only_its_target(tmp_path, exporter_process, core):
    snaps = [s for t in (0, 15, 30) for s in (core.make_snapshot("a", t), core.make_snapshot("b", t))]
    rec = core.write_recording(tmp_path / "ab.jsonl", snaps)
    p = exporter_process("--replay", str(rec))
    r1 = requests.get(p.url + "/probe", params={"target": "a"}, timeout=10).text
    r2 = requests.get(p.url + "/probe", params={"target": "a"}, timeout=10).text
    assert 'database="b"' not in r1
    assert core.sample(r2, REDO_METRIC, database="a", inst_id="1") - core.sample(r1, REDO_METRIC, database="a",
                                                                                  inst_id="1") == 141_750_000
    all_ = requests.get(p.url + "/metrics", timeout=10).text
    assert core.sample(all_, REDO_METRIC, database="a", inst_id="1") == redo(snaps[4])  # a: 3rd snapshot
    assert core.sample(all_, REDO_METRIC, database="b", inst_id="1") == redo(snaps[1])  # b: 1st snapshot
    r = requests.get(p.url + "/probe", timeout=10)
    assert (r.status_code, r.text) == (400, "missing parameter: /probe?target=<database name>\n")
    r = requests.get(p.url + "/probe", params={"target": "nope"}, timeout=10)
    assert (r.status_code, r.text) == (404, "unknown target 'nope'; configured databases: a, b\n")
    page = requests.get(p.url + "/", timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert 'href="/metrics"' in page.text
    assert 'href="/probe?target=a"' in page.text and 'href="/probe?target=b"' in page.text


@pytest.mark.slow
def test_replay_loop_over_http_keeps_counters_monotonic(tmp_path, exporter_process, core):
    snaps = [core.make_snapshot("db1", t) for t in (0, 15, 30)]
    rec = core.write_recording(tmp_path / "loop.jsonl", snaps)
    p = exporter_process("--replay", str(rec), "--replay-loop")
    texts = [requests.get(p.url + "/metrics", timeout=10).text for _ in range(7)]
    values = [core.sample(t, REDO_METRIC, database="db1", inst_id="1") for t in texts]
    d = redo(snaps[2]) - redo(snaps[0])
    assert values == [redo(snaps[0]), redo(snaps[1]), redo(snaps[2]), redo(snaps[0]) + d, redo(snaps[1]) + d,
                      redo(snaps[2]) + d, redo(snaps[0]) + 2 * d]
    lbl = dict(database="db1", inst_id="1", event="log file sync", wait_class="Commit")
    waits = [core.sample(t, "oracle_wait_event_waits_total", **lbl) for t in texts]
    assert waits == sorted(waits) and waits[-1] > waits[0]


def _exporter(core):
    return OracleExporter([Target("db1", ReplaySource("db1", [core.make_snapshot("db1", 0)]))], Settings(), {})


def test_basic_auth_required_when_configured(tmp_path, serve_routes, core):
    hashed = bcrypt.hashpw(b"scrape-pw", bcrypt.gensalt(rounds=4)).decode()
    cfg = tmp_path / "web.yml"
    cfg.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    url = serve_routes(make_routes(_exporter(core)), load_web_config(str(cfg)))
    r = requests.get(url + "/metrics", timeout=10)
    assert r.status_code == 401 and r.headers["WWW-Authenticate"] == 'Basic realm="exporter"'
    assert "oracle_up" not in r.text
    assert requests.get(url + "/metrics", auth=("prometheus", "wrong"), timeout=10).status_code == 401
    assert requests.get(url + "/metrics", auth=("other", "scrape-pw"), timeout=10).status_code == 401
    r = requests.get(url + "/metrics", auth=("prometheus", "scrape-pw"), timeout=10)
    assert r.status_code == 200 and core.sample(r.text, "oracle_up", database="db1") == 1.0


@pytest.mark.slow
def test_tls_and_auth_from_web_config_file(tmp_path, tls_files, exporter_process, recording, core):
    cert, key = tls_files
    hashed = bcrypt.hashpw(b"scrape-pw", bcrypt.gensalt(rounds=4)).decode()
    cfg = tmp_path / "web.yml"
    cfg.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
                   f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    p = exporter_process("--replay", str(recording), "--web.config.file", str(cfg), scheme="https")
    with pytest.raises(requests.exceptions.SSLError):  # self-signed: untrusted unless we pin it
        requests.get(p.url + "/metrics", timeout=10)
    with pytest.raises(requests.exceptions.ConnectionError):  # plain HTTP on the TLS port fails
        requests.get(p.url.replace("https://", "http://") + "/metrics", timeout=5).raise_for_status()
    assert requests.get(p.url + "/metrics", verify=str(cert), timeout=10).status_code == 401
    r = requests.get(p.url + "/metrics", verify=str(cert), auth=("prometheus", "scrape-pw"), timeout=10)
    assert r.status_code == 200
    assert core.sample(r.text, "oracle_up", database="db1") == 1.0


def test_bad_web_config_exits_2(tmp_path, recording, core):
    cfg = tmp_path / "web.yml"
    cfg.write_text("basic_auth_users:\n  prometheus: plaintext\n")
    res = core.run_cli("--replay", str(recording), "--web.config.file", str(cfg),
                       "--web.listen-address", f"127.0.0.1:{core.free_port()}")
    assert res.returncode == 2
    assert res.stderr.strip().endswith(f"error: {cfg}: basic_auth_users.prometheus: expected a bcrypt hash ($2y$...)")


class _SlowSource:
    def __init__(self, snap, delay):
        self.name, self.snap, self.delay = snap.database, snap, delay

    def fetch(self):
        import time
        time.sleep(self.delay)
        return self.snap

    def close(self):
        pass


@pytest.mark.slow
def test_prometheus_scrape_timeout_header_shortens_the_deadline(serve_routes, core):
    import time
    exp = OracleExporter([Target("slow", _SlowSource(core.make_snapshot("slow", 0), 2.0), timeout=10.0)],
                         Settings(), {})
    url = serve_routes(make_routes(exp))
    t0 = time.monotonic()
    r = requests.get(url + "/metrics", headers={"X-Prometheus-Scrape-Timeout-Seconds": "1"}, timeout=10)
    elapsed = time.monotonic() - t0
    assert r.status_code == 200
    assert 0.4 < elapsed < 1.0, elapsed  # answered 0.5 s before Prometheus would give up
    assert core.sample(r.text, "oracle_up", database="slow") == 0.0
    time.sleep(1.6)  # the fetch finishes; without the header the 10 s deadline applies
    r = requests.get(url + "/probe?target=slow", timeout=10)
    assert core.sample(r.text, "oracle_up", database="slow") == 1.0
    exp.close()


@pytest.mark.parametrize("flag", [False, True])
def test_gzip_to_a_scraper_that_asks_unless_disable_compression(recording, exporter_process, core, flag):
    import gzip
    import urllib.request
    p = exporter_process("--replay", str(recording), *(["--web.disable-compression"] if flag else []))
    resp = urllib.request.urlopen(urllib.request.Request(p.url + "/metrics", headers={"Accept-Encoding": "gzip"}),
                                  timeout=10)
    raw = resp.read()
    assert resp.headers.get("Content-Encoding") == (None if flag else "gzip")
    # the format was chosen from Accept, the encoding from Accept-Encoding: a cache must know both
    assert resp.headers.get_all("Vary") == ["Accept" if flag else "Accept, Accept-Encoding"]
    text = (raw if flag else gzip.decompress(raw)).decode()
    assert core.sample(text, "oracle_up", database="db1") == 1.0
    probe = urllib.request.urlopen(p.url + "/probe?target=db1", timeout=10)
    assert probe.headers.get_all("Vary")[0].startswith("Accept") and b"oracle_up" in probe.read()
