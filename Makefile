# One-command set-up: `make run` and `make test` work on a fresh machine.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
RUN_DIR ?= $(abspath .run)
PYTEST_ARGS ?=
# `make run` runs real Ray: the real node alone where the machine allows it (root), else kwok
# fake nodes (one line says why). NODES=kwok: fake nodes only; NODES=real: the real node or an
# error; NODES=both. The older spellings still work: REAL_NODES=1 (a real node next to the kwok
# nodes), REAL_NODES_ONLY=1 (the real node alone).
NODES ?=
REAL_NODES ?= 0
REAL_NODES_ONLY ?= 0
# `make run HISTORY_SERVER=1`: also a local S3 store for the history server's collector
# (settings in $(RUN_DIR)/object-store.env), the history server over it on 127.0.0.1 (its URL
# printed and in $(RUN_DIR)/history-server.url) and the operator's RayClusterHistoryServer gate
HISTORY_SERVER ?= 0
# `make run` also starts KubeRay's API server on 127.0.0.1 in caller mode (its URL and the
# `kubectl create token` line for it are printed; URL in $(RUN_DIR)/apiserver.url); APISERVER=0: not
APISERVER ?= 1
RUN_FLAGS := $(if $(NODES),--nodes $(NODES)) \
	$(if $(filter-out 0,$(REAL_NODES)),--real-nodes $(REAL_NODES)) \
	$(if $(filter-out 0,$(REAL_NODES_ONLY)),--real-nodes 1 --real-nodes-only) \
	$(if $(filter-out 0,$(HISTORY_SERVER)),--history-server) \
	$(if $(filter 0,$(APISERVER)),--no-apiserver)

.PHONY: browser-deps plugin dist helm kueue cert-manager scheduler-plugins traefik e2e-gateway storage-servers go-components-background third-party-crds deps binaries binaries-all node-deps images lint docs unit integration e2e test test-stress run crds clean dashboard-screenshots

deps: $(VENV)/.installed

# the runtime dependencies at the versions requirements/runtime.lock pins (the image's)
$(VENV)/.installed: pyproject.toml requirements/runtime.lock
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements/runtime.lock -e '.[dev]'
	touch $@

binaries: deps
	$(BIN)/python hack/build/build.py etcd kube-apiserver

binaries-all: deps
	$(BIN)/python hack/build/build.py --all

# the real node's Debian packages (containerd, runc, CNI plugins, iptables, debootstrap)
node-deps:
	$(PY) hack/node_deps.py

# Debian's chromium, for the tests that load Ray's dashboard UI in a headless browser
browser-deps:
	$(PY) hack/node_deps.py --browser

# container images built here (pause, Ray, the operator, the API server, the history server and its
# collector) into ~/.cache/kuberay/images
images: deps node-deps binaries-all
	$(BIN)/python hack/release/images.py pause ray ray-new operator apiserver collector server

# release artifacts, flat in dist/ (hack/release/dist.py; docs/install.md): wheel + sdist, the charts
# + index.yaml, the images as OCI archives, the CRD bundle, the manifests, a CycloneDX SBOM,
# SHA256SUMS. A `plugin` target, when the Makefile has one, runs first (its artifacts are summed
# too).
dist: deps helm
	rm -rf dist
	@if grep -q '^plugin:' Makefile; then $(MAKE) plugin; fi
	$(BIN)/python hack/release/images.py operator apiserver collector server
	$(BIN)/python hack/release/dist.py --out dist

# helm v4 from the Go module proxy, for the chart tests
helm: deps
	$(BIN)/python hack/build/build_helm.py

# the scheduler-plugins scheduler + PodGroup controller (v0.33.5) from the Go module proxy,
# for the e2e gang-scheduling tests; built once into ~/.cache/kuberay/bin
scheduler-plugins: deps
	$(BIN)/python hack/build/build_scheduler_plugins.py

# Traefik (a Gateway API implementation) from the Go module proxy, cached in
# ~/.cache/kuberay/traefik-<version> (make test builds it in the background)
traefik: deps
	$(BIN)/python hack/build/build_traefik.py

# third-party CRDs from their Go modules (cert-manager, Gateway API, Kueue, volcano, scheduler-plugins), into ~/.cache/kuberay
third-party-crds: deps
	$(BIN)/python hack/build/fetch_crds.py

# Kueue's controller manager from the Go module proxy (once, cached in ~/.cache/kuberay/kueue-<version>),
# for tests/integration/kueue
kueue: deps
	$(BIN)/python hack/build/build_kueue.py

# cert-manager's controller (self-signed + CA loops of v1.19.4, our main in hack/cert-manager)
# from the Go module proxy, cached in ~/.cache/kuberay/cert-manager-v1.19.4; for
# tests/integration/mtls/test_mtls_real_cert_manager.py and tests/e2e/test_mtls_real.py (real Ray
# over mTLS on the real node). make test builds it in the background
# (nice 19, one package at a time: 879 s beside a loaded machine) and requires it
cert-manager: deps
	$(BIN)/python hack/build/build_cert_manager.py

