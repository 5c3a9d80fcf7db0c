#!/usr/bin/env bash
# How stable are fairbench's verdicts? Runs the same compare K times in a row and prints, for every
# row of the report's quick decision, how many of the K runs gave each answer (a tie counts as an
# answer of its own), and whether the machine was busy in any run. A verdict that moves between
# reruns of the same command is noise, whatever the report said.
#
# Before each run it waits until the load average is under 1.5 (at most 15 minutes, said when it
# gives up) and prints the load and then the run's steal: measure alone (nothing else of yours
# running, load under 1.5 on a 2-core machine), or the tally is weak.
#
# With HOG_RUN=i, run i shares the machine with a CPU hog on one core (a busy loop pinned to CPU 0),
# to show that the report notices: that run's picks must carry the busy-machine warning.
#
# A row "moved" when the runs did not all give the same answer; it was "contradicted" when two
# runs made claims that cannot both hold: different engines picked, or a pick in one and a tie
# in another. An "undecided" or "unconfirmed" row claims nothing, so moving between it and a
# claim is the machine's noise near the edge of what the rounds can resolve, not a contradiction.
#
# With TALLY_ONLY=1 nothing runs: the reports of OUT/run-1 .. run-K are rendered again from their
# results (fairbench report) and tallied, so a change to the decision rule can be judged on the
# same measurements.
#
# Each run's line says how many of the quick decision's rows it decided (a pick or a tie, on a
# machine that was not busy) and how its rounds ended: compare runs rounds until decided by
# default (the quick suite's budget is 10 minutes), so the time per run is part of the answer.
#
# Usage: bench/verdict-stability.sh [compare flags...]   (default: --suite quick)
# Environment: K (runs, default 5), OUT (default out/verdict-stability), HOG_RUN (none), TALLY_ONLY
set -euo pipefail
cd "$(dirname "$0")/.."

