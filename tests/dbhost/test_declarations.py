"""Issue 21 item 1: every dbhost-exporter family and setting is declared once (a ``SPEC`` per
collector module and one for the exporter itself), and the declarations are the truth.

* The exporter run on the fixture trees (golden, paths, variant, and the golden one read
  through an illumos ``zfs.kstat_file``) exposes only declared families, each with exactly
  its declared type, help text and label names (in order).
* Every declared family appears on at least one tree, or is listed in NOT_ON_ANY_TREE with
  the reason it cannot.
* The registry (config switches, factories, ``SPECS``) is one list; the config defaults and
  ``--help`` are the declared ones."""
from __future__ import annotations

import dataclasses
import subprocess

import pytest

import make_fixtures as mf
from dbhost_support import EXPORTER, REPO

from exporter_common.config import ConfigError
from exporter_common.declare import Collector, Family
from dbhost_exporter import cli, collectors, config, scrape
from dbhost_exporter.collectors import SPECS, lun

# Declared families no fixture tree can show, with the reason. (Empty today: every family
# appears on one of the trees below. An entry here must say why, e.g. "needs an illumos kstat".)
NOT_ON_ANY_TREE: dict[str, str] = {}

SCRAPES = 2   # counters such as dbhost_lun_samples_total need a second scrape for their next value


def _declared() -> dict[str, Family]:
    """{prometheus_client family name (no _total / _info): declaration}."""
    out: dict[str, Family] = {}
    for spec in SPECS:
        for fam in spec.metrics:
            assert fam.family_name not in out, f"{fam.name} declared twice"
            out[fam.family_name] = fam
    return out


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> dict[str, tuple[str, str, str]]:
    """name -> (procfs, sysfs, config file)."""
    root = tmp_path_factory.mktemp("decl")
    golden = mf.build_tree(root / "golden", with_proc=True)
    kstat_cfg = root / "kstat.yml"
    kstat_cfg.write_text(f"zfs:\n  kstat_file: {golden.kstat_file}\n")
    out = {"golden": (golden.procfs, golden.sysfs, golden.config),
           "golden-illumos-kstat": (golden.procfs, golden.sysfs, kstat_cfg)}
    for name, build in (("paths", mf.build_paths_tree), ("variant", mf.build_variant_tree)):
        fx = build(root / name)
        out[name] = (fx.procfs, fx.sysfs, fx.config)
    return {k: tuple(str(p) for p in v) for k, v in out.items()}


@pytest.fixture(scope="module")
def exposed(trees) -> dict[str, list]:
    """tree -> the families the exporter yields (every scrape), as the encoders get them."""
    out = {}
    for name, (procfs, sysfs, cfg_file) in trees.items():
        registry = cli.make_registry(config.load_config(cfg_file), procfs, sysfs)
        fams = []
        for _ in range(SCRAPES):
            fams.extend(registry.collect())
        out[name] = fams
    return out


def test_every_exposed_family_is_declared_with_its_type_help_and_labels(exposed):
    declared = _declared()
    for tree, fams in exposed.items():
        for metric in fams:
            fam = declared.get(metric.name)
            assert fam is not None, f"{tree}: {metric.name} ({metric.type}) is exposed but not declared"
            assert metric.type == fam.type, f"{tree}: {fam.name} is a {metric.type}, declared {fam.type}"
            assert metric.documentation == fam.help, f"{tree}: {fam.name} help differs from the declaration"
            assert metric.unit == fam.unit, f"{tree}: {fam.name} unit {metric.unit!r}, declared {fam.unit!r}"
            for sample in metric.samples:
                assert sample.name in fam.series, f"{tree}: sample {sample.name} of {fam.name}"
                assert tuple(sample.labels) == fam.labels, \
                    f"{tree}: {fam.name} has labels {tuple(sample.labels)}, declared {fam.labels}"


