#!/usr/bin/env bash
# make bench-kwctl, second half: a real policy-server serving ours and the peer, `wrk` POSTing
# each one's request (the AdmissionReviews of kwctl-requests) for 10 s, ROUNDS interleaved
# rounds; the best round's requests per second per side, the spread, and ours/peer. Prints a
# Markdown table, then the floor: ours on a request it lets through at its gate (`ours-floor`, a
# ConfigMap of the same size), interleaved with the peer's `nochange`, which bounds what any work
# of ours can reach. usage: bench/policy-server.sh DIR OURS.wasm PEER.wasm ROUNDS
set -euo pipefail
dir=$1 ours=$2 peer=$3 rounds=${4:-3}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port) ready=$(free_port)
cat > "$dir/policies.yml" <<YAML
ours:
  module: file://$ours
  allowedToMutate: true
  settings: {}
peer:
  module: file://$peer
  allowedToMutate: true
  settings: $(cat "$dir/peer-settings.json")
YAML
cat > "$dir/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local file = io.open(os.getenv("BODY"), "r")
wrk.body = file:read("*a")
file:close()
LUA
policy-server --policies "$dir/policies.yml" --addr 127.0.0.1 --port "$port" --readiness-probe-port "$ready" \
  --log-level warn --policies-download-dir "$dir" --ignore-kubernetes-connection-failure >"$dir/policy-server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -sf -o /dev/null "http://127.0.0.1:$ready/readiness" && break
  sleep 0.2
done
# Each policy answers its request as expected before it is measured.
for side in ours peer; do
  answer=$(curl -sf -H 'Content-Type: application/json' --data-binary "@$dir/$side-mutate.json" "http://127.0.0.1:$port/validate/$side")
  echo "$answer" | grep -q '"allowed":true' && echo "$answer" | grep -q '"patch"' ||
    { echo "policy-server: $side did not mutate its request: $answer" >&2; exit 1; }
done
rps() {  # policy id, request file
  BODY=$2 wrk -t2 -c16 -d10s -s "$dir/post.lua" "http://127.0.0.1:$port/validate/$1" |
    awk '/Requests\/sec:/ {print $2}'
}
measure() {  # side, pair
  rps "$1" "$dir/$1-$2.json"
}
source "$(dirname "$0")/rounds.sh"
rounds_table "$rounds" high "policy-server + wrk, requests/s" "%.0f"
floor_best=0 floor_worst= peer_best=0
for _ in $(seq "$rounds"); do
  f=$(rps ours "$dir/ours-floor.json") p=$(rps peer "$dir/peer-nochange.json")
  floor_best=$(awk -v a="$floor_best" -v b="$f" 'BEGIN {print (b>a) ? b : a}')
  floor_worst=$(awk -v a="${floor_worst:-$f}" -v b="$f" 'BEGIN {print (b<a) ? b : a}')
  peer_best=$(awk -v a="$peer_best" -v b="$p" 'BEGIN {print (b>a) ? b : a}')
done
awk -v f="$floor_best" -v w="$floor_worst" -v p="$peer_best" 'BEGIN {
  printf "\nFloor: ours on a request it lets through at its gate (a ConfigMap of the `nochange` size): %.0f requests/s (±%.0f%%), %.2f× the peer'"'"'s best `nochange` in the same rounds (%.0f).\n", f, (f-w)/f*100, f/p, p }'
