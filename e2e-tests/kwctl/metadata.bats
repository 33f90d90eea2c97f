#!/usr/bin/env bats
# The metadata kwctl reads from annotated-policy.wasm (run by e2e-tests/kwctl/run, `make
# e2e-tests-kwctl`, beside one generated test per e2e case).

# `kwctl inspect -o yaml` prints the embedded metadata as serde_yaml writes it (no JSON output).
has_line() {
  grep -Eqx "[[:space:]]*(- )?$1" <<<"$output" || { echo "missing in kwctl inspect: $1"; return 1; }
}

@test "protocol version and metadata are embedded" {
  run kwctl inspect -o yaml "${POLICY:-annotated-policy.wasm}"
  [ "$status" -eq 0 ]
  has_line "protocolVersion: '?v1'?"
  has_line "mutating: true"
  has_line "executionMode: kubewarden-wapc"
  has_line "- virtualmachines"
  has_line "- kubevirts"
  has_line "- CREATE"
  has_line "- UPDATE"
  has_line "apiVersion: kubevirt.io/v1"
  has_line "kind: KubeVirt"
  has_line "kind: PersistentVolumeClaim"
  has_line "- kubernetes/list_resources_all"
  has_line "- kubernetes/get_resource"
  has_line "io.kubewarden.policy.title: vm-maintenance-strategy"
}
