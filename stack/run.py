"""``make run``: the whole monitoring stack on 127.0.0.1, no Docker.

Starts, in order: the webhook receiver, oracle-exporter (the demo recording in
replay-loop mode, or your database config with --oracle-config),
dbhost-exporter (this host's /proc and /sys), node_exporter, Alertmanager
(the project's routing, receivers pointed at the local webhook) and Prometheus
(compose/prometheus/prometheus.yml with local addresses, the alert pack's
recording and alerting rules). Waits until Prometheus reports every target
up, prints "all targets up" and the URLs, and runs until Ctrl-C / SIGTERM /
SIGHUP (closed terminal, lost SSH session), then stops everything; if it is
killed outright, the components die with it (procs: parent-death signal).
All state lives under .state/ (git-ignored), locked against a second run.

The end-to-end tests build the same stack through StackOptions/plan/start.
"""
from __future__ import annotations

import argparse
import errno
import fcntl
import json
import os
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import configs
from . import demo as demo_mod
from . import webhook as webhook_mod
from .procs import Proc, StackError, Supervisor, check_ports, http_json, wait_until

ROOT = configs.ROOT
DEMO_RECORDING = ROOT / "exporters" / "oracle_exporter" / "demo" / "demo-before.jsonl"

# Default ports: outside the Prometheus default-port-allocation range (9100-9999)
# and the usual 3000/8080/9090/9093, so the stack does not collide with an
# existing Prometheus or exporter on the machine. Documented in docs/stack.md.
DEFAULT_PORTS = {
    "webhook": 19199,      # alerts/alertmanager.yml's receivers point here
    "oracle": 19161,       # oracle-exporter default
    "dbhost": 19162,       # dbhost-exporter default
    "node": 19100,         # node_exporter
    "alertmanager": 19093,
    "prometheus": 19090,
    "fleetview": 19180,    # oracle-fleetview: the wallboard and capacity pages (issue 25)
}

# node_exporter collectors the rules and dashboards need (everything else off,
# keeping the agent cheap, field notes C4).
NODE_COLLECTORS = ["cpu", "diskstats", "loadavg", "meminfo", "vmstat", "stat", "pressure",
                   "filesystem", "netdev", "uname", "time"]

BINARIES = {
    "prometheus": "/usr/bin/prometheus",
    "alertmanager": "/usr/bin/prometheus-alertmanager",
    "node": "/usr/bin/prometheus-node-exporter",
}


@dataclass
class StackOptions:
    state: Path = ROOT / ".state"
    host: str = "127.0.0.1"
    ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    oracle_args: list[str] = field(default_factory=lambda: ["--replay", str(DEMO_RECORDING), "--replay-loop"])
    dbhost_args: list[str] = field(default_factory=list)
    rules_dir: Path = configs.ALERTS_DIR
    alertmanager_source: Path = configs.ALERTS_DIR / "alertmanager.yml"
    scrape_interval: str | None = None        # None: the template's (15s)
    evaluation_interval: str | None = None
    alertmanager_timing: dict[str, str] | None = None   # tests shorten group_wait etc.
    node_collectors: list[str] = field(default_factory=lambda: list(NODE_COLLECTORS))
    node_perf: bool = False
    demo: bool = False                        # make run DEMO=1 (stack/demo.py)
    demo_for: str = demo_mod.DEFAULT_FOR
    demo_host: str = demo_mod.DEMO_HOST
    demo_identity: tuple[str, str] | None = None   # (host name, instance) of the replayed database
    demo_rules: demo_mod.DemoRules | None = None  # set by prepare() in demo mode

    def addr(self, comp: str) -> str:
        return f"{self.host}:{self.ports[comp]}"

    def url(self, comp: str) -> str:
        return f"http://{self.addr(comp)}"

    def demo_addr(self, comp: str) -> str:
        """The demo host's exporters: the normal port on the demo host's address."""
        return f"{self.demo_host}:{self.ports[comp]}"

    def interval_seconds(self) -> tuple[float, float]:
        """(scrape, evaluation) interval in seconds as Prometheus will run them."""
        tmpl = configs.load(configs.PROMETHEUS_TEMPLATE)["global"]
        return (configs.duration_seconds(self.scrape_interval or tmpl["scrape_interval"]),
                configs.duration_seconds(self.evaluation_interval or tmpl["evaluation_interval"]))