# the history server's storage test servers: fake-gcs-server (GCS emulator, v1.56.1 from the Go
# module proxy, ~2.5 min cold) into ~/.cache/kuberay/fake-gcs-server-<version> and Azurite
# (Azure Blob emulator, npm, ~20 s) into ~/.cache/kuberay/azurite-<version>; moto (S3) comes
# with the dev extra. make test starts them in the background (go-components-background) and
# tests/integration/historyserver/storage waits for them
storage-servers: deps
	$(BIN)/python hack/build/install_azurite.py
	$(BIN)/python hack/build/build_fake_gcs_server.py

# kubectl ray's release artifacts (offline, from this tree and .venv): the wheel, the single-file
# zipapp dist/kubectl-ray.pyz, its krew archive and the krew manifest dist/krew/ray.yaml
plugin: deps
	$(BIN)/python hack/release/plugin_dist.py --out dist

lint: deps
	$(BIN)/ruff check kuberay tests hack $(wildcard examples)
	$(BIN)/mypy kuberay
	$(BIN)/lint-imports
	$(BIN)/pytest -q -p no:cacheprovider tests/unit/lint  # one home per rule, files <= 600 lines
	$(BIN)/python hack/docs/gen_docs.py --check
	$(BIN)/python hack/release/lock.py --check  # the image's dependency lock is current
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict 2>&1 | grep -v '^INFO' ; test $${PIPESTATUS[0]} -eq 0

# the dashboard's screenshots in docs/images/ (docs/dashboard-ui.md): its browser tests, on a fresh
# control plane, with KUBERAY_DASHBOARD_SCREENSHOTS=1
dashboard-screenshots: binaries browser-deps
	KUBERAY_DASHBOARD_SCREENSHOTS=1 KUBERAY_REQUIRE_BROWSER=1 $(BIN)/pytest -q tests/integration/apiserver/test_dashboard_browser.py tests/integration/apiserver/test_dashboard_create.py $(PYTEST_ARGS)

# the docs site (MkDocs + Material) into site/; docs/reference/ is generated by hack/docs/gen_docs.py
docs: deps
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

unit: deps
	$(BIN)/pytest -q tests/unit $(PYTEST_ARGS)

integration: binaries third-party-crds go-components-background
	KUBERAY_REQUIRE_CERT_MANAGER=1 $(BIN)/pytest -q tests/integration $(PYTEST_ARGS)

# third-party controllers built from the Go module proxy (Kueue, cert-manager, Prometheus, Traefik,
# scheduler-plugins) and the history server's storage emulators (Azurite, fake-gcs-server;
# tests/integration/historyserver runs before kueue), in the order the suite needs them, started in
# the background so a first build overlaps the tests; a test needing one waits for its build
# (each build holds a lock in its cache dir) and builds it itself if the background one failed
go-components-background: deps
	$(BIN)/python hack/build/build_in_background.py install_azurite.py build_fake_gcs_server.py build_kueue.py build_cert_manager.py build_prometheus.py build_traefik.py build_scheduler_plugins.py

test: lint binaries-all helm images browser-deps third-party-crds go-components-background
	KUBERAY_REQUIRE_CERT_MANAGER=1 KUBERAY_REQUIRE_BROWSER=1 $(BIN)/pytest -q tests/unit tests/integration tests/e2e $(PYTEST_ARGS)

# the test suite while busy loops keep every core loaded (tests must not race async writes)
test-stress: lint binaries-all helm images browser-deps third-party-crds go-components-background
	KUBERAY_REQUIRE_CERT_MANAGER=1 KUBERAY_REQUIRE_BROWSER=1 $(BIN)/python hack/benchmarks/cpu_hog.py -- $(BIN)/pytest -q tests/unit tests/integration tests/e2e $(PYTEST_ARGS)

# the operator as a separate process against a full local cluster (KUBERAY_TEST_KUBECONFIG:
# against that cluster instead)
e2e: binaries-all images third-party-crds go-components-background
	$(BIN)/pytest -q tests/e2e $(PYTEST_ARGS)

# full local cluster + CRDs + RBAC + kuberay-operator in the foreground; Ctrl-C stops all
run: binaries-all third-party-crds
	$(BIN)/python hack/cluster/run.py --dir $(RUN_DIR) $(RUN_FLAGS)

clean:
	rm -rf $(VENV) .run site .mypy_cache .ruff_cache .pytest_cache

# opt-in (not part of `make test`): a real-Ray RayService incremental upgrade through a real
# Traefik Gateway on the real node, counting failed requests (docs/rayservice.md)
e2e-gateway: binaries-all images third-party-crds traefik
	$(BIN)/pytest -q tests/e2e/test_rayservice_incremental_real.py $(PYTEST_ARGS)
