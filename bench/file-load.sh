#!/usr/bin/env bash
# A workload file's load beside the built-in oltp prepare of the same rows (sysbench's sbtest:
# id, k, c of 120 and pad of 60 characters, an index on k), on one throwaway server, alternating
# which loads first from round to round. Prints each load's seconds and rows per second and the
# medians: the evidence for "a workload file loads at no less than 0.8x the built-in's rate"
# (issue 24).
#
# Usage: bench/file-load.sh [ENGINE]   (default postgres)
# Environment: ROWS_M millions of rows (default 10), ROUNDS (3), LOAD_THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${1:-postgres}
ROWS_M=${ROWS_M:-10}
ROUNDS=${ROUNDS:-3}
LOAD_THREADS=${LOAD_THREADS:-2}
FILE=bench/workloads/sbtest-like.yaml
. bench/args.sh
whole_numbers file-load ROUNDS LOAD_THREADS
. bench/lib.sh

start_server "$ENGINE"
rows=$((ROWS_M * 1000000))
echo "load: $(uptime | sed 's/.*load average: //')   $ENGINE $(engine_version "$ENGINE" | cut -d' ' -f2)   $rows rows, $ROUNDS rounds, $LOAD_THREADS load threads"
printf '%-10s %-3s %9s %12s %7s\n' loader "#" seconds rows/s "steal%"
load() { # load KIND: prepares, times it, cleans up
  local kind=$1 args
  if [ "$kind" = oltp ]; then
    args=(--workload oltp_read_write --tables 1 --table-size "$rows")
  else
    args=(--workload "$FILE" --scale "$ROWS_M")
  fi
  local t0 s0 s1
  t0=$(stat_ticks)
  s0=$(date +%s.%N)
  "$FB" prepare --target "$dsn" "${args[@]}" --load-threads "$LOAD_THREADS" >/dev/null 2>"$tmp/prepare.err" ||
    { cat "$tmp/prepare.err" >&2; return 1; }
  s1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b - a}')
  printf '%-10s %-3s %9s %12.0f %7s\n' "$kind" "$round" "$secs" "$(awk -v r="$rows" -v s="$secs" 'BEGIN {print r / s}')" "$(steal_pct "$t0" "$(stat_ticks)")"
  echo "$kind $secs" >>"$tmp/rounds"
  "$FB" cleanup --target "$dsn" "${args[@]}" >/dev/null
}
for round in $(seq "$ROUNDS"); do
  order=(oltp file)
  [ $((round % 2)) -eq 0 ] && order=(file oltp)
  for kind in "${order[@]}"; do load "$kind"; done
done
med() { awk -v k="$1" '$1 == k {print $2}' "$tmp/rounds" | sort -g |
  awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
o=$(med oltp) f=$(med file)
echo "medians: oltp prepare ${o}s ($(awk -v r="$rows" -v s="$o" 'BEGIN {printf "%.0f", r / s}') rows/s), workload file ${f}s ($(awk -v r="$rows" -v s="$f" 'BEGIN {printf "%.0f", r / s}') rows/s): the file at $(awk -v a="$o" -v b="$f" 'BEGIN {printf "%.2f", a / b}')x the built-in's rate"
echo "load after: $(uptime | sed 's/.*load average: //')"
