#!/usr/bin/env bash
# Every command's answer, captured to compare two builds of the plugin byte for byte
# (BENCHMARKS.md "Outputs before and after"): for each DUMP, every preview and the sync plan
# in each output form (table, `--no-headers`, `--width 60`, `-o wide`, `-o json`, `-o yaml`),
# for the whole dump, its first nodes (NODES, default 3) and its first namespace; one file an
# invocation holding the exit code, stdout and stderr. Compare two captures with
# `diff -r BEFORE AFTER` (or `bench/outputs.sh --compare BEFORE AFTER`). SETTINGS: settings
# files each preview is also run with; FORMS: the output forms, comma-separated (`,-o json`: the
# table and JSON), for large dumps.
# Without DUMP: the standard set, the examples' dumps and the fixtures in every form with two
# settings files, then clusters of 1,000 and 5,000 VMs from policy-bench's cluster-dump.
# usage: bench/outputs.sh PLUGIN DIR [DUMP...]
#        bench/outputs.sh --compare BEFORE AFTER
set -euo pipefail
if [ "${1:-}" = --compare ]; then
  before=$2 after=$3
  total=$(find "$before" -type f ! -path '*/dumps/*' | wc -l)
  if diff -r -x dumps "$before" "$after" >/dev/null; then
    echo "identical: $total invocations, stdout, stderr and exit code byte for byte"
    exit 0
  fi
  diff -r -x dumps "$before" "$after" | head -n 40
  echo "DIFFERENT: $(diff -rq -x dumps "$before" "$after" | wc -l) of $total invocations" >&2
  exit 1
fi
plugin=$1 dir=$2
shift 2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -f "$plugin" ] && plugin=$(realpath "$plugin")
if [ $# -eq 0 ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  cd "$here"
  mkdir -p "$dir/dumps"
  SETTINGS="examples/strict-cluster.yaml examples/validate-only.yaml" "$0" "$plugin" "$dir/examples" \
    examples/cluster-dump.json examples/cluster-maintenance-dump.json examples/stale/cluster-dump.json fixtures/*.yaml
  for size in 1000 5000; do
    [ -f "$dir/dumps/cluster-$size.json" ] || cargo run -q -p policy-bench --bin cluster-dump -- "$size" 50 "$dir/dumps/cluster-$size.json"
  done
  FORMS=",-o json,-o yaml" NODES=2 "$0" "$plugin" "$dir/1000" "$dir/dumps/cluster-1000.json"
  FORMS=",-o json" NODES=1 "$0" "$plugin" "$dir/5000" "$dir/dumps/cluster-5000.json"
  exit 0
fi
nodes=${NODES:-3}
mkdir -p "$dir"
forms=("" "--no-headers" "--width 60" "-o wide" "-o json" "-o yaml")
[ -n "${FORMS:-}" ] && IFS=, read -r -a forms <<<"$FORMS"

# One invocation: its exit code, stdout and stderr in DIR/NAME.
capture() {
  local name=$1
  shift
  local out="$dir/$name"
  local code=0
  "$plugin" "$@" >"$out.stdout" 2>"$out.stderr" </dev/null || code=$?
  {
    echo "exit: $code"
    echo "--- stdout"
    cat "$out.stdout"
    echo "--- stderr"
    cat "$out.stderr"
  } >"$out"
  rm -f "$out.stdout" "$out.stderr"
}

# The objects of a dump (a List, an object, several documents; JSON or YAML) as JSON lines.
objects() {
  case $1 in
  *.json) jq -c 'if type == "object" and has("items") then .items[] elif type == "array" then .[] else . end' "$1" ;;
  *) python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d is None: continue
    for o in (d.get("items", [d]) if isinstance(d, dict) else d): print(json.dumps(o))' "$1" 2>/dev/null || true ;;
  esac
}

for dump in "$@"; do
  base=$(basename "$dump" | tr -c 'A-Za-z0-9._\n-' _)
  mapfile -t node_names < <(objects "$dump" | jq -r 'select(.kind == "Node" or .kind == "VirtualMachineInstance") | if .kind == "Node" then .metadata.name else .status.nodeName // empty end' | sort -u | head -n "$nodes" || true)
  namespace=$(objects "$dump" | jq -r 'select(.kind == "VirtualMachine") | .metadata.namespace // "default"' | sort -u | head -n 1 || true)
  commands=("drain" "upgrade" "sync" "sync --restart-stale")
  [ -n "$namespace" ] && commands+=("drain -n $namespace" "sync -n $namespace")
  for node in "${node_names[@]}"; do
    commands+=("drain $node" "maintenance $node" "maintenance $node --force")
  done
  commands+=("maintenance no-such-node" "drain no-such-node" "drain --external-controller")
  for settings in ${SETTINGS:-}; do
    commands+=("drain --settings $settings" "upgrade --settings $settings" "sync --settings $settings")
  done
  for command in "${commands[@]}"; do
    for form in "${forms[@]}"; do
      name="$base.$(echo "$command $form" | tr ' /' '__')"
      # shellcheck disable=SC2086 # the command and form are words
      capture "$name" $command $form -f "$dump"
    done
  done
done
echo "$(find "$dir" -type f | wc -l) invocations in $dir"
