#!/usr/bin/env bash
# make bench-kwctl: `kwctl bench` of ours against the peer (psa-label-enforcer) on requests of
# equal size, ROUNDS interleaved rounds (ours, peer, ours, peer, ...); the best round's median of
# `validate` per side, the spread of the rounds, and ours/peer. Prints a Markdown section.
# usage: bench/kwctl.sh DIR OURS.wasm PEER.wasm ROUNDS
set -euo pipefail
dir=$1 ours=$2 peer=$3 rounds=${4:-3}
median() {  # policy, request, settings: kwctl bench's median of `validate`, in µs
  kwctl bench --num-samples 50 --measurement-time 3 --warm-up-time 1 \
    --request-path "$2" --settings-path "$3" "file://$1" 2>/dev/null |
    sed 's/\x1b\[[0-9;]*m//g' | awk '/^validate \[/ {found=1} found && /med = / {
      match($0, /med = [0-9.]+(ns|µs|ms)/); v=substr($0, RSTART+6, RLENGTH-6);
      unit=v; gsub(/[0-9.]/, "", unit); n=v; gsub(/[^0-9.]/, "", n);
      if (unit=="ns") n/=1000; if (unit=="ms") n*=1000; print n; exit }'
}
declare -A best worst
for round in $(seq "$rounds"); do
  for pair in mutate nochange; do
    for side in ours peer; do
      if [ "$side" = ours ]; then module=$ours; else module=$peer; fi
      m=$(median "$module" "$dir/$side-$pair.json" "$dir/$side-settings.json")
      key="$side-$pair"
      best[$key]=$(awk -v a="${best[$key]:-1e18}" -v b="$m" 'BEGIN {print (b<a)?b:a}')
      worst[$key]=$(awk -v a="${worst[$key]:-0}" -v b="$m" 'BEGIN {print (b>a)?b:a}')
    done
  done
done
echo "| request | ours (kwctl bench, median) | peer | ours/peer |"
echo "|---|---|---|---|"
for pair in mutate nochange; do
  o=${best[ours-$pair]} p=${best[peer-$pair]}
  so=$(awk -v b="$o" -v w="${worst[ours-$pair]}" 'BEGIN {printf "%.0f", (w-b)/b*100}')
  sp=$(awk -v b="$p" -v w="${worst[peer-$pair]}" 'BEGIN {printf "%.0f", (w-b)/b*100}')
  ratio=$(awk -v o="$o" -v p="$p" 'BEGIN {printf "%.2f", o/p}')
  echo "| \`$pair\` | $(printf '%.1f' "$o") µs (±$so%) | $(printf '%.1f' "$p") µs (±$sp%) | ${ratio}× |"
done
