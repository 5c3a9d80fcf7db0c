#!/usr/bin/env bash
# Two fairbench builds side by side: OLD (a binary you built from an earlier commit) and this tree
# (bin/fairbench), on the same throwaway server and the same tables, alternating which runs
# first from round to round, so both see the same machine state. Prints TPS and the client's own
# CPU per transaction of every run and the medians: the evidence for "no more client CPU per
# transaction than before" when a change touches the workloads or the runner.
#
# Usage: OLD=/path/to/old/fairbench bench/ab-builds.sh ENGINE WORKLOAD [WORKLOAD...]
#   e.g. git worktree add /tmp/fb-old SHA && (cd /tmp/fb-old && go build -o /tmp/fb-old.bin ./cmd/fairbench)
#        OLD=/tmp/fb-old.bin bench/ab-builds.sh postgres tpcc oltp_read_write
# Environment: THREADS (default 4), TIME seconds per run (10), ROUNDS (3), and any workload
# options in OPTS (e.g. OPTS="--warehouses 2").
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-4}
TIME=${TIME:-10}
ROUNDS=${ROUNDS:-3}
OPTS=${OPTS:-}
[ $# -ge 2 ] || { echo "usage: OLD=/path/to/fairbench bench/ab-builds.sh ENGINE WORKLOAD [WORKLOAD...]" >&2; exit 2; }
[ -x "${OLD:-}" ] || { echo "ab-builds: OLD=${OLD:-} is not an executable: build the earlier commit and give its binary" >&2; exit 2; }
ENGINE=$1
shift
. bench/args.sh
whole_numbers ab-builds THREADS TIME ROUNDS
. bench/lib.sh

start_server "$ENGINE"
echo "load: $(uptime | sed 's/.*load average: //')   $ENGINE $(engine_version "$ENGINE" | cut -d' ' -f2)   threads $THREADS, $TIME s per run, $ROUNDS rounds"
printf '%-18s %-6s %10s %12s %7s\n' workload build TPS "cpu/txn µs" "steal%"
for workload in "$@"; do
  # shellcheck disable=SC2086
  "$FB" prepare --target "$dsn" --workload "$workload" $OPTS --force >/dev/null 2>&1
  for round in $(seq "$ROUNDS"); do
    order=(old new)
    [ $((round % 2)) -eq 0 ] && order=(new old)
    for build in "${order[@]}"; do
      bin=$FB
      [ "$build" = old ] && bin=$OLD
      t0=$(stat_ticks)
      # shellcheck disable=SC2086
      /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" run --target "$dsn" --workload "$workload" $OPTS \
        --threads "$THREADS" --time "${TIME}s" --out "$tmp/r.json" >"$tmp/r.out" 2>/dev/null
      n=$(awk '/transactions:/ {print $2}' "$tmp/r.out")
      tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$tmp/r.out")
      cpu=$(per_txn_us "$(cpu_of "$tmp/cpu")" "$n") steal=$(steal_pct "$t0" "$(stat_ticks)")
      printf '%-18s %-6s %10s %12s %7s\n' "$workload" "$build#$round" "$tps" "$cpu" "$steal"
      echo "$workload $build $tps $cpu" >>"$tmp/rounds"
    done
  done
done
echo "medians of $ROUNDS rounds:"
printf '%-18s %12s %12s %16s %16s\n' workload "old TPS" "new TPS" "old µs/txn" "new µs/txn"
for workload in "$@"; do
  med() { awk -v w="$workload" -v b="$1" -v c="$2" '$1 == w && $2 == b {print $c}' "$tmp/rounds" | sort -g |
    awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
  printf '%-18s %12.1f %12.1f %16.1f %16.1f\n' "$workload" "$(med old 3)" "$(med new 3)" "$(med old 4)" "$(med new 4)"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
