#!/usr/bin/env bash
# Does a round's throughput follow the machine's memory speed? On one throwaway server, RUNS
# short `fairbench run`s one after another, each printing the memory probe its result records
# before and after the window (machine.memory_ns_before/after: ns per dependent load from main
# memory, every CPU at once) beside its TPS and the steal over it; then the correlation of TPS
# with the probe over all runs. On a shared host other tenants' memory traffic moves the probe,
# and no CPU counter (steal included) shows it.
#
# Usage: bench/machine-speed.sh [ENGINE [WORKLOAD]]
#        (default: postgres oltp_point_select; ENGINE as `fairbench serve --engine`)
# Environment: RUNS (30), TIME seconds per run (5), THREADS (8), TABLES (4), TABLE_SIZE (10000)
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${1:-postgres}
WORKLOAD=${2:-oltp_point_select}
RUNS=${RUNS:-30}
TIME=${TIME:-5}
THREADS=${THREADS:-8}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
. bench/args.sh
whole_numbers machine-speed RUNS TIME THREADS TABLES TABLE_SIZE
need_tool machine-speed jq jq
. bench/lib.sh

start_server "$ENGINE" "$tmp/serve.log" || exit 1
data=(--workload "$WORKLOAD" --tables "$TABLES" --table-size "$TABLE_SIZE")
"$FB" prepare --target "$dsn" "${data[@]}" >/dev/null 2>&1
wait_quiet 600
echo "== $WORKLOAD on $(engine_version "$ENGINE"), $THREADS threads, ${TIME}s windows, $RUNS runs from $(date -u +%H:%M) UTC (load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-8s %10s %10s %10s %7s %6s\n' time "ns before" "ns after" tps "steal%" load
: >"$tmp/pairs"
for _ in $(seq "$RUNS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(stat_ticks)
  "$FB" run --target "$dsn" "${data[@]}" --threads "$THREADS" --time "${TIME}s" --warmup 1s --out "$tmp/run.json" >/dev/null 2>&1 || true
  steal=$(steal_pct "$t0" "$(stat_ticks)")
  jq -r '"\(.machine.memory_ns_before // 0) \(.machine.memory_ns_after // 0) \(.tps)"' "$tmp/run.json" >>"$tmp/pairs"
  tail -n 1 "$tmp/pairs" | awk -v at="$(date -u +%H:%M:%S)" -v s="$steal" -v l="$load" '{ printf "%-8s %10.1f %10.1f %10.0f %7s %6s\n", at, $1, $2, $3, s, l }'
done
# Pearson's r of TPS against the mean of the two probes, and the TPS spread in each half of the
# probe's range: how much of the rounds' spread the machine's memory speed accounts for.
awk '{ x = ($1 + $2) / 2; y = $3; n++; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y; xs[n] = x; ys[n] = y }
  END {
    if (n < 3) { print "too few runs for a correlation"; exit }
    r = (n * sxy - sx * sy) / sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
    mx = sx / n
    for (i = 1; i <= n; i++) { if (xs[i] <= mx) { f++; fs += ys[i] } else { s++; ss += ys[i] } }
    printf "r(tps, memory ns) = %.2f over %d runs; mean TPS %.0f with the probe at or below its mean %.1f ns (%d runs), %.0f above it (%d runs)\n", r, n, (f ? fs / f : 0), mx, f, (s ? ss / s : 0), s
  }' "$tmp/pairs"
