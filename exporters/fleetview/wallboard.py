"""The fleet wallboard page: one tile per database and one per host, coloured by the same
figures, thresholds and states as the Grafana wallboard (mixin/fleetview.py, via spec.json),
and the firing alerts from Alertmanager with their runbook and evidence (a Prometheus graph URL).

A refresh runs one instant query per tile figure (15 with the shipped spec; concurrently, with an
overall deadline) plus one Alertmanager request, whatever the number of databases and hosts: every figure is aggregated
`by (database)` or `by (instance)` over all of them at once.
"""
from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass, field

from .core import CSS, FleetviewError, Upstream, colour, esc, fmt, substitute, value_of

REFRESH_S = 30


@dataclass
class Tile:
    name: str
    kind: str                      # database | host
    level: int = 3                 # 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN
    figures: list = field(default_factory=list)   # (label, text, colour)
    silenced: list = field(default_factory=list)  # its alerts silenced in Alertmanager (alertnames)


@dataclass
class Board:
    databases: list[Tile]
    hosts: list[Tile]
    alerts: list[dict]
    errors: list[str]
    queries: int = 0
    am_requests: int = 0
    seconds: float = 0.0
    at: float = 0.0
    # the alerts' source: "ok", "none" (no --alertmanager.url) or "unavailable" (Alertmanager did not
    # answer): only "ok" may say that nothing fires (rev-views #5)
    alerts_state: str = "ok"
    silenced: list = field(default_factory=list)    # alerts silenced in Alertmanager (same shape as alerts)


# A refresh must end before the next one (REFRESH_S): the figures' queries run concurrently
# (QUERY_WORKERS at a time) and whatever has not answered within DEADLINE_S is left out, that
# figure shown as failed (rev-views #12: one after another, a 4 s Prometheus took 60 s).
QUERY_WORKERS = 8
DEADLINE_S = 20.0
FAILED = "query failed"


def run_queries(prom: Upstream, exprs: list[str], deadline_s: float = DEADLINE_S) -> list:
    """Each expression's result list, or the FleetviewError it failed with (a timeout past the
    overall deadline included), queried concurrently."""
    from concurrent.futures import ThreadPoolExecutor, wait
    pool = ThreadPoolExecutor(max_workers=min(QUERY_WORKERS, max(1, len(exprs))), thread_name_prefix="fv-query")
    futures = [pool.submit(prom.query, e) for e in exprs]
    wait(futures, timeout=deadline_s)
    pool.shutdown(wait=False, cancel_futures=True)
    out = []
    for fut in futures:
        if not fut.done():
            out.append(FleetviewError(f"{prom.name} at {prom.url} did not answer within the page's "
                                      f"{deadline_s:g} s deadline"))
        elif fut.cancelled():
            out.append(FleetviewError(f"{prom.name} at {prom.url}: query not run within the page's deadline"))
        elif isinstance(fut.exception(), FleetviewError):
            out.append(fut.exception())
        elif fut.exception() is not None:
            out.append(FleetviewError(f"{prom.name} at {prom.url}: {fut.exception()}"))
        else:
            out.append(fut.result())
    return out


def collect_tiles(prom: Upstream | None, figures: list[dict], key: str, kind: str, thresholds: dict,
                  errors: list[str], results: list | None = None) -> list[Tile]:
    """The tiles from the figures' results (run here when not given). A figure whose query failed
    is shown as failed on every tile and named in `errors`; the other figures and tiles stay
    (rev-views #1: one HTTP 422 replaced all tiles by an error page)."""
    if results is None:
        results = run_queries(prom, [substitute(f["expr"]) for f in figures])
    tiles: dict[str, Tile] = {}
    values: dict[str, dict[str, float | None]] = {}
    failed: set[str] = set()
    for f, result in zip(figures, results):
        if isinstance(result, Exception):
            failed.add(f["key"])
            errors.append(f"{kind} figure '{f['label']}' not shown: {result}")
            continue
        for s in result:
            name = s["metric"].get(key)
            if name:
                values.setdefault(name, {})[f["key"]] = value_of(s)
    for name, vals in values.items():
        t = Tile(name, kind)
        status = vals.get("status")
        # no status (its exporter gone and not seen within the hour, only partial series, or the
        # status query failed): UNKNOWN
        t.level = int(status) if status is not None and int(status) in (0, 1, 2, 3) else 3
        for f in figures:
            if f["status"]:
                continue
            v = vals.get(f["key"])
            if f.get("steps"):     # every tier of the measure: a paging level is red
                steps = f["steps"]
            elif f["threshold"]:
                steps = thresholds[f["threshold"]]["steps"]
            else:
                steps = [[None, f["neutral"]]]
            text = FAILED if f["key"] in failed else fmt(v, f["unit"])
            t.figures.append((f["label"], text, colour(v, steps) if v is not None else "grey", f["threshold"]))
        tiles[name] = t
    # worst first (CRITICAL/UNKNOWN, WARNING, OK), then by name
    order = {2: 0, 3: 0, 1: 1, 0: 2}
    return sorted(tiles.values(), key=lambda t: (order[t.level], t.name))


