# Two entry points: `make run` (the whole stack on this machine, no Docker)
# and `make test` (every test, and ruff). Both install what is missing first.
# `make quick` is the inner loop (about a minute): ruff, the mixin's freshness check and the
# tests not marked e2e, kernel or slow (unit tests and the promtool rule tests).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := python3-venv prometheus prometheus-alertmanager prometheus-node-exporter victoria-metrics docker-compose fio sysstat
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test quick lint deps venv generate dashboards docs clean bench

deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo ">>> installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	  for svc in prometheus prometheus-alertmanager prometheus-node-exporter victoria-metrics; do \
	    $(SUDO) systemctl disable --now $$svc >/dev/null 2>&1 || true; done; \
	else echo ">>> Debian packages present"; fi

$(VENV)/.installed: pyproject.toml
	@echo ">>> creating virtualenv $(VENV) and installing the project"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install --progress-bar off -e '.[test,dashboards]'
	@touch $@

venv: $(VENV)/.installed

lint: venv
	$(PY) -m ruff check .

test: deps venv lint
	$(PY) -m pytest -q tests

# Markers (pyproject.toml): e2e starts real Prometheus/Alertmanager stacks, kernel uses loop
# devices and real process workloads, slow is any other test over a few seconds.
QUICK_MARKERS := not e2e and not kernel and not slow
quick: deps venv lint
	$(PY) -m mixin.generate --check
	$(PY) -m pytest -q -m "$(QUICK_MARKERS)" tests

# make run [DEMO=1] [ORACLE_CONFIG=path/to/oracle-exporter.yml] [DBHOST_CONFIG=...] [RUN_ARGS="--prometheus-port 29090 ..."]
run: deps venv
	$(PY) -m stack.run $(if $(filter 1 yes true,$(DEMO)),--demo) $(if $(ORACLE_CONFIG),--oracle-config $(ORACLE_CONFIG)) $(if $(DBHOST_CONFIG),--dbhost-config $(DBHOST_CONFIG)) $(RUN_ARGS)

# Rules, promtool tests, docs/alerts.md, docs/thresholds.md and dashboards/json from the mixin
# (mixin/README.md). A site's pack: make generate MIXIN_CONFIG=site.yml [OUT=build/mixin]
OUT ?= build/mixin
generate: venv
	$(PY) -m mixin.generate $(if $(MIXIN_CONFIG),--config $(MIXIN_CONFIG) --out $(OUT))

dashboards docs: generate

bench: venv
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) .state
