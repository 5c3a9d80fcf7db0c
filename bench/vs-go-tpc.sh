#!/usr/bin/env bash
# Side by side: PingCAP's go-tpc TPC-C against fairbench's tpcc (--style batched, go-tpc's own
# style of round trips) on one throwaway server, with the same warehouses and threads,
# alternating which runs first from round to round. Each tool loads its own database on that
# server (their table names are the same). Prints each run's tpmC (committed New-Orders per minute:
# go-tpc's tpmC, fairbench's NOPM) and
# all transactions per minute, each client's CPU per transaction (user + system of the whole
# process, /usr/bin/time), the statements the server ran per transaction (its own statement
# statistics, BEGIN and COMMIT included), the host's CPU steal and the load average after the run, and the
# medians.
#
# go-tpc is not part of fairbench: build it from its public source yourself
# (https://github.com/pingcap/go-tpc, `make build` or `go build ./cmd/go-tpc`) and pass the
# binary's path; this script never fetches or builds it.
#
# Usage: bench/vs-go-tpc.sh GO_TPC_BINARY [ENGINE]    (ENGINE: postgres (default), mysql, mariadb, or KIND@RELEASE)
# Environment: WAREHOUSES (2), THREADS (4), TIME seconds per run (30), ROUNDS (3), STYLE (batched:
#   fairbench's tpcc --style).
set -euo pipefail
cd "$(dirname "$0")/.."

GOTPC=${1:-}
ENGINE=${2:-postgres}
WAREHOUSES=${WAREHOUSES:-2}
THREADS=${THREADS:-4}
TIME=${TIME:-30}
ROUNDS=${ROUNDS:-3}
STYLE=${STYLE:-batched}
if [ -z "$GOTPC" ] || [ ! -x "$GOTPC" ]; then
  echo "vs-go-tpc: give the path of a go-tpc binary you built, e.g. bench/vs-go-tpc.sh ~/src/go-tpc/bin/go-tpc postgres" >&2
  exit 2
fi
. bench/args.sh
whole_numbers vs-go-tpc WAREHOUSES THREADS TIME ROUNDS
. bench/lib.sh

start_server "$ENGINE" "$tmp/serve.log" || exit 1
gdb=fb_go_tpc
if [ "${ENGINE%%@*}" = postgres ]; then
  PGPASSWORD="$pass" psql -q -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -c "CREATE DATABASE $gdb"
  g=(-d postgres --conn-params sslmode=disable)
else
  MYSQL_PWD="$pass" mysql -h 127.0.0.1 -P "$port" -u "$user" -e "CREATE DATABASE $gdb"
  g=(-d mysql)
fi
# go-tpc takes the password on its command line only (other local users see it in ps while it
# runs): the server is a throwaway one, removed with its password when the script ends.
g+=(-H 127.0.0.1 -P "$port" -U "$user" -p "$pass" -D "$gdb")
# statements DBNAME: the statements the server has run so far, to count each tool's statements
# per transaction on the server's side: PostgreSQL's pg_stat_statements in that database (BEGIN
# and COMMIT included); on MySQL and MariaDB the server's Questions, which count a prepared
# statement's executions where the performance schema's digests miss them on MariaDB (whole
# server: the tools run one at a time; fairbench's once-a-second figures add a few).
statements() {
  if [ "${ENGINE%%@*}" = postgres ]; then
    PGPASSWORD="$pass" psql -qAt -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -c \
      "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$1'"
  else
    MYSQL_PWD="$pass" mysql -N -h 127.0.0.1 -P "$port" -u "$user" -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'
  fi
}
fbopts=(--target "$dsn" --workload tpcc --warehouses "$WAREHOUSES" --style "$STYLE")

echo "== $(engine_version "$ENGINE"): $WAREHOUSES warehouses, $THREADS threads, ${TIME}s per run, fairbench tpcc --style $STYLE, load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f '%e' -o "$tmp/t" "$GOTPC" tpcc "${g[@]}" --warehouses "$WAREHOUSES" -T "$THREADS" prepare >"$tmp/gprep.out" 2>&1 ||
  { tail -n 5 "$tmp/gprep.out" >&2; exit 1; }
