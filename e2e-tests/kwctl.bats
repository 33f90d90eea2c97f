#!/usr/bin/env bats
# The data-driven e2e cases (e2e-tests/cases/*.yaml) through kwctl, the way Kubewarden policies are
# usually tested. Run with `make e2e-tests-kwctl` (needs kwctl >= 1.35, bats and jq). The cases are
# exported by the evaluate tool, so this file and the wasm suite read the same data; a case with a
# `cluster:` runs with `--allow-context-aware --replay-host-capabilities-interactions` on the
# session of the calls it made on the e2e host (a `denyAll` cluster: a grant without any
# kubernetes capability), so kwctl answers exactly what the e2e host answered.

setup_file() {
  export CASES="$BATS_FILE_TMPDIR/cases"
  # EVALUATE: an evaluate binary already built (make test passes the one its wasm tests built).
  if [ -n "${EVALUATE:-}" ]; then
    "$EVALUATE" --export-cases "$CASES"
  else
    cargo run -q -p e2e-tests --bin evaluate -- --export-cases "$CASES"
  fi
}

# `kwctl inspect -o yaml` prints the embedded metadata as serde_yaml writes it (no JSON output).
has_line() {
  grep -Eqx "[[:space:]]*(- )?$1" <<<"$output" || { echo "missing in kwctl inspect: $1"; return 1; }
}

@test "protocol version and metadata are embedded" {
  run kwctl inspect -o yaml annotated-policy.wasm
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

@test "every e2e case gives the expected answer through kwctl run" {
  failures=0
  for dir in "$CASES"/*/; do
    name=$(cat "$dir/name.txt")
    expect="$dir/expect.json"
    refused=$(jq -r '.settingsRefused // empty' "$expect")
    # kwctl (like policy-server's CRD) refuses settings that are not an object before the policy
    # sees them, in its own words.
    if [ -n "$refused" ] && ! jq -e 'type == "object"' "$dir/settings.json" >/dev/null; then
      refused="not an object"
    fi
    context=()
    if [ -f "$dir/session.yml" ]; then
      context=(--allow-context-aware --replay-host-capabilities-interactions "$dir/session.yml")
    elif [ -f "$dir/deny-all" ]; then
      context=(--allowed-host-capabilities net/v1/dns_lookup_host)
    fi
    output=$(kwctl run "${context[@]}" --request-path "$dir/request.json" \
      --settings-path "$dir/settings.json" annotated-policy.wasm 2>&1) && rc=0 || rc=$?
    if [[ "$output" == *"have not been replayed"* ]]; then
      echo "FAIL $name: the policy made fewer calls than on the e2e host: $output"; failures=$((failures + 1))
      continue
    fi
    if [ -n "$refused" ]; then
      if [ "$rc" -eq 0 ] || [[ "$output" != *"$refused"* ]]; then
        echo "FAIL $name: want settings refused with: $refused; got: $output"; failures=$((failures + 1))
      fi
      continue
    fi
    response=$(printf '%s\n' "$output" | grep '^{' | tail -n 1)
    want_allowed=$(jq -r 'if .allowed == null then "any" else (.allowed | tostring) end' "$expect")
    got_allowed=$(jq -r '.allowed | tostring' <<<"$response")
    want_message=$(jq -r '.message // empty' "$expect")
    got_message=$(jq -r '.status.message // empty' <<<"$response")
    want_warnings=$(jq -c '.warnings' "$expect")
    got_warnings=$(jq -c '.warnings // []' <<<"$response")
    if { [ "$want_allowed" != any ] && [ "$want_allowed" != "$got_allowed" ]; } \
      || [ "$want_message" != "$got_message" ] || [ "$want_warnings" != "$got_warnings" ]; then
      echo "FAIL $name: want allowed=$want_allowed message=$want_message warnings=$want_warnings; got $response"
      failures=$((failures + 1))
    fi
  done
  [ "$failures" -eq 0 ]
}
