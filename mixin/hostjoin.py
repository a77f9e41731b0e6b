"""The join of host-exporter series (per `instance`, `sid`) with Oracle's instances
(oracle_instance_info: `database`, INSTANCE_NAME, HOST_NAME), shared by the dashboards, the
wallboards, the capacity report and the recording rules (rev-views #1).

A SID is unique per host only, and hosts are often named alike per site (a Data Guard pair
PROD1 on db01.dc1.example.com and PROD1 on db01.dc2.example.com). So the join takes the host's
full identity where both sides have it, and the short name only where one side has nothing
more:

* exact: the host target's `instance` (the host part of its address, as the scrape configs set
  it; a `:port` is dropped) or node_exporter's `node_uname_info{nodename}` of that instance (the
  host's uname nodename, which is what Oracle reports as GV$INSTANCE.HOST_NAME) equals HOST_NAME;
* short, only where no exact match exists for the host series: a short `instance` (no dot)
  equals HOST_NAME up to its first dot, or a short HOST_NAME (no dot) equals `instance` up to its
  first dot;
* cut, only where neither matched: both up to their first dot (db01.example.com against
  db01.localdomain, a trailing dot).

Each side is made unique per join key (host key, sid) before the join, in every tier: a key that
names two host targets, or two databases, is dropped (the figure stays empty, never another host's or an error:
Prometheus refuses a many-to-many match with HTTP 422, which took the whole fleet wallboard
down). Two databases whose HOST_NAMEs are the same short name and whose hosts carry only that
short name are indistinguishable by the host: they get no host figures.
"""
from __future__ import annotations

# node_exporter's uname of each host-exporter `instance`, where exactly one nodename is known
_NODE = 'group by (instance, nodename) (last_over_time(node_uname_info[3m]))'
NODENAME = f'({_NODE} unless on (instance) (count by (instance) ({_NODE}) > 1))'

# (name, label_replace source label, regex) of the host side's keys; a regex that does not match
# leaves the series without `host`, and no Oracle key is empty, so it matches nothing
_HOST_KEYS = {
    "full": ("instance", r"([^:]+)(?::[0-9]+)?"),
    "short_only": ("instance", r"([^.:]+)(?::[0-9]+)?"),    # a short instance (no dot)
    "short_cut": ("instance", r"([^.:]+).*"),               # any instance, up to the first dot
}
_INFO_KEYS = {
    "full": r"(.+)",
    "short_only": r"([^.]+)",                               # a short HOST_NAME (no dot)
    "short_cut": r"([^.]+).*",                              # any HOST_NAME, up to the first dot
}
# (host key, Oracle key) pairs: exact first, then the short-name fallback where one side is short,
# then, last, both sides cut to their short names (db01.example.com against db01.localdomain; a
# trailing dot): every tier only for what the tiers before it did not match
EXACT = [("full", "full"), ("node", "full")]
SHORT = [("short_only", "short_cut"), ("short_cut", "short_only")]
CUT = [("short_cut", "short_cut")]


def host_key(expr: str, key: str) -> str:
    """Host-side series with `host` = one of their identities; a (host, sid) key that names two host
    targets is dropped (db01.dc1 and db01.dc2 are both db01 cut short, and both may report the
    nodename db01): never another host's figure. node_exporter's `nodename` is not kept (the
    exact tiers must give one series per host series, or a sum over them counts it twice)."""
    if key == "node":
        keyed = (f'label_replace(label_replace(({expr}) * on (instance) group_left (nodename) {NODENAME}, '
                 f'"host", "$1", "nodename", "(.+)"), "nodename", "", "nodename", ".*")')
    else:
        src, rx = _HOST_KEYS[key]
        keyed = f'label_replace(({expr}), "host", "$1", "{src}", "{rx}")'
    return (f"({keyed} unless on (host, sid) "
            f"(count by (host, sid) (group by (instance, host, sid) ({keyed})) > 1))")


def info_key(info: str, key: str, keep: str = "database") -> str:
    """Oracle instances (group by `keep`, INSTANCE_NAME, HOST_NAME of `info`) as (`keep`, sid,
    host), a (host, sid) of two databases dropped."""
    keyed = (f'label_replace(label_replace(group by ({keep}, instance_name, host_name) ({info}), '
             f'"sid", "$1", "instance_name", "(.+)"), "host", "$1", "host_name", "{_INFO_KEYS[key]}")')
    return (f"({keyed} unless on (host, sid) "
            f"(count by (host, sid) (group by (database, host, sid) ({keyed})) > 1))")


def _drop_host(expr: str) -> str:
    return f'label_replace({expr}, "host", "", "host", ".*")'


def _tiers(part, on: str) -> str:
    exact = " or ".join(part(h, i) for h, i in EXACT)
    short = " or ".join(part(h, i) for h, i in SHORT)
    cut = " or ".join(part(h, i) for h, i in CUT)
    return (f"(({exact}) or (({short}) unless on ({on}) ({exact}))"
            f" or (({cut}) unless on ({on}) (({exact}) or ({short}))))")


def to_database(expr: str, info: str, carry: str = "database") -> str:
    """Host-side series (by instance, sid, ...) with the `database` (`carry`: the labels of
    oracle_instance_info taken over) of their Oracle instance."""
    def part(hk, ik):
        return _drop_host(f"{host_key(expr, hk)} * on (host, sid) group_left ({carry}) {info_key(info, ik, carry)}")
    return _tiers(part, "instance, sid")


def to_instance(info: str, keep: str, host_expr: str) -> str:
    """Oracle instances (by `keep`, e.g. the target labels, database, inst_id) with the value of
    their host-side series (worst of the sid's series on that host)."""
    def part(hk, ik):
        return _drop_host(f"{info_key(info, ik, keep)} * on (sid, host) group_left () "
                          f"max by (sid, host) ({host_key(host_expr, hk)})")
    return _tiers(part, keep)