def firing_alerts(am: Upstream | None, errors: list[str], silenced: list | None = None) -> list[dict] | None:
    """The firing alerts, critical first and the newest first within a severity (rev-views #6: the
    oldest first hid the new ones past ALERT_ROWS); None when Alertmanager did not answer. The
    silenced ones go to `silenced` (rev-views #7: a silenced database's tile stays red from
    Prometheus' ALERTS, and needs saying why)."""
    if am is None:
        return []
    try:
        data = am.get("/api/v2/alerts", {"active": "true", "silenced": "true", "inhibited": "false"})
    except FleetviewError as exc:
        errors.append(str(exc))
        return None
    out = []

    def txt(v) -> str:                      # Alertmanager's fields as text, whatever an API client posted
        return v if isinstance(v, str) else ""

    for a in data if isinstance(data, list) else []:
        if not isinstance(a, dict):
            continue
        labels = a.get("labels") if isinstance(a.get("labels"), dict) else {}
        ann = a.get("annotations") if isinstance(a.get("annotations"), dict) else {}
        status = a.get("status") if isinstance(a.get("status"), dict) else {}
        if labels.get("alertname") == "Watchdog":
            continue
        row = {"alertname": txt(labels.get("alertname")) or "?", "severity": txt(labels.get("severity")),
               "target": txt(labels.get("database")) or txt(labels.get("instance")),
               "summary": txt(ann.get("summary")), "runbook": txt(ann.get("runbook_url")),
               "page": txt(ann.get("dashboard_url")) or txt(ann.get("capacity_url")),
               "evidence": txt(a.get("generatorURL")), "since": txt(a.get("startsAt"))[:19].replace("T", " ")}
        state = status.get("state", "active")
        if state == "active":
            out.append(row)
        elif state == "suppressed" and status.get("silencedBy") and silenced is not None:
            silenced.append(row)
    sev = {"critical": 0, "warning": 1, "info": 2}
    out.sort(key=lambda x: x["since"], reverse=True)             # newest first ...
    out.sort(key=lambda x: sev.get(x["severity"], 3))            # ... within each severity (stable)
    return out


def collect(spec: dict, prom: Upstream, am: Upstream | None, deadline_s: float = DEADLINE_S) -> Board:
    """The board: every figure's query at once (concurrently, within `deadline_s`), then the alerts.
    FleetviewError (the page becomes one line) only when no figure could be queried at all
    (Prometheus down, hung, or refusing every query); a figure that failed alone is blanked."""
    t0 = time.monotonic()
    q0, a0 = prom.queries, am.queries if am else 0
    errors: list[str] = []
    figs = spec["db_tiles"] + spec["host_tiles"]
    results = run_queries(prom, [substitute(f["expr"]) for f in figs], deadline_s)
    if figs and all(isinstance(r, Exception) for r in results):
        raise results[0]
    n = len(spec["db_tiles"])
    dbs = collect_tiles(None, spec["db_tiles"], "database", "database", spec["thresholds"], errors, results[:n])
    hosts = collect_tiles(None, spec["host_tiles"], "instance", "host", spec["thresholds"], errors, results[n:])
    silenced: list[dict] = []
    alerts = firing_alerts(am, errors, silenced)
    state = "none" if am is None else "unavailable" if alerts is None else "ok"
    firing_targets = {a["target"] for a in alerts or []}
    by_target: dict[str, list[str]] = {}
    for a in silenced:
        by_target.setdefault(a["target"], []).append(a["alertname"])
    for t in dbs + hosts:      # red or orange only from silenced alerts: say so on the tile
        if t.level in (1, 2) and t.name in by_target and t.name not in firing_targets:
            t.silenced = sorted(set(by_target[t.name]))
    return Board(dbs, hosts, alerts or [], errors, prom.queries - q0, (am.queries if am else 0) - a0,
                 time.monotonic() - t0, time.time(), state, silenced)


# ---------------------------------------------------------------- HTML

