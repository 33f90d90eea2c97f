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
measure() {  # side, pair
  local module=$ours
  [ "$1" = peer ] && module=$peer
  median "$module" "$dir/$1-$2.json" "$dir/$1-settings.json"
}
source "$(dirname "$0")/rounds.sh"
rounds_table "$rounds" low "kwctl bench, median" "%.1f µs"
