"""The Grafana dashboards of the pack, as code: one module per family of boards, each
`build(cfg)` returning a grafana-foundation-sdk Dashboard builder; build.build_all renders them."""
