# Sourced by bench/kwctl.sh and bench/policy-server.sh: ROUNDS interleaved rounds of `measure
# SIDE PAIR` (ours, peer, for `mutate` and `nochange`), the best round per side and how far the
# worst one was from it, as a Markdown table. DIRECTION: `low` (a time) or `high` (a rate).
declare -A best worst
rounds_table() {  # rounds, direction, header, format
  local rounds=$1 direction=$2 header=$3 format=$4 round pair side value key
  for round in $(seq "$rounds"); do
    for pair in mutate nochange; do
      for side in ours peer; do
        value=$(measure "$side" "$pair")
        key="$side-$pair"
        if [ -z "${best[$key]:-}" ]; then best[$key]=$value worst[$key]=$value; fi
        best[$key]=$(awk -v a="${best[$key]}" -v b="$value" -v d="$direction" 'BEGIN {print ((d=="low") == (b<a)) ? b : a}')
        worst[$key]=$(awk -v a="${worst[$key]}" -v b="$value" -v d="$direction" 'BEGIN {print ((d=="low") == (b>a)) ? b : a}')
      done
    done
  done
  echo "| request | ours ($header) | peer | ours/peer |"
  echo "|---|---|---|---|"
  for pair in mutate nochange; do
    local o=${best[ours-$pair]} p=${best[peer-$pair]}
    local so sp ratio
    so=$(awk -v b="$o" -v w="${worst[ours-$pair]}" 'BEGIN {d=(w-b)/b*100; printf "%.0f", d<0?-d:d}')
    sp=$(awk -v b="$p" -v w="${worst[peer-$pair]}" 'BEGIN {d=(w-b)/b*100; printf "%.0f", d<0?-d:d}')
    ratio=$(awk -v o="$o" -v p="$p" 'BEGIN {printf "%.2f", o/p}')
    echo "| \`$pair\` | $(printf "$format" "$o") (±$so%) | $(printf "$format" "$p") (±$sp%) | ${ratio}× |"
  done
}
