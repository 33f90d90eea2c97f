# check_case DIR: one exported e2e case (evaluate --export-cases) through `kwctl run`, with the
# replay session of the calls it made on the e2e host (a `deny-all` marker: a grant without any
# kubernetes capability), so kwctl answers exactly what the e2e host answered. Prints what differs.
check_case() {
  local dir=$1 expect=$1/expect.json refused context=() output rc response
  refused=$(jq -r '.settingsRefused // empty' "$expect")
  # kwctl (like policy-server's CRD) refuses settings that are not an object before the policy
  # sees them, in its own words.
  if [ -n "$refused" ] && ! jq -e 'type == "object"' "$dir/settings.json" >/dev/null; then
    refused="not an object"
  fi
  if [ -f "$dir/session.yml" ]; then
    context=(--allow-context-aware --replay-host-capabilities-interactions "$dir/session.yml")
  elif [ -f "$dir/deny-all" ]; then
    context=(--allowed-host-capabilities net/v1/dns_lookup_host)
  fi
  [ -n "${SIGSTORE_TRUST_CONFIG:-}" ] && context+=(--sigstore-trust-config "$SIGSTORE_TRUST_CONFIG")
  output=$(kwctl run "${context[@]}" --request-path "$dir/request.json" \
    --settings-path "$dir/settings.json" "$POLICY" 2>&1) && rc=0 || rc=$?
  if [[ "$output" == *"have not been replayed"* ]]; then
    echo "the policy made fewer calls than on the e2e host: $output"
    return 1
  fi
  if [ -n "$refused" ]; then
    if [ "$rc" -eq 0 ] || [[ "$output" != *"$refused"* ]]; then
      echo "want settings refused with: $refused; got: $output"
      return 1
    fi
    return 0
  fi
  response=$(printf '%s\n' "$output" | grep '^{' | tail -n 1)
  local want_allowed got_allowed want_message got_message want_warnings got_warnings
  want_allowed=$(jq -r 'if .allowed == null then "any" else (.allowed | tostring) end' "$expect")
  got_allowed=$(jq -r '.allowed | tostring' <<<"$response")
  want_message=$(jq -r '.message // empty' "$expect")
  got_message=$(jq -r '.status.message // empty' <<<"$response")
  want_warnings=$(jq -c '.warnings' "$expect")
  got_warnings=$(jq -c '.warnings // []' <<<"$response")
  if { [ "$want_allowed" != any ] && [ "$want_allowed" != "$got_allowed" ]; } \
    || [ "$want_message" != "$got_message" ] || [ "$want_warnings" != "$got_warnings" ]; then
    echo "want allowed=$want_allowed message=$want_message warnings=$want_warnings"
    echo "got  $output"
    return 1
  fi
}
