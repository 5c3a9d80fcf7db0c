#!/usr/bin/env bash
# Open-loop latency that is the server's, not the harness's: at a light open-loop rate,
# fairbench's reported latency (measured from each scheduled arrival) should sit near the
# closed-loop latency of the same query, and its schedule lag (how late transactions started)
# should be a small fraction of it. Prints, per round, closed-loop p50, open-loop p50 and the
# median schedule lag, then medians of the rounds, with the CPU steal.
#
# Usage: bench/open-loop-lag.sh [ENGINE]     (default: postgres)
# Environment: RATE (2000), THREADS (8), TIME seconds (10), ROUNDS (3),
#              FB_OTHER (a second fairbench binary, e.g. an older build, measured alternately)
set -euo pipefail
cd "$(dirname "$0")/.."

RATE=${RATE:-2000}
THREADS=${THREADS:-8}
TIME=${TIME:-10}
ROUNDS=${ROUNDS:-3}
ENGINE=${1:-postgres}
. bench/args.sh
whole_numbers open-loop-lag RATE THREADS TIME ROUNDS
. bench/lib.sh

bins=("$FB")
[ -n "${FB_OTHER:-}" ] && bins+=("$FB_OTHER")
start_server "$ENGINE" "$tmp/serve.log" || exit 1
"$FB" prepare --target "$dsn" --workload oltp_point_select --tables 4 --table-size 100000 >/dev/null

# one BIN MODE: runs once and keeps "BIN MODE p50 lag_p50 steal" in $tmp/rounds.
one() {
  local bin=$1 mode=$2 rate=() before after
  [ "$mode" = open ] && rate=(--rate "$RATE")
  before=$(stat_ticks)
  "$bin" run --target "$dsn" --workload oltp_point_select --tables 4 --table-size 100000 \
    --threads "$THREADS" --time "${TIME}s" "${rate[@]}" --out "$tmp/r.json" >/dev/null 2>&1
  after=$(stat_ticks)
  python3 - "$tmp/r.json" "$bin" "$mode" "$(steal_pct "$before" "$after")" >>"$tmp/rounds" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lag = (r.get("schedule_lag_ms") or {}).get("p50", 0)
print(sys.argv[2], sys.argv[3], r["latency_ms"]["p50"], lag, r["tps"], sys.argv[4])
PY
  tail -n 1 "$tmp/rounds"
}

echo "== $ENGINE oltp_point_select, $THREADS threads, open loop at $RATE/s vs closed loop, ${TIME}s per run"
echo "binary mode p50_ms lag_p50_ms tps steal%"
for _ in $(seq "$ROUNDS"); do
  for bin in "${bins[@]}"; do one "$bin" closed; one "$bin" open; done
done
# med COLUMN BIN MODE: the median of one column over the rounds.
med() {
  awk -v b="$2" -v m="$3" -v c="$1" '$1 == b && $2 == m {print $c}' "$tmp/rounds" | sort -g |
    awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
echo "medians of $ROUNDS rounds:"
for bin in "${bins[@]}"; do
  for mode in closed open; do
    printf '%-28s %-6s p50 %s ms  lag p50 %s ms  tps %s  steal %s%%\n' "$bin" "$mode" \
      "$(med 3 "$bin" "$mode")" "$(med 4 "$bin" "$mode")" "$(med 5 "$bin" "$mode")" "$(med 6 "$bin" "$mode")"
  done
done
