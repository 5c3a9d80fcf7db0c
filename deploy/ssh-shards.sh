#!/usr/bin/env bash
# Run one fairbench run from several client hosts over ssh, then merge the shards here.
# No daemon and no coordinator: each host runs an ordinary fairbench process with --shard I/N,
# and all begin measuring at the same --start-at. The hosts' clocks must agree (NTP/chrony) to
# well under the run's report interval; merge refuses windows that are further apart.
#
#   deploy/ssh-shards.sh "client1 client2 client3" out/ -- \
#     --target postgres://bench@db:5432/bench --workload oltp_read_write --threads 48 --time 5m
#
# fairbench must be on each host's PATH; the password travels in FAIRBENCH_PASSWORD (set it
# here; ssh passes it with SendEnv/AcceptEnv, or put a password_file= in the DSN on each host).
# LEAD_SECONDS (default 30) is how far ahead the common start lies: time for every host to
# connect and warm up (--warmup is counted inside it, so give more when the warm-up is longer).
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 \"HOST1 HOST2 ...\" OUTDIR -- RUN-ARGS... (the arguments of fairbench run, --threads and --rate as totals)" >&2
  exit 2
fi
read -r -a hosts <<<"$1"
out=$2
shift 2
[ "${1:-}" = "--" ] && shift
n=${#hosts[@]}
lead=${LEAD_SECONDS:-30}
case $lead in '' | *[!0-9]*) echo "LEAD_SECONDS must be a whole number of seconds, not '$lead'" >&2; exit 2 ;; esac
start=$(date -u -d "+$lead seconds" +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$out" || exit 2
# ssh hands the remote shell one string: quote each argument so none is split or expanded there.
args=$(printf '%q ' "$@")
pids=()
# Ctrl-C here stops every shard: background jobs of a script ignore SIGINT, and ssh -tt gives
# the remote run a terminal, so it gets SIGHUP when its ssh goes.
trap 'kill "${pids[@]}" 2>/dev/null; exit 130' INT TERM
for i in "${!hosts[@]}"; do
  shard=$((i + 1))
  # The previous run's file is removed first, so a shard that fails early is not merged stale.
  ssh -tt -o SendEnv=FAIRBENCH_PASSWORD "${hosts[$i]}" \
    "rm -f /tmp/fairbench-shard-$shard.json && fairbench run $args --shard $shard/$n --start-at $start --out /tmp/fairbench-shard-$shard.json" </dev/null &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "shard $((i + 1)) on ${hosts[$i]} failed" >&2
    failed=1
  fi
done
# A failed shard still writes what it measured (marked incomplete): fetch every result there is,
# and merge exactly those (not older files that OUTDIR may hold).
fetched=()
for i in "${!hosts[@]}"; do
  f="$out/fairbench-shard-$((i + 1)).json"
  rm -f "$f"
  if scp -q "${hosts[$i]}:/tmp/fairbench-shard-$((i + 1)).json" "$f"; then
    fetched+=("$f")
  else
    echo "no result from ${hosts[$i]}" >&2
  fi
done
[ ${#fetched[@]} -gt 0 ] || exit 1
fairbench merge --out "$out/merged.json" "${fetched[@]}" || exit $?
exit "$failed"
