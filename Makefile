# vm-maintenance-strategy: Kubewarden policy targets.
SHELL := /bin/bash
CARGO ?= cargo
TARGET := wasm32-wasip1
WASM := target/$(TARGET)/release/vm_maintenance_strategy.wasm
REQUEST ?=
SETTINGS ?=
SOURCES := Cargo.toml Cargo.lock $(shell find src -name '*.rs')

.PHONY: setup run test unit-tests e2e-tests e2e-tests-kwctl doc-commands fmt fmt-check lint bench clean
.PHONY: setup-registry tools-tests wasm-tests push pull artifacthub-pkg.yml

# Shipping (docs/releasing.md): OCI=registry://HOST/REPO:TAG, OUT=FILE,
# INSECURE="HOST:PORT ..." (registries reached over plain HTTP).
OCI ?=
OUT ?=
INSECURE ?=
# A policy-tools binary (annotate, oci, artifacthub): the one `make test` built (TOOLS=target/debug),
# else `cargo run`, which alone would build the crate's dependencies again with other features.
TOOLS ?=
POLICY_TOOL = $(if $(TOOLS),$(TOOLS)/$(1),$(CARGO) run -q -p policy-tools --bin $(1) --)
INSECURE_FLAGS = $(foreach registry,$(INSECURE),--insecure $(registry))

# What a fresh machine lacks: the wasm target and wasm-opt (Debian's binaryen); the registry is
# installed by setup-registry.
setup:
	@rustup target list --installed | grep -qx $(TARGET) || rustup target add $(TARGET)
	@command -v wasm-opt >/dev/null || { \
		echo "installing binaryen (wasm-opt)"; \
		sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends binaryen; }

# wasm-opt (Debian's binaryen) shrinks the module by about a fifth; every test runs on its output.
WASM_OPT_FLAGS := -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
	--enable-nontrapping-float-to-int

policy.wasm: $(SOURCES) | setup
	$(CARGO) build --release --target $(TARGET) -p vm-maintenance-strategy
	wasm-opt $(WASM_OPT_FLAGS) $(WASM) -o policy.wasm
	@echo "policy.wasm: $$(stat -c %s policy.wasm) bytes ($$(stat -c %s $(WASM)) before wasm-opt)"

# Embeds policy-metadata.yml and USAGE (section io.kubewarden.metadata): kwctl when it is on
# PATH, else tools/ (same metadata, but kwctl adds its io.kubewarden.kwctl version). USAGE is the
# usage text `kwctl inspect` and Artifact Hub show: the policy's user documentation, at most 16 KB
# (tools/src/project.rs names the same file; tools/tests check both).
USAGE := README.md
USAGE_MAX_BYTES := 16384
annotated-policy.wasm: policy.wasm policy-metadata.yml $(USAGE) Cargo.toml
	@size=$$(stat -c %s $(USAGE)); [ "$$size" -le $(USAGE_MAX_BYTES) ] || { \
		echo "$(USAGE): $$size bytes; the usage text may have at most $(USAGE_MAX_BYTES)" >&2; exit 1; }
	@if command -v kwctl >/dev/null; then \
		kwctl annotate -m policy-metadata.yml -u $(USAGE) -o $@ policy.wasm; \
	else \
		$(call POLICY_TOOL,annotate) -m policy-metadata.yml -u $(USAGE) -o $@ policy.wasm; \
	fi

# Pushes annotated-policy.wasm and prints the immutable reference (REPO@sha256:...).
push: annotated-policy.wasm
	@test -n "$(OCI)" || { echo "usage: make push OCI=registry://HOST/REPO:TAG [INSECURE=HOST:PORT]" >&2; exit 2; }
	@$(call POLICY_TOOL,oci) $(INSECURE_FLAGS) push annotated-policy.wasm $(OCI)

# Signatures in cosign's format (docs/releasing.md): KEY=cosign.key (password in
# COSIGN_PASSWORD), PUB=cosign.pub, ANNOTATIONS="KEY=VALUE ...", OCI=registry://HOST/REPO@sha256:...
KEY ?=
PUB ?=
ANNOTATIONS ?=
ANNOTATION_FLAGS = $(foreach annotation,$(ANNOTATIONS),-a $(annotation))
.PHONY: keygen sign verify