K=${K:-5}
OUT=${OUT:-out/verdict-stability}
HOG_RUN=${HOG_RUN:-0}
case "$K" in '' | *[!0-9]* | 0) echo "verdict-stability: K must be a whole number of runs from 1 up, not '$K'" >&2; exit 2 ;; esac
case "$HOG_RUN" in *[!0-9]*) echo "verdict-stability: HOG_RUN must be the number of a run, not '$HOG_RUN'" >&2; exit 2 ;; esac
[ $# -gt 0 ] || set -- --suite quick

. bench/lib.sh

hog=
stop_hog() { [ -z "$hog" ] || { kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; hog=; }; }
trap 'stop_hog; cleanup' EXIT
trap 'exit 130' INT TERM

# tally_run I: the quick decision's rows of run I: | use case | pick | why |, the pick's ** marks
# dropped, and of a pick its answer only (the engine, the tie, or that it is undecided), not its
# ratio and interval, which move.
tally_run() {
  awk -F' \\| ' -v run="$1" '
    /^## Quick decision/ { on = 1; next }
    /^## / { on = 0 }
    on && /^\| / && !/^\| Use case/ && !/^\|---/ {
      uc = $1; sub(/^\| /, "", uc); pick = $2; gsub(/\*\*/, "", pick)
      sub(/, [0-9.]+× .*/, "", pick); sub(/ \(not on equal terms.*| \(under each package.*/, "", pick)
      # A tie names the same engines in any order.
      if (pick ~ /^tie: /) {
        rest = pick; sub(/^tie: /, "", rest); note = ""
        if (match(rest, / \(.*$/)) { note = substr(rest, RSTART); rest = substr(rest, 1, RSTART - 1) }
        n = split(rest, e, / ≈ /)
        for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (e[b] < e[a]) { x = e[a]; e[a] = e[b]; e[b] = x }
        pick = "tie: " e[1]; for (a = 2; a <= n; a++) pick = pick " ≈ " e[a]; pick = pick note
      }
      busy = ($3 ~ /measured while other processes/) ? " (busy)" : ""
      print uc "\t" pick busy
      print uc "\t" run "\t" pick busy >>runs
    }' runs="$tally.runs" "$OUT/run-$1/report.md" >>"$tally"
}

tally="$tmp/picks"
: >"$tally"
: >"$tally.runs"
for i in $(seq "$K"); do
  if [ -n "${TALLY_ONLY:-}" ]; then
    "$FB" report "$OUT/run-$i" >/dev/null
    tally_run "$i"
    continue
  fi
  # Each run starts on a quiet machine, not at the load the previous run made (measure alone).
  [ "$i" = "$HOG_RUN" ] || wait_quiet >&2
  before=$(stat_ticks)
  echo "== run $i of $K: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  extra=()
  if [ "$i" = "$HOG_RUN" ]; then
    taskset -c 0 sh -c 'while :; do :; done' &
    hog=$!
    # The hog never leaves: waiting for a quiet machine before each step would only add time.
    extra=(--quiet-wait 0)
    echo "   with a CPU hog on core 0 (pid $hog)" >&2
  fi
  t0=$(date +%s)
  "$FB" compare "$@" "${extra[@]}" --out "$OUT/run-$i" --force >"$tmp/compare-$i.log" 2>&1 || {
    echo "verdict-stability: run $i failed; its log ends:" >&2
    tail -n 5 "$tmp/compare-$i.log" >&2
    exit 1
  }
  took=$(($(date +%s) - t0))
  stop_hog
  tally_run "$i"
  rows=$(awk -F'\t' -v r="$i" '$2 == r' "$tally.runs" | wc -l)
  decided=$(awk -F'\t' -v r="$i" '$2 == r && $3 !~ /^(undecided|unconfirmed|none)/ && $3 !~ /\(busy\)$/' "$tally.runs" | wc -l)
  rounds=$(jq -r 'if .rounds then "rounds until decided: \(.rounds.min_rounds) + \(.rounds.added | length) added, stopped: \(.rounds.stopped)" else "fixed rounds" end' "$OUT/run-$i/environment.json")
  # The machine's memory speed before the run's windows (machine.memory_ns_before): on a shared
  # host other tenants move it, steal does not show it, and the rounds' throughput follows it.
  memory=$(jq -rs '[.[].machine.memory_ns_before // empty | select(. > 0)] | if length > 0 then "memory \(min | floor)-\(max | floor) ns" else "memory not probed" end' "$OUT/run-$i"/results/*.json)
  echo "   took $took s, steal $(steal_pct "$before" "$(stat_ticks)")%, $memory, $decided of $rows rows decided, $rounds" >&2
done

echo
quiet=$K
[ "$HOG_RUN" -ge 1 ] && [ "$HOG_RUN" -le "$K" ] && quiet=$((K - 1))
printf '%-60s %s\n' "quick-decision row" "answers over $K runs ($quiet without a hog)"
awk -F'\t' -v k="$quiet" '
  # A claim is a pick or a tie; undecided and unconfirmed rows claim nothing.
  function claim(a) { return (a ~ /^(undecided|unconfirmed|none)/ || a ~ /\(busy\)$/) ? "" : a }
  { n[$1 "\t" $2]++; if (!($1 in seen)) { seen[$1] = 1; order[++rows] = $1 } }
  END {
    for (r = 1; r <= rows; r++) {
      row = order[r]; line = ""; same = 0; claims = 0; delete c
      for (key in n) {
        split(key, p, "\t")
        if (p[1] != row) continue
        line = line (line ? "; " : "") p[2] " x" n[key]
        if (n[key] >= k && p[2] !~ /\(busy\)$/) same = 1
        if (claim(p[2]) != "" && !(p[2] in c)) { c[p[2]] = 1; claims++ }
      }
      mark = same ? "" : (claims > 1 ? "   <- contradicted" : "   <- moved")
      printf "%-60s %s%s\n", substr(row, 1, 60), line, mark
    }
  }' "$tally"
