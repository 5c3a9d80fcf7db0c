#!/usr/bin/env bash
# Capture a known workload from a server's statistics and replay it on the same server: does the
# captured file reproduce the source's statement mix and throughput?
#
# On one throwaway server: prepare and run WORKLOAD (fairbench's own, its statements counted by
# the server: pg_stat_statements, the performance schema), `fairbench capture` it while it runs,
# load the captured file into a second database of the same server, and run it for as long.
# Prints each statement's share of the calls in the source run and in the replay (the server's
# statement statistics, reset before each run and read after it in full), the largest difference
# in percentage points, and the statements per second and transactions per second of both, with
# the machine's load and steal. Throughput is the median of ROUNDS source and replay runs taken in
# alternating order (source first in odd rounds, replay first in even ones), since one 30 s run
# on a shared 2-core machine moves by more than the 30% the comparison asks about; the statement
# mix is the first round's.
#
# Usage: bench/capture-replay.sh [ENGINE] [WORKLOAD]   (default: postgres tpcc; ENGINE postgres or
# mysql: MariaDB drops a prepared statement's account with its connection, before it can be read)
# Environment: THREADS (4), TIME seconds per run (30), ROUNDS (3), OPTS (workload options, e.g.
# "--warehouses 2"), CAPTURE (capture's options, e.g. "--top 60")
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${1:-postgres}
WORKLOAD=${2:-tpcc}
THREADS=${THREADS:-4}
TIME=${TIME:-30}
ROUNDS=${ROUNDS:-3}
OPTS=${OPTS:-}
CAPTURE=${CAPTURE:-}
. bench/args.sh
whole_numbers capture-replay THREADS TIME ROUNDS
. bench/lib.sh
export LC_ALL=C # sort and join must order the statements alike

sql() { # sql DATABASE STATEMENT: runs one statement as the server's admin user, rows tab-separated
  if [[ $ENGINE == postgres* ]]; then
    PGPASSWORD=$pass psql -qAt -F$'\t' -h 127.0.0.1 -p "$port" -U "$user" -d "$1" -c "$2"
  else
    MYSQL_PWD=$pass mysql -N -B -h 127.0.0.1 -P "$port" -u "$user" "$1" -e "$2"
  fi
}
reset_statements() {
  if [[ $ENGINE == postgres* ]]; then sql "$1" "SELECT pg_stat_statements_reset()" >/dev/null
  else sql "$1" "TRUNCATE performance_schema.events_statements_summary_by_digest"; fi
}
read_statements() { # calls and text of every statement run in database $1
  if [[ $ENGINE == postgres* ]]; then
    sql "$1" "SELECT calls, regexp_replace(query, '\s+', ' ', 'g') FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
  else
    sql "$1" "SELECT count_star, digest_text FROM performance_schema.events_statements_summary_by_digest WHERE schema_name = DATABASE()"
  fi
}

echo "== capture ($CAPTURE) and replay of $WORKLOAD on $ENGINE: $THREADS threads, ${TIME}s per run; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
start_server "$ENGINE" "$tmp/serve.log" || exit 1
# shellcheck disable=SC2086
"$FB" prepare --target "$dsn" --workload "$WORKLOAD" $OPTS >/dev/null
reset_statements "$db"
s0=$(stat_ticks)
# shellcheck disable=SC2086
"$FB" run --target "$dsn" --workload "$WORKLOAD" $OPTS --threads "$THREADS" --time "${TIME}s" --out "$tmp/source.json" >/dev/null 2>"$tmp/source.log" &
run_pid=$!
sleep $((TIME * 2 / 3))
# shellcheck disable=SC2086
"$FB" capture --target "$dsn" --out "$tmp/captured.yaml" $CAPTURE 2>&1 | tail -n 1
if ! wait "$run_pid"; then
  echo "source run failed:" >&2
  tail -n 5 "$tmp/source.log" >&2
  exit 1
fi
s1=$(stat_ticks)
read_statements "$db" >"$tmp/source.stmts"
echo "source run: load $(cut -d' ' -f1 /proc/loadavg), steal $(steal_pct "$s0" "$s1")%"

