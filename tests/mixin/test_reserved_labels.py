"""No metric of either exporter declares a label Prometheus sets on every scraped series itself.

``job`` and ``instance`` are the target's labels: an exported ``job`` label is stored as
``exported_job`` (honor_labels: false, the default) and the alert's ``$labels.job`` then names the
scrape job ("Scheduler job APP.oracle"), or, with honor_labels: true, it overwrites the target's
job and the series leaves every ``job=`` selector. ``__``-prefixed names are reserved for internal
use, ``le`` / ``quantile`` belong to histograms and summaries."""
from __future__ import annotations

from dbhost_exporter.collectors import SPECS as DBHOST_SPECS
from oracle_exporter.collectors import SPECS as ORACLE_SPECS

RESERVED = {"job", "instance", "le", "quantile"}


def reserved_labels(specs) -> list[str]:
    return sorted(f"{spec.name}: {fam.name}{{{label}}}"
                  for spec in specs for fam in spec.metrics for label in fam.labels
                  if label in RESERVED or label.startswith("__") or label.startswith("exported_"))


def test_no_metric_of_either_exporter_declares_a_target_label():
    assert reserved_labels(ORACLE_SPECS) + reserved_labels(DBHOST_SPECS) == []


def test_the_check_sees_every_family_of_both_exporters():
    """The check reads the declarations it means to: the scheduler job metrics, whose job name is a
    label, and a dbhost family are among them."""
    labels = {fam.name: fam.labels for specs in (ORACLE_SPECS, DBHOST_SPECS) for spec in specs
              for fam in spec.metrics}
    assert labels["oracle_scheduler_job_failures"] == ("container", "owner", "job_name")
    assert labels["oracle_scheduler_job_last_error_code"] == ("container", "owner", "job_name")
    assert "device" in labels["dbhost_lun_inflight_requests"]