STYLE = """
*{box-sizing:border-box}body{margin:0;font:13px/1.25 system-ui,sans-serif;background:#111;color:#eee}
header{display:flex;gap:1.2em;align-items:baseline;padding:4px 10px;background:#222}
header h1{font-size:16px;margin:0}header .sum span{padding:1px 6px;border-radius:3px;margin-right:4px;font-weight:bold}
main{display:flex;gap:8px;padding:6px}#tiles{flex:1;min-width:0}#side{width:680px;flex:none;min-width:0}
h2{font-size:13px;margin:4px 0;color:#bbb;font-weight:normal}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(92px,1fr));gap:3px;margin-bottom:6px}
.t{display:block;color:#fff;text-decoration:none;padding:2px 4px;border-radius:3px;height:40px;overflow:hidden;
   border:2px solid transparent}
.t b{display:block;font-size:12px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.t i{font-style:normal;font-size:11px;white-space:nowrap;display:block;overflow:hidden;text-overflow:ellipsis}
.grid.big{grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:6px}
.t.big{height:auto;min-height:64px;padding:4px 6px}.t.big b{font-size:15px}.t.big i{font-size:12px;white-space:normal}.t.big .fig{margin:2px 2px 0 0}
table{border-collapse:collapse;width:100%;font-size:12px}td,th{padding:2px 4px;border-bottom:1px solid #333;
  text-align:left;vertical-align:top}#alerts td{white-space:nowrap}#alerts td.sum,#alerts td.tgt{white-space:normal;overflow-wrap:anywhere}a{color:#8cf}.err{background:#5d1111;padding:4px 8px;margin:4px 0}
.sev-critical{color:#ff8a80;font-weight:bold}.sev-warning{color:#ffb74d}.sev-info{color:#fff176}
footer{color:#888;font-size:11px;padding:2px 10px}.fig{display:inline-block;padding:0 3px;border-radius:2px}
.grid.dense{grid-template-columns:repeat(auto-fill,minmax(132px,1fr));gap:2px;margin-bottom:4px}
.t.dense{height:22px;padding:1px 3px;border-width:1px}.t.dense b{font-size:11px;display:flex}
.t.dense b span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}.t.dense b em{flex:none;font-style:normal;margin-left:3px}
main.dense #side{width:400px}
main.dense #alerts td.sum{display:none}main.dense #alerts th.sum{display:none}
"""

# Above DENSE tiles (a fleet: 200 databases and 150 hosts must fit one 1920x1080 screen) a tile is
# its name and a four-letter state on the state's colour; the figures stay in its tooltip.
DENSE = 160
# The alert table shows the first ALERT_ROWS alerts (critical first, the newest first within a
# severity) so the page stays one screen.
ALERT_ROWS = 30


def _tile_html(t: Tile, states: dict, link: str, big: bool, dense: bool = False) -> str:
    text, col = states[str(t.level)]["text"], states[str(t.level)]["colour"]
    sil = f"\nsilenced in Alertmanager: {', '.join(t.silenced)}" if t.silenced else ""
    # a silenced tile keeps its state's colour, striped, and says so (rev-views #7)
    bg = (f"repeating-linear-gradient(135deg,{CSS[col]} 0 8px,#333 8px 12px)" if t.silenced else CSS[col])
    attr = ' data-silenced="1"' if t.silenced else ""
    if dense:
        title = f"{t.name}: {text}{sil}\n" + "\n".join(f"{lab}: {val}" + (f" [{th}]" if th else "")
                                                       for lab, val, _, th in t.figures)
        return (f'<a class="t dense" data-state="{text}" data-name="{esc(t.name)}"{attr} href="{esc(link)}" '
                f'title="{esc(title)}" style="background:{bg}"><b><span>{esc(t.name)}</span>'
                f'<em>{"SIL" if t.silenced else text[:4]}</em></b></a>')
    # the worst coloured figure first (red, orange, yellow): the medium layout shows only the first (rev-views #9)
    rank = {"red": 0, "orange": 1, "yellow": 2}
    coloured = sorted((f for f in t.figures if f[2] not in ("green", "blue", "grey")), key=lambda f: rank.get(f[2], 3))
    title = f"{t.name}: {text}{sil}\n" + "\n".join(f"{lab}: {val}" + (f" [{th}]" if th else "") for lab, val, _, th in t.figures)
    shown = coloured or ([] if not big else [f for f in t.figures if f[1] != "no data"])
    if big:
        figs = " ".join(f'<span class="fig" style="background:{CSS.get(c, c)}">{esc(lab)} {esc(val)}</span>'
                        for lab, val, c, _ in shown[:4])
    else:
        figs = esc(f"{shown[0][0]} {shown[0][1]}") if shown else ""
    return (f'<a class="t{" big" if big else ""}" data-state="{text}" data-name="{esc(t.name)}"{attr} href="{esc(link)}" '
            f'title="{esc(title)}" style="background:{bg}"><b>{esc(t.name)} · {text}{" · silenced" if t.silenced else ""}'
            f'</b><i>{figs}</i></a>')


def _link(url: str, text: str) -> str:
    """A link from an alert (runbook, evidence, page): only http(s) and this server's own relative
    pages; anything else (javascript:, data:) is anybody's text from Alertmanager's API and is dropped."""
    if not url or not (url.lower().startswith(("http://", "https://")) or url.startswith(("/", "capacity?"))):
        return ""
    return f'<a href="{esc(url)}">{text}</a>'