def _script(name: str) -> str:
    """A console script of the project: next to this interpreter (the venv), else PATH."""
    cand = Path(sys.executable).parent / name
    if cand.exists():
        return str(cand)
    found = shutil.which(name)
    if not found:
        raise StackError(f"{name} not found next to {sys.executable} or on PATH; run `make venv`")
    return found


def lock_state(state: Path) -> int:
    """Lock the state directory for this process (flock on <state>/lock, which holds our
    PID); StackError naming the holder's PID if another run has it. The lock goes with
    the process, however it ends; keep the returned descriptor open while running."""
    path = state / "lock"
    try:
        state.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise StackError(f"--state-dir {state}: cannot use it: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            os.close(fd)
            raise StackError(f"cannot lock {path}: {exc.strerror}") from None
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        pid = holder if holder.isdigit() else "unknown"
        raise StackError(f"state directory {state} is in use by another `make run` (pid {pid}); "
                         f"stop it first (kill {pid}) or give another --state-dir") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


# What one run leaves under the state directory. A new run starts without any of it
# (fresh_state), so nothing of an earlier run (a DEMO=1 run's series, Alertmanager's
# notification log, earlier notifications) can fire, be sent or be printed again;
# --resume keeps it all and says so.
RUN_DATA = ("prometheus/data", "alertmanager/data", "demo", "prometheus/rules-local")
KEPT_FROM_PREVIOUS = ("webhook/notifications.jsonl", "logs")
PREVIOUS = "previous"


def fresh_state(state: Path) -> list[str]:
    """Start a run from a clean state directory (call with the lock held): delete the
    previous run's Prometheus TSDB, Alertmanager data (silences, notification log) and
    demo files; move its notifications and logs to <state>/previous/ (replacing the run
    before), for reading only. Returns what was done, one phrase each (empty: nothing there)."""
    done = []
    for rel in RUN_DATA:
        p = state / rel
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.exists():
            shutil.rmtree(p)
        else:
            continue
        done.append(f"deleted {rel}/")
    kept = [rel for rel in KEPT_FROM_PREVIOUS if (state / rel).exists()]
    if kept:
        prev = state / PREVIOUS
        if prev.exists():
            shutil.rmtree(prev)
        for rel in kept:
            dest = prev / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(state / rel, dest)
            done.append(f"moved {rel} to {PREVIOUS}/{rel}")
    return done


def resume_summary(state: Path, log: Path) -> str:
    """What a --resume run continues from (the banner says it)."""
    data = state / "prometheus" / "data"
    parts = []
    if data.exists():
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(data.stat().st_mtime))
        parts.append(f"Prometheus and Alertmanager data of the earlier run(s) (last written {since}): its "
                     "alerts may fire and be sent again")
    try:
        with open(log, "rb") as f:
            n = sum(1 for line in f if line.strip())
        parts.append(f"{n} earlier notification(s) in {log} (not printed again)")
    except OSError:
        pass
    return "; ".join(parts) or "nothing to resume (no earlier state)"


# The stack's own alert: the webhook receiver could not write a notification to its log
# (full disk, I/O error). Prometheus scrapes the receiver (job "webhook", make run only;
# the compose template is unchanged) and loads this file next to the alert pack's.
STACK_RULES = {"groups": [{"name": "stack.alerts", "rules": [{
    "alert": "NotificationLogWriteFailing",
    "expr": "webhook_notification_log_last_write_success == 0\n"
            "or increase(webhook_notification_log_write_failures_total[10m]) > 0",
    "labels": {"severity": "critical", "layer": "monitoring"},
    "annotations": {
        "summary": "make run's webhook receiver cannot write notifications to its log",
        "description": "{{ $labels.instance }}: writes to the notification log fail (full disk or I/O error; "
                       "see .state/logs/webhook.log); the failed notifications were answered 500 and "
                       "Alertmanager retries them. Free space under the state directory."}}]}]}


