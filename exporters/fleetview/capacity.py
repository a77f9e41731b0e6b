"""The per-database capacity report: a baseline window against the current window, in the
sections and order of AWR Compare Periods, every number from the capacity queries of the mixin
(mixin/fleetview.py, the oracle-capacity dashboard's own expressions where it has the measure),
each judged row with its threshold id and a verdict. One self-contained HTML file (inline CSS
and SVG, no script, no network: opens from file://) and the same as Markdown."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .core import (CSS, FleetviewError, Upstream, Verdict, esc, fmt, iso, judge, promql_str, re_escape,
                   substitute, value_of)

DEFAULT_WINDOW_S = 3600
DEFAULT_OFFSET_S = 7 * 86400

# small charts: (title, PromQL with $database / $__rate, unit)
CHARTS = [
    ("Average active sessions (DB time/s)", 'sum(rate(oracle_db_time_seconds_total{database=~"$database"}[$__rate]))', "short"),
    ("Commits/s", 'sum(rate(oracle_user_commits_total{database=~"$database"}[$__rate]))', "ops"),
    ("log file sync avg", 'sum(rate(oracle_wait_event_time_seconds_total{database=~"$database", event="log file sync"}[$__rate]))'
     ' / (sum(rate(oracle_wait_event_waits_total{database=~"$database", event="log file sync"}[$__rate])) > 0)', "s"),
    ("log file parallel write avg", 'sum(rate(oracle_wait_event_time_seconds_total{database=~"$database", event="log file parallel write"}[$__rate]))'
     ' / (sum(rate(oracle_wait_event_waits_total{database=~"$database", event="log file parallel write"}[$__rate])) > 0)', "s"),
]


@dataclass
class Row:
    label: str
    unit: str
    now: dict            # column id -> value
    base: dict
    threshold: str | None = None
    verdict_now: Verdict | None = None
    verdict_base: Verdict | None = None
    note: str = ""


@dataclass
class Section:
    id: str
    title: str
    about: str
    columns: list        # [(id, title, window, unit)]
    rows: list[Row] = field(default_factory=list)
    message: str = ""


@dataclass
class Report:
    database: str
    start: float
    end: float
    offset: int
    sections: list[Section]
    charts: list = field(default_factory=list)    # (title, unit, now points, base points)
    hosts: list[str] = field(default_factory=list)
    queries: int = 0
    prometheus: str = ""
    warnings: list[str] = field(default_factory=list)   # partial windows, restarts: shown above the findings

    @property
    def range_s(self) -> int:
        return int(self.end - self.start)

    def findings(self, window: str = "now") -> list[tuple[str, str, str]]:
        """(threshold id, row label, verdict) of every FINDING in the window."""
        out = []
        for s in self.sections:
            for r in s.rows:
                v = r.verdict_now if window == "now" else r.verdict_base
                if v and v.kind == "finding":
                    out.append((r.threshold, r.label, v.text))
        return out


def windows(window: str | None, baseline: str | None, now: float | None = None) -> tuple[float, float, int]:
    """(start, end, baseline offset seconds) from --window and --baseline:
    window: a duration ending now (1h), START/END or START/DURATION (ISO 8601 or unix seconds);
    baseline: an offset before the window (7d, 1d), or the baseline window's START (or START/END
    of the same length)."""
    from .core import parse_duration, parse_time
    now = time.time() if now is None else now
    w = (window or "1h").strip()
    if "/" in w:
        a, b = w.split("/", 1)
        start = parse_time(a)
        end = start + parse_duration(b) if not any(c in b for c in "-:T") and not b.strip().replace(".", "").isdigit() \
            else parse_time(b)
    else:
        end = now
        start = end - parse_duration(w)
    if end <= start:
        raise FleetviewError(f"empty window: {iso(start)} .. {iso(end)} (the end must be after the start)")
    if end - start < 60:
        raise FleetviewError(f"window of {end - start:.0f}s is too short: give at least 1m (rates need two scrapes)")
    b = (baseline or "7d").strip()
    if any(c in b for c in "-:T") or b.replace(".", "").isdigit():
        bstart, _, bend = b.partition("/")
        bs = parse_time(bstart)
        if bend and abs((parse_time(bend) - bs) - (end - start)) > 1:
            raise FleetviewError("the baseline window must be as long as the current window "
                                 f"({end - start:.0f}s); give only its start")
        offset = int(round(start - bs))
    else:
        offset = parse_duration(b)
    if offset <= 0:
        raise FleetviewError("the baseline must lie before the current window")
    if offset < end - start:
        raise FleetviewError(f"the baseline ({offset // 60} min before) overlaps the current window of "
                             f"{(end - start) / 60:.0f} min: give an offset of at least the window's length (e.g. 1d, 7d)")
    return start, end, offset


def _series_key(s: dict, key: str | None) -> str | None:
    return s["metric"].get(key) if key else "_"


def collect(spec: dict, prom: Upstream, database: str, start: float, end: float, offset: int,
            host: str | None = None, charts: bool = True) -> Report:
    """Run the report's queries; FleetviewError for an unknown database or a window without data."""
    q0 = prom.queries
    rng = int(end - start)
    dbre, dbstr = re_escape(database), promql_str(database)
    seen = prom.query(f'group by (database) (max_over_time(oracle_up{{database="{dbstr}"}}[{rng}s]))', end)
    seen_base = prom.query(f'group by (database) (max_over_time(oracle_up{{database="{dbstr}"}}[{rng}s] offset {offset}s))', end)
    if not seen and not seen_base:
        known = prom.query("group by (database) (last_over_time(oracle_up[30d]))", end)
        names = sorted(s["metric"].get("database", "") for s in known)
        if database not in names:      # a window far from the data (in the future, months ago): known at all?
            anywhere = prom.get("/api/v1/series", {"match[]": f'oracle_up{{database="{dbstr}"}}'})
            if isinstance(anywhere, dict) and anywhere.get("data"):
                raise FleetviewError(f"no data for {database} in either window: current {iso(start)} .. {iso(end)}, "
                                     f"baseline {iso(start - offset)} .. {iso(end - offset)} (Prometheus has "
                                     f"{database} at other times: choose a window it was monitored in)")
        if not names:
            raise FleetviewError(f"unknown database {database!r}: Prometheus at {prom.url} has no oracle_up series at all "
                                 f"in the 30 days before {iso(end)}")
        if database not in names:
            raise FleetviewError(f"unknown database {database!r}: Prometheus knows {', '.join(names[:20])}"
                                 + (" ..." if len(names) > 20 else ""))
        raise FleetviewError(f"no data for {database} in either window: current {iso(start)} .. {iso(end)}, "
                             f"baseline {iso(start - offset)} .. {iso(end - offset)}")
    coverage = _coverage(prom, database, rng, offset, end)
    if host is None:
        hs = prom.query(substitute(spec["hosts_of_database"], database=dbre), end)
        hosts = sorted({s["metric"].get("instance", "") for s in hs} - {""})
    else:
        hosts = [host]
    hostre = "|".join(re_escape(h) for h in hosts)
    sub = lambda e: substitute(e, database=dbre, host=hostre or "^$", range_s=rng, offset_s=offset)
    thresholds = spec["thresholds"]
    report = Report(database, start, end, offset, [], hosts=hosts, prometheus=prom.url)
    for sec in spec["capacity"]:
        if sec.get("host") and not hosts:
            report.sections.append(Section(sec["id"], sec["title"], sec["about"], [], [],
                                           "no host of this database is monitored (no dbhost-exporter process of its "
                                           "SID joined to oracle_instance_info); give --host"))
            continue
        if sec["key"] is None:
            s = Section(sec["id"], sec["title"], sec["about"], [("now", "value", "now", ""), ("base", "value", "base", "")])
            for r in sec["rows"]:
                vals = {}
                for w in ("now", "base"):
                    res = prom.query(sub(r[w]), end)
                    vals[w] = max((v for v in map(value_of, res) if v is not None), default=None)
                fl = {}
                if r.get("floor"):
                    for w in ("now", "base"):
                        res = prom.query(sub(r["floor"][w]), end)
                        fl[w] = max((v for v in map(value_of, res) if v is not None), default=None)
                th = thresholds.get(r["threshold"]) if r["threshold"] else None
                fname = r["floor"]["name"] if r.get("floor") else None
                s.rows.append(Row(r["label"], r["unit"], {"now": vals["now"]}, {"base": vals["base"]}, r["threshold"],
                                  judge(th, vals["now"], fl.get("now"), fname, thresholds),
                                  judge(th, vals["base"], fl.get("base"), fname, thresholds), r.get("note", "")))
            report.sections.append(s)
            continue
        # keyed table: one row per label value (measure, event, wait class)
        cols = []
        for c in sec["columns"]:
            if (c["id"], c["title"], c["window"], c["unit"]) not in cols and c["window"] != "threshold":
                cols.append((c["id"], c["title"], c["window"], c["unit"]))
        data: dict[str, dict[str, float | None]] = {}
        for c in sec["columns"]:
            for smp in prom.query(sub(c["expr"]), end):
                k = _series_key(smp, sec["key"])
                if k is not None:
                    data.setdefault(k, {})[c["id"]] = value_of(smp)
        s = Section(sec["id"], sec["title"], sec["about"], cols)
        if sec.get("rows"):
            keys = [r["key"] for r in sec["rows"]]
            meta = {r["key"]: r for r in sec["rows"]}
        else:
            keys = sec.get("order") or sorted(data, key=lambda k: -(data[k].get(sec.get("sort", ""), 0) or 0))
            keys = [k for k in keys if k in data] if sec.get("order") else keys
            meta = {}
        for k in keys:
            vals = data.get(k, {})
            now = {c[0]: vals.get(c[0]) for c in cols if c[2] == "now"}
            base = {c[0]: vals.get(c[0]) for c in cols if c[2] == "base"}
            m = meta.get(k, {})
            th = thresholds.get(m["threshold"]) if m.get("threshold") else None
            row = Row(k, "", now, base, m.get("threshold") or (m.get("id") if m else None), note=m.get("note", ""))
            if m and m.get("judge"):
                jn, jb = m["judge"]
                fname = (m.get("floor") or {}).get("name")
                fcols = (m.get("floor") or {}).get("columns", (None, None))
                row.verdict_now = judge(th, vals.get(jn), vals.get(fcols[0]) if fcols[0] else None, fname, thresholds)
                row.verdict_base = judge(th, vals.get(jb), vals.get(fcols[1]) if fcols[1] else None, fname, thresholds)
            elif m:
                row.verdict_now = row.verdict_base = Verdict("none", "-")
            s.rows.append(row)
        if not s.rows:
            s.message = "no data in either window"
        report.sections.append(s)
    if charts:
        step = max(15, rng // 60)
        rate = f"{max(4 * step, 60)}s"
        for title, expr, unit in CHARTS:
            e = expr.replace("$database", dbre).replace("$__rate", rate)
            now = prom.query_range(e, start, end, step)
            base = prom.query_range(e, start - offset, end - offset, step)
            pts = lambda res, shift: [(float(t) + shift, float(v)) for t, v in (res[0]["values"] if res else [])
                                      if v not in ("NaN", "+Inf", "-Inf")]
            report.charts.append((title, unit, pts(now, 0), pts(base, offset)))
    _withhold_partial(report, coverage)
    report.queries = prom.queries - q0
    if not any(r.now and any(v is not None for v in r.now.values()) for s in report.sections for r in s.rows):
        raise FleetviewError(f"no data for {database} in the current window {iso(start)} .. {iso(end)} "
                             f"(it has data in the baseline window or around it)")
    return report


# A window whose data covers less than this share of it (the database was down, unscraped, or
# monitoring started inside it) is reported with a warning and without verdicts: its per-second
# figures are averages over the whole window and understated.
MIN_COVERAGE = 0.9


def _coverage(prom: Upstream, database: str, rng: int, offset: int, end: float) -> dict:
    """Per window ("now", "base"): the share of it with oracle_up == 1 (sampled at about 240 steps),
    and whether an instance restarted in it (AWR refuses to compare across a restart)."""
    step = max(15, rng // 240)
    out = {}
    for w, off in (("now", ""), ("base", f" offset {offset}s")):
        up = prom.query(f'count_over_time((max(oracle_up{{database="{promql_str(database)}"}}) == 1)[{rng}s:{step}s]{off})', end)
        steps = max((v for v in map(value_of, up) if v is not None), default=0.0)
        restarts = prom.query(f'max(changes(oracle_instance_start_time_seconds{{database="{promql_str(database)}"}}[{rng}s]{off}))',
                              end)
        out[w] = (min(1.0, steps * step / rng) if rng else 0.0,
                  max((v for v in map(value_of, restarts) if v is not None), default=0.0) > 0)
    return out


def _withhold_partial(report: "Report", coverage: dict) -> None:
    names = {"now": "current", "base": "baseline"}
    for w, (share, restarted) in coverage.items():
        if restarted:
            report.warnings.append(f"an instance of {report.database} restarted within the {names[w]} window: "
                                   "its counters reset there (rates are still right; AWR would not compare across it)")
        if share < MIN_COVERAGE:
            report.warnings.append(
                f"the {names[w]} window has data for {share:.0%} of its {report.range_s // 60} min (database down, "
                "not scraped, or monitoring started within it): its per-second figures are averaged over the whole "
                "window and understated, so no verdict is given for it; choose a window the database was up in")
            for sec in report.sections:
                for row in sec.rows:
                    if w == "now":
                        row.verdict_now = None
                    else:
                        row.verdict_base = None


# ---------------------------------------------------------------- SVG

def sparkline(now: list, base: list, start: float, end: float, unit: str, w: int = 300, h: int = 70) -> str:
    allv = [v for _, v in now + base]
    if not allv:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"><text x="4" y="20" font-size="11">no data</text></svg>'
    top = max(allv) * 1.1 or 1.0
    pad = 4

    def path(points):
        if not points:
            return ""
        xy = [(pad + (t - start) / max(end - start, 1) * (w - 2 * pad), h - pad - v / top * (h - 2 * pad - 10))
              for t, v in points]
        return "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img">'
            f'<rect width="{w}" height="{h}" fill="#fafafa" stroke="#ddd"/>'
            f'<path d="{path(base)}" fill="none" stroke="#999" stroke-width="1.5" stroke-dasharray="4 2"/>'
            f'<path d="{path(now)}" fill="none" stroke="{CSS["blue"]}" stroke-width="1.5"/>'
            f'<text x="{pad}" y="11" font-size="10" fill="#333">max {esc(fmt(max(allv), unit))}</text></svg>')


# ---------------------------------------------------------------- HTML / Markdown

STYLE = """body{font:13px/1.35 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
h1{font-size:20px}h2{font-size:15px;margin:1.2em 0 .3em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;width:100%}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child{text-align:left}#findings+table td,#findings+table th{text-align:left}td:first-child{min-width:13em}th{background:#f2f2f2}.about{color:#666;margin:.2em 0}
.finding{background:#ffcdd2;font-weight:bold}.ok{color:#2e7d32}.floor{color:#2e7d32}.nodata{color:#999}
.charts{display:flex;flex-wrap:wrap;gap:10px}.charts figure{margin:0}.charts figcaption{font-size:11px}
.summary{background:#f7f7f7;padding:.5em 1em}.k{display:inline-block;width:1.2em;height:3px;vertical-align:middle}"""


def _cell(v: Verdict | None) -> str:
    if v is None:
        return "<td></td>"
    return f'<td class="{v.kind}">{esc(v.text)}</td>'


def render_html(r: Report) -> str:
    out = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Capacity report {esc(r.database)}"
           f"</title><style>{STYLE}</style></head><body>",
           f"<h1>Capacity report: {esc(r.database)}</h1>",
           f'<p class="summary">Current window <b>{iso(r.start)} .. {iso(r.end)}</b> ({r.range_s // 60} min) against '
           f"baseline <b>{iso(r.start - r.offset)} .. {iso(r.end - r.offset)}</b> (offset {r.offset // 3600} h "
           f"{r.offset % 3600 // 60} min). Prometheus {esc(r.prometheus)}; hosts: {esc(', '.join(r.hosts) or 'none joined')}. "
           f"{r.queries} queries.</p>"]
    fn, fb = r.findings("now"), r.findings("base")
    out += [f'<p class="finding warning">{esc(w)}</p>' for w in r.warnings]
    out.append('<h2 id="findings">Findings</h2><table><tr><th>window</th><th>findings (threshold id: row)</th></tr>'
               f'<tr><td>current</td><td id="findings-now">{esc(", ".join(f"{t}: {l}" for t, l, _ in fn) or "none")}</td></tr>'
               f'<tr><td>baseline</td><td id="findings-base">{esc(", ".join(f"{t}: {l}" for t, l, _ in fb) or "none")}</td></tr></table>')
    if r.charts:
        out.append('<h2>Charts</h2><p class="about"><span class="k" style="background:#1565c0"></span> current '
                   '<span class="k" style="background:#999"></span> baseline (dashed), on the current window\'s time axis</p><div class="charts">')
        for title, unit, now, base in r.charts:
            out.append(f"<figure>{sparkline(now, base, r.start, r.end, unit)}<figcaption>{esc(title)}</figcaption></figure>")
        out.append("</div>")
    for s in r.sections:
        out.append(f'<h2 id="{esc(s.id)}">{esc(s.title)}</h2><p class="about">{esc(s.about)}</p>')
        if s.message:
            out.append(f'<p class="nodata">{esc(s.message)}</p>')
            continue
        cols_now = [c for c in s.columns if c[2] == "now"]
        cols_base = [c for c in s.columns if c[2] == "base"]
        head = "".join(f"<th>{esc(c[1])} (current)</th>" for c in cols_now) + "".join(
            f"<th>{esc(c[1])} (baseline)</th>" for c in cols_base)
        out.append(f'<table class="sec-{esc(s.id)}"><tr><th></th>{head}<th>threshold</th><th>verdict (current)</th>'
                   f"<th>verdict (baseline)</th></tr>")
        for row in s.rows:
            cells = "".join(f"<td>{esc(fmt(row.now.get(c[0]), c[3] or row.unit))}</td>" for c in cols_now)
            cells += "".join(f"<td>{esc(fmt(row.base.get(c[0]), c[3] or row.unit))}</td>" for c in cols_base)
            label = esc(row.label) + (f'<br><small>{esc(row.note)}</small>' if row.note else "")
            out.append(f'<tr data-threshold="{esc(row.threshold or "")}"><td>{label}</td>{cells}'
                       f"<td>{esc(row.threshold or '')}</td>{_cell(row.verdict_now)}{_cell(row.verdict_base)}</tr>")
        out.append("</table>")
    out.append("<p class=\"about\">Generated by oracle-capacity-report from Prometheus; thresholds from the alert pack "
               "(alerts/thresholds.yaml). Verdicts compare each value as its alert does, with the alert's traffic floor.</p>"
               "</body></html>\n")
    return "\n".join(out)