# The SBOM of the module's dependencies (SPDX 2.3 JSON) from Cargo's metadata, by cargo-sbom;
# attached to the release beside policy.wasm, checked by the tools' tests.
CARGO_SBOM_VERSION = 0.10.0
policy.spdx.json: Cargo.toml Cargo.lock
	@cargo sbom --version 2>/dev/null | grep -q "$(CARGO_SBOM_VERSION)" || $(CARGO) install --locked cargo-sbom --version $(CARGO_SBOM_VERSION)
	$(CARGO) sbom --cargo-package vm-maintenance-strategy --output-format spdx_json_2_3 > $@.tmp && mv $@.tmp $@
keygen:
	@test -n "$(KEY)" -a -n "$(PUB)" || { echo "usage: make keygen KEY=cosign.key PUB=cosign.pub (password: COSIGN_PASSWORD)" >&2; exit 2; }
	@$(call POLICY_TOOL,oci) keygen $(KEY) $(PUB)

sign:
	@test -n "$(OCI)" -a -n "$(KEY)" || { echo "usage: make sign OCI=registry://HOST/REPO@sha256:... KEY=cosign.key [ANNOTATIONS=K=V] [INSECURE=HOST:PORT]" >&2; exit 2; }
	@$(call POLICY_TOOL,oci) $(INSECURE_FLAGS) sign --key $(KEY) $(ANNOTATION_FLAGS) $(OCI)

verify:
	@test -n "$(OCI)" -a -n "$(PUB)" || { echo "usage: make verify OCI=registry://HOST/REPO@sha256:... PUB=cosign.pub [ANNOTATIONS=K=V] [INSECURE=HOST:PORT]" >&2; exit 2; }
	@$(call POLICY_TOOL,oci) $(INSECURE_FLAGS) verify --key $(PUB) $(ANNOTATION_FLAGS) $(OCI)

# Writes the module of OCI (a tag or @sha256:... digest) to OUT.
pull:
	@test -n "$(OCI)" -a -n "$(OUT)" || { echo "usage: make pull OCI=registry://HOST/REPO:TAG|@sha256:... OUT=FILE [INSECURE=HOST:PORT]" >&2; exit 2; }
	@$(call POLICY_TOOL,oci) $(INSECURE_FLAGS) pull -o $(OUT) $(OCI)

# Regenerated from the metadata, questions-ui.yml and the version (createdAt kept while the
# version is unchanged); committed, and checked by `make test`.
artifacthub-pkg.yml:
	$(call POLICY_TOOL,artifacthub) -m policy-metadata.yml -q questions-ui.yml --keep-created-at $@ -o $@.tmp
	mv $@.tmp $@

# Evaluates REQUEST (AdmissionRequest or AdmissionReview, JSON or YAML; default: a bundled
# sample) with optional SETTINGS (the settings, or a policy manifest holding them in
# spec.settings) on the built module, like `kwctl run`. stdout is the AdmissionReview alone (the
# builds are quiet, on stderr); the decoded patch goes to stderr. Anything but an answer exits 1
# (make then reports 2). EVALUATE: an evaluate binary already built (make test passes one).
run:
	@$(MAKE) -s --no-print-directory policy.wasm >&2
	@$(or $(EVALUATE),$(CARGO) run -q -p e2e-tests --bin evaluate --) $(REQUEST) \
		$(if $(SETTINGS),--settings $(SETTINGS))

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

# One clippy run over every crate and target (the bench feature brings e2e-tests' benchmark in),
# then the policy crate as the module is built (wasm32-wasip1).
lint: setup
	$(CARGO) clippy --workspace --all-targets --features e2e-tests/bench -- -D warnings
	$(CARGO) clippy --target $(TARGET) -p vm-maintenance-strategy -- -D warnings

unit-tests:
	$(CARGO) test -p vm-maintenance-strategy -p cluster-model

e2e-tests: policy.wasm
	$(CARGO) test -p policy-host -p e2e-tests

# The same cases through kwctl, for people who have kwctl, bats and jq (`make test` runs it, or says
# why it skipped). EVALUATE: an evaluate binary already built (else `cargo run` builds one).
EVALUATE ?=
e2e-tests-kwctl:
	@if command -v kwctl >/dev/null && command -v bats >/dev/null && command -v jq >/dev/null; then \
		$(MAKE) annotated-policy.wasm && EVALUATE=$(EVALUATE) e2e-tests/kwctl/run; \
	else \
		echo "e2e-tests-kwctl: skipped, it needs kwctl, bats and jq on PATH (the wasm e2e suite runs in 'make test')"; \
	fi

# The registry the OCI round trip pushes to: Debian's docker-registry (CNCF distribution).
setup-registry:
	@command -v docker-registry >/dev/null || { \
		echo "installing docker-registry (the OCI round-trip test needs it)"; \
		sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends docker-registry; }