sql "$db" "CREATE DATABASE fb_replay"
replay=${dsn/\/$db\?//fb_replay?}
[[ $replay == "$dsn" ]] && replay=${dsn/\/$db//fb_replay}
"$FB" prepare --target "$replay" --workload "$tmp/captured.yaml" >/dev/null
reset_statements fb_replay
replay_run() { # replay_run OUT
  "$FB" run --target "$replay" --workload "$tmp/captured.yaml" --threads "$THREADS" --time "${TIME}s" --out "$1" >/dev/null 2>"$tmp/replay.log"
}
source_run() { # source_run OUT
  # shellcheck disable=SC2086
  "$FB" run --target "$dsn" --workload "$WORKLOAD" $OPTS --threads "$THREADS" --time "${TIME}s" --out "$1" >/dev/null 2>"$tmp/source.log"
}
s0=$(stat_ticks)
replay_run "$tmp/replay.json"
s1=$(stat_ticks)
read_statements fb_replay >"$tmp/replay.stmts"
echo "replay run: load $(cut -d' ' -f1 /proc/loadavg), steal $(steal_pct "$s0" "$s1")%"
for ((r = 2; r <= ROUNDS; r++)); do
  s0=$(stat_ticks)
  if ((r % 2 == 0)); then replay_run "$tmp/replay$r.json" && source_run "$tmp/source$r.json"
  else source_run "$tmp/source$r.json" && replay_run "$tmp/replay$r.json"; fi
  s1=$(stat_ticks)
  echo "round $r: load $(cut -d' ' -f1 /proc/loadavg), steal $(steal_pct "$s0" "$s1")%"
done

# Each workload statement's share of calls (the server's own queries, the monitor's and capture's
# left out), its text normalized alike in both runs: placeholders as ?, a range's "+ N" dropped,
# MySQL digests' spacing, quotes and case squeezed.
shares() {
  grep -viE 'pg_stat|pg_catalog|performance_schema|information_schema|pg_backend_pid|version\(\)|current_setting|fairbench_|count\(distinct|char_length|^[0-9]+\s+(begin|commit|rollback|set |show |select @@|select \?$)' "$1" |
    awk -F'\t' '{t = tolower($2); sub(/^execute /, "", t); gsub(/\$[0-9]+|\?/, "?", t); gsub(/ \+ [0-9]+/, "", t); gsub(/[`"]/, "", t);
      gsub(/[ \t]+/, " ", t); gsub(/ ?\( ?/, "(", t); gsub(/ \)/, ")", t); gsub(/ ,/, ",", t); c[t] += $1; n += $1}
      END {for (t in c) printf "%.1f\t%s\n", 100 * c[t] / n, t}' | sort -t$'\t' -k2
}
shares "$tmp/source.stmts" >"$tmp/s"
shares "$tmp/replay.stmts" >"$tmp/r"
printf '%8s %8s %7s  %s\n' "source%" "replay%" "diff" "statement"
join -t$'\t' -j2 -a1 -a2 -e 0 -o 1.1,2.1,0 "$tmp/s" "$tmp/r" |
  awk -F'\t' '{d = $2 - $1; if (d < 0) d = -d; if (d > m) m = d; printf "%8.1f %8.1f %7.1f  %s\n", $1, $2, d, substr($3, 1, 90)} END {printf "largest difference: %.1f points\n", m}'

figures() { jq -r '[.transactions / .duration_s, (.queries.read + .queries.write) / .duration_s] | @tsv' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for run in source replay; do
  for f in "$tmp/$run.json" "$tmp/$run"[0-9]*.json; do [[ -f $f ]] && figures "$f"; done >"$tmp/$run.figures"
  echo "$run transactions/s per round: $(cut -f1 "$tmp/$run.figures" | awk '{printf "%.0f ", $1}')"
done
stps=$(cut -f1 "$tmp/source.figures" | median); sqps=$(cut -f2 "$tmp/source.figures" | median)
rtps=$(cut -f1 "$tmp/replay.figures" | median); rqps=$(cut -f2 "$tmp/replay.figures" | median)
awk -v a="$stps" -v b="$rtps" -v c="$sqps" -v d="$rqps" -v n="$ROUNDS" 'BEGIN {
  printf "transactions/s (median of %d rounds): source %.0f, replay %.0f (%.2fx)\n", n, a, b, b / a
  printf "reads and writes/s sent by the clients (BEGIN and COMMIT not counted): source %.0f, replay %.0f (%.2fx)\n", c, d, d / c }'
# Where the clients' time went in each run (the wait sampler's shares), and the commits: a
# captured statement runs alone in autocommit, so the replay commits once per write where the
# source committed once per transaction.
for run in source replay; do
  jq -r --arg run "$run" '"\($run): \(.errors) errors, \(.transactions / .duration_s | floor) commits/s (one per transaction), \(.queries.write / .duration_s | floor) writes/s; waits: " +
    ([.waits.categories[]? as $c | "\($c.category) \((100 * $c.count / .waits.sessions) | floor)%"] | join(", "))' "$tmp/$run.json"
done
cp "$tmp/captured.yaml" "${KEEP:-/dev/null}" 2>/dev/null || true