def prepare(opts: StackOptions) -> dict[str, Path]:
    """Write every config under opts.state; return their paths. Fails clearly on missing inputs."""
    for comp, binary in BINARIES.items():
        if not os.access(binary, os.X_OK):
            raise StackError(f"{binary} ({comp}) is missing; install the Debian packages with `make deps`")
    for name in configs.RULE_FILES:
        if not (opts.rules_dir / name).is_file():
            raise StackError(f"rule file {opts.rules_dir / name} is missing (the alert pack, alerts/)")
    if not opts.alertmanager_source.is_file():
        raise StackError(f"Alertmanager config {opts.alertmanager_source} is missing (the alert pack, alerts/)")
    st = opts.state
    paths = {}
    rules_dir = opts.rules_dir
    extra_targets = None
    if opts.demo:
        sid = opts.demo_identity[1] if opts.demo_identity else None
        paths["demo_tree"] = demo_mod.build_host(st / "demo" / "host", sid).root
        rules_dir = st / "demo" / "rules"
        opts.demo_rules = demo_mod.demo_rules(opts.rules_dir, rules_dir, opts.demo_for)
        extra_targets = {"dbhost": [opts.demo_addr("dbhost")], "node": [opts.demo_addr("node")]}
    # runbook links follow the webhook receiver (it serves docs/), and the capacity/wallboard links
    # oracle-fleetview, when they are not on their default ports
    if webhook_mod.local_runbook_rules(rules_dir, st / "prometheus" / "rules-local", opts.url("webhook"),
                                      configs.RULE_FILES,
                                      opts.url("fleetview") if "fleetview" in opts.ports else None):
        rules_dir = st / "prometheus" / "rules-local"
    prom_dir = st / "prometheus"
    prom_dir.mkdir(parents=True, exist_ok=True)
    rules_link = prom_dir / "rules"
    if rules_link.is_symlink() or rules_link.exists():
        if rules_link.is_dir() and not rules_link.is_symlink():
            shutil.rmtree(rules_link)
        else:
            rules_link.unlink()
    rules_link.symlink_to(rules_dir.resolve(), target_is_directory=True)
    prom_doc = configs.render_prometheus({c: opts.addr(c) for c in ("oracle", "dbhost", "node", "prometheus",
                                                                    "alertmanager")},
                                         opts.scrape_interval, opts.evaluation_interval, extra_targets=extra_targets)
    if opts.demo and opts.demo_identity:
        # the demo host is the replayed database's host: instance="dbhost01", as its host_name says
        for sc in prom_doc["scrape_configs"]:
            if sc.get("job_name") in ("dbhost", "node"):
                sc.setdefault("relabel_configs", []).append(
                    {"source_labels": ["instance"], "regex": re.escape(opts.demo_host),
                     "target_label": "instance", "replacement": opts.demo_identity[0]})
    prom_doc["scrape_configs"].append({"job_name": "webhook", "static_configs": [{"targets": [opts.addr("webhook")]}]})
    paths["stack_rules"] = configs.dump(STACK_RULES, prom_dir / "stack.rules.yml")
    prom_doc.setdefault("rule_files", []).append("stack.rules.yml")
    paths["prometheus"] = configs.dump(prom_doc, prom_dir / "prometheus.yml")
    paths["alertmanager"] = configs.dump(
        configs.render_alertmanager(opts.alertmanager_source, opts.url("webhook"), opts.alertmanager_timing),
        st / "alertmanager" / "alertmanager.yml")
    paths["webhook_log"] = st / "webhook" / "notifications.jsonl"
    return paths