def test_every_declared_family_appears_on_a_tree(exposed):
    seen = {m.name for fams in exposed.values() for m in fams if m.samples}
    declared = _declared()
    missing = sorted(f.name for n, f in declared.items() if n not in seen and f.name not in NOT_ON_ANY_TREE)
    assert not missing, f"declared but on no fixture tree (add a tree or list it with a reason): {missing}"
    stale = sorted(set(NOT_ON_ANY_TREE) - {f.name for f in declared.values()})
    assert not stale, f"NOT_ON_ANY_TREE names undeclared families: {stale}"
    assert all(reason.strip() for reason in NOT_ON_ANY_TREE.values())


def test_the_registry_is_one_list_of_the_collector_modules_specs():
    names = tuple(collectors.MODULES)
    assert names == ("lun", "zfs", "process", "memory")     # scrape order
    assert tuple(s.name for s in SPECS) == names + ("exporter",)
    assert SPECS[-1] is scrape.SPEC
    assert config.COLLECTORS == names
    assert tuple(cli.FACTORIES) == names
    assert tuple(m.SPEC for m in collectors.modules()) == SPECS[:-1]
    for spec in SPECS:
        assert isinstance(spec, Collector) and spec.exporter == "dbhost-exporter" and spec.help
        if spec.name != "exporter":
            assert spec.reads, f"collector {spec.name} declares no files it reads"
        for fam in spec.metrics:
            assert fam.name.startswith("dbhost_"), fam.name
            assert fam.source, f"{fam.name} has no source"


def test_config_defaults_are_the_declared_ones(tmp_path):
    (tmp_path / "empty.yml").write_text("{}\n")
    for cfg in (config.load_config(None), config.load_config(str(tmp_path / "empty.yml")),
                config.DbhostConfig()):
        assert cfg.max_series == scrape.SPEC.default("max_series") == config.DEFAULT_MAX_SERIES
        assert cfg.collectors == {s.name: not s.opt_in for s in SPECS[:-1]}
        assert set(cfg.settings) == set(config.COLLECTORS)
        for spec in SPECS[:-1]:
            assert set(cfg.settings[spec.name]) == {s.key for s in spec.settings}
        got = cfg.lun
        assert got == lun.LunConfig()
        assert got.include_types == frozenset(lun.SPEC.default("include_types")) == lun.DEFAULT_KINDS
        assert got.identity_refresh_seconds == lun.SPEC.default("identity_refresh_seconds")
        assert got.default_role == lun.SPEC.default("default_role")
        assert got.roles == []
        assert cfg.extra_groups == [] and cfg.zfs_kstat_file is None
    # LunConfig's own fields are the lun settings, by name
    assert {f.name for f in dataclasses.fields(lun.LunConfig)} == {s.key for s in lun.SPEC.settings}


def test_each_collector_section_takes_exactly_its_declared_settings(tmp_path):
    for spec in SPECS[:-1]:
        cfg = tmp_path / f"{spec.name}.yml"
        cfg.write_text(f"{spec.name}:\n  no_such_setting: 1\n")
        with pytest.raises(ConfigError) as exc:
            config.load_config(str(cfg))
        # every collector has its section (one without settings takes no key): the key is named
        assert f"{cfg}: {spec.name}.no_such_setting: unknown field" in str(exc.value)
        if not spec.settings:
            assert "(nothing is configured here)" in str(exc.value)


def test_help_lists_every_collector_and_setting_with_its_default():
    res = subprocess.run([*EXPORTER, "--help"], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert res.returncode == 0, res.stderr
    text = " ".join(res.stdout.split())
    for spec in SPECS[:-1]:
        assert f" {spec.name} (on): {' '.join(spec.help.split())}" in text
        for s in spec.settings:
            assert f"{spec.name}.{s.key} (default {s.shown_default}):" in text
    for s in scrape.SPEC.settings:
        assert f" {s.key} (default {s.shown_default}):" in text
    assert "max_series (default 50000)" in text and "lun.identity_refresh_seconds (default 300)" in text