# Annotation, metadata, artifacthub-pkg.yml, questions-ui.yml, examples, registry round trip.
tools-tests: policy.wasm setup-registry
	$(CARGO) test -p policy-tools

# Every test crate in one cargo run: built apart, the crates would resolve different features
# for crates they share (serde_json, smallvec, tokio, ...) and build them, wasmtime among them,
# more than once.
TEST_CRATES := -p vm-maintenance-strategy -p cluster-model -p policy-host -p e2e-tests \
	-p policy-tools -p kubectl-vm-maintenance
wasm-tests: policy.wasm setup-registry policy.spdx.json
	$(CARGO) test $(TEST_CRATES)

# Every command of README.md, CONTRIBUTING.md and docs/*.md (their ```sh blocks) run from the
# repository root and its exit code checked, unless marked `# needs: ...` (CONTRIBUTING.md,
# "Documented commands"). PLUGIN, EVALUATE: binaries already built (else the script builds them).
PLUGIN ?=
doc-commands: policy.wasm
	@PLUGIN=$(PLUGIN) EVALUATE=$(EVALUATE) TOOLS=$(TOOLS) tests/doc-commands

# e2e-tests-kwctl and doc-commands reuse the evaluate and plugin binaries that wasm-tests built with
# the workspace's features (a `cargo run` of one alone would build wasmtime a second time).
# wasm-tests runs the unit tests too. Each phase's time is printed at the end
# (target/test-phases.txt).
TEST_PHASES := setup setup-registry fmt-check wasm-tests doc-commands e2e-tests-kwctl lint
test:
	@mkdir -p target && : > target/test-phases.txt
	@for phase in $(TEST_PHASES); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$phase EVALUATE=target/debug/evaluate \
			PLUGIN=target/debug/kubectl-vm_maintenance TOOLS=target/debug || exit 1; \
		echo "make test: $$phase $$(( $$(date +%s) - start )) s" >> target/test-phases.txt; \
	done
	@cat target/test-phases.txt

# The benchmark table in BENCHMARKS.md: native, warm and fresh-instance evaluation per scenario,
# module size, compile time, peak memory; PEER=psa_label_enforcer.wasm adds the peer's rows.
PEER ?=
# `panic = unwind`: the bench harness needs it, and the package's bins (built alongside) would
# otherwise build the policy crate a second time with `abort`, to the same unhashed cdylib/rlib name.
bench: policy.wasm
	CARGO_PROFILE_BENCH_LTO=false CARGO_PROFILE_BENCH_CODEGEN_UNITS=16 CARGO_PROFILE_BENCH_OPT_LEVEL=3 \
		CARGO_PROFILE_BENCH_PANIC=unwind \
		POLICY_BENCH_PEER=$(PEER) $(CARGO) bench -p policy-bench --bench table

# The real tools, ours against the peer, interleaved rounds (BENCHMARKS.md "kwctl bench and
# policy-server"): `kwctl bench`, then a policy-server serving both with `wrk` POSTing for 10 s.
# PEER: psa-label-enforcer (kubewarden/policies) built for wasm32-wasip1 and annotated
# (`kwctl annotate -m metadata.yml`: policy-server refuses a module without metadata). ROUNDS=3.
ROUNDS ?= 3
.PHONY: bench-kwctl
bench-kwctl: annotated-policy.wasm
	@for tool in kwctl policy-server wrk; do command -v $$tool >/dev/null || { echo "bench-kwctl: needs $$tool on PATH (kwctl, policy-server: Kubewarden 1.36 releases; wrk: apt-get install wrk)" >&2; exit 2; }; done
	@test -n "$(PEER)" || { echo "usage: make bench-kwctl PEER=psa_label_enforcer.annotated.wasm [ROUNDS=3]" >&2; exit 2; }
	$(CARGO) run -q -p policy-bench --bin kwctl-requests -- target/bench-kwctl
	bench/kwctl.sh target/bench-kwctl $(CURDIR)/annotated-policy.wasm $(abspath $(PEER)) $(ROUNDS) | tee target/bench-kwctl/section.md
	bench/policy-server.sh target/bench-kwctl $(CURDIR)/annotated-policy.wasm $(abspath $(PEER)) $(ROUNDS) | tee -a target/bench-kwctl/section.md

