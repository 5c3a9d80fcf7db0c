#!/usr/bin/env bash
# A workload file's client cost beside pgbench's: fairbench runs bench/workloads/ycsb-like.yaml (a
# read of one row by key and an update of one column, half each, uniform keys) and pgbench runs
# the same two statements as scripts (ycsb-read.sql, ycsb-update.sql, -M prepared) on the same
# table of the same throwaway PostgreSQL, alternating, each run started after the load average fell
# under 1.5. Prints TPS and the client's CPU per transaction (user + system of the whole process,
# fairbench's start-up included) for fairbench, for fairbench running the very pgbench scripts
# (`--workload pgbench --script`: its pgbench interpreter), for pgbench with a thread per client
# (-j THREADS, as fairbench runs) and for pgbench's default of one thread multiplexing every
# client (-j 1); beside each, fairbench's own client CPU over its measured window alone (start-up
# and the memory probe left out), the context switches per transaction (waits + preemptions),
# the load and the steal; and the medians.
#
# With SYSCALLS=1 each tool then runs once more under `strace -f -c`, and the system calls each
# makes per transaction are printed side by side: where the client's CPU is spent in the kernel
# (strace slows both tools, so these runs give counts, not speeds).
#
# Usage: bench/file-vs-pgbench.sh [ENGINE]     (ENGINE: postgres (default, its newest release) or postgres@VERSION)
# Environment: THREADS (default 8), TIME seconds per run (15), ROUNDS (3), SYSCALLS (0 or 1)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-8}
TIME=${TIME:-15}
ROUNDS=${ROUNDS:-3}
SYSCALLS=${SYSCALLS:-0}
ENGINE=${1:-postgres}
case "$ENGINE" in
  postgres | postgres@*) ;;
  *) echo "file-vs-pgbench: pgbench runs on PostgreSQL only, not $ENGINE: give postgres or postgres@VERSION" >&2; exit 2 ;;
esac
case "$SYSCALLS" in 0 | 1) ;; *) echo "file-vs-pgbench: SYSCALLS is 0 or 1, not '$SYSCALLS'" >&2; exit 2 ;; esac
[ "$SYSCALLS" = 0 ] || command -v strace >/dev/null || { echo "file-vs-pgbench: SYSCALLS=1 needs strace: apt-get install strace" >&2; exit 2; }
command -v pgbench >/dev/null || { echo "file-vs-pgbench: pgbench is not installed: run scripts/install-engines.sh" >&2; exit 2; }
. bench/args.sh
whole_numbers file-vs-pgbench THREADS TIME ROUNDS
. bench/lib.sh

W=bench/workloads
start_server "$ENGINE" "$tmp/serve.log" || exit 1
export PGPASSWORD="$pass"
pg=(-h 127.0.0.1 -p "$port" -U "$user" "$db")
"$FB" prepare --target "$dsn" --workload "$W/ycsb-like.yaml" >/dev/null 2>&1
# fairbench runs pgbench scripts only where its pgbench data set is recorded; the scripts read
# and write the workload file's table, which fairbench created too.
"$FB" prepare --target "$dsn" --workload pgbench --scale 1 >/dev/null 2>&1