g_prep=$(tail -n 1 "$tmp/t")
/usr/bin/time -f '%e' -o "$tmp/t" "$FB" prepare "${fbopts[@]}" >/dev/null 2>&1
printf 'prepare: go-tpc %ss, fairbench %ss\n' "$g_prep" "$(tail -n 1 "$tmp/t")"
# go-tpc's load takes minutes (on MariaDB, about 19 for one warehouse): the rounds wait for quiet.
wait_quiet

printf '%-10s %5s %9s %9s %12s %9s %7s %6s\n' tool round tpmC "txn/min" "cpu/txn µs" "stmt/txn" "steal%" load
: >"$tmp/rounds"
run_gotpc() {
  local t0 s0
  t0=$(stat_ticks) s0=$(statements "$gdb")
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$GOTPC" tpcc "${g[@]}" --warehouses "$WAREHOUSES" -T "$THREADS" \
    --time "${TIME}s" --interval "${TIME}s" run >"$tmp/g.out" 2>&1 || { tail -n 5 "$tmp/g.out" >&2; exit 1; }
  local tpmc tpm n cpu
  tpmc=$(sed -n 's/.*tpmC: \([0-9.]*\).*/\1/p' "$tmp/g.out" | tail -n 1)
  tpm=$(sed -n 's/.*tpmTotal: \([0-9.]*\).*/\1/p' "$tmp/g.out" | tail -n 1)
  n=$(awk -v t="$tpm" -v s="$TIME" 'BEGIN {printf "%.0f", t * s / 60}')
  cpu=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")
  st=$(awk -v a="$s0" -v b="$(statements "$gdb")" -v n="$n" 'BEGIN {printf "%.1f", (b - a) / n}')
  printf '%-10s %5s %9s %9s %12s %9s %7s %6s\n' go-tpc "$round" "$tpmc" "$tpm" "$cpu" "$st" "$(steal_pct "$t0" "$(stat_ticks)")" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "go-tpc $tpmc $tpm $cpu $st" >>"$tmp/rounds"
}
run_fairbench() {
  local t0 s0
  t0=$(stat_ticks) s0=$(statements "$db")
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$FB" run "${fbopts[@]}" --threads "$THREADS" --time "${TIME}s" --out "$tmp/fb.json" \
    >"$tmp/fb.out" 2>"$tmp/fb.err" || { tail -n 5 "$tmp/fb.err" >&2; exit 1; }
  local tpmc tpm n cpu
  read -r tpmc tpm n < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); m=r.get("metrics",{})
print("%.1f %.1f %d" % (m.get("nopm", 0), 60*r["transactions"]/r["duration_s"], r["transactions"]))' "$tmp/fb.json")
  cpu=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")
  st=$(awk -v a="$s0" -v b="$(statements "$db")" -v n="$n" 'BEGIN {printf "%.1f", (b - a) / n}')
  printf '%-10s %5s %9s %9s %12s %9s %7s %6s\n' fairbench "$round" "$tpmc" "$tpm" "$cpu" "$st" "$(steal_pct "$t0" "$(stat_ticks)")" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "fairbench $tpmc $tpm $cpu $st" >>"$tmp/rounds"
}
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then run_gotpc; run_fairbench; else run_fairbench; run_gotpc; fi
done

med() { awk -v t="$1" -v c="$2" '$1 == t {print $c}' "$tmp/rounds" | sort -g |
  awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf 'medians of %d rounds: tpmC go-tpc %.1f, fairbench %.1f (%.2fx); txn/min go-tpc %.1f, fairbench %.1f; cpu/txn µs go-tpc %.1f, fairbench %.1f; server statements/txn go-tpc %.1f, fairbench %.1f\n' \
  "$ROUNDS" "$(med go-tpc 2)" "$(med fairbench 2)" "$(awk -v a="$(med go-tpc 2)" -v b="$(med fairbench 2)" 'BEGIN {print (a > 0 ? b / a : 0)}')" \
  "$(med go-tpc 3)" "$(med fairbench 3)" "$(med go-tpc 4)" "$(med fairbench 4)" "$(med go-tpc 5)" "$(med fairbench 5)"