def plan(opts: StackOptions, paths: dict[str, Path]) -> list[Proc]:
    """The components in start order (dependencies first)."""
    st, logs = opts.state, opts.state / "logs"
    node_flags = ["--collector.disable-defaults"] + [f"--collector.{c}" for c in opts.node_collectors]
    if opts.node_perf:
        node_flags.append("--collector.perf")
    demo_procs = []
    if opts.demo:
        tree = paths["demo_tree"]
        scrape_s, _ = opts.interval_seconds()
        demo_procs = [
            # counters advance one step per second; files rewritten every second, or every
            # 5 s when Prometheus scrapes less often than that (cheaper, same rates)
            Proc("demo-animator", [sys.executable, "-m", "stack.demo", "animate", tree,
                                   "--interval", "1" if scrape_s < 5 else "5",
                                   *(["--sid", opts.demo_identity[1]] if opts.demo_identity else [])],
                 logs / "demo-animator.log", cwd=ROOT),
            Proc("dbhost-demo", [_script("dbhost-exporter"), "--path.procfs", tree / "proc",
                                 "--path.sysfs", tree / "sys", "--config.file", tree / "dbhost-exporter.yml",
                                 "--web.listen-address", opts.demo_addr("dbhost")],
                 logs / "dbhost-demo.log", ready_url=f"http://{opts.demo_addr('dbhost')}/"),
            # diskstats of the demo host's devices, so LUN latency joins dbhost_lun_info
            Proc("node-demo", [BINARIES["node"], "--web.listen-address", opts.demo_addr("node"),
                               "--path.procfs", tree / "proc", "--path.sysfs", tree / "sys",
                               "--collector.disable-defaults", "--collector.diskstats"],
                 logs / "node-demo.log", ready_url=f"http://{opts.demo_addr('node')}/"),
        ]
    return [
        Proc("webhook", [sys.executable, "-m", "stack.webhook", "--listen", opts.addr("webhook"),
                         "--log", paths["webhook_log"]], logs / "webhook.log",
             ready_url=opts.url("webhook") + "/-/ready", cwd=ROOT),
        Proc("oracle-exporter", [_script("oracle-exporter"), *opts.oracle_args,
                                 "--web.listen-address", opts.addr("oracle")],
             logs / "oracle-exporter.log", ready_url=opts.url("oracle") + "/-/healthy"),
        Proc("dbhost-exporter", [_script("dbhost-exporter"), *opts.dbhost_args,
                                 "--web.listen-address", opts.addr("dbhost")],
             logs / "dbhost-exporter.log", ready_url=opts.url("dbhost") + "/"),
        Proc("node_exporter", [BINARIES["node"], "--web.listen-address", opts.addr("node"), *node_flags],
             logs / "node_exporter.log", ready_url=opts.url("node") + "/"),
        *demo_procs,
        Proc("alertmanager", [BINARIES["alertmanager"], "--config.file", paths["alertmanager"],
                              "--storage.path", st / "alertmanager" / "data",
                              "--web.listen-address", opts.addr("alertmanager"),
                              "--web.external-url", opts.url("alertmanager"),
                              "--cluster.listen-address=", "--log.level=warn"],
             logs / "alertmanager.log", ready_url=opts.url("alertmanager") + "/-/ready"),
        Proc("prometheus", [BINARIES["prometheus"], "--config.file", paths["prometheus"],
                            "--storage.tsdb.path", st / "prometheus" / "data",
                            "--web.listen-address", opts.addr("prometheus"),
                            # links in alerts (generatorURL) and notifications point here
                            "--web.external-url", opts.url("prometheus"),
                            # no --web.enable-lifecycle: nothing here reloads or quits
                            # Prometheus over HTTP, and any local user could.
                            "--log.level=warn"],
             logs / "prometheus.log", ready_url=opts.url("prometheus") + "/-/ready"),
        *fleetview_procs(opts, logs),
    ]