quiet() { for _ in $(seq 120); do awk '{exit !($1 < 1.5)}' /proc/loadavg && return; sleep 5; done; echo "   (the load stayed at $(cut -d' ' -f1 /proc/loadavg): weak figures)"; }
row() { printf '%-16s %10s %12s %14s %14s %8s %7s\n' "$@"; }
declare -A per_txn in_window
transactions() { # NAME: the transactions the run in $tmp/out counted
  if [[ $1 == pgbench* ]]; then
    awk '/number of transactions actually processed/ {print $NF}' "$tmp/out"
  else
    awk '/transactions:/ {print $2; exit}' "$tmp/out"
  fi
}
run_one() { # NAME COMMAND...: one run, its TPS, client CPU per transaction, load and steal
  local name=$1; shift
  quiet
  local load t0 n
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(stat_ticks)
  /usr/bin/time -f '%U %S %w %c' -o "$tmp/cpu" "$@" >"$tmp/out" 2>&1
  n=$(transactions "$name")
  local us switches
  us=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")
  # Context switches per transaction, the client's waits (voluntary) and preemptions: each costs
  # the kernel a switch away and back, which is where a client's system time goes.
  switches=$(tail -n 1 "$tmp/cpu" | awk -v n="$n" '{ if (n > 0) printf "%.2f+%.2f", $3 / n, $4 / n; else print "-" }')
  # fairbench's own figure for the measured window alone (its start-up and the memory probe
  # around the window left out); pgbench gives none, and its start-up is a few connections.
  local window=-
  [[ $name == fairbench* ]] && window=$(awk '/client CPU:/ {gsub(/\(/, "", $4); print $4; exit}' "$tmp/out")
  per_txn[$name]+="$us "
  in_window[$name]+="$window "
  row "$name" "$(awk -v n="$n" -v t="$TIME" 'BEGIN {printf "%.0f", n / t}')" "$us" "${window:--}" "$switches" "$load" "$(steal_pct "$t0" "$(stat_ticks)")"
}
echo "== workload file vs pgbench scripts on $(engine_version "$ENGINE"), $THREADS clients, ${TIME}s per run, $ROUNDS rounds"
row tool TPS "cpu/txn µs" "in window µs" "switches/txn" load "steal%"
scripts=(-f "$W/ycsb-read.sql@1" -f "$W/ycsb-update.sql@1")
fb_cmd=("$FB" run --target "$dsn" --workload "$W/ycsb-like.yaml" --threads "$THREADS" --time "${TIME}s" --instrument off)
fb_script=("$FB" run --target "$dsn" --workload pgbench --script "$W/ycsb-read.sql@1,$W/ycsb-update.sql@1" --threads "$THREADS" --time "${TIME}s" --instrument off)
pg_j1=(pgbench -n -M prepared -c "$THREADS" -j 1 -T "$TIME" "${scripts[@]}" "${pg[@]}")
pg_jn=(pgbench -n -M prepared -c "$THREADS" -j "$THREADS" -T "$TIME" "${scripts[@]}" "${pg[@]}")
for round in $(seq "$ROUNDS"); do
  # The order rotates, so a drift in the machine's state favours no tool.
  runs=(fairbench pgbench-j$THREADS fairbench-script pgbench-j1)
  for i in 0 1 2 3; do
    case ${runs[$(((i + round) % 4))]} in
      fairbench) run_one fairbench "${fb_cmd[@]}" ;;
      fairbench-script) run_one fairbench-script "${fb_script[@]}" ;;
      pgbench-j1) run_one pgbench-j1 "${pg_j1[@]}" ;;
      *) run_one "pgbench-j$THREADS" "${pg_jn[@]}" ;;
    esac
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
printf 'median client CPU per transaction: fairbench %s µs (the same as pgbench scripts: %s µs), pgbench -j %s %s µs, pgbench -j 1 %s µs\n' \
  "$(median <<<"${per_txn[fairbench]}")" "$(median <<<"${per_txn[fairbench-script]}")" "$THREADS" \
  "$(median <<<"${per_txn[pgbench-j$THREADS]}")" "$(median <<<"${per_txn[pgbench-j1]}")"
printf 'fairbench over its measured window alone: %s µs (file), %s µs (pgbench scripts)\n' \
  "$(median <<<"${in_window[fairbench]}")" "$(median <<<"${in_window[fairbench-script]}")"

[ "$SYSCALLS" = 1 ] || exit 0
# System calls per transaction, from one run of each tool under strace -f -c.
trace_one() { # NAME COMMAND...
  local name=$1; shift
  quiet
  strace -f -qq -c -o "$tmp/strace.$name" "$@" >"$tmp/out" 2>&1
  awk -v n="$(transactions "$name")" -v name="$name" '
    $NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {
      calls = $4; errs = (NF == 6 ? $5 : 0)
      if (calls / n >= 0.01) printf "%s %s %.2f %.2f\n", name, $NF, calls / n, errs / n
    }' "$tmp/strace.$name" >>"$tmp/syscalls"
}
trace_one fairbench "${fb_cmd[@]}"
trace_one "pgbench-j$THREADS" "${pg_jn[@]}"
echo "== system calls per transaction (one run each under strace -f -c; errors in brackets)"
printf '%-16s %14s %14s\n' syscall fairbench "pgbench-j$THREADS"
awk -v pg="pgbench-j$THREADS" '{ calls[$2, $1] = $3; errs[$2, $1] = $4; seen[$2] = 1 }
  END { for (s in seen) printf "%-16s %8.2f (%.2f) %8.2f (%.2f)\n", s, calls[s, "fairbench"], errs[s, "fairbench"], calls[s, pg], errs[s, pg] }' \
  "$tmp/syscalls" | sort -k2,2nr
