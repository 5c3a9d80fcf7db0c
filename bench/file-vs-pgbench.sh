#!/usr/bin/env bash
# A workload file's client cost beside pgbench's: fairbench runs bench/workloads/ycsb-like.yaml (a
# read of one row by key and an update of one column, half each, uniform keys) and pgbench runs
# the same two statements as scripts (ycsb-read.sql, ycsb-update.sql, -M prepared) on the same
# table of the same throwaway PostgreSQL, alternating, each run started after the load average fell
# under 1.5. Prints TPS and the client's CPU per transaction (user + system of the whole process,
# fairbench's start-up included) for fairbench, for pgbench with a thread per client (-j THREADS,
# as fairbench runs) and for pgbench's default of one thread multiplexing every client (-j 1),
# with the load and the steal beside each, and the medians.
#
# Usage: bench/file-vs-pgbench.sh [ENGINE]     (ENGINE: postgres (default, its newest release) or postgres@VERSION)
# Environment: THREADS (default 8), TIME seconds per run (15), ROUNDS (3)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-8}
TIME=${TIME:-15}
ROUNDS=${ROUNDS:-3}
ENGINE=${1:-postgres}
case "$ENGINE" in
  postgres | postgres@*) ;;
  *) echo "file-vs-pgbench: pgbench runs on PostgreSQL only, not $ENGINE: give postgres or postgres@VERSION" >&2; exit 2 ;;
esac
command -v pgbench >/dev/null || { echo "file-vs-pgbench: pgbench is not installed: run scripts/install-engines.sh" >&2; exit 2; }
. bench/lib.sh

W=bench/workloads
start_server "$ENGINE" "$tmp/serve.log" || exit 1
export PGPASSWORD="$pass"
pg=(-h 127.0.0.1 -p "$port" -U "$user" "$db")
"$FB" prepare --target "$dsn" --workload "$W/ycsb-like.yaml" >/dev/null 2>&1

quiet() { for _ in $(seq 120); do awk '{exit !($1 < 1.5)}' /proc/loadavg && return; sleep 5; done; echo "   (the load stayed at $(cut -d' ' -f1 /proc/loadavg): weak figures)"; }
row() { printf '%-14s %10s %12s %8s %7s\n' "$@"; }
declare -A per_txn
run_one() { # NAME COMMAND...: one run, its TPS, client CPU per transaction, load and steal
  local name=$1; shift
  quiet
  local load t0 n
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(stat_ticks)
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$@" >"$tmp/out" 2>&1
  if [[ $name == pgbench* ]]; then
    n=$(awk '/number of transactions actually processed/ {print $NF}' "$tmp/out")
  else
    n=$(awk '/transactions:/ {print $2; exit}' "$tmp/out")
  fi
  local us
  us=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")
  per_txn[$name]+="$us "
  row "$name" "$(awk -v n="$n" -v t="$TIME" 'BEGIN {printf "%.0f", n / t}')" "$us" "$load" "$(steal_pct "$t0" "$(stat_ticks)")"
}
echo "== workload file vs pgbench scripts on $(engine_version "$ENGINE"), $THREADS clients, ${TIME}s per run, $ROUNDS rounds"
row tool TPS "cpu/txn µs" load "steal%"
scripts=(-f "$W/ycsb-read.sql@1" -f "$W/ycsb-update.sql@1")
for round in $(seq "$ROUNDS"); do
  # The order rotates, so a drift in the machine's state favours no tool.
  runs=(fairbench pgbench-j$THREADS pgbench-j1)
  for i in 0 1 2; do
    case ${runs[$(((i + round) % 3))]} in
      fairbench) run_one fairbench "$FB" run --target "$dsn" --workload "$W/ycsb-like.yaml" --threads "$THREADS" --time "${TIME}s" --instrument off ;;
      pgbench-j1) run_one pgbench-j1 pgbench -n -M prepared -c "$THREADS" -j 1 -T "$TIME" "${scripts[@]}" "${pg[@]}" ;;
      *) run_one "pgbench-j$THREADS" pgbench -n -M prepared -c "$THREADS" -j "$THREADS" -T "$TIME" "${scripts[@]}" "${pg[@]}" ;;
    esac
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
printf 'median client CPU per transaction: fairbench %s µs, pgbench -j %s %s µs, pgbench -j 1 %s µs\n' \
  "$(median <<<"${per_txn[fairbench]}")" "$THREADS" "$(median <<<"${per_txn[pgbench-j$THREADS]}")" "$(median <<<"${per_txn[pgbench-j1]}")"
