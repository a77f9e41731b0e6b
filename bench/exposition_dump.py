"""Dump both exporters' expositions over every demo recording and fixture tree, for refactors that
must not change the output: run it before and after (each in its own checkout) and diff the folders.

    .venv/bin/python -m bench.exposition_dump /tmp/before      # in the old checkout
    .venv/bin/python -m bench.exposition_dump /tmp/after       # in the new one
    diff -r /tmp/before /tmp/after && echo identical

Every snapshot of each exporters/oracle_exporter/demo/*.jsonl recording (up to 60 per database)
goes through the oracle exporter twice: default settings, and every opt-in collector plus the Idle
wait class on; once through ``registry()`` (the scrape path, prometheus_client's families encoded)
and once through ``exposition()`` (the HTTP path: each database rendered once per fetch) in the
text format 0.0.4 and in OpenMetrics 1.0.0. The golden, paths and variant dbhost fixture trees are scraped twice each. Lines
whose values are timings or the exporter's own process (durations, ages, process_*) are left out.
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from exporter_common.config import Fields
from exporter_common.exposition import encode_text, negotiate

VOLATILE = re.compile(r"^(oracle_scrape_duration|oracle_collector_duration|oracle_snapshot_age|oracle_view_query_duration"
                      r"|oracle_collector_cache_age|dbhost_collector_duration|process_|python_)")
ROOT = Path(__file__).resolve().parent.parent
HTTP_FORMATS = (("text", "text/plain;version=0.0.4"), ("openmetrics", "application/openmetrics-text;version=1.0.0"))


def _clean(text: bytes) -> str:
    out = []
    for line in text.decode().splitlines():
        name = line.split(" ", 3)[2] if line.startswith("#") and len(line.split(" ")) > 2 else line
        if not VOLATILE.match(name):
            out.append(line)
    return "\n".join(out)


def oracle(out: Path) -> None:
    from oracle_exporter.collectors import COLLECTORS
    from oracle_exporter.config import Settings, parse_settings
    from oracle_exporter.exporter import OracleExporter, Target
    from oracle_exporter.sources.replay import replay_sources
    everything = parse_settings(Fields("dump", "", {"collectors": {n: True for n in COLLECTORS},
                                                    "idle_wait_events": True}))
    from oracle_exporter import demo
    demo.ensure_all()       # the recordings are generated, not committed: without them nothing would be compared
    for rec in sorted((ROOT / "exporters/oracle_exporter/demo").glob("*.jsonl")):
        for variant, settings in (("default", Settings()), ("all", everything)):
            sources = replay_sources(str(rec))
            exporter = OracleExporter([Target(s.name, s) for s in sources], settings)
            try:
                scrapes = max(len(s.snapshots) for s in sources)
                text = "\n=====\n".join(_clean(encode_text(exporter.registry().collect())) for _ in range(min(scrapes, 60)))
            finally:
                exporter.close()
            (out / f"oracle-{rec.stem}-{variant}.prom").write_text(text)
            for kind, accept in HTTP_FORMATS:
                fmt, _ = negotiate(accept)
                sources = replay_sources(str(rec))
                exporter = OracleExporter([Target(s.name, s) for s in sources], settings)
                try:
                    text = "\n=====\n".join(_clean(exporter.exposition(fmt)) for _ in range(min(scrapes, 60)))
                finally:
                    exporter.close()
                (out / f"oracle-http-{rec.stem}-{variant}-{kind}.prom").write_text(text)


def dbhost(out: Path) -> None:
    from dbhost_exporter.cli import make_registry
    from dbhost_exporter.config import load_config
    from dbhost_exporter.demo import tree
    for kind, build in (("golden", tree.build_tree), ("paths", tree.build_paths_tree), ("variant", tree.build_variant_tree)):
        with tempfile.TemporaryDirectory() as d:
            fx = build(Path(d))
            registry = make_registry(load_config(str(fx.config)), str(fx.procfs), str(fx.sysfs))
            text = "\n=====\n".join(_clean(encode_text(registry.collect())) for _ in range(2))
        (out / f"dbhost-{kind}.prom").write_text(text)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    oracle(out)
    dbhost(out)
    print(f"{len(list(out.iterdir()))} files in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
