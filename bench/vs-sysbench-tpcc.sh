#!/usr/bin/env bash
# Side by side: Percona's sysbench-tpcc ("TPCC-like", run by Debian's sysbench) against fairbench's
# sbtpcc on the same throwaway server, with the same scale, table sets and threads, alternating
# rounds, so both see the same machine state. Each tool loads and runs its own database on that
# server (their table names are the same). Prints each round's TPS (sysbench's events per second,
# all five transaction types, the rolled-back NewOrders included; fairbench's transactions per
# second, counted the same way), sysbench's error rate (its rolled-back NewOrders and restarted
# deadlocks) beside fairbench's rollbacks and retries, the host's CPU steal and the machine's load
# average after the run (other work on the machine moves single rounds a lot), and the medians.
#
# sysbench-tpcc's Lua scripts are not part of fairbench: pass the path of your own checkout of
# https://github.com/Percona-Lab/sysbench-tpcc; this script never fetches it.
#
# Usage: bench/vs-sysbench-tpcc.sh SYSBENCH_TPCC_DIR [ENGINE]     (ENGINE: mariadb (default), mysql, postgres, or one with a version: postgres@17)
# Environment: SCALE (2), TABLES (1), THREADS (4), TIME seconds per run (30), ROUNDS (3),
#   CLIENT_SCHED: batch (default) or normal: the Linux scheduling policy of both clients. fairbench's
#       client threads run under SCHED_BATCH by default; sysbench runs under `chrt --batch 0` to
#       match, since on a busy machine a batch client waits longer for the CPU after each of the
#       28 round trips of an event, which alone moved fairbench's TPS by 25% here.
#   FK: 0 (default) loads both without foreign keys (sysbench --use_fk=0, fairbench --foreign-keys off),
#       so both servers do the same work; 1 gives sysbench-tpcc its default keys, which it does not
#       check on MySQL and MariaDB, and fairbench the same keys, checked on every engine.
set -euo pipefail
cd "$(dirname "$0")/.."

SBT=${1:-}
ENGINE=${2:-mariadb}
SCALE=${SCALE:-2}
TABLES=${TABLES:-1}
THREADS=${THREADS:-4}
TIME=${TIME:-30}
ROUNDS=${ROUNDS:-3}
FK=${FK:-0}
CLIENT_SCHED=${CLIENT_SCHED:-batch}

if [ -z "$SBT" ] || [ ! -f "$SBT/tpcc.lua" ] || [ ! -f "$SBT/tpcc_run.lua" ]; then
  echo "vs-sysbench-tpcc: give the path of a sysbench-tpcc checkout (with tpcc.lua), e.g. bench/vs-sysbench-tpcc.sh ~/src/sysbench-tpcc" >&2
  exit 2
fi
SBT=$(cd "$SBT" && pwd)
command -v sysbench >/dev/null || { echo "vs-sysbench-tpcc: sysbench is not installed: run scripts/install-engines.sh" >&2; exit 2; }
case $CLIENT_SCHED in batch) sched=(chrt --batch 0) ;; normal) sched=() ;; *) echo "vs-sysbench-tpcc: CLIENT_SCHED must be batch or normal, got $CLIENT_SCHED" >&2; exit 2 ;; esac
export FAIRBENCH_CLIENT_SCHED=$CLIENT_SCHED
case $FK in 0) fb_fk=off ;; 1) fb_fk=on ;; *) echo "vs-sysbench-tpcc: FK must be 0 or 1, got $FK" >&2; exit 2 ;; esac
. bench/args.sh
whole_numbers vs-sysbench-tpcc SCALE TABLES THREADS TIME ROUNDS
. bench/lib.sh

start_server "$ENGINE" "$tmp/serve.log" || exit 1
sbdb=fb_sysbench_tpcc
if [ "${ENGINE%%@*}" = postgres ]; then
  PGPASSWORD="$pass" psql -q -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -c "CREATE DATABASE $sbdb"
  sb=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" --pgsql-user="$user" --pgsql-password="$pass" --pgsql-db="$sbdb")
else
  MYSQL_PWD="$pass" mysql -h 127.0.0.1 -P "$port" -u "$user" -e "CREATE DATABASE $sbdb"
  sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user="$user" --mysql-password="$pass" --mysql-db="$sbdb")
fi
sbtpcc() { (cd "$SBT" && LUA_PATH="$SBT/?.lua;;" "${sched[@]}" sysbench ./tpcc.lua "${sb[@]}" --scale="$SCALE" --tables="$TABLES" --use_fk="$FK" "$@"); }
fbopts=(--target "$dsn" --workload sbtpcc --scale "$SCALE" --tables "$TABLES" --foreign-keys "$fb_fk")

echo "== $(engine_version "$ENGINE"): scale $SCALE, $TABLES table set(s), $THREADS threads, ${TIME}s per run, foreign keys: $fb_fk, clients under SCHED_${CLIENT_SCHED^^}"
t0=$(date +%s.%N)
sbtpcc --threads="$SCALE" prepare >"$tmp/sbprep.out"
sb_prep=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
/usr/bin/time -f '%e' -o "$tmp/t" "$FB" prepare "${fbopts[@]}" >/dev/null 2>&1
printf 'prepare: sysbench-tpcc %ss (30 s of it a fixed wait), fairbench %ss\n' "$sb_prep" "$(tail -n 1 "$tmp/t")"

printf '%-12s %6s %10s %22s %7s %6s\n' tool round TPS "err/s | rollback+retry/s" "steal%" load
: >"$tmp/rounds"
for round in $(seq "$ROUNDS"); do
  t0=$(stat_ticks)
  sbtpcc --threads="$THREADS" --time="$TIME" --report-interval=0 run >"$tmp/sb.out"
  tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$tmp/sb.out")
  errs=$(awk -F'[()]' '/ignored errors:/ {split($2, a, " "); print a[1]}' "$tmp/sb.out")
  steal=$(steal_pct "$t0" "$(stat_ticks)")
  printf '%-12s %6s %10s %22s %7s %6s\n' sysbench "$round" "$tps" "$errs" "$steal" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "sysbench $tps $steal" >>"$tmp/rounds"

  t0=$(stat_ticks)
  "$FB" run "${fbopts[@]}" --threads "$THREADS" --time "${TIME}s" --out "$tmp/fb.json" >"$tmp/fb.out" 2>"$tmp/fb.err" ||
    { echo "fairbench run failed:" >&2; tail -n 5 "$tmp/fb.err" >&2; exit 1; }
  tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$tmp/fb.out")
  other=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f" % ((r.get("rollbacks",0)+r.get("retries",0))/r["duration_s"]))' "$tmp/fb.json")
  steal=$(steal_pct "$t0" "$(stat_ticks)")
  printf '%-12s %6s %10s %22s %7s %6s\n' fairbench "$round" "$tps" "$other" "$steal" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "fairbench $tps $steal" >>"$tmp/rounds"
done

med() { awk -v t="$1" '$1 == t {print $2}' "$tmp/rounds" | sort -g |
  awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
s=$(med sysbench) f=$(med fairbench)
printf 'medians of %d rounds: sysbench-tpcc %.1f TPS, fairbench sbtpcc %.1f TPS, fairbench/sysbench %.2f\n' "$ROUNDS" "$s" "$f" \
  "$(awk -v a="$f" -v b="$s" 'BEGIN {print (b > 0 ? a / b : 0)}')"
stop_server
