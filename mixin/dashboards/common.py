"""Shared building blocks: data source, variables, panel helpers, links, threshold steps."""
from __future__ import annotations

from typing import Sequence

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import heatmap, prometheus, stat, table, timeseries
from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DashboardLinkType,
    DataSourceRef,
    DataTransformerConfig,
    DynamicConfigValue,
    Threshold as Step,
    ThresholdsMode,
    VariableOption,
    VariableRefresh,
    VariableSort,
)
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from mixin import fleetview
from mixin.config import Config
from mixin.records import LGWR_ROLES  # noqa: F401  (re-exported for the boards)
from mixin.thresholds import Threshold

TAG = "oracle-dbhost"
DS = DataSourceRef(type_val="prometheus", uid="${datasource}")

DB = 'database=~"$database"'
HOST = 'instance=~"$host"'

# uid -> (title, short name for links)
DASHBOARDS = {
    "oracle-wallboard": "Oracle hosts: instance health wallboard",
    "oracle-capacity": "Oracle: capacity profile (now vs baseline)",
    "oracle-redo": "Oracle: redo and LGWR",
    "oracle-waits": "Oracle: wait events and latency histograms",
    "oracle-memory": "Oracle: PGA and host memory",
    "host-storage": "Host: storage and LUN queues",
    "host-cpu": "Host: CPU scheduling",
    "host-zfs": "Host: ZFS ARC and L2ARC",
    "oracle-signals": "Oracle: on-call signals (backups, undo, temp, alert log, global cache)",
}


def url(uid: str, with_database: bool = False, with_host: bool = False) -> str:
    """Link to a dashboard keeping the time range and data source; repeated tiles pass their value."""
    params = ["${__url_time_range}", "var-datasource=${datasource}"]
    if with_database:
        params.append("var-database=${database}")
    if with_host:
        params.append("var-host=${host}")
    return f"/d/{uid}/{uid}?" + "&".join(params)


def link(uid: str, title: str | None = None, **kw) -> db.DashboardLink:
    return (db.DashboardLink(title or DASHBOARDS[uid]).type(DashboardLinkType.LINK)
            .url(url(uid, **kw)).keep_time(False).include_vars(False).target_blank(False))


def dashboard_links(own_uid: str) -> list[db.DashboardLink]:
    """Every dashboard links back to the wallboard and to each of its siblings (explicit URLs)."""
    out = []
    for uid in DASHBOARDS:
        if uid == own_uid:
            continue
        out.append(db.DashboardLink(DASHBOARDS[uid]).type(DashboardLinkType.LINK)
                   .url(f"/d/{uid}/{uid}").keep_time(True).include_vars(True)
                   .icon("dashboard").tooltip(f"open {uid}"))
    return out


# ---------------------------------------------------------------- variables

def v_datasource() -> db.DatasourceVariable:
    return db.DatasourceVariable("datasource").label("Data source").type("prometheus")


def v_database() -> db.QueryVariable:
    return (db.QueryVariable("database").label("Database").datasource(DS)
            .query("label_values(oracle_up, database)")
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC)
            .multi(True).include_all(True).all_value(".+")
            .current(VariableOption(selected=True, text="All", value="$__all")))


def v_host(cfg: Config) -> db.QueryVariable:
    return (db.QueryVariable("host").label("Host").datasource(DS)
            .query(f'label_values(up{{{cfg.selector("dbhost", "node")}}}, instance)')
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC)
            .multi(True).include_all(True).all_value(".+")
            .current(VariableOption(selected=True, text="All", value="$__all")))


def v_query(name: str, label: str, query: str) -> db.QueryVariable:
    return (db.QueryVariable(name).label(label).datasource(DS).query(query)
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC)
            .multi(True).include_all(True).all_value(".+")
            .current(VariableOption(selected=True, text="All", value="$__all")))


# ---------------------------------------------------------------- queries



def q(expr: str, legend: str = "", ref: str = "A", instant: bool = False,
      fmt: PromQueryFormat | None = None) -> prometheus.Dataquery:
    t = prometheus.Dataquery().expr(expr).ref_id(ref).datasource(DS)
    if legend:
        t = t.legend_format(legend)
    t = t.instant() if instant else t.range()
    if fmt is not None:
        t = t.format(fmt)
    return t


def ms(t: Threshold) -> str:
    """A seconds threshold as panel text: '2 ms'."""
    return f"{t.colour_at * 1000:g} ms"


re_escape = fleetview.re_escape


# ---------------------------------------------------------------- thresholds

def steps(th, neutral: str = "green") -> db.ThresholdsConfig:
    """Threshold steps for one alert threshold or several tiers of one measure (e.g. I1, I1_red);
    the colour rule itself is mixin.fleetview.steps (the Grafana-free pages use it too)."""
    return (db.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE)
            .steps([Step(value, colour) for value, colour in fleetview.steps(th, neutral)]))


def steps_json(th: Threshold | None, neutral: str = "text") -> dict:
    return steps(th, neutral).build().to_json()


# ---------------------------------------------------------------- panels

