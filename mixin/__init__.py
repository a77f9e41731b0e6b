"""The monitoring mixin: alert rules, promtool tests, docs and Grafana dashboards for Oracle
database hosts, rendered from one configuration (mixin.config) and one thresholds file
(alerts/thresholds.yaml). `make generate` (python -m mixin.generate) writes them; see
mixin/README.md."""
