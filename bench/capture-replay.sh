#!/usr/bin/env bash
# Capture a known workload from a server's statistics and replay it on the same server: does the
# captured file reproduce the source's statement mix and throughput?
#
# On one throwaway server: prepare and run WORKLOAD (fairbench's own, its statements counted by
# the server: pg_stat_statements, the performance schema), `fairbench capture` it while it runs,
# load the captured file into a second database of the same server, and run it for as long.
# Prints each statement's share of the calls in the source run and in the replay (from the
# results' server_statements: the 20 statements with the most server time in each run), the
# largest difference in percentage points, and the statements per second and transactions per
# second of both, with the machine's load and steal.
#
# Usage: bench/capture-replay.sh [ENGINE] [WORKLOAD]   (default: postgres tpcc)
# Environment: THREADS (4), TIME seconds per run (30), OPTS (workload options, e.g.
# "--warehouses 2")
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${1:-postgres}
WORKLOAD=${2:-tpcc}
THREADS=${THREADS:-4}
TIME=${TIME:-30}
OPTS=${OPTS:-}
. bench/lib.sh

sql() { # sql DATABASE STATEMENT: runs one statement as the server's admin user
  if [[ $ENGINE == postgres* ]]; then
    PGPASSWORD=$pass psql -qAt -h 127.0.0.1 -p "$port" -U "$user" -d "$1" -c "$2"
  else
    MYSQL_PWD=$pass mysql -h 127.0.0.1 -P "$port" -u "$user" "$1" -e "$2"
  fi
}

echo "== capture and replay of $WORKLOAD on $ENGINE: $THREADS threads, ${TIME}s per run; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
start_server "$ENGINE" "$tmp/serve.log" || exit 1
# shellcheck disable=SC2086
"$FB" prepare --target "$dsn" --workload "$WORKLOAD" $OPTS >/dev/null
s0=$(stat_ticks)
# shellcheck disable=SC2086
"$FB" run --target "$dsn" --workload "$WORKLOAD" $OPTS --threads "$THREADS" --time "${TIME}s" --out "$tmp/source.json" >/dev/null 2>"$tmp/source.log" &
run_pid=$!
sleep $((TIME * 2 / 3))
"$FB" capture --target "$dsn" --out "$tmp/captured.yaml" 2>&1 | tail -n 1
wait "$run_pid"
s1=$(stat_ticks)
echo "source run: load $(cut -d' ' -f1 /proc/loadavg), steal $(steal_pct "$s0" "$s1")%"

sql "$db" "CREATE DATABASE fb_replay"
replay=${dsn/\/$db\?//fb_replay?}
[[ $replay == "$dsn" ]] && replay=${dsn/\/$db//fb_replay}
"$FB" prepare --target "$replay" --workload "$tmp/captured.yaml" >/dev/null
s0=$(stat_ticks)
"$FB" run --target "$replay" --workload "$tmp/captured.yaml" --threads "$THREADS" --time "${TIME}s" --out "$tmp/replay.json" >/dev/null 2>"$tmp/replay.log"
s1=$(stat_ticks)
echo "replay run: load $(cut -d' ' -f1 /proc/loadavg), steal $(steal_pct "$s0" "$s1")%"

# Each workload statement's share of calls (the server's own queries and the monitor's left out),
# its text normalized alike in both runs: placeholders as ?, a range's "+ N" dropped, spacing and
# case squeezed.
shares() {
  jq -r '.server_statements.top[]? | [.calls, .text] | @tsv' "$1" |
    grep -viE 'pg_stat|pg_catalog|performance_schema|information_schema|pg_backend_pid|version\(\)|current_setting|fairbench_' |
    awk -F'\t' '{t = tolower($2); gsub(/\$[0-9]+|\?/, "?", t); gsub(/ \+ [0-9]+/, "", t); gsub(/[ \t]+/, " ", t); c[t] += $1; n += $1}
      END {for (t in c) printf "%.1f\t%s\n", 100 * c[t] / n, t}' | sort -t$'\t' -k2
}
shares "$tmp/source.json" >"$tmp/s"
shares "$tmp/replay.json" >"$tmp/r"
printf '%8s %8s %7s  %s\n' "source%" "replay%" "diff" "statement"
join -t$'\t' -j2 -a1 -a2 -e 0 -o 1.1,2.1,0 "$tmp/s" "$tmp/r" |
  awk -F'\t' '{d = $2 - $1; if (d < 0) d = -d; if (d > m) m = d; printf "%8.1f %8.1f %7.1f  %s\n", $1, $2, d, substr($3, 1, 90)} END {printf "largest difference: %.1f points\n", m}'

figures() { jq -r '[.transactions / .duration_s, .server_statements.calls / .duration_s] | @tsv' "$1"; }
read -r stps sqps < <(figures "$tmp/source.json")
read -r rtps rqps < <(figures "$tmp/replay.json")
awk -v a="$stps" -v b="$rtps" -v c="$sqps" -v d="$rqps" 'BEGIN {
  printf "transactions/s: source %.0f, replay %.0f (%.2fx)\n", a, b, b / a
  printf "statements/s on the server (every statement, the monitor'"'"'s too): source %.0f, replay %.0f (%.2fx)\n", c, d, d / c }'
cp "$tmp/captured.yaml" "${KEEP:-/dev/null}" 2>/dev/null || true
