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
set -euo pipefail
hosts=($1); out=$2; shift 2
[ "${1:-}" = "--" ] && shift
n=${#hosts[@]}
start=$(date -u -d "+${LEAD_SECONDS:-30} seconds" +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$out"
pids=()
for i in "${!hosts[@]}"; do
  shard=$((i + 1))
  ssh -o SendEnv=FAIRBENCH_PASSWORD "${hosts[$i]}" \
    fairbench run "$@" --shard "$shard/$n" --start-at "$start" --out "/tmp/fairbench-shard-$shard.json" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for i in "${!hosts[@]}"; do
  scp -q "${hosts[$i]}:/tmp/fairbench-shard-$((i + 1)).json" "$out/"
done
fairbench merge --out "$out/merged.json" "$out"/fairbench-shard-*.json