def fleetview_procs(opts: StackOptions, logs: Path) -> list[Proc]:
    """oracle-fleetview (the fleet wallboard and capacity pages, exporters/fleetview) on this
    stack's Prometheus and Alertmanager; none when the options give it no port."""
    if "fleetview" not in opts.ports:
        return []
    return [Proc("fleetview", [_script("oracle-fleetview"), "--web.listen-address", opts.addr("fleetview"),
                               "--prometheus.url", opts.url("prometheus"),
                               "--alertmanager.url", opts.url("alertmanager")],
                 logs / "fleetview.log", ready_url=opts.url("fleetview") + "/-/healthy")]


def fleetview_banner(opts: StackOptions) -> str:
    """The banner lines of the Grafana-free pages (contract: the wallboard URL contains `wallboard`)."""
    if "fleetview" not in opts.ports:
        return ""
    return (f"  wallboard        {opts.url('fleetview')}/wallboard\n"
            "  capacity report  a database's tile on the wallboard links to it   (or: oracle-capacity-report)\n")


def start(opts: StackOptions, sup: Supervisor, ready_timeout: float = 30.0) -> dict[str, Path]:
    check_ports(opts.ports, opts.host)
    if opts.demo:
        check_ports({f"{c} (demo host)": opts.ports[c] for c in ("dbhost", "node")}, opts.demo_host)
    paths = prepare(opts)
    for proc in plan(opts, paths):
        sup.start(proc, ready_timeout)
    return paths


def targets_status(prometheus_url: str) -> list[dict]:
    data = http_json(prometheus_url + "/api/v1/targets?state=active")
    return data["data"]["activeTargets"]


def wait_all_targets_up(opts: StackOptions, sup: Supervisor, timeout: float = 120.0,
                        log=lambda msg: None) -> list[dict]:
    last = [""]

    def check():
        targets = targets_status(opts.url("prometheus"))
        if not targets:     # before Prometheus' first target discovery: nothing to report yet
            return None
        down = [f"{t['labels'].get('job')}({t['scrapeUrl']}: {t.get('lastError') or t['health']})"
                for t in targets if t["health"] != "up"]
        msg = f"targets up: {len(targets) - len(down)}/{len(targets)}" + (f"; waiting for {', '.join(down)}" if down else "")
        if msg != last[0]:
            log(msg)
            last[0] = msg
        return targets if targets and not down else None

    return wait_until(check, timeout, "every Prometheus target to be up", interval=1.0, alive=sup.check_alive)


def alert_eta(opts: StackOptions, replaying: bool) -> list[str]:
    """Lines saying when the first alerts should fire (the banner of make run)."""
    scrape_s, eval_s = opts.interval_seconds()
    rules_dir = opts.state / "demo" / "rules" if opts.demo else opts.rules_dir
    first = None       # (alert, for) of the case study's worst finding, which the demo recording crosses
    for group in (configs.load(rules_dir / "alerts.rules.yml") or {}).get("groups") or []:
        for rule in group.get("rules") or []:
            if (rule.get("labels") or {}).get("field_note") == demo_mod.PAGED_FIELD_NOTE and "for" in rule:
                first = (rule["alert"], rule["for"], rule["labels"].get("severity"))
                break
        if first:
            break
    am = configs.load(opts.alertmanager_source) or {}
    group_wait = (am.get("route") or {}).get("group_wait", "30s")
    lines = []
    if opts.demo and opts.demo_rules is not None:
        lines.append(f"DEMO: alert for: capped at {opts.demo_rules.max_for} ({len(opts.demo_rules.shortened)} "
                     f"alerts, each with annotation '{demo_mod.DEMO_ANNOTATION}'); "
                     + (f"{', '.join(opts.demo_rules.paged)} raised to critical (pager)" if opts.demo_rules.paged
                        else "no alert raised to critical"))
        who = (f"{opts.demo_identity[0]} ({opts.demo_host}), running {opts.demo_identity[1]}, the replayed "
               f"database's instance, its redo LUN writing in {demo_mod.DEMO_REDO_WRITE_SECONDS * 1000:g} ms"
               if opts.demo_identity else opts.demo_host)
        lines.append(f"DEMO: demo database host {who} (dbhost-exporter "
                     f"http://{opts.demo_addr('dbhost')}/metrics, node_exporter diskstats "
                     f"http://{opts.demo_addr('node')}/metrics)")
    if first and replaying:
        alert, for_, severity = first
        eta = demo_mod.first_alert_seconds(scrape_s, eval_s, configs.duration_seconds(for_))
        at = time.strftime("%H:%M", time.localtime(time.time() + eta))
        receiver = "pager" if severity == "critical" else "ticket"
        within = f"~{eta / 60:.0f} min" if eta >= 120 else f"~{eta:.0f} s"
        lines.append(f"first alerts: the demo recording crosses R1/R2; {alert} (for: {for_}) should fire at "
                     f"about {at} ({within}), its notification {group_wait} later at "
                     f"{opts.url('webhook')}/{receiver}")
        if not opts.demo:
            lines.append("for alerts within minutes and an animated database host: make run DEMO=1")
    else:
        lines.append("alerts fire only after their for: (2 to 30 min, see docs/alerts.md)")
    return lines


