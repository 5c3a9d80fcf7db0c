#!/usr/bin/env bash
# How much of a TPC-C figure is the client's style: fairbench's tpcc run three ways on the same
# throwaway server and data, in alternating rounds (the order rotates each round, so no style
# always runs first after the load or last on the grown tables): statements (one statement per
# row, as the spec's pseudo-code), batched (go-tpc's multi-row statements) and routines
# (HammerDB's stored procedures, one CALL per transaction). Prints each run's tpmC (NewOrders per
# minute, the 1% rolled back included, as the spec counts them), round trips per transaction
# counted on the wire, the host's CPU steal and the machine's load average after the run, and
# each style's median.
#
# Usage: bench/tpcc-styles.sh [ENGINE...]     (default: postgres mariadb; any KIND or KIND@VERSION)
# Environment: WAREHOUSES (2), THREADS (8), TIME seconds per run (20), ROUNDS (3),
#   STYLES ("statements batched routines").
set -euo pipefail
cd "$(dirname "$0")/.."

WAREHOUSES=${WAREHOUSES:-2}
THREADS=${THREADS:-8}
TIME=${TIME:-20}
ROUNDS=${ROUNDS:-3}
read -r -a STYLES <<<"${STYLES:-statements batched routines}"
[ $# -gt 0 ] || set -- postgres mariadb
. bench/args.sh
whole_numbers tpcc-styles WAREHOUSES THREADS TIME ROUNDS
. bench/lib.sh

for engine in "$@"; do
  start_server "$engine" "$tmp/serve.log" || exit 1
  opts=(--target "$dsn" --workload tpcc --warehouses "$WAREHOUSES")
  echo "== $(engine_version "$engine"): $WAREHOUSES warehouses, $THREADS threads, ${TIME}s per run, $ROUNDS rounds"
  "$FB" prepare "${opts[@]}" >/dev/null 2>"$tmp/prep.err" || { tail -n 5 "$tmp/prep.err" >&2; exit 1; }
  printf '%-11s %6s %10s %12s %7s %6s\n' style round tpmC "trips/txn" "steal%" load
  : >"$tmp/rounds"
  for round in $(seq "$ROUNDS"); do
    n=${#STYLES[@]}
    for i in $(seq 0 $((n - 1))); do
      style=${STYLES[$(((i + round - 1) % n))]}
      t0=$(stat_ticks)
      "$FB" run "${opts[@]}" --style "$style" --threads "$THREADS" --time "${TIME}s" --out "$tmp/r.json" >/dev/null 2>"$tmp/run.err" ||
        { echo "$style run failed:" >&2; tail -n 5 "$tmp/run.err" >&2; exit 1; }
      steal=$(steal_pct "$t0" "$(stat_ticks)")
      read -r tpmc trips < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print("%.0f %.2f" % (r["metrics"]["tpmc"], (r.get("wire") or {}).get("round_trips_per_txn", 0)))' "$tmp/r.json")
      printf '%-11s %6s %10s %12s %7s %6s\n' "$style" "$round" "$tpmc" "$trips" "$steal" "$(cut -d' ' -f1 /proc/loadavg)"
      echo "$style $tpmc $trips" >>"$tmp/rounds"
    done
  done
  med() { awk -v s="$1" -v c="$2" '$1 == s {print $c}' "$tmp/rounds" | sort -g |
    awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
  for style in "${STYLES[@]}"; do
    printf 'median of %d rounds: %-11s %8.0f tpmC %8.2f round trips per transaction\n' "$ROUNDS" "$style" "$(med "$style" 2)" "$(med "$style" 3)"
  done
  stop_server
done
