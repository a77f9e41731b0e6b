# Two entry points: `make run` (the whole stack on this machine, no Docker)
# and `make test` (every test, and ruff). Both install what is missing first.
# `make quick` is the inner loop (about a minute): ruff, the mixin's freshness check and the
# tests not marked e2e, kernel or slow (unit tests and the promtool rule tests).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := python3-venv prometheus prometheus-alertmanager prometheus-node-exporter victoria-metrics docker-compose fio sysstat chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: help run test quick lint deps venv generate dashboards docs reset clean bench demo

# `make help` prints every target with the text after its `##`
help: ## list the targets
	@awk -F':.*## ' '/^[a-z][a-z -]*:.*## /{printf "  make %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# Installs only what is missing and never touches a service (chromium: headless, for the browser
# tests of the wallboard and the capacity report in tests/fleetview): Debian's packages start
# their own prometheus (9090), prometheus-alertmanager (9093), prometheus-node-exporter
# (9100) and victoria-metrics (8428) services; `make run` uses its own 19xxx ports and
# runs next to them. What to do with those services is the host owner's choice (docs/stack.md).
deps: ## install the missing Debian packages (apt-get; no service is stopped or changed)
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo ">>> installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	else echo ">>> Debian packages present"; fi

$(VENV)/.installed: pyproject.toml
	@echo ">>> creating virtualenv $(VENV) and installing the project"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[test,dashboards]' \
	  || { echo ">>> pip failed; rerun with details: $(PY) -m pip install -e '.[test,dashboards]'"; exit 1; }
	@echo ">>> $(VENV) ready"
	@touch $@

venv: $(VENV)/.installed ## create .venv with the project (pip, quiet)

lint: venv ## ruff over the whole tree
	$(PY) -m ruff check .

# `make test` runs the tests in TEST_WORKERS pytest-xdist processes (TEST_WORKERS=0: one process,
# as plain pytest). --dist loadscope hands a worker whole modules, so a module-scoped fixture (a
# started stack, the promtool runs) is set up once; the longest modules go first (tests/conftest.py).
TEST_WORKERS ?= 2
test: deps venv lint ## run every test (ruff, unit, promtool, end-to-end) in TEST_WORKERS=2 processes
	$(PY) -m pytest -q --durations=25 -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder tests

# Markers (pyproject.toml): e2e starts real Prometheus/Alertmanager stacks, kernel uses loop
# devices and real process workloads, slow is any other test over a few seconds.
QUICK_MARKERS := not e2e and not kernel and not slow
quick: deps venv lint ## the fast loop (about 2 min): ruff, generation check, unit and promtool tests
	$(PY) -m mixin.generate --check
	$(PY) -m pytest -q -m "$(QUICK_MARKERS)" tests

# make run [DEMO=1] [RESUME=1] [ORACLE_CONFIG=path/to/oracle-exporter.yml] [DBHOST_CONFIG=...] [RUN_ARGS="--prometheus-port 29090 ..."]
run: deps venv ## start the stack on 127.0.0.1, fresh state (DEMO=1, RESUME=1, ORACLE_CONFIG=, DBHOST_CONFIG=, RUN_ARGS=)
	$(PY) -m stack.run $(if $(filter 1 yes true,$(DEMO)),--demo) $(if $(filter 1 yes true,$(RESUME)),--resume) $(if $(ORACLE_CONFIG),--oracle-config $(ORACLE_CONFIG)) $(if $(DBHOST_CONFIG),--dbhost-config $(DBHOST_CONFIG)) $(RUN_ARGS)

# Rules, promtool tests, docs/alerts.md, docs/thresholds.md and dashboards/json from the mixin
# (mixin/README.md). A site's pack: make generate MIXIN_CONFIG=site.yml [OUT=build/mixin]
OUT ?= build/mixin
generate: venv ## regenerate rules, promtool tests, alert docs, dashboards from the mixin
	$(PY) -m mixin.generate $(if $(MIXIN_CONFIG),--config $(MIXIN_CONFIG) --out $(OUT))

dashboards docs: generate ## same as generate

# The demo recordings are generated, never committed (the compose stacks mount them)
demo: venv ## write the demo recordings (exporters/oracle_exporter/demo/*.jsonl) that are missing
	$(PY) -m oracle_exporter.demo

# results go to build/bench/; BENCH_ARGS="--write-results" also rewrites bench/RESULTS.md
bench: venv ## run the benchmarks (results in build/bench/; BENCH_ARGS="--write-results" updates bench/RESULTS.md)
	$(PY) -m bench.run $(BENCH_ARGS)

# Refused while a `make run` holds .state/lock (flock): deleting a running stack's state would
# let a second run start beside it.
reset: ## delete the stack state (.state/: TSDB, notifications, logs); keeps .venv; refused while make run runs
	@if [ -e .state/lock ] && ! flock -n .state/lock true; then \
	  echo "make reset: a make run is using .state (pid $$(cat .state/lock 2>/dev/null)): stop it first (Ctrl-C)" >&2; exit 2; fi
	rm -rf .state

clean: ## delete .venv and .state (the next make run reinstalls the virtualenv)
	rm -rf $(VENV) .state
