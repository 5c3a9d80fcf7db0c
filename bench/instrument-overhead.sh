#!/usr/bin/env bash
# What the wait sampling costs: fairbench run with --instrument off and on, alternating round by
# round (the first alternates too), on one throwaway server per engine, for a read workload that
# makes the most statements per second (oltp_point_select) and a commit-bound one (oltp_insert).
# Prints every run's TPS with the machine's steal, then per engine and workload the median TPS
# off and on, their ratio, and the sampler's own query time as a share of the run.
#
# The servers run the fair profile, so the performance schema is on for MySQL and MariaDB in both
# columns: what is measured is the sampler's cost, not the performance schema's.
#
# Usage: bench/instrument-overhead.sh [ENGINE...]   (default: postgres mariadb mysql)
# Environment: THREADS (default 4), TIME seconds per run (5), ROUNDS (5), WORKLOADS
# (oltp_point_select oltp_insert), ON (the --instrument value measured against off: on, or a
# sampling period such as 25ms)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-4}
TIME=${TIME:-5}
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-oltp_point_select oltp_insert}
ON=${ON:-on}
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(postgres mariadb mysql)
. bench/args.sh
whole_numbers instrument-overhead THREADS TIME ROUNDS
. bench/lib.sh

median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
row() { printf '%-10s %-18s %-4s %6s %10s %7s %10s\n' "$@"; }

echo "== wait sampling off vs on (--instrument $ON): $THREADS threads, ${TIME}s per run, $ROUNDS rounds; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
summary=()
for engine in "${ENGINES[@]}"; do
  start_server "$engine" "$tmp/serve.log" || exit 1
  for w in $WORKLOADS; do
    "$FB" prepare --target "$dsn" --workload "$w" --tables 2 --table-size 100000 >/dev/null 2>&1
    row engine workload mode round TPS "steal%" "sampler%"
    : >"$tmp/off"; : >"$tmp/on"
    for r in $(seq "$ROUNDS"); do
      order=(off on); [ $((r % 2)) -eq 0 ] && order=(on off)
      for mode in "${order[@]}"; do
        t0=$(stat_ticks)
        "$FB" run --target "$dsn" --workload "$w" --tables 2 --table-size 100000 --threads "$THREADS" --time "${TIME}s" \
          --warmup 1s --instrument "$([ "$mode" = on ] && echo "$ON" || echo off)" --out "$tmp/r.json" >/dev/null 2>&1
        tps=$(python3 -c "import json; print('%.0f' % json.load(open('$tmp/r.json'))['tps'])")
        sampler=$(python3 -c "import json; r = json.load(open('$tmp/r.json')); w = r.get('waits') or {}; print('%.2f' % (w.get('sampler_ms', 0) / 10 / r['duration_s']))")
        echo "$tps" >>"$tmp/$mode"
        row "$engine" "$w" "$mode" "$r" "$tps" "$(steal_pct "$t0" "$(stat_ticks)")" "$sampler"
      done
    done
    off=$(median <"$tmp/off"); on=$(median <"$tmp/on")
    summary+=("$(printf '%-10s %-18s off %8s  on %8s  on/off %s' "$engine" "$w" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.3f", a / b}')")")
    "$FB" cleanup --target "$dsn" --workload "$w" >/dev/null 2>&1 || true
  done
  stop_server
done
echo "== medians (load at end: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%s\n' "${summary[@]}"
