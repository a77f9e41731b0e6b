"""fleetview: the fleet wallboard and the capacity report, without Grafana (issue 25).

What the pages show is generated from the mixin (mixin/fleetview.py -> spec.json by
`make generate`), so they read the same figures, thresholds and states as the Grafana
wallboard and capacity dashboard."""
