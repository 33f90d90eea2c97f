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

# The usage kwctl shows is README.md (the Makefile's USAGE) verbatim, at most 16 KB.
@test "the usage text is README.md, at most 16 KB" {
  run kwctl inspect -o yaml "${POLICY:-annotated-policy.wasm}"
  [ "$status" -eq 0 ]
  usage=$(awk '/^  io\.kubewarden\.policy\.usage: [|]/ { u = 1; next }
    u && /^    / { print substr($0, 5); next }
    u && /^$/ { print ""; next }
    u { exit }' <<<"$output")
  [ -n "$usage" ] || { echo "no io.kubewarden.policy.usage in kwctl inspect"; return 1; }
  [ "$usage" = "$(cat README.md)" ] || { echo "the usage text is not README.md"; return 1; }
  size=$(printf '%s\n' "$usage" | wc -c)
  [ "$size" -le 16384 ] || { echo "usage: $size bytes, at most 16384"; return 1; }
}
