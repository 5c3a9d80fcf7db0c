#!/usr/bin/env bash
# A capacity that fairbench found, checked with pgbench's own open loop: `fairbench capacity`
# searches the highest arrival rate at which tpcb's p99 stays within LIMIT ms on a throwaway
# PostgreSQL, then pgbench runs its built-in tpcb-like script at 0.9× and 1.15× that rate with
# -R (a Poisson schedule, latency from the scheduled start, as fairbench measures it) and
# -L LIMIT (counts the transactions over the limit, and skips those that would start later than
# it), and fairbench's `run --rate` runs beside it at the same rates. A p99 objective holds when at
# most 1% of transactions are over the limit: at 0.9× both tools should say it holds, at 1.15×
# both that it does not.
#
# pgbench and fairbench get one database each on the same server (fairbench touches only tables it
# created), the same scale and the same number of connections; the tool that runs first
# alternates between the rates.
#
# Usage: bench/capacity-vs-pgbench.sh [ENGINE]   (postgres, or postgres@VERSION)
# Environment: SCALE (default 4), CONNECTIONS (16), LIMIT ms (20), TIME seconds per run (20),
#              WINDOW seconds per searched rate (5)
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE=${SCALE:-4}
CONNECTIONS=${CONNECTIONS:-16}
LIMIT=${LIMIT:-20}
TIME=${TIME:-20}
WINDOW=${WINDOW:-5}
ENGINE=${1:-postgres}
case "$ENGINE" in
  postgres | postgres@*) ;;
  *) echo "capacity-vs-pgbench: pgbench runs on PostgreSQL only, not $ENGINE: give postgres or postgres@VERSION" >&2; exit 2 ;;
esac
for tool in pgbench psql jq; do
  command -v "$tool" >/dev/null || { echo "capacity-vs-pgbench: $tool is not installed: run scripts/install-engines.sh (jq: apt-get install jq)" >&2; exit 2; }
done
. bench/args.sh
whole_numbers capacity-vs-pgbench SCALE CONNECTIONS LIMIT TIME WINDOW
. bench/lib.sh

start_server "$ENGINE" "$tmp/serve.log" --buffer-pool 1G || exit 1
fbdb=capfb
second_database "$fbdb"

echo "== capacity at p99 <= ${LIMIT} ms, tpcb scale $SCALE, $CONNECTIONS connections, on $(engine_version "$ENGINE")"
pgbench -i -q -s "$SCALE" "${pg[@]}" "$db" >/dev/null 2>&1
"$FB" prepare --target "$fbdsn" --workload tpcb --scale "$SCALE" >/dev/null 2>&1
wait_quiet 300
echo "load at the search's start: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(stat_ticks)
"$FB" capacity --target "$fbdsn" --workload tpcb --scale "$SCALE" --slo "p99<=${LIMIT}ms" --max-connections "$CONNECTIONS" \
  --window "${WINDOW}s" --warmup 2s --out "$tmp/cap.json" >"$tmp/cap.out" 2>&1 || true
grep -m1 "capacity at" "$tmp/cap.out" || tail -n 3 "$tmp/cap.out"
echo "search: $(jq -r '.capacity.spent_s | floor' "$tmp/cap.json") s, steal $(steal_pct "$t0" "$(stat_ticks)")%"
cap=$(jq -r '.capacity.per_s' "$tmp/cap.json")
if [ "$(jq -r '(.capacity.at_least // false) or .capacity.reached == "no rate"' "$tmp/cap.json")" = true ]; then
  echo "the search found no knee to check ($(jq -r '.capacity.reached' "$tmp/cap.json")): nothing to cross-check" >&2
  exit 1
fi

row() { printf '%-6s %-9s %9s %10s %12s %10s %9s %7s\n' "$@"; }
row factor tool rate "p99 ms" "over limit" skipped verdict "steal%"
run_pgbench() {
  local rate=$1 factor=$2 t0
  t0=$(stat_ticks)
  pgbench -M prepared -c "$CONNECTIONS" -j "$CONNECTIONS" -R "$rate" -L "$LIMIT" -T "$TIME" "${pg[@]}" "$db" >"$tmp/pg.out" 2>/dev/null || true
  # "number of transactions above the 20.0 ms latency limit: 12/4000 (0.300%)"; "skipped: N"
  local over skipped pct
  over=$(awk '/above the .* latency limit/ {print $NF}' "$tmp/pg.out" | tr -d '()%')
  pct=${over:-0}
  skipped=$(awk '/number of transactions skipped/ {print $5}' "$tmp/pg.out")
  row "$factor" pgbench "$rate" "-" "${pct}%" "${skipped:-0}" "$(awk -v p="$pct" 'BEGIN { print (p <= 1 ? "meets" : "misses") }')" "$(steal_pct "$t0" "$(stat_ticks)")"
}
run_fairbench() {
  local rate=$1 factor=$2 t0
  t0=$(stat_ticks)
  "$FB" run --target "$fbdsn" --workload tpcb --scale "$SCALE" --threads "$CONNECTIONS" --rate "$rate" --time "${TIME}s" --warmup 2s \
    --out "$tmp/run.json" >/dev/null 2>&1 || true
  local p99
  p99=$(jq -r '.latency_ms.p99' "$tmp/run.json")
  # fairbench skips no arrival: a late one runs late, and its latency counts from its schedule.
  row "$factor" fairbench "$rate" "$p99" "-" "-" \
    "$(awk -v p="$p99" -v l="$LIMIT" 'BEGIN { print (p <= l ? "meets" : "misses") }')" "$(steal_pct "$t0" "$(stat_ticks)")"
}
i=0
for factor in 0.9 1.15; do
  rate=$(awk -v c="$cap" -v f="$factor" 'BEGIN { printf "%d", c * f }')
  if [ $((i % 2)) -eq 0 ]; then run_pgbench "$rate" "$factor"; run_fairbench "$rate" "$factor"
  else run_fairbench "$rate" "$factor"; run_pgbench "$rate" "$factor"; fi
  i=$((i + 1))
done
echo "capacity ${cap}/s; pgbench's 'over limit' counts from the scheduled start, as fairbench's p99 does; a p99 objective holds at 1% or less over the limit"
