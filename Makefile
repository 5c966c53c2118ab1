# One-command set-up: `make run` and `make test` work on a fresh machine.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
RUN_DIR ?= $(abspath .run)
PYTEST_ARGS ?=

.PHONY: helm deps binaries binaries-all lint unit integration e2e test test-stress run crds clean

deps: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

binaries: deps
	$(BIN)/python hack/build.py etcd kube-apiserver

binaries-all: deps
	$(BIN)/python hack/build.py --all

# helm v4 from the Go module proxy, for the chart tests
helm: deps
	$(BIN)/python hack/build_helm.py

lint: deps
	$(BIN)/ruff check kuberay tests hack $(wildcard examples)
	$(BIN)/mypy kuberay

unit: deps
	$(BIN)/pytest -q tests/unit $(PYTEST_ARGS)

integration: binaries
	$(BIN)/pytest -q tests/integration $(PYTEST_ARGS)

test: lint binaries-all helm
	$(BIN)/pytest -q tests/unit tests/integration tests/e2e $(PYTEST_ARGS)

# the test suite while busy loops keep every core loaded (tests must not race async writes)
test-stress: lint binaries-all helm
	$(BIN)/python hack/cpu_hog.py -- $(BIN)/pytest -q tests/unit tests/integration tests/e2e $(PYTEST_ARGS)

# the operator as a separate process against a full local cluster (KUBERAY_TEST_KUBECONFIG:
# against that cluster instead)
e2e: binaries-all
	$(BIN)/pytest -q tests/e2e $(PYTEST_ARGS)

# full local cluster + CRDs + RBAC + kuberay-operator in the foreground; Ctrl-C stops all
run: binaries-all
	$(BIN)/python hack/run.py --dir $(RUN_DIR)

clean:
	rm -rf $(VENV) .run .mypy_cache .ruff_cache .pytest_cache