def timeseries_panel(title: str, desc: str, unit: str, targets: Sequence[prometheus.Dataquery],
                     w: int = 12, h: int = 8, th: Threshold | None = None, stack: bool = False,
                     minimum: float | None = 0, links: Sequence[db.DashboardLink] = ()) -> timeseries.Panel:
    p = (timeseries.Panel().title(title).description(desc).datasource(DS).unit(unit)
         .span(w).height(h).targets(list(targets)).line_width(1).fill_opacity(10)
         .legend(cb.VizLegendOptions().display_mode(cm.LegendDisplayMode.TABLE)
                 .placement(cm.LegendPlacement.BOTTOM).show_legend(True).calcs(["mean", "max", "lastNotNull"]))
         .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING))
         .thresholds(steps(th)))
    if th is not None:
        p = p.thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED))
    if minimum is not None:
        p = p.min(minimum)
    if stack:
        p = p.stacking(cb.StackingConfig().mode(cm.StackingMode.NORMAL)).fill_opacity(40)
    if links:
        p = p.links(list(links))
    return p


def stat_panel(title: str, desc: str, unit: str, targets: Sequence[prometheus.Dataquery],
               w: int = 6, h: int = 5, th: Threshold | None = None, neutral: str = "blue",
               links: Sequence[db.DashboardLink] = ()) -> stat.Panel:
    p = (stat.Panel().title(title).description(desc).datasource(DS).unit(unit)
         .span(w).height(h).targets(list(targets))
         .color_mode(cm.BigValueColorMode.BACKGROUND).graph_mode(cm.BigValueGraphMode.NONE)
         .text_mode(cm.BigValueTextMode.VALUE_AND_NAME)
         .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
         .thresholds(steps(th, neutral)).no_value("no data"))
    if links:
        p = p.links(list(links))
    return p


def table_panel(title: str, desc: str, unit: str, targets: Sequence[prometheus.Dataquery],
                w: int = 24, h: int = 8, hide: Sequence[str] = ("Time",),
                rename: dict[str, str] | None = None) -> table.Panel:
    organize = {"excludeByName": {k: True for k in hide}, "renameByName": rename or {},
                "indexByName": {}}
    p = (table.Panel().title(title).description(desc).datasource(DS).unit(unit)
         .span(w).height(h).targets(list(targets)).decimals(3)
         .with_transformation(DataTransformerConfig(id_val="merge", options={}))
         .with_transformation(DataTransformerConfig(id_val="organize", options=organize))
         .cell_height(cm.TableCellHeight.SM))
    return p


def heatmap_panel(title: str, desc: str, unit: str, targets: Sequence[prometheus.Dataquery],
                  w: int = 12, h: int = 8) -> heatmap.Panel:
    from grafana_foundation_sdk.models import heatmap as hm
    return (heatmap.Panel().title(title).description(desc).datasource(DS).unit(unit)
            .span(w).height(h).targets(list(targets)).calculate(False)
            .y_axis(heatmap.YAxisConfig().unit(unit).decimals(4))
            .cell_values(heatmap.CellValues().unit("ops"))
            .color(heatmap.HeatmapColorOptions().mode(hm.HeatmapColorMode.SCHEME)
                   .scheme("Oranges").scale(hm.HeatmapColorScale.EXPONENTIAL).exponent(0.5).steps(64))
            .rows_frame(heatmap.RowsHeatmapOptions().layout(cm.HeatmapCellLayout.LE))
            .show_value(cm.VisibilityMode.NEVER))


def override_ref(p, ref: str, name: str | None = None, unit: str | None = None,
                 th: Threshold | None = None, neutral: str | None = None, mappings: list | None = None):
    props = []
    if name is not None:
        props.append(DynamicConfigValue(id_val="displayName", value=name))
    if unit is not None:
        props.append(DynamicConfigValue(id_val="unit", value=unit))
    if th is not None or neutral is not None:
        props.append(DynamicConfigValue(id_val="thresholds", value=steps_json(th, neutral or "green")))
    if mappings is not None:
        props.append(DynamicConfigValue(id_val="mappings", value=mappings))
    return p.override_by_query(ref, props)


def override_name(p, field: str, unit: str | None = None, th: Threshold | None = None,
                  neutral: str | None = None, colour_cells: bool = False):
    props = []
    if unit is not None:
        props.append(DynamicConfigValue(id_val="unit", value=unit))
    if th is not None or neutral is not None:
        props.append(DynamicConfigValue(id_val="thresholds", value=steps_json(th, neutral or "green")))
    if colour_cells:
        props.append(DynamicConfigValue(id_val="custom.cellOptions", value={"type": "color-text"}))
    return p.override_by_name(field, props)


def new_dashboard(uid: str, description: str, variables: Sequence, refresh: str = "30s",
                  time_from: str = "now-3h") -> db.Dashboard:
    d = (db.Dashboard(DASHBOARDS[uid]).uid(uid).description(description).tags([TAG])
         .time(time_from, "now").refresh(refresh).timezone("browser").editable()
         .tooltip(DashboardCursorSync.CROSSHAIR)
         .variables(list(variables)))
    for l in dashboard_links(uid):
        d = d.link(l)
    return d


def add_panels(d: db.Dashboard, panels) -> db.Dashboard:
    """Rows and panels in order (a db.Row starts a new row)."""
    for p in panels:
        d = d.with_row(p) if isinstance(p, db.Row) else d.with_panel(p)
    return d