# The previews at cluster scale (BENCHMARKS.md "Previews at cluster scale"): the plugin as
# `make install-plugin` builds it, on generated clusters of SIZES VMs over 50 nodes (policy-bench's
# cluster-dump), ROUNDS interleaved rounds; wall time and peak memory of every preview and sync.
SIZES ?= 1000 5000
.PHONY: bench-previews
bench-previews: policy.wasm
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) build -q --locked -p kubectl-vm-maintenance --profile plugin --bin kubectl-vm_maintenance
	bench/previews.sh target/bench-previews target/plugin/kubectl-vm_maintenance $(ROUNDS) $(SIZES)

# Fuzzing (nightly, cargo-fuzz; not part of `make test`): each target for FUZZ_TIME seconds, one
# after the other, seeded by `make fuzz-corpus` (the e2e cases and fixtures) and fuzz/regressions/.
# No sanitizer (`-s none`): the policy is safe Rust, and ASan costs 7x the executions.
FUZZ_TIME ?= 60
FUZZ_TARGETS ?= validate validate_structured settings
.PHONY: fuzz fuzz-corpus
fuzz-corpus:
	$(CARGO) run -q -p policy-bench --bin fuzz-corpus -- fuzz/corpus

fuzz: fuzz-corpus
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		mkdir -p corpus/$$t regressions/$$t && \
		nice -n 10 cargo +nightly fuzz run -s none $$t corpus/$$t regressions/$$t -- \
			-max_total_time=$(FUZZ_TIME) -print_final_stats=1 || exit 1; \
	done

# A thin alias of the kubectl plugin (docs/kubectl-vm-maintenance.md) on saved objects, built
# with the current policy.wasm: `kubectl vm-maintenance ARGS -f FILE...` for FILES (the output of
# `kubectl get vm,vmi,pods,nodes,pvc,pv,kubevirt -A -o json`, JSON or YAML). ARGS is the plugin's
# command line, `drain` when empty or when it starts with neither drain, maintenance nor upgrade:
#   make audit FILES=examples/cluster-dump.json                  # the drain preview
#   make audit FILES=examples/cluster-dump.json ARGS="-o json"   # the same, for scripts
#   make audit FILES=examples/cluster-maintenance-dump.json ARGS="maintenance harvester-node-1"
#   make audit FILES=examples/cluster-maintenance-dump.json ARGS="upgrade"
# Only the plugin's output is on stdout (builds are quiet, on stderr). The plugin exits 0 when
# nothing blocks, 2 when something does, 3 when a VM may stay off, 1 on bad input; make exits 0
# when it does, else prints "make: *** [Makefile:N: audit] Error CODE" and exits 2 itself.
FILES ?=
ARGS ?=
AUDIT_COMMAND = $(if $(filter drain maintenance upgrade,$(firstword $(ARGS))),$(ARGS),drain $(ARGS))
.PHONY: audit
audit:
	@test -n "$(FILES)" || { echo 'usage: make audit FILES="cluster.json ..." [ARGS="maintenance NODE"]' >&2; exit 1; }
	@$(MAKE) -s --no-print-directory policy.wasm >&2
	@$(or $(PLUGIN),$(CARGO) run -q -p kubectl-vm-maintenance --bin kubectl-vm_maintenance --) \
		$(AUDIT_COMMAND) $(foreach file,$(FILES),-f $(file))

# The kubectl plugin (docs/kubectl-vm-maintenance.md): `kubectl-vm_maintenance` in PREFIX/bin,
# with the policy module built in, so that `kubectl vm-maintenance` works from any folder.
PREFIX ?= $(HOME)/.local
PLUGIN_VERSION = $(shell sed -n 's/^version = "\(.*\)"/\1/p' kubectl-vm-maintenance/Cargo.toml | head -1)
PLUGIN_ARCHIVE = target/kubectl-vm_maintenance-v$(PLUGIN_VERSION)-linux-amd64.tar.gz
.PHONY: install-plugin plugin-archive
install-plugin: policy.wasm
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) install --locked --path kubectl-vm-maintenance --profile plugin \
		--bin kubectl-vm_maintenance --root $(PREFIX) --force

# The release archive krew downloads, and its sha256 into plugins/vm-maintenance.yaml.
plugin-archive: policy.wasm
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) build --locked -p kubectl-vm-maintenance --profile plugin --bin kubectl-vm_maintenance
	tar -czf $(PLUGIN_ARCHIVE) -C target/plugin kubectl-vm_maintenance
	sha=$$(sha256sum $(PLUGIN_ARCHIVE) | cut -d' ' -f1) && \
		sed -i "s/sha256: .*/sha256: $$sha/" plugins/vm-maintenance.yaml
	@echo "$(PLUGIN_ARCHIVE): upload it as the release's asset; plugins/vm-maintenance.yaml names its sha256"

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm
