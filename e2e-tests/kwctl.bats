#!/usr/bin/env bats
# The data-driven e2e cases (e2e-tests/cases/*.yaml) through kwctl, the way Kubewarden policies are
# usually tested. Run with `make e2e-tests-kwctl` (needs kwctl, bats and jq). The cases are
# exported by the evaluate tool, so this file and the wasm suite read the same data.

setup_file() {
  export CASES="$BATS_FILE_TMPDIR/cases"
  cargo run -q -p e2e-tests --bin evaluate -- --export-cases "$CASES"
}

@test "protocol version and metadata are embedded" {
  run kwctl inspect annotated-policy.wasm
  [ "$status" -eq 0 ]
  [[ "$output" == *"vm-maintenance-strategy"* ]]
}

@test "every e2e case gives the expected answer through kwctl run" {
  failures=0
  for dir in "$CASES"/*/; do
    name=$(cat "$dir/name.txt")
    expect="$dir/expect.json"
    refused=$(jq -r '.settingsRefused // empty' "$expect")
    output=$(kwctl run --request-path "$dir/request.json" --settings-path "$dir/settings.json" \
      annotated-policy.wasm 2>&1) && rc=0 || rc=$?
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
