"""``make run DEMO=1``: the whole product on any machine, alerts within minutes.

On an ordinary VM the host half of the product has nothing to show (a virtio
disk, no SAN LUNs, no ZFS, no Oracle processes) and the Oracle alerts need their
full ``for:`` (10-15 min) before anything fires. Demo mode adds, next to the
usual stack:

* a **demo database host** on 127.0.0.2 (its own ``instance``, relabelled to the replayed
  database's host name, dbhost01, whose instance DEMO1 it runs and whose redo LUN writes in
  11.8 ms, field notes R1 "before", so the R1 page leads to host evidence): a generated
  sysfs/procfs tree (``dbhost_exporter.demo.tree``: multipath redo/data LUNs,
  NVMe, a local disk, ZFS ARC/L2ARC, the processes of three Oracle instances)
  whose counters an animator component advances every second (``animate``
  below, ``advance_tree``); ``dbhost-demo`` (dbhost-exporter) and ``node-demo``
  (node_exporter, diskstats only, so LUN latency joins ``dbhost_lun_info``)
  serve it on 127.0.0.2 with the normal ports;
* **demo alert rules**: a copy of the alert pack in ``.state/demo/rules/`` with
  every ``for:`` longer than ``--demo-for`` (default 1m) shortened to it, and the
  case study's worst finding (field notes R1, slow LGWR redo writes: 11.8 ms
  against 2 ms, "I/O subsystem, 50 %" of what mattered) raised to
  ``severity: critical``, so the demo also goes through the pager route. Every
  changed alert says so in an annotation ``demo`` ("make run DEMO=1: ..."): the
  repository's alerts/ stay untouched.

stack.run prints when the first alerts should fire and each notification the
webhook receives.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import configs

DEMO_HOST = "127.0.0.2"
DEFAULT_FOR = "1m"
# The case study's worst finding pages in demo mode (see the module docstring).
PAGED_FIELD_NOTE = "R1"
DEMO_ANNOTATION = "demo"


@dataclass
class DemoRules:
    """What demo_rules changed: {alert: original for} and the alerts raised to critical."""
    shortened: dict[str, str] = field(default_factory=dict)
    paged: list[str] = field(default_factory=list)
    max_for: str = DEFAULT_FOR


def demo_rules(source_dir: Path, dest_dir: Path, max_for: str = DEFAULT_FOR,
               paged_field_note: str = PAGED_FIELD_NOTE) -> DemoRules:
    """Write the demo copy of every rule file of source_dir into dest_dir (see module docstring)."""
    cap = configs.duration_seconds(max_for)
    out = DemoRules(max_for=max_for)
    dest_dir.mkdir(parents=True, exist_ok=True)
    for name in configs.RULE_FILES:
        doc = configs.load(source_dir / name) or {}
        for group in doc.get("groups") or []:
            for rule in group.get("rules") or []:
                if "alert" not in rule:
                    continue
                notes = []
                if "for" in rule and configs.duration_seconds(rule["for"]) > cap:
                    notes.append(f"for: {rule['for']} shortened to {max_for}")
                    out.shortened[rule["alert"]] = rule["for"]
                    rule["for"] = max_for
                labels = rule.setdefault("labels", {})
                if labels.get("field_note") == paged_field_note and labels.get("severity") != "critical":
                    notes.append(f"severity {labels.get('severity')} raised to critical (the case study's "
                                 f"worst finding, {paged_field_note}, pages in the demo)")
                    labels["severity"] = "critical"
                    if rule["alert"] not in out.paged:
                        out.paged.append(rule["alert"])
                if notes:
                    rule.setdefault("annotations", {})[DEMO_ANNOTATION] = "make run DEMO=1: " + "; ".join(notes)
        configs.dump(doc, dest_dir / name)
    return out


# The case study's "before" (field notes R1): LGWR redo writes took 11.8 ms. The demo host's
# redo LUN shows it, so the R1 page leads to host evidence (the tree's default, which the
# tests use, is a healthy 0.5 ms).
DEMO_REDO_WRITE_SECONDS = 0.0118
# The demo host runs this instance (renamed from the tree's ORCL, whose LGWR has R14's 30 %
# involuntary switches) and is labelled with this host name, both from the replayed recording.
TREE_SID = "ORCL"


def recording_identity(recording: Path) -> tuple[str, str] | None:
    """(host name, instance name) of the first instance in the recording's first snapshot
    (GV$INSTANCE), e.g. ("dbhost01", "DEMO1"); None if it has none."""
    import json
    try:
        with open(recording, encoding="utf-8") as f:
            first = json.loads(f.readline())
        row = (first.get("views") or {}).get("GV$INSTANCE")[0]
        host, sid = str(row["HOST_NAME"]).split(".")[0], str(row["INSTANCE_NAME"])
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    return (host, sid) if host and sid and len(f"ora_lgwr_{sid}") <= 15 else None


def demo_disk_step() -> dict:
    """The tree's per-step disk I/O with the redo LUN's paths (and so its multipath map)
    writing in DEMO_REDO_WRITE_SECONDS."""
    from dataclasses import replace
    from dbhost_exporter.demo import tree
    steps = dict(tree.DISK_STEP)
    redo = next(dm for dm in tree.DMS if dm.name == "dm-0")
    for path in redo.slaves:
        steps[path] = replace(steps[path], write_ms=round(steps[path].writes * DEMO_REDO_WRITE_SECONDS * 1000))
    steps[redo.name] = tree.DiskStep(*(sum(getattr(steps[p], f) for p in redo.slaves)
                                       for f in tree.DiskStep.__dataclass_fields__))
    return steps


def rename_instance(root: Path, old: str, new: str) -> int:
    """Rename an Oracle instance's processes in a demo tree (every file of every process and
    thread that carries the name: comm, cmdline, stat, status, sched: ora_lgwr_ORCL ->
    ora_lgwr_DEMO1); the number of files changed."""
    n = 0
    for path in (root / "proc").glob("[0-9]*/**/*"):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old.encode() in data:
            path.write_bytes(data.replace(old.encode(), new.encode()))
            n += 1
    return n


def first_alert_seconds(scrape_s: float, eval_s: float, for_s: float) -> float:
    """Roughly when the first alerts fire after Prometheus starts: two scrapes before a
    rate() has a value, one evaluation of the recording rules, then ``for`` and the
    evaluation that notices it has passed."""
    return 2 * scrape_s + eval_s + for_s + eval_s


def build_host(dest: Path, sid: str | None = None):
    """A fresh demo host tree at dest (step 0), its ORCL instance renamed to `sid` if given;
    returns its Fixture."""
    from dbhost_exporter.demo import tree
    if dest.exists():
        shutil.rmtree(dest)
    fx = tree.build_tree(dest)
    if sid and sid != TREE_SID:
        rename_instance(fx.root, TREE_SID, sid)
    return fx


def fixture_at(root: Path):
    """The Fixture of a tree build_host wrote (paths as build_tree lays them out)."""
    from dbhost_exporter.demo import tree
    return tree.Fixture(root, root / "proc", root / "sys", root / "kstat_p.txt", root / "dbhost-exporter.yml")


def animate(root: Path, interval: float, stop_after: float | None = None, sid: str | None = None) -> int:
    """Advance the tree's counters to step n = seconds since start, every ``interval``
    seconds (one step is one second of the generator's per-step rates), until killed."""
    from dbhost_exporter.demo import tree
    fx = fixture_at(root)
    t0 = time.monotonic()
    steps = demo_disk_step()
    print(f"animating {root}: one step per second, files rewritten every {interval:g}s; redo LUN writes "
          f"{DEMO_REDO_WRITE_SECONDS * 1000:g} ms", flush=True)
    while stop_after is None or time.monotonic() - t0 < stop_after:
        tree.advance_tree(fx, int(time.monotonic() - t0), steps,
                          (TREE_SID, sid) if sid and sid != TREE_SID else None)
        time.sleep(interval)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stack.demo", description="make run DEMO=1's demo host")
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("animate", help="advance a demo host tree's counters (runs until killed)")
    a.add_argument("tree", help="a tree written by build_host (dbhost_exporter.demo.tree.build_tree)")
    a.add_argument("--interval", type=float, default=1.0, help="seconds between rewrites (default 1)")
    a.add_argument("--sid", default=None, help=f"the instance the tree's {TREE_SID} was renamed to (build_host)")
    args = p.parse_args(argv)
    root = Path(args.tree)
    if not (root / "proc" / "diskstats").is_file():
        print(f"error: {root} is not a demo host tree (no proc/diskstats)", file=sys.stderr)
        return 2
    try:
        return animate(root, args.interval, sid=args.sid)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