# Debian's Alertmanager package ships no web UI: its / is a page saying so.
_AM_NO_UI = b"does not include a web"


def ui_links(opts: StackOptions) -> dict[str, str]:
    """Links that open on the Prometheus and Alertmanager actually running, found by asking
    them: Debian's Prometheus 2.42 serves its UI under /classic/ (/alerts is a 404 there),
    upstream builds at /alerts; Debian's Alertmanager has no web UI, so the API URL and
    the amtool command stand in for it."""
    from .procs import http_get
    prom = opts.url("prometheus")
    links = {"prometheus": prom, "prometheus_alerts": prom + "/api/v1/alerts"}
    for path in ("/classic/alerts", "/alerts"):
        status, body = http_get(prom + path)
        if status == 200 and b"<html" in body[:2000].lower():
            links["prometheus_alerts"] = prom + path
            break
    am = opts.url("alertmanager")
    status, body = http_get(am + "/")
    amtool = f"amtool --alertmanager.url={am} alert query"
    if status == 200 and _AM_NO_UI not in body:
        links["alertmanager"] = f"{am}   (or: {amtool})"
    else:
        links["alertmanager"] = (f"{am}/api/v2/alerts   (no web UI in Debian's package; "
                                 f"{amtool}, or: amtool ... silence query)")
    return links


