# Two entry points: `make run` (the whole stack on this machine, no Docker)
# and `make test` (every test). Both install what is missing first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := python3-venv prometheus prometheus-alertmanager prometheus-node-exporter victoria-metrics docker-compose fio sysstat
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test deps venv generate dashboards docs clean bench

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

test: deps venv
	$(PY) -m pytest -q tests

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
