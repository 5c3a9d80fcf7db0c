#!/usr/bin/env bash
# Would running two engines' windows back to back cancel the machine's drift? compare runs one
# engine's steps, then the next engine's, so the two windows of a step are a suite apart (about
# 20 s in the quick suite). This keeps two throwaway servers up at once and, ITER times, runs
# each workload on A and then on B (the order swapped every iteration), windows seconds apart.
# It prints each window's TPS and the spread (standard deviation of the log) of the A/B ratio
# taken from windows of the same iteration against that of windows one iteration apart: if the
# machine's speed drifted slowly, the first would be much the smaller.
#
# Both servers are up throughout, so the idle one's background work (a flush after an insert
# window) falls in the other's windows; compare never has two servers up. The answer says
# whether interleaving would be worth that cost, not what compare would measure.
#
# Usage: bench/interleave-check.sh [ENGINE_A ENGINE_B [WORKLOAD...]]
#        (default: postgres mariadb oltp_point_select oltp_insert; ENGINE as `fairbench serve`)
# Environment: ITER (20), TIME seconds per window (3), THREADS (8), TABLES (4), TABLE_SIZE (25000)
set -euo pipefail
cd "$(dirname "$0")/.."

A=${1:-postgres}
B=${2:-mariadb}
shift 2 2>/dev/null || shift $#
[ $# -gt 0 ] || set -- oltp_point_select oltp_insert
ITER=${ITER:-20}
TIME=${TIME:-3}
THREADS=${THREADS:-8}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-25000}
. bench/args.sh
whole_numbers interleave-check ITER TIME THREADS TABLES TABLE_SIZE
need_tool interleave-check jq jq
. bench/lib.sh

# Two servers: lib.sh's start_server keeps one, so the first one's process is stopped here.
start_server "$A" "$tmp/a.log" || exit 1
dsn_a=$dsn serve_a=$serve_pid serve_pid=
trap 'kill "$serve_a" 2>/dev/null; wait "$serve_a" 2>/dev/null; cleanup' EXIT
start_server "$B" "$tmp/b.log" || exit 1
dsn_b=$dsn
data=(--tables "$TABLES" --table-size "$TABLE_SIZE")
for d in "$dsn_a" "$dsn_b"; do "$FB" prepare --target "$d" --workload "$1" "${data[@]}" >/dev/null 2>&1; done

# window ITER WORKLOAD NAME DSN: one measured window, as a line of the table.
window() {
  local at
  at=$(date -u +%H:%M:%S)
  "$FB" run --target "$4" --workload "$2" "${data[@]}" --threads "$THREADS" --time "${TIME}s" --warmup 500ms --out "$tmp/run.json" >/dev/null 2>&1 || true
  jq -r --arg i "$1" --arg w "$2" --arg e "$3" --arg at "$at" '"\($i) \($w) \($e) \($at) \(.tps | floor) \(.machine.memory_ns_before // 0 | floor)"' "$tmp/run.json" | tee -a "$tmp/windows"
}

wait_quiet 600
t0=$(stat_ticks)
echo "== $* on $(engine_version "$A") (a) and $(engine_version "$B") (b), both up, $THREADS threads, ${TIME}s windows, $ITER iterations from $(date -u +%H:%M) UTC (load $(cut -d' ' -f1 /proc/loadavg))"
echo "iteration workload engine at tps memory_ns"
: >"$tmp/windows"
for i in $(seq "$ITER"); do
  for w in "$@"; do
    if ((i % 2)); then window "$i" "$w" a "$dsn_a"; window "$i" "$w" b "$dsn_b"
    else window "$i" "$w" b "$dsn_b"; window "$i" "$w" a "$dsn_a"; fi
  done
done
echo "== steal over the iterations: $(steal_pct "$t0" "$(stat_ticks)")%, load at the end $(cut -d' ' -f1 /proc/loadavg) (the windows' own)"
awk '
  function sd(s, ss, n) { return n > 1 ? sqrt((ss - s * s / n) / (n - 1)) : 0 }
  { tps[$2, $3, $1] = log($5); if (!($2 in seen)) { seen[$2] = 1; ws[++nw] = $2 } if ($1 > last) last = $1 }
  END {
    for (k = 1; k <= nw; k++) {
      w = ws[k]; n = s = ss = m = ms = mss = 0
      for (i = 1; i <= last; i++) {
        if (!((w, "a", i) in tps) || !((w, "b", i) in tps)) continue
        d = tps[w, "a", i] - tps[w, "b", i]; n++; s += d; ss += d * d
        for (j = i - 1; j <= i + 1; j += 2) if ((w, "b", j) in tps) { d = tps[w, "a", i] - tps[w, "b", j]; m++; ms += d; mss += d * d }
      }
      printf "%s: a/b %.3f over %d iterations; spread of the log ratio, same iteration %.3f, one iteration apart %.3f\n", w, exp(s / n), n, sd(s, ss, n), sd(ms, mss, m)
    }
  }' "$tmp/windows"
