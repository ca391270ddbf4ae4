# The two README commands: `make run` and `make test`. Both install what they need first.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
LISTEN ?= 127.0.0.1:8888
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
BIN := $(BUILD_DIR)/bin/gpu-topology-extender

.PHONY: all deps fuzz-deps configure build run demo test unit e2e e2e-matrix e2e-failover e2e-control asan tsan fuzz thread-safety bench bench-e2e soak image image-test format format-check clean gpu-check

all: build

deps:
	@$(SUDO) scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BIN) serve --listen $(LISTEN) --policy config/scheduler-policy.yaml

# A local cluster to try the extender on (docs/getting-started.md): a real kube-apiserver and
# kube-scheduler (built from the upstream Go modules once, cached in build/e2e-bin), four GPU nodes
# the node agent makes from real captures, and a short story: a 4-GPU NVLink job, a MIG pod, a pod
# group, a pod that cannot fit, each with its node, GPUs and explanation. The cluster stays up
# until Ctrl-C (DEMO_ARGS=--once: it stops after the story).
DEMO_ARGS ?=
demo: build
	@PATH="$$PATH:/usr/local/go/bin" tests/e2e/hack/build-control-plane.sh
	@cd tests/e2e && PATH="$$PATH:/usr/local/go/bin" GOFLAGS="-mod=mod -buildvcs=false" \
	  go run ./cmd/demo $(DEMO_ARGS)

# Unit, golden wire and HTTP tests, then the end-to-end suite against a real kube-scheduler.
test: build
	@scripts/run-tests.sh $(BUILD_DIR)

unit: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

e2e: build
	@tests/e2e/run.sh

# The end-to-end suite against the control plane of every Kubernetes release of the support table
# (README.md, "Kubernetes versions"; each built once from the upstream Go modules, about 4 minutes,
# cached in build/e2e-matrix/). One line per release at the end; about as long as `make e2e` per
# release. E2E_MATRIX picks releases: make e2e-matrix E2E_MATRIX="v1.34.4 v1.37.2".
E2E_MATRIX ?=
e2e-matrix: build
	@PATH="$$PATH:/usr/local/go/bin" tests/e2e/hack/run-matrix.sh $(E2E_MATRIX)

# Failover figures for docs/operations.md: the ha modes' scenarios (standalone and sidecar layout)
# with FAILOVER_KILLS bursts of 500 GPU pods each (one kill of the leader per burst), printing the
# time without an answering leader, p50 and max, per signal (about 30 s per kill). `make e2e` runs
# one kill of each.
FAILOVER_KILLS ?= 5
FAILOVER_MODES ?= ha,ha-sidecar
e2e-failover: build
	@bash -o pipefail -c "GTE_E2E_MODES=$(FAILOVER_MODES) GTE_E2E_FAILOVER_KILLS=$(FAILOVER_KILLS) \
	  tests/e2e/run.sh -run 'TestE2E/ha' | grep -E '^e2e: (failover|logs)|--- FAIL|^E2E:'"

# The placement scenarios against a GPU-blind no-op extender: succeeds when every one of them
# fails (docs/testing.md, "Control mode"). A demonstration, not part of `make test`.
e2e-control:
	@GTE_E2E_CONTROL=noop tests/e2e/run.sh

# The sanitizer builds run the whole ctest suite, the chart checks included: helm goes into their
# build folder as `make test` puts it into build/ (the Go build cache makes the second build quick).
asan: deps
	@cmake --preset asan >/dev/null && cmake --build --preset asan -j $(JOBS)
	@HELM_BIN_DIR=build-asan/tools-bin scripts/build-helm.sh
	@ctest --preset asan -j $(JOBS)

tsan: deps
	@cmake --preset tsan >/dev/null && cmake --build --preset tsan -j $(JOBS)
	@HELM_BIN_DIR=build-tsan/tools-bin scripts/build-helm.sh
	@ctest --preset tsan -j $(JOBS)

