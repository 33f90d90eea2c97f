# vm-maintenance-strategy: Kubewarden policy targets.
SHELL := /bin/bash
CARGO ?= cargo
TARGET := wasm32-wasip1
WASM := target/$(TARGET)/release/vm_maintenance_strategy.wasm
REQUEST ?=
SETTINGS ?=
SOURCES := Cargo.toml Cargo.lock $(shell find src -name '*.rs')

.PHONY: setup run test unit-tests e2e-tests e2e-tests-kwctl fmt fmt-check lint bench clean

# What a fresh machine lacks: the wasm target (Debian packages are installed where a target needs them).
setup:
	@rustup target list --installed | grep -qx $(TARGET) || rustup target add $(TARGET)

policy.wasm: $(SOURCES) | setup
	$(CARGO) build --release --target $(TARGET) -p vm-maintenance-strategy
	cp $(WASM) policy.wasm
	@echo "policy.wasm: $$(stat -c %s policy.wasm) bytes"

# Needs kwctl (https://docs.kubewarden.io): embeds policy-metadata.yml and the README.
annotated-policy.wasm: policy.wasm policy-metadata.yml README.md
	kwctl annotate -m policy-metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

# Evaluates REQUEST (AdmissionRequest or AdmissionReview, JSON or YAML; default: a bundled
# sample) with optional SETTINGS on the built module, like `kwctl run`.
run: policy.wasm
	$(CARGO) run -q -p e2e-tests --bin evaluate -- $(REQUEST) $(SETTINGS)

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

lint: setup
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p e2e-tests --all-targets --features bench -- -D warnings
	$(CARGO) clippy --target $(TARGET) -p vm-maintenance-strategy -- -D warnings

unit-tests:
	$(CARGO) test -p vm-maintenance-strategy

e2e-tests: policy.wasm
	$(CARGO) test -p e2e-tests

# The same cases through kwctl, for people who have kwctl, bats and jq.
e2e-tests-kwctl:
	@if command -v kwctl >/dev/null && command -v bats >/dev/null && command -v jq >/dev/null; then \
		$(MAKE) annotated-policy.wasm && bats e2e-tests/kwctl.bats; \
	else \
		echo "e2e-tests-kwctl: skipped, it needs kwctl, bats and jq on PATH (the wasm e2e suite runs in 'make test')"; \
	fi

test: setup fmt-check unit-tests e2e-tests lint

# Time per evaluation on the wasm module (fresh instance per request, as policy-server does).
bench: policy.wasm
	$(CARGO) bench -p e2e-tests --features bench --bench evaluate

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm
