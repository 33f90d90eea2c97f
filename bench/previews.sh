#!/usr/bin/env bash
# make bench-previews: every preview of the kubectl plugin, and the sync plan, on generated
# clusters (policy-bench's `cluster-dump`: VMs over 50 nodes, each with its claim, volume, running
# VMI and launcher Pod),
# ROUNDS interleaved rounds per size; the best round's wall time and peak RSS (GNU time), the
# spread of the rounds, and the peak against the dump's JSON size. Prints a Markdown table.
# usage: bench/previews.sh DIR PLUGIN ROUNDS SIZE...
set -euo pipefail
dir=$1 plugin=$2 rounds=$3
shift 3
mkdir -p "$dir"
commands=("drain" "drain node-01" "maintenance node-01" "upgrade" "sync" "status node-01" "status --upgrade")
declare -A best_time worst_time best_rss
for size in "$@"; do
  cargo run -q -p policy-bench --bin cluster-dump -- "$size" 50 "$dir/cluster-$size.json"
done
for round in $(seq "$rounds"); do
  for size in "$@"; do
    for command in "${commands[@]}"; do
      key="$size|$command"
      # Exit 2/3 are outcomes (a VM blocks, may stay off), not failures.
      /usr/bin/time -f "%e %M" -o "$dir/time.txt" \
        "$plugin" $command -f "$dir/cluster-$size.json" -o json >/dev/null 2>"$dir/stderr.txt" || [ $? -le 3 ]
      read -r seconds kb < <(tail -n 1 "$dir/time.txt")
      if [ -z "${best_time[$key]:-}" ] || awk -v a="$seconds" -v b="${best_time[$key]}" 'BEGIN {exit !(a < b)}'; then
        best_time[$key]=$seconds best_rss[$key]=$kb
      fi
      if [ -z "${worst_time[$key]:-}" ] || awk -v a="$seconds" -v b="${worst_time[$key]}" 'BEGIN {exit !(a > b)}'; then
        worst_time[$key]=$seconds
      fi
    done
  done
done
echo "| VMs | dump | command | best of $rounds | spread | peak RSS | RSS / dump |"
echo "|---|---|---|---|---|---|---|"
for size in "$@"; do
  bytes=$(stat -c %s "$dir/cluster-$size.json")
  for command in "${commands[@]}"; do
    key="$size|$command"
    awk -v s="$size" -v b="$bytes" -v c="$command" -v t="${best_time[$key]}" -v w="${worst_time[$key]}" -v m="${best_rss[$key]}" 'BEGIN {
      printf "| %d | %.1f MB | `%s` | %.2f s | ±%.0f%% | %.0f MB | %.1f× |\n", s, b/1e6, c, t, (w-t)/t*100, m/1024, m*1024/b }'
  done
done