# libFuzzer (clang, ASan + UBSan) over every parser that takes outside input, FUZZ_SECONDS per target
# (default 60); fails on any finding. docs/testing.md, "Fuzzing".
# Clang's thread-safety analysis (-Wthread-safety) over every file of src/, from the build's
# compile commands; nothing is built (docs/testing.md, "Thread safety"). About 75 s on two cores.
thread-safety: configure
	@scripts/check-thread-safety.sh $(BUILD_DIR)

fuzz-deps: deps
	@$(SUDO) scripts/install-fuzz-deps.sh

fuzz: fuzz-deps
	@JOBS=$(JOBS) scripts/run-fuzz.sh

# The placement-quality simulator runs on a synthetic workload; pass an openb trace to replay it:
#   make bench OPENB_PODS=path/openb_pod_list_multigpu50.csv OPENB_NODES=path/openb_node_list_gpu_node.csv
OPENB_PODS ?=
OPENB_NODES ?=
bench: build
	@for b in $(BUILD_DIR)/bin/bench_*; do echo "== $$b"; $$b; done
	@echo "== $(BUILD_DIR)/bin/gte_simulate (synthetic)"; $(BUILD_DIR)/bin/gte_simulate
	@if [ -n "$(OPENB_PODS)" ]; then echo "== $(BUILD_DIR)/bin/gte_simulate (openb)"; \
	  $(BUILD_DIR)/bin/gte_simulate --pods "$(OPENB_PODS)" --openb-nodes "$(OPENB_NODES)"; fi

# A fixed request rate with label churn for SOAK_MINUTES (bench/soak.py; docs/performance.md).
SOAK_MINUTES ?= 10
soak: build
	@bench/soak.py $(BIN) --minutes $(SOAK_MINUTES)

# Scheduling throughput behind a real kube-scheduler: 1,000 fake GPU nodes, bursts of 500 and 1,500
# one-GPU pods, kube-scheduler alone vs the extender in cache mode with and without bindVerb, at
# kube-scheduler's default client rate and at 500/s; two runs, medians (docs/performance.md, "End
# to end"). Takes 20-40 minutes on two cores; not part of `make test`. Narrow it with flags:
#   make bench-e2e BENCH_E2E_FLAGS='-nodes 200 -bursts 300 -configs alone,extender-bind -client-qps 0 -runs 1'
# `cd tests/e2e && go run ./cmd/bench-e2e -h` lists them; E2E_BIN_DIR picks the control plane.
BENCH_E2E_FLAGS ?=
bench-e2e: build
	@tests/e2e/hack/build-control-plane.sh
	@cd tests/e2e && PATH="$$PATH:/usr/local/go/bin" GOFLAGS="-mod=mod -buildvcs=false" \
	  go run ./cmd/bench-e2e -extender $(abspath $(BIN)) $(BENCH_E2E_FLAGS)

# The container image from the Dockerfile, with no registry: a Debian base made from the archive
# (mmdebstrap), buildah, an OCI archive in build/image/ (scripts/build-image.sh). Needs root.
# image-test also starts it and checks it (tests/image/check-image.sh; docs/testing.md,
# "Container image"); CI runs it after `make test`.
image:
	@$(SUDO) env JOBS=$(JOBS) scripts/build-image.sh

image-test: image
	@$(SUDO) tests/image/check-image.sh

# On a machine with an NVIDIA GPU and driver: the node agent's discovery and health pass once on the
# real NVML (labels, per-GPU health with the reason, NVLink counters). Builds the agent if needed;
# exits 2 with a clear message where there is no driver (scripts/gpu-check.sh; docs/agent.md).
gpu-check:
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) scripts/gpu-check.sh

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

format-check:
	@git ls-files '*.h' '*.cpp' | xargs clang-format --dry-run --Werror

clean:
	@rm -rf $(BUILD_DIR) build-asan build-tsan build-debug build-fuzz
