"""The compose stack is validated, not run (no container runtime in CI):
`docker-compose config` accepts it, every file it mounts exists, and the
Prometheus config it mounts is the one `make run` renders, apart from the
target addresses."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from e2e_support import ALERTS, ROOT, require
from stack import configs, run

COMPOSE = ROOT / "compose" / "docker-compose.yml"
# host paths the stack mounts on purpose (host exporters read the host)
HOST_MOUNTS = {"/proc", "/sys", "/"}


@pytest.fixture(scope="module")
def compose() -> dict:
    if not shutil.which("docker-compose"):
        pytest.skip("docker-compose is not installed (Debian package docker-compose; `make deps`)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORACLE_", "GRAFANA_"))}
    res = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config"], capture_output=True, text=True,
                         timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    return yaml.safe_load(res.stdout)


def _mounts(svc: dict) -> list[tuple[str, str]]:
    out = []
    for v in svc.get("volumes") or []:
        if isinstance(v, dict):
            out.append((v.get("source", ""), v["target"]))
        else:
            parts = v.split(":")
            out.append((parts[0], parts[1]))
    return out


def _host_path(compose: dict, service: str, container_path: str) -> Path:
    """Map a path inside a container to the host file the compose file mounts there."""
    best = None
    for src, dst in _mounts(compose["services"][service]):
        if src.startswith("/") and (container_path == dst or container_path.startswith(dst.rstrip("/") + "/")):
            if best is None or len(dst) > len(best[1]):
                best = (src, dst)
    assert best, f"{container_path} is not mounted into {service}"
    return Path(best[0] + container_path[len(best[1]):])


def test_compose_services_and_images(compose):
    svcs = compose["services"]
    assert set(svcs) == {"oracle", "oracle-exporter", "dbhost-exporter", "node-exporter", "prometheus",
                         "alertmanager", "webhook", "grafana"}
    assert svcs["oracle"]["image"].startswith("gvenzl/oracle-free:")
    assert svcs["oracle-exporter"]["build"]["dockerfile"] == "compose/Dockerfile"
    assert Path(svcs["oracle-exporter"]["build"]["context"]) == ROOT
    # host exporter: host PID namespace, host /proc and /sys read-only
    dbh = svcs["dbhost-exporter"]
    assert dbh["pid"] == "host"
    assert {"/proc:/host/proc:ro", "/sys:/host/sys:ro"} <= set(dbh["volumes"])
    assert "--path.procfs=/host/proc" in dbh["command"] and "--path.sysfs=/host/sys" in dbh["command"]
    # every published port is bound to loopback only
    for name, svc in svcs.items():
        for p in svc.get("ports") or []:
            assert str(p).startswith("127.0.0.1:"), f"{name} publishes {p} on all interfaces"


def test_every_mounted_file_exists(compose):
    missing = []
    for name, svc in compose["services"].items():
        for src, dst in _mounts(svc):
            if not src.startswith("/") or src in HOST_MOUNTS:
                continue   # named volume or deliberate host mount
            assert Path(src).resolve().is_relative_to(ROOT), f"{name} mounts {src} outside the repository"
            if not Path(src).exists():
                missing.append(f"{name}: {Path(src).relative_to(ROOT)} -> {dst}")
    mine = [m for m in missing if m.split(": ", 1)[1].startswith(("compose/", "deploy/", "stack/"))]
    assert not mine, "compose mounts stack files that do not exist: " + "; ".join(mine)
    if missing:
        # every one of these belongs to another part of the project (alert pack,
        # dashboards, monitoring-user script): skip, naming them, until they exist
        pytest.skip("compose mounts files that do not exist yet: " + "; ".join(missing))


def test_dockerfile_copies_what_exists():
    text = (ROOT / "compose" / "Dockerfile").read_text()
    assert text.startswith("# ") and "FROM python:3.11-slim" in text
    copies = re.findall(r"^COPY (.+) \S+$", text, re.M)
    srcs = [s for line in copies for s in line.split()]
    assert srcs == ["pyproject.toml", "README.md", "exporters/"]
    assert all((ROOT / s).exists() for s in srcs)
    assert "RUN pip install ." in text and "USER exporter" in text


def test_prometheus_config_is_the_one_make_run_uses(compose, tmp_path):
    for name in configs.RULE_FILES:
        require(ALERTS / name, "alert pack")
    require(ALERTS / "alertmanager.yml", "alert pack")
    mounted = _host_path(compose, "prometheus", "/etc/prometheus/prometheus.yml")
    assert mounted == configs.PROMETHEUS_TEMPLATE
    opts = run.StackOptions(state=tmp_path / "state")
    paths = run.prepare(opts)
    local = yaml.safe_load(paths["prometheus"].read_text())
    template = yaml.safe_load(mounted.read_text())
    # make run's own additions (issue 27): it scrapes its webhook receiver and alerts when the
    # notification log cannot be written; nothing else differs but the addresses
    assert local["scrape_configs"].pop() == {"job_name": "webhook",
                                             "static_configs": [{"targets": [opts.addr("webhook")]}]}
    assert local["rule_files"].pop() == "stack.rules.yml"
    local_to_comp = {opts.addr(c): c for c in ("oracle", "dbhost", "node", "prometheus", "alertmanager")}

    def normalise(doc, mapping):
        doc = yaml.safe_load(yaml.safe_dump(doc))
        for targets in configs._target_lists(doc):
            targets[:] = [mapping[t] for t in targets]
        return doc

    assert normalise(local, local_to_comp) == normalise(template, configs.TEMPLATE_ADDRESSES)
    # the differences are exactly the addresses
    assert local != template
    # and promtool accepts the rendered config with the real rule files behind rules/
    res = subprocess.run(["promtool", "check", "config", str(paths["prometheus"])], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS: 3 rule files found" in res.stdout


def test_prometheus_rule_files_resolve_through_the_compose_mounts(compose):
    template = yaml.safe_load(configs.PROMETHEUS_TEMPLATE.read_text())
    jobs = [sc["job_name"] for sc in template["scrape_configs"]]
    assert jobs[:3] == ["oracle", "dbhost", "node"]
    for rf in template["rule_files"]:
        host = _host_path(compose, "prometheus", "/etc/prometheus/" + rf)
        assert host == ALERTS / Path(rf).name
        require(host, "alert pack")


def test_alertmanager_config_and_webhook_share_a_network_namespace(compose):
    am = _host_path(compose, "alertmanager", "/etc/alertmanager/alertmanager.yml")
    assert am == ALERTS / "alertmanager.yml"
    wh = compose["services"]["webhook"]
    assert wh["network_mode"] == "service:alertmanager"
    listen = wh["command"][wh["command"].index("--listen") + 1]
    require(am, "alert pack")
    urls = [w["url"] for r in yaml.safe_load(am.read_text())["receivers"] for w in r.get("webhook_configs") or []]
    assert urls, "alerts/alertmanager.yml has no webhook receivers"
    assert all(u.startswith(f"http://{listen}/") for u in urls), urls   # reach the webhook as they are
    assert _host_path(compose, "webhook", "/app/stack/webhook.py") == ROOT / "stack" / "webhook.py"


def test_grafana_provisioning_points_at_the_mounted_dashboards(compose):
    require(ROOT / "dashboards" / "provisioning", "dashboards provisioning")
    prov = _host_path(compose, "grafana", "/etc/grafana/provisioning/dashboards")
    providers = []
    for f in sorted(prov.glob("*.y*ml")):
        providers += (yaml.safe_load(f.read_text()) or {}).get("providers") or []
    assert providers, f"no dashboard providers in {prov}"
    for p in providers:
        host_dir = _host_path(compose, "grafana", p["options"]["path"])
        assert host_dir == ROOT / "dashboards" / "json"
        assert list(host_dir.glob("*.json")), f"{p['options']['path']} -> {host_dir} has no dashboards"
    # the datasource URL is taken from the environment: it must name the prometheus service's port
    ds_files = sorted(_host_path(compose, "grafana", "/etc/grafana/provisioning/datasources").glob("*.y*ml"))
    urls = [d["url"] for f in ds_files for d in yaml.safe_load(f.read_text())["datasources"]]
    env = compose["services"]["grafana"]["environment"]
    expanded = [re.sub(r"\$\{?(\w+)\}?", lambda m: env.get(m.group(1), ""), u) for u in urls]
    listen = next(a for a in compose["services"]["prometheus"]["command"] if a.startswith("--web.listen-address="))
    assert expanded == ["http://prometheus:" + listen.rsplit(":", 1)[1]]


def test_oracle_exporter_config_loads_with_the_exporters_loader(compose, monkeypatch):
    from oracle_exporter.config import load_config
    path = _host_path(compose, "oracle-exporter", "/etc/oracle-exporter/oracle-exporter.yml")
    env = compose["services"]["oracle-exporter"]["environment"]
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    cfg = load_config(str(path))
    assert [(d.name, d.dsn) for d in cfg.databases] == [("FREEPDB1", "oracle:1521/FREEPDB1")]
    assert cfg.databases[0].password == env["ORACLE_MONITOR_PASSWORD"]


def test_oracle_init_script_runs_the_monitoring_user_sql(compose):
    init = _host_path(compose, "oracle", "/container-entrypoint-initdb.d")
    scripts = sorted(init.iterdir())
    assert [s.name for s in scripts] == ["01-monitoring-user.sh"]
    text = scripts[0].read_text()
    assert "/opt/monitoring/oracle-monitoring-user.sql" in text
    sql = _host_path(compose, "oracle", "/opt/monitoring/oracle-monitoring-user.sql")
    assert sql == ROOT / "docs" / "oracle-monitoring-user.sql"
    require(sql, "least-privilege monitoring user script (docs/oracle-monitoring-user.sql)")
    res = subprocess.run(["bash", "-n", str(scripts[0])], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    # the user the SQL creates is the one the exporter config logs in as, and the
    # init script replaces its placeholder password with the compose secret
    user = re.search(r"^CREATE USER (\w+) IDENTIFIED BY", sql.read_text(), re.M | re.I).group(1)
    cfg = yaml.safe_load(_host_path(compose, "oracle-exporter", "/etc/oracle-exporter/oracle-exporter.yml").read_text())
    assert {d["user"].lower() for d in cfg["databases"]} == {user.lower()}
    assert re.search(rf'^ALTER USER {user} IDENTIFIED BY "\$\{{ORACLE_MONITOR_PASSWORD\}}";$', text, re.M | re.I)
    assert "ALTER SESSION SET CONTAINER = FREEPDB1;" in text


def test_oracle_healthcheck_waits_for_the_monitoring_user(compose):
    """gvenzl/oracle-free's healthcheck.sh is green once FREEPDB1 is open, which is
    before the init scripts run; the compose healthcheck also requires the marker
    the init script writes last, so oracle-exporter (depends_on: service_healthy)
    starts only when ORAMON exists."""
    init = _host_path(compose, "oracle", "/container-entrypoint-initdb.d") / "01-monitoring-user.sh"
    text = init.read_text()
    touched = re.findall(r"^touch (\S+)$", text, re.M)
    assert len(touched) == 1 and touched[0].startswith("/opt/oracle/oradata/")   # the data volume
    assert text.rstrip().endswith(f"touch {touched[0]}")                        # after the SQL
    hc = compose["services"]["oracle"]["healthcheck"]["test"]
    assert hc == ["CMD-SHELL", f"healthcheck.sh && test -f {touched[0]}"]
    assert ("oracle-data", "/opt/oracle/oradata") in _mounts(compose["services"]["oracle"])   # a named volume
    assert compose["services"]["oracle-exporter"]["depends_on"]["oracle"]["condition"] == "service_healthy"
    # the entrypoint RUNS an executable *.sh and SOURCES a non-executable one (its
    # `exit` would then end the entrypoint): the script must stay executable
    assert os.access(init, os.X_OK)
    mode = subprocess.run(["git", "ls-files", "-s", str(init.relative_to(ROOT))], cwd=ROOT, capture_output=True,
                          text=True).stdout.split()
    if mode:   # tracked: the executable bit is what a fresh clone gets
        assert mode[0] == "100755"
    # a '&' in the password must not be taken for a SQL*Plus substitution variable
    assert text.index("SET DEFINE OFF") < text.index("ALTER USER")


def test_alert_links_point_at_the_published_ports(compose):
    prom = compose["services"]["prometheus"]["command"]
    am = compose["services"]["alertmanager"]["command"]
    assert "--web.external-url=http://localhost:19090" in prom and "--web.listen-address=:19090" in prom
    assert "--web.external-url=http://localhost:19093" in am and "--web.listen-address=:19093" in am
    assert [p.split("/")[0] for p in compose["services"]["prometheus"]["ports"]] == ["127.0.0.1:19090:19090"]
    assert "127.0.0.1:19093:19093" in [p.split("/")[0] for p in compose["services"]["alertmanager"]["ports"]]
