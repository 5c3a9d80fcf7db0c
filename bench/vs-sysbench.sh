#!/usr/bin/env bash
# Side by side: Debian's sysbench 1.0.20 (and pgbench for the select-only case) against fairbench
# on the same throwaway server, the same tables, the same workload and threads, alternating, so
# both see the same machine state. Prints TPS and the client's own CPU per transaction for each,
# and the time each tool takes to load 4 x 100,000 rows.
#
# The client shares the machine with the server, so the client CPU per transaction decides how
# much is left for the engine under test: fairbench must not spend more than sysbench.
#
# Usage: bench/vs-sysbench.sh [ENGINE...]      (default: postgres mariadb)
# Environment: THREADS (default 4), TIME seconds per run (default 10), ROUNDS (default 3),
#              TABLES (4), TABLE_SIZE (100000)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-4}
TIME=${TIME:-10}
ROUNDS=${ROUNDS:-3}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(postgres mariadb)

command -v sysbench >/dev/null || { echo "vs-sysbench: sysbench is not installed: run scripts/install-engines.sh" >&2; exit 2; }
. bench/args.sh
whole_numbers vs-sysbench THREADS TIME ROUNDS TABLES TABLE_SIZE
. bench/lib.sh

row() { printf '%-10s %-20s %-10s %12s %12s %12s %7s\n' "$@"; }
# measured WORKLOAD TOOL TPS CPU_US STEAL: keeps a round's figures for the medians.
measured() { printf '%s %s %s %s %s\n' "$@" >>"$tmp/rounds"; }
# medians: one line per workload, the median of each tool's rounds: this machine's noise moves
# single rounds by 10-20%, medians much less.
medians() {
  echo "medians of $ROUNDS rounds:"
  printf '%-20s %14s %14s %16s %16s %8s %7s\n' workload "sysbench TPS" "fairbench TPS" "sysbench µs/txn" "fairbench µs/txn" "cpu f/s" "steal%"
  for workload in $(awk '{print $1}' "$tmp/rounds" | uniq); do
    med() { awk -v w="$workload" -v t="$1" -v c="$2" '$1 == w && $2 == t {print $c}' "$tmp/rounds" | sort -g |
      awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
    st=$(med sysbench 3); ft=$(med fairbench 3); sc=$(med sysbench 4); fc=$(med fairbench 4)
    steal=$(awk -v w="$workload" '$1 == w {s += $5; n++} END {printf "%.0f", (n ? s / n : 0)}' "$tmp/rounds")
    printf '%-20s %14.1f %14.1f %16.1f %16.1f %8.2f %7s\n' "$workload" "$st" "$ft" "$sc" "$fc" \
      "$(awk -v a="$fc" -v b="$sc" 'BEGIN {print (b > 0 ? a / b : 0)}')" "$steal"
  done
  : >"$tmp/rounds"
}

for engine in "${ENGINES[@]}"; do
  start_server "$engine" "$tmp/serve.log" --buffer-pool 1G || exit 1
  if [ "${engine%%@*}" = postgres ]; then
    sb=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" --pgsql-user="$user" --pgsql-password="$pass" --pgsql-db="$db")
  else
    sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user="$user" --mysql-password="$pass" --mysql-db="$db")
  fi
  common=(--tables="$TABLES" --table-size="$TABLE_SIZE" --rand-type=uniform)

  # ENGINE or ENGINE@VERSION; `fairbench engines` lists engine@version, origin, version, oldest first.
  echo "== $(engine_version "$engine"), $THREADS threads, ${TIME}s per run"
  # Loading: sysbench prepare (one thread, as its default) vs fairbench prepare (defaults).
  /usr/bin/time -f '%e' -o "$tmp/t" sysbench oltp_read_write "${sb[@]}" "${common[@]}" prepare >/dev/null
  sb_prep=$(tail -n 1 "$tmp/t")
  sysbench oltp_read_write "${sb[@]}" "${common[@]}" cleanup >/dev/null
  /usr/bin/time -f '%e' -o "$tmp/t" "$FB" prepare --target "$dsn" --workload oltp_read_write --tables "$TABLES" --table-size "$TABLE_SIZE" >/dev/null 2>&1
  fb_prep=$(tail -n 1 "$tmp/t")
  printf 'prepare %dx%d rows: sysbench %ss, fairbench %ss (%.1fx faster)\n' "$TABLES" "$TABLE_SIZE" "$sb_prep" "$fb_prep" \
    "$(awk -v a="$sb_prep" -v b="$fb_prep" 'BEGIN { print (b > 0 ? a / b : 0) }')"

  row engine workload tool TPS "cpu/txn µs" "queries/txn" "steal%"
  for workload in oltp_read_write oltp_read_only oltp_point_select; do
    for round in $(seq "$ROUNDS"); do
      t0=$(stat_ticks)
      /usr/bin/time -f '%U %S' -o "$tmp/cpu" sysbench "$workload" "${sb[@]}" "${common[@]}" --threads="$THREADS" --time="$TIME" run >"$tmp/sb.out"
      n=$(awk '/transactions:/ {print $2}' "$tmp/sb.out"); q=$(awk '/queries:/ && !/performed/ {print $2}' "$tmp/sb.out")
      tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$tmp/sb.out")
      cpu=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n") steal=$(steal_pct "$t0" "$(stat_ticks)")
      row "$engine" "$workload" "sysbench#$round" "$tps" "$cpu" "$(awk -v q="$q" -v n="$n" 'BEGIN{printf "%.1f", q/n}')" "$steal"
      measured "$workload" sysbench "$tps" "$cpu" "$steal"

      t0=$(stat_ticks)
      /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$FB" run --target "$dsn" --workload "$workload" --tables "$TABLES" --table-size "$TABLE_SIZE" \
        --threads "$THREADS" --time "${TIME}s" --out "$tmp/fb.json" >"$tmp/fb.out" 2>/dev/null
      n=$(awk '/transactions:/ {print $2}' "$tmp/fb.out"); q=$(awk '/^    queries:/ {print $2}' "$tmp/fb.out")
      tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$tmp/fb.out")
      cpu=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n") steal=$(steal_pct "$t0" "$(stat_ticks)")
      row "$engine" "$workload" "fairbench#$round" "$tps" "$cpu" "$(awk -v q="$q" -v n="$n" 'BEGIN{printf "%.1f", q/n}')" "$steal"
      measured "$workload" fairbench "$tps" "$cpu" "$steal"
    done
  done
  medians
  if [ "${engine%%@*}" = postgres ] && command -v pgbench >/dev/null; then
    # pgbench's select-only (-S) is one point select per transaction, like oltp_point_select;
    # it needs its own tables, so it runs last on this server.
    PGPASSWORD="$pass" pgbench -i -q -s 4 -h 127.0.0.1 -p "$port" -U "$user" "$db" >/dev/null 2>&1
    t0=$(stat_ticks)
    /usr/bin/time -f '%U %S' -o "$tmp/cpu" env PGPASSWORD="$pass" pgbench -S -M prepared -c "$THREADS" -j "$THREADS" -T "$TIME" \
      -h 127.0.0.1 -p "$port" -U "$user" "$db" >"$tmp/pg.out" 2>/dev/null
    n=$(awk '/number of transactions actually processed/ {print $NF}' "$tmp/pg.out")
    tps=$(awk '/^tps/ {print $3; exit}' "$tmp/pg.out")
    row "$engine" "select-only (-S)" "pgbench" "$tps" "$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")" "1.0" "$(steal_pct "$t0" "$(stat_ticks)")"
  fi
  stop_server
done