def render_markdown(r: Report) -> str:
    lines = [f"# Capacity report: {r.database}", "",
             f"Current window {iso(r.start)} .. {iso(r.end)}; baseline {iso(r.start - r.offset)} .. {iso(r.end - r.offset)}.",
             f"Prometheus {r.prometheus}; hosts: {', '.join(r.hosts) or 'none joined'}.", "",
             *(f"> **Warning:** {w}" for w in r.warnings), *([""] if r.warnings else []),
             "## Findings", "",
             "- current: " + (", ".join(f"{t}: {l}" for t, l, _ in r.findings("now")) or "none"),
             "- baseline: " + (", ".join(f"{t}: {l}" for t, l, _ in r.findings("base")) or "none"), ""]
    for s in r.sections:
        lines += [f"## {s.title}", "", s.about, ""]
        if s.message:
            lines += [s.message, ""]
            continue
        cols_now = [c for c in s.columns if c[2] == "now"]
        cols_base = [c for c in s.columns if c[2] == "base"]
        head = ["", *[f"{c[1]} (current)" for c in cols_now], *[f"{c[1]} (baseline)" for c in cols_base],
                "threshold", "verdict (current)", "verdict (baseline)"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for row in s.rows:
            cells = [row.label.replace("|", "\\|")]
            cells += [fmt(row.now.get(c[0]), c[3] or row.unit) for c in cols_now]
            cells += [fmt(row.base.get(c[0]), c[3] or row.unit) for c in cols_base]
            cells += [row.threshold or "", row.verdict_now.text if row.verdict_now else "",
                      row.verdict_base.text if row.verdict_base else ""]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def error_html(message: str) -> str:
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Capacity report</title>"
            f"<style>{STYLE}</style></head><body><h1>Capacity report</h1><p class=\"finding\" id=\"error\">{esc(message)}</p>"
            "</body></html>\n")
