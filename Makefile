# volcano-py developer entry points. Everything a fresh machine needs is installed from here:
# the virtualenv, the Python dependencies and (for the real control plane) the test binaries,
# which are built once from the Go module proxy into ~/.cache/volcano-py/testbin.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# make run NODES=0: a local cluster without nodes (default: 8 GPU nodes, 2 spines x 2 racks)
NODES ?= 8
# make run CLUSTER=existing: against $KUBECONFIG's cluster; CLUSTER=local: always a local one;
# auto (default): local, refusing a $KUBECONFIG that make run did not create
CLUSTER ?= auto
# 0: a free port; a taken one stops make run at once, naming it
WEBHOOK_PORT ?= 0
METRICS_PORT ?= 0
# make run MANAGER_ARGS='--controllers=*,-job-controller': more `volcano-py manager` flags
MANAGER_ARGS ?=

.PHONY: help run demo certs venv testbin browser test unit integration e2e lint fmt bench clean

help:
	@echo "make run          the manager in the foreground on a local cluster (CLUSTER=existing: against"
	@echo "                  \$$KUBECONFIG's cluster; a \$$KUBECONFIG make run did not create is refused)"
	@echo "                  (kwok nodes; NODES=8 GPU nodes in 2 spines x 2 racks, NODES=0 none;"
	@echo "                  MANAGER_ARGS='--controllers=*,-job-controller': more manager flags)"
	@echo "make demo         make run + the example gang Deployment; prints where it landed, stays up"
	@echo "make test         unit + integration tests against a real control plane"
	@echo "make lint         ruff (complexity included), ruff format --check, mypy --strict, import-linter, vulture"
	@echo "make unit         unit tests only (no control plane)"
	@echo "make testbin      build/cache etcd, kube-apiserver, kube-controller-manager, kubectl, kwok"
	@echo "make browser      install headless Chromium + chromedriver (Debian) for tests/integration/ui"
	@echo "make bench        run the benchmarks under bench/"

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,lint]'
	touch $@

venv: $(STAMP)

testbin: $(STAMP)
	$(PY) -m devcluster.provision

run: $(STAMP) testbin
	$(PY) -m devcluster.devrun --nodes=$(NODES) --cluster=$(CLUSTER) \
	  --webhook-port=$(WEBHOOK_PORT) --metrics-port=$(METRICS_PORT) \
	  --manager-args='$(MANAGER_ARGS)'

demo: $(STAMP) testbin
	$(PY) -m devcluster.devrun --demo --nodes=$(NODES) \
	  --webhook-port=$(WEBHOOK_PORT) --metrics-port=$(METRICS_PORT)

certs: $(STAMP)
	$(PY) -m webhooks.certs --out certs/

# The topology view's browser tests (tests/integration/ui) drive Debian's headless Chromium.
# Installed here when missing and we may (root, or passwordless sudo); otherwise a warning, and
# those tests fail with the same install hint (they never skip). apt waits up to 10 minutes
# for dpkg's lock when another install (unattended-upgrades, a second make) holds it.
CHROMIUM_PKGS := chromium chromium-driver
APT_GET := apt-get -o DPkg::Lock::Timeout=600
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq $(CHROMIUM_PKGS); \
	elif sudo -n true 2>/dev/null; then sudo $(APT_GET) update -qq && sudo DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq $(CHROMIUM_PKGS); \
	else echo "WARNING: chromium missing and no root: the browser tests will fail;" \
	  "install with: sudo apt-get install -y $(CHROMIUM_PKGS)" >&2; fi

# pytest exits 5 when it collected nothing; that is only acceptable for an empty selection,
# so scripts/pytest-run reports it loudly instead of passing silently.
test: $(STAMP) testbin browser
	$(PY) -m tests.run tests/unit tests/integration $(PYTEST_ARGS)

# the slowest ten are a report (unit tests are fast), never a failure: see tests/conftest.py
unit: $(STAMP)
	$(PY) -m tests.run tests/unit --durations=10 $(PYTEST_ARGS)

integration: $(STAMP) testbin browser
	$(PY) -m tests.run tests/integration $(PYTEST_ARGS)

e2e: $(STAMP) testbin
	$(PY) -m tests.run tests/e2e $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/vulture volcano_py webhooks tests bench $(wildcard devcluster) vulture_whitelist.py --min-confidence 60

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP) testbin
	$(PY) -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
