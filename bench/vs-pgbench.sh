#!/usr/bin/env bash
# Side by side: PostgreSQL's pgbench (built-in tpcb-like script, prepared statements) against
# fairbench's tpcb workload on the same throwaway PostgreSQL server, alternating runs so both see
# the same machine state. Prints the load time of each, then TPS and the client's own CPU per
# transaction for every run, and the ratio of the mean TPS. The tool that runs first alternates
# from round to round.
#
# fairbench refuses to touch tables it did not create, so the two tools get one database each on
# the same server: pgbench the server's default database, fairbench a second one (pgb).
# pgbench vacuums pgbench_branches and pgbench_tellers before every run; the script does the same
# for fairbench's tables so both start from the same state. (pgbench also truncates its history;
# fairbench keeps it, since its check adds it up, and an append-only heap costs the same to
# insert into whatever its size.)
#
# With SCRIPT=FILE both run that pgbench script instead of the built-in tpcb-like: pgbench -f FILE,
# fairbench --workload pgbench --script FILE, on the same tables; pgbench -r's statement lines are
# counted beside fairbench's statements per transaction.
#
# Usage: bench/vs-pgbench.sh [ENGINE]     (ENGINE: postgres (default, its newest release) or postgres@VERSION)
# Environment: SCALE (default 4), THREADS (4), TIME seconds per run (10), ROUNDS (2), SCRIPT (none)
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE=${SCALE:-4}
THREADS=${THREADS:-4}
TIME=${TIME:-10}
ROUNDS=${ROUNDS:-2}
SCRIPT=${SCRIPT:-}
ENGINE=${1:-postgres}
[ -z "$SCRIPT" ] || [ -r "$SCRIPT" ] || { echo "vs-pgbench: SCRIPT=$SCRIPT is not a readable file: give a pgbench script" >&2; exit 2; }
case "$ENGINE" in
  postgres | postgres@*) ;;
  *) echo "vs-pgbench: pgbench runs on PostgreSQL only, not $ENGINE: give postgres or postgres@VERSION" >&2; exit 2 ;;
esac

for tool in pgbench psql; do
  command -v "$tool" >/dev/null || { echo "vs-pgbench: $tool is not installed: run scripts/install-engines.sh" >&2; exit 2; }
done
. bench/args.sh
whole_numbers vs-pgbench SCALE THREADS TIME ROUNDS
. bench/lib.sh

row() { printf '%-14s %12s %14s %12s %7s\n' "$@"; }

start_server "$ENGINE" "$tmp/serve.log" --buffer-pool 1G || exit 1
fbdb=pgb
second_database "$fbdb"

pg_script=(); fb_workload=(--workload tpcb)
if [ -n "$SCRIPT" ]; then
  pg_script=(-r -f "$SCRIPT")
  fb_workload=(--workload pgbench --script "$SCRIPT")
fi
echo "== pgbench vs fairbench ${SCRIPT:-tpcb} on $(engine_version "$ENGINE"), scale $SCALE, $THREADS threads, ${TIME}s per run, $ROUNDS rounds"
/usr/bin/time -f '%e' -o "$tmp/t" pgbench -i -q -s "$SCALE" "${pg[@]}" "$db" >/dev/null 2>&1
pg_prep=$(tail -n 1 "$tmp/t")
/usr/bin/time -f '%e' -o "$tmp/t" "$FB" prepare --target "$fbdsn" --workload tpcb --scale "$SCALE" >/dev/null 2>&1
fb_prep=$(tail -n 1 "$tmp/t")
printf 'load scale %d: pgbench -i %ss, fairbench prepare %ss\n' "$SCALE" "$pg_prep" "$fb_prep"

row tool TPS "cpu/txn µs" transactions "steal%"
pg_sum=0; fb_sum=0
run_pgbench() {
  local t0
  t0=$(stat_ticks)
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" pgbench -M prepared "${pg_script[@]}" -c "$THREADS" -j "$THREADS" -T "$TIME" "${pg[@]}" "$db" >"$tmp/pg.out" 2>/dev/null
  local n tps
  n=$(awk '/number of transactions actually processed/ {print $NF}' "$tmp/pg.out")
  tps=$(awk '/^tps/ {printf "%.2f", $3; exit}' "$tmp/pg.out")
  pg_sum=$(awk -v a="$pg_sum" -v b="$tps" 'BEGIN { print a + b }')
  row "pgbench#$1" "$tps" "$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")" "$n" "$(steal_pct "$t0" "$(stat_ticks)")"
  # pgbench -r lists each SQL statement of the script with its mean latency (meta-commands too).
  [ -z "$SCRIPT" ] || echo "   pgbench -r statement lines: $(awk '/statement latencies/ {on = 1; next}
    on && NF > 1 {c = $0; sub(/^[ \t]*[0-9.]+[ \t]+([0-9]+[ \t]+)?/, "", c); if (c !~ /^\\/) n++}
    END {print n + 0}' "$tmp/pg.out")"
}
run_fairbench() {
  psql "${pg[@]}" -d "$fbdb" -qc "VACUUM pgbench_branches" -c "VACUUM pgbench_tellers" >/dev/null
  local t0
  t0=$(stat_ticks)
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$FB" run --target "$fbdsn" "${fb_workload[@]}" --scale "$SCALE" \
    --threads "$THREADS" --time "${TIME}s" --out "$tmp/fb.json" >"$tmp/fb.out" 2>/dev/null
  local n tps
  n=$(awk '/transactions:/ {print $2}' "$tmp/fb.out")
  tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$tmp/fb.out")
  fb_sum=$(awk -v a="$fb_sum" -v b="$tps" 'BEGIN { print a + b }')
  row "fairbench#$1" "$tps" "$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n")" "$n" "$(steal_pct "$t0" "$(stat_ticks)")"
  [ -z "$SCRIPT" ] || echo "   fairbench statements per transaction: $(awk '$1 == "queries:" {q = $2} $1 == "transactions:" {t = $2} END {if (t > 0) printf "%.2f", q / t}' "$tmp/fb.out")"
}
# Who goes first alternates, so a drift in machine state (checkpoints, caches) favours neither.
for round in $(seq "$ROUNDS"); do
  if (( round % 2 )); then
    run_pgbench "$round"; run_fairbench "$round"
  else
    run_fairbench "$round"; run_pgbench "$round"
  fi
done
"$FB" check --target "$fbdsn" "${fb_workload[@]}" --scale "$SCALE" 2>&1 | tail -n 1
awk -v p="$pg_sum" -v f="$fb_sum" -v r="$ROUNDS" 'BEGIN {
  ratio = (p > 0 ? f / p : 0)
  printf "mean TPS: pgbench %.1f, fairbench %.1f; fairbench/pgbench = %.3f (%s)\n", p / r, f / r, ratio,
    (ratio >= 0.85 && ratio <= 1.15 ? "within 15%" : "NOT within 15%")
}'
