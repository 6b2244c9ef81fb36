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

.PHONY: help run demo certs venv testbin browser test unit integration e2e lint fmt bench clean

help:
	@echo "make run          the manager in the foreground: against \$$KUBECONFIG if set, else on a local"
	@echo "                  cluster (kwok nodes; NODES=8 GPU nodes in 2 spines x 2 racks, NODES=0 none)"
	@echo "make demo         make run + the example gang Deployment; prints where it landed, stays up"
	@echo "make test         unit + integration tests against a real control plane"
	@echo "make lint         ruff, ruff format --check, mypy --strict, import-linter"
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
	$(PY) -m devcluster.devrun --nodes=$(NODES)

demo: $(STAMP) testbin
	$(PY) -m devcluster.devrun --demo --nodes=$(NODES)

certs: $(STAMP)
	$(PY) -m webhooks.certs --out certs/

# The topology view's browser tests (tests/integration/ui) drive Debian's headless Chromium.
# Installed here when missing and we may (root, or passwordless sudo); otherwise a warning, and
# those tests fail with the same install hint (they never skip).
CHROMIUM_PKGS := chromium chromium-driver
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CHROMIUM_PKGS); \
	elif sudo -n true 2>/dev/null; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CHROMIUM_PKGS); \
	else echo "WARNING: chromium missing and no root: the browser tests will fail;" \
	  "install with: sudo apt-get install -y $(CHROMIUM_PKGS)" >&2; fi

# pytest exits 5 when it collected nothing; that is only acceptable for an empty selection,
# so scripts/pytest-run reports it loudly instead of passing silently.
test: $(STAMP) testbin browser
	$(PY) -m tests.run tests/unit tests/integration $(PYTEST_ARGS)

unit: $(STAMP)
	$(PY) -m tests.run tests/unit $(PYTEST_ARGS)

integration: $(STAMP) testbin browser
	$(PY) -m tests.run tests/integration $(PYTEST_ARGS)

e2e: $(STAMP) testbin
	$(PY) -m tests.run tests/e2e $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP) testbin
	$(PY) -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