def new_notifications(path: Path, offset: int) -> tuple[list[str], int]:
    """One line per notification appended to the webhook's log since offset; the new offset."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1
    out = []
    for raw in data[:end].splitlines():
        try:
            n = json.loads(raw)
            alerts = n.get("alerts") or []
            names = sorted({a.get("labels", {}).get("alertname", "?") for a in alerts})
            where = sorted({a.get("labels", {}).get("database") or a.get("labels", {}).get("instance", "")
                            for a in alerts} - {""})
            summaries = sorted({a.get("annotations", {}).get("summary", "") for a in alerts} - {""})
            out.append(f"notification {n.get('path', '?')}: {n.get('status', '?')} {', '.join(names)}"
                       + (f" ({', '.join(where)})" if where else "") + f", {len(alerts)} alert(s)"
                       # the page's own words (OracleDown: why), when its alerts share one summary
                       + (f": {summaries[0]}" if len(summaries) == 1 else ""))
        except (ValueError, AttributeError):
            continue
    return out, offset + end


def webhook_trouble(webhook_url: str, seen: int) -> tuple[str | None, int]:
    """A loud line when the webhook receiver failed to log notifications since `seen`
    failures (its /-/status), and the new count; (None, seen) when all is well or it
    does not answer (a dead component is reported by the supervisor)."""
    from .procs import http_get
    status, body = http_get(webhook_url + "/-/status", timeout=1.0)
    if status != 200:
        return None, seen
    try:
        st = json.loads(body)
        failures = int(st["write_failures"])
    except (ValueError, KeyError, TypeError):
        return None, seen
    if failures <= seen:
        return None, seen
    return (f"WARNING: the webhook receiver could not write {failures - seen} notification(s) to {st.get('log')}: "
            f"{st.get('last_error')} ({failures} in all); they are NOT logged (answered 500, Alertmanager "
            "retries); alert NotificationLogWriteFailing; free space under the state directory"), failures


def _port(text: str) -> int:
    """argparse type of the --<component>-port options: 1..65535, one line otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text[:40]!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be 1-65535, got {text[:40]}")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """One line (argparse prints the whole usage first): the problem and where help is."""
        self.exit(2, f"error: {message} (python -m stack.run --help lists the options)\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = _Parser(prog="python -m stack.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--oracle-config", help="oracle-exporter config (YAML list of databases); "
                   "default: replay the demo recording in a loop")
    p.add_argument("--oracle-replay", default=str(DEMO_RECORDING), help="recording to replay when no --oracle-config")
    p.add_argument("--dbhost-config", help="dbhost-exporter config (LUN roles etc.), optional")
    p.add_argument("--rules-dir", default=str(configs.ALERTS_DIR),
                   help="directory with recording.rules.yml and alerts.rules.yml (default alerts/)")
    p.add_argument("--alertmanager-config", default=str(configs.ALERTS_DIR / "alertmanager.yml"),
                   help="Alertmanager routing; its webhook URLs are pointed at the local receiver")
    p.add_argument("--state-dir", default=str(ROOT / ".state"), help="where all state goes (default .state/)")
    p.add_argument("--scrape-interval", default=None, help="override the 15s scrape/evaluation interval")
    p.add_argument("--node-perf", action="store_true", help="enable node_exporter's perf collector (needs perf_event access)")
    p.add_argument("--demo", action="store_true",
                   help="demo mode (make run DEMO=1): an animated demo database host on "
                        f"{demo_mod.DEMO_HOST} (LUNs, ZFS, Oracle processes), alert for: shortened to "
                        "--demo-for and the case study's worst finding paging (see docs/stack.md)")
    p.add_argument("--demo-for", default=demo_mod.DEFAULT_FOR,
                   help=f"with --demo: the longest alert for: (default {demo_mod.DEFAULT_FOR})")
    p.add_argument("--resume", action="store_true",
                   help="keep the previous run's state (Prometheus data, Alertmanager data, notifications); "
                        "default: start fresh, the previous run's notifications and logs moved to "
                        "<state-dir>/previous/")
    for comp, port in DEFAULT_PORTS.items():
        p.add_argument(f"--{comp}-port", type=_port, default=port, help=f"{comp} port (default {port})")
    args = p.parse_args(argv)
    taken: dict[int, str] = {}
    for comp in DEFAULT_PORTS:
        port = getattr(args, f"{comp}_port")
        if port in taken:
            p.error(f"--{comp}-port {port} is also --{taken[port]}-port")
        taken[port] = comp
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def banner(text: str) -> None:
        try:
            print(text, flush=True)
        except OSError:   # the terminal is gone (SIGHUP): keep stopping quietly
            pass

    def say(msg: str) -> None:
        banner(f"[stack] {msg}")

    opts = StackOptions(state=Path(args.state_dir).resolve(),
                        ports={c: getattr(args, f"{c}_port") for c in DEFAULT_PORTS},
                        scrape_interval=args.scrape_interval, evaluation_interval=args.scrape_interval,
                        node_perf=args.node_perf, rules_dir=Path(args.rules_dir).resolve(),
                        alertmanager_source=Path(args.alertmanager_config).resolve(),
                        demo=args.demo, demo_for=args.demo_for)
    for flag, value, low, high in (("--demo-for", args.demo_for, 0, 86400),
                                   ("--scrape-interval", args.scrape_interval, 0.001, 3600)):
        try:
            if value is not None and not low <= configs.duration_seconds(value) <= high:
                raise configs.ConfigRenderError(f"must be between {low:g}s and {high:g}s, got {value!r}")
        except configs.ConfigRenderError as exc:
            print(f"error: {flag}: {exc}", file=sys.stderr)
            return 2
    if args.dbhost_config and not Path(args.dbhost_config).is_file():
        print(f"error: --dbhost-config {args.dbhost_config}: no such file", file=sys.stderr)
        return 2
    if args.oracle_config:
        if not Path(args.oracle_config).is_file():
            print(f"error: --oracle-config {args.oracle_config}: no such file", file=sys.stderr)
            return 2
        opts.oracle_args = ["--config.file", str(Path(args.oracle_config).resolve())]
        say(f"oracle-exporter: databases from {args.oracle_config}")
    else:
        if args.oracle_replay == str(DEMO_RECORDING) and not DEMO_RECORDING.is_file():
            from oracle_exporter import demo as oracle_demo  # noqa: PLC0415 (generated once, ~1 s)
            say("oracle-exporter: generating the demo recording (once)")
            oracle_demo.path(DEMO_RECORDING.name)
        if not Path(args.oracle_replay).is_file():
            print(f"error: recording {args.oracle_replay} is missing (oracle-exporter demo); "
                  "give --oracle-config or --oracle-replay", file=sys.stderr)
            return 2
        opts.oracle_args = ["--replay", str(Path(args.oracle_replay).resolve()), "--replay-loop"]
        if args.demo:
            opts.demo_identity = demo_mod.recording_identity(Path(args.oracle_replay))
        say(f"oracle-exporter: no database configured, replaying {args.oracle_replay} in a loop")
    if args.dbhost_config:
        opts.dbhost_args = ["--config.file", str(Path(args.dbhost_config).resolve())]

    stopping = {"sig": None}

    def on_signal(signum, frame):
        stopping["sig"] = signum
        raise KeyboardInterrupt

    try:
        lock = lock_state(opts.state)
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    sup = Supervisor(log=say)
    try:
        say(f"state directory {opts.state} (locked, pid {os.getpid()})")
        log_path = opts.state / "webhook" / "notifications.jsonl"
        if args.resume:
            say(f"RESUMING the earlier run's state (--resume): {resume_summary(opts.state, log_path)}")
        else:
            done = fresh_state(opts.state)
            say("fresh state: " + ("; ".join(done) + " (make run RESUME=1 continues a run instead)"
                                   if done else "no earlier run here"))
        # notifications already in the log (a resumed run's) are not printed again
        offset = log_path.stat().st_size if log_path.exists() else 0
        t0 = time.monotonic()
        paths = start(opts, sup)
        wait_all_targets_up(opts, sup, log=say)
        say(f"all targets up ({time.monotonic() - t0:.1f}s after start)")
        links = ui_links(opts)
        banner(f"""
  Prometheus       {links['prometheus']}   (alerts: {links['prometheus_alerts']})
  Alertmanager     {links['alertmanager']}
  oracle-exporter  {opts.url('oracle')}/metrics
  dbhost-exporter  {opts.url('dbhost')}/metrics
  node_exporter    {opts.url('node')}/metrics
  webhook          {opts.url('webhook')}/notifications   (log: {paths['webhook_log']})
{fleetview_banner(opts)}  logs             {opts.state / 'logs'}
""")
        for line in alert_eta(opts, replaying=not args.oracle_config):
            say(line)
        banner("\nPress Ctrl-C to stop.")
        failures = 0
        while True:
            sup.check_alive()
            lines, offset = new_notifications(paths["webhook_log"], offset)
            for line in lines:
                say(line)
            trouble, failures = webhook_trouble(opts.url("webhook"), failures)
            if trouble:
                say(trouble)
            time.sleep(1)
    except KeyboardInterrupt:
        say("stopping ...")
        return 0
    except (StackError, configs.ConfigRenderError) as exc:
        try:
            print(f"error: {exc}", file=sys.stderr)
        except OSError:
            pass
        return 1
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        sup.stop_all()
        say("stopped")
        os.close(lock)


if __name__ == "__main__":
    sys.exit(main())