def _alert_row(a: dict) -> str:
    return (f'<tr><td class="sev-{esc(a["severity"])}">{esc(a["severity"])}</td><td>{esc(a["alertname"])}</td>'
            f'<td class="tgt">{esc(a["target"])}</td><td class="sum">{esc(a["summary"])}</td>'
            f'<td class="links">{_link(a["runbook"], "runbook")} {_link(a["evidence"], "evidence")} '
            f'{_link(a.get("page", ""), "capacity" if "/capacity?" in a.get("page", "") else "dashboard")}</td></tr>')


def render(board: Board, spec: dict, prom_url: str, base: str = "") -> str:
    states = spec["states"]
    n = len(board.databases) + len(board.hosts)
    big, dense = n <= 48, n > DENSE
    grid = " big" if big else " dense" if dense else ""
    counts = {}
    for t in board.databases + board.hosts:
        counts[t.level] = counts.get(t.level, 0) + 1
    summary = " ".join(f'<span style="background:{CSS[states[str(lv)]["colour"]]}">{counts[lv]} {states[str(lv)]["text"]}</span>'
                       for lv in (2, 3, 1, 0) if counts.get(lv))
    db_tiles = "".join(_tile_html(t, states, f"{base}capacity?database={urllib.parse.quote(t.name)}", big, dense)
                       for t in board.databases)
    host_tiles = "".join(_tile_html(t, states, prom_url + "/graph?" + urllib.parse.urlencode(
        {"g0.expr": f'{{instance="{t.name}"}}', "g0.tab": "1"}), big, dense) for t in board.hosts)
    rows = "".join(_alert_row(a) for a in board.alerts[:ALERT_ROWS])
    if len(board.alerts) > ALERT_ROWS:      # one screen: the worst first, the rest counted
        rows += (f'<tr><td colspan="5">… and {len(board.alerts) - ALERT_ROWS} more firing '
                 f'(Alertmanager has them all)</td></tr>')
    errors = "".join(f'<div class="err">{esc(e)}</div>' for e in board.errors)
    if board.alerts_state == "none":
        header_alerts = "alerts: no Alertmanager configured"
        side_note = '<p id="alerts-state">No Alertmanager configured (--alertmanager.url): firing alerts unknown.</p>'
    elif board.alerts_state == "unavailable":
        header_alerts = "alerts unavailable"
        side_note = '<p id="alerts-state">Alerts unavailable: Alertmanager did not answer (above). Not an all-clear.</p>'
    else:
        header_alerts = f"{len(board.alerts)} alerts firing"
        side_note = "" if board.alerts else '<p id="alerts-state">None firing.</p>'
    if board.silenced:
        names = {}
        for a in board.silenced:
            names.setdefault(a["target"] or "?", []).append(a["alertname"])
        side_note += (f'<p id="silenced">{len(board.silenced)} silenced in Alertmanager: '
                      + esc("; ".join(f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(names.items())))
                      + "</p>")
    when = time.strftime("%H:%M:%S", time.localtime(board.at))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="{REFRESH_S}">
<meta name="viewport" content="width=device-width"><title>Fleet wallboard</title><style>{STYLE}</style></head>
<body><header><h1>Oracle fleet wallboard</h1><span class="sum">{summary or "no database or host in Prometheus"}</span>
<span>{len(board.databases)} databases, {len(board.hosts)} hosts, {header_alerts}</span>
<span style="margin-left:auto">updated {when}, refresh {REFRESH_S}s</span></header>
{errors}<main{' class="dense"' if dense else ""}><section id="tiles"><h2>Databases (click: capacity report, current hour vs the same hour a week ago)</h2>
<div class="grid{grid}" id="databases">{db_tiles}</div>
<h2>Hosts (click: the host's series in Prometheus)</h2><div class="grid{grid}" id="hosts">{host_tiles}</div></section>
<aside id="side"><h2>Firing alerts (Alertmanager)</h2>
<table id="alerts"><tr><th>severity</th><th>alert</th><th>target</th><th class="sum">summary</th><th>links</th></tr>{rows}</table>
{side_note}</aside></main>
<footer>Colours: the alert pack's thresholds (alerts/thresholds.yaml) and firing alerts, as the Grafana wallboard;
UNKNOWN = no data now, seen within the hour or its exporter target still configured. {board.queries} Prometheus queries and {board.am_requests} Alertmanager
request(s) in {board.seconds * 1000:.0f} ms. Prometheus: <a href="{esc(prom_url)}">{esc(prom_url)}</a></footer>
</body></html>
"""


def error_page(title: str, message: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="{REFRESH_S}">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><header><h1>{esc(title)}</h1></header>"
            f'<div class="err" id="error">{esc(message)}</div><footer>retrying every {REFRESH_S}s</footer></body></html>\n')
