#!/usr/bin/env bash
# Does a capacity that fairbench found hold? On one throwaway server: two `fairbench capacity`
# searches of the same workload and objective (do their intervals overlap?), then `fairbench run
# --rate` at 0.9× and 1.15× of their mean, alternated, RUNS times each: below the capacity the
# objective should hold, above it not. Every search and run starts on a quiet machine (load under
# 1.5) and prints its load and steal beside its figures, and a search the range of the machine's
# memory speed over its windows (steps[].memory_ns: other tenants move it and steal does not show
# it), the brackets its confirmation refuted, and its floor: the objective's percentile at the
# lowest rate as a share of the limit (near it, the capacity moves with the machine's speed).
#
# Usage: bench/capacity-check.sh [ENGINE [WORKLOAD [SLO]]]
#        (default: postgres oltp_point_select 'p99<=5ms'; ENGINE as `fairbench serve --engine`)
# Environment: CONNECTIONS (32), WINDOW seconds per searched rate (8), ROUNDS of the search's
#              confirmation (3), RUNS per factor (2), TIME seconds per run (8), TABLES (4),
#              TABLE_SIZE (10000)
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${1:-postgres}
WORKLOAD=${2:-oltp_point_select}
SLO=${3:-p99<=5ms}
CONNECTIONS=${CONNECTIONS:-32}
WINDOW=${WINDOW:-8}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-2}
TIME=${TIME:-8}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
. bench/args.sh
whole_numbers capacity-check CONNECTIONS WINDOW ROUNDS RUNS TIME TABLES TABLE_SIZE
need_tool capacity-check jq jq
. bench/lib.sh

# The objective's percentile and limit in ms, for judging a run: "p99<=5ms" -> p99 and 5.
pct=${SLO%%<=*}
limit_ms=$(awk -v s="${SLO#*<=}" 'BEGIN {
  if (s ~ /ms$/) { sub(/ms$/, "", s); print s } else if (s ~ /s$/) { sub(/s$/, "", s); print s * 1000 } else print "" }')
case "$pct" in p50 | p90 | p95 | p99) ;; *) echo "capacity-check: give the objective as p50, p90, p95 or p99<=LIMIT (e.g. 'p99<=5ms'), not '$SLO'" >&2; exit 2 ;; esac
[ -n "$limit_ms" ] || { echo "capacity-check: the limit of '$SLO' must end in ms or s" >&2; exit 2; }

start_server "$ENGINE" "$tmp/serve.log" || exit 1
data=(--workload "$WORKLOAD" --tables "$TABLES" --table-size "$TABLE_SIZE")
"$FB" prepare --target "$dsn" "${data[@]}" >/dev/null 2>&1
echo "== $WORKLOAD at $SLO on $(engine_version "$ENGINE"), $CONNECTIONS connections, ${WINDOW}s windows, $ROUNDS confirmation rounds"

caps=()
for s in 1 2; do
  wait_quiet 600
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(stat_ticks)
  began=$(date -u +%H:%M:%S)
  "$FB" capacity --target "$dsn" "${data[@]}" --slo "$SLO" --max-connections "$CONNECTIONS" --window "${WINDOW}s" --warmup 2s \
    --rounds "$ROUNDS" --out "$tmp/cap-$s.json" >"$tmp/cap-$s.out" 2>&1 || true
  if [ ! -s "$tmp/cap-$s.json" ]; then
    echo "search $s: no result; its output ends:" >&2
    tail -n 5 "$tmp/cap-$s.out" >&2
    exit 1
  fi
  jq -r --arg s "$s" --arg at "$began" --arg load "$load" --arg steal "$(steal_pct "$t0" "$(stat_ticks)")" '.capacity |
    "search \($s) at \($at) UTC (load \($load), steal \($steal)%): \(.per_s | floor)/s [\(.low_per_s | floor), \(.high_per_s | floor)], reached \(.reached)\(if .at_least then " (a lower bound)" else "" end), \(.steps | length) rates in \(.spent_s | floor) s\(if (.contradicted // 0) > 0 then ", lower rate failed in \(.contradicted) of \(.rounds) rounds" else "" end)\(if (.refuted // 0) > 0 then ", \(.refuted) bracket(s) refuted" else "" end)\(if (.floor // 0) > 0 then ", floor \(.floor * 100 | floor)% of the limit" else "" end)\([.steps[].memory_ns // empty | select(. > 0)] | if length > 0 then ", memory \(min | floor)-\(max | floor) ns" else "" end)"' "$tmp/cap-$s.json"
  if [ "$(jq -r '(.capacity.at_least // false) or .capacity.reached == "no rate"' "$tmp/cap-$s.json")" = true ]; then
    echo "search $s found no knee to check: nothing to run at 0.9× and 1.15×" >&2
    exit 1
  fi
  caps+=("$(jq -r '.capacity.per_s' "$tmp/cap-$s.json")")
done
mean=$(awk -v a="${caps[0]}" -v b="${caps[1]}" 'BEGIN { printf "%d", (a + b) / 2 }')
overlap=$(jq -rs '(.[0].capacity.low_per_s <= .[1].capacity.high_per_s) and (.[1].capacity.low_per_s <= .[0].capacity.high_per_s)' "$tmp/cap-1.json" "$tmp/cap-2.json")
echo "the two intervals overlap: $overlap; their mean: ${mean}/s"

printf '%-6s %9s %9s %9s %8s %6s %7s %7s\n' factor rate "$pct ms" "max ms" verdict load "steal%" "mem ns"
for r in $(seq "$RUNS"); do
  factors="0.9 1.15"
  [ $((r % 2)) -eq 0 ] && factors="1.15 0.9"
  for f in $factors; do
    rate=$(awk -v m="$mean" -v f="$f" 'BEGIN { printf "%d", m * f }')
    wait_quiet 600 >/dev/null
    load=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(stat_ticks)
    "$FB" run --target "$dsn" "${data[@]}" --threads "$CONNECTIONS" --rate "$rate" --time "${TIME}s" --warmup 2s \
      --out "$tmp/run.json" >/dev/null 2>&1 || true
    # Latency from each scheduled arrival, as the search judges it.
    jq -r --arg f "$f" --arg pct "$pct" --argjson limit "$limit_ms" --arg load "$load" --arg steal "$(steal_pct "$t0" "$(stat_ticks)")" '
      (.latency_ms[$pct]) as $p | "\($f)\t\(.rate | floor)\t\($p * 100 | round / 100)\t\(.latency_ms.max * 10 | round / 10)\t\(if $p <= $limit then "meets" else "misses" end)\t\($load)\t\($steal)\t\(.machine.memory_ns_before // 0 | floor)"' \
      "$tmp/run.json" | awk -F'\t' '{ printf "%-6s %9s %9s %9s %8s %6s %7s %7s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
  done
done
