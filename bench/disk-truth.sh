#!/usr/bin/env bash
# Are fairbench's disk figures true? Each engine runs with its data directory on a loop device of
# its own (`fairbench serve --device`), so the device's own counters (/sys/block/loopN/stat) count
# that server's I/O and nothing else. For 30 s of oltp_read_write and of oltp_insert, this prints
# the device's write bytes and operations, read by this script before and after each run, beside
# fairbench's figures from the result (which, on a device of the server's own, fairbench takes from
# the same counters: disk_source "block device loopN, this server's alone") and beside the
# server's cgroup figures (disk_cgroup, the secondary source), each with its ratio to the device.
# fairbench's figure should agree within 10%; the cgroup's is a lower bound on cgroup v1 (no
# background writeback) and on a journaled filesystem (no jbd2 journal commits).
#
#   bench/disk-truth.sh [ENGINE...]        (default: postgres mariadb mysql; needs root)
#   TIME=30s THREADS=4 TABLES=4 TABLE_SIZE=100000 JOURNAL=yes CHECKPOINT=yes bench/disk-truth.sh postgres
#
# run's own flush before the measured window (--flush) is off, since the device's counters here
# span the whole run command; instead each run starts from a quiet device: PostgreSQL gets a
# CHECKPOINT and the device's filesystem is synced (sync -f), so that what the previous step left
# dirty (prepare's rows in shared_buffers and in the page cache) is not written during the
# measured run (CHECKPOINT=no leaves that out, to see the difference).
#
# Operations are bios: completed write requests plus the bios merged into them (diskstats fields
# 5 and 6), since the cgroup counts bios before the block layer merges them.
set -euo pipefail
cd "$(dirname "$0")/.."

TIME=${TIME:-30s}
# JOURNAL=no makes the device's ext4 without a journal (serve --device-no-journal), like this
# machine's own data filesystem; with JOURNAL=yes (mkfs.ext4's default) the journal's commits,
# written by a kernel thread that no cgroup is charged for, show as the cgroup's shortfall.
JOURNAL=${JOURNAL:-yes}
CHECKPOINT=${CHECKPOINT:-yes}
THREADS=${THREADS:-4}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
. bench/args.sh
whole_numbers disk-truth THREADS TABLES TABLE_SIZE
. bench/lib.sh
engines=("$@")
[ ${#engines[@]} -gt 0 ] || engines=(postgres mariadb mysql)

# dev_writes LOOP: "sectors_written writes_completed writes_merged" from /sys/block/LOOP/stat.
dev_writes() { awk '{print $7, $5, $6}' "/sys/block/$1/stat"; }

echo "== $TIME per run, $THREADS threads, $TABLES x $TABLE_SIZE rows, device ext4 journal: $JOURNAL, checkpoint and sync before each run: $CHECKPOINT"
printf '%-14s %-16s %12s %12s %6s %12s %6s   %9s %9s %6s %9s %6s  %6s %5s\n' engine workload \
  "device B" "fairbench B" ratio "cgroup B" ratio "device op" "fb op" ratio "cgroup op" ratio steal% load
fail=0
for engine in "${engines[@]}"; do
  devflags=(--device 8G)
  [ "$JOURNAL" = no ] && devflags+=(--device-no-journal)
  if ! start_server "$engine" "$tmp/serve-$engine.log" "${devflags[@]}"; then
    fail=1
    continue
  fi
  label=$(engine_version "$engine" | cut -d' ' -f1)
  loop=$(sed -n 's|.*counters: /sys/block/\([a-z0-9]*\)/stat.*|\1|p' "$tmp/serve-$engine.log")
  datadir=$(sed -n 's|.*Ctrl-C stops it and removes \(/.*\)$|\1|p' "$tmp/serve-$engine.log")
  common=(--target "$dsn" --tables "$TABLES" --table-size "$TABLE_SIZE")
  "$FB" prepare "${common[@]}" --workload oltp_read_write >/dev/null
  for wl in oltp_read_write oltp_insert; do
    out="$tmp/$engine-$wl.json"
    if [ "$CHECKPOINT" = yes ]; then
      [ "$engine" = postgres ] && PGPASSWORD="$pass" psql -q -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -c CHECKPOINT
      sync -f "$datadir"
    fi
    read -r s0 w0 m0 < <(dev_writes "$loop")
    t0=$(stat_ticks)
    "$FB" run "${common[@]}" --workload "$wl" --threads "$THREADS" --time "$TIME" --warmup 0s --flush=false --out "$out" >/dev/null 2>"$tmp/run.log"
    t1=$(stat_ticks)
    read -r s1 w1 m1 < <(dev_writes "$loop")
    read -r fb_bytes fb_ops cg_bytes cg_ops src < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["server"]
c = s.get("disk_cgroup") or {}
print(s.get("disk_write_bytes", 0), s.get("disk_write_ops", 0), c.get("write_bytes", 0), c.get("write_ops", 0),
      s.get("disk_source", "-").split(" (")[0])' "$out")
    dev_bytes=$(( (s1 - s0) * 512 ))
    dev_ops=$(( (w1 - w0) + (m1 - m0) ))
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
    rb=$(ratio "$fb_bytes" "$dev_bytes")
    printf '%-14s %-16s %12d %12d %6s %12d %6s   %9d %9d %6s %9d %6s  %6s %5s\n' "$label" "$wl" \
      "$dev_bytes" "$fb_bytes" "$rb" "$cg_bytes" "$(ratio "$cg_bytes" "$dev_bytes")" \
      "$dev_ops" "$fb_ops" "$(ratio "$fb_ops" "$dev_ops")" "$cg_ops" "$(ratio "$cg_ops" "$dev_ops")" \
      "$(steal_pct "$t0" "$t1")" "$(cut -d' ' -f1 /proc/loadavg)"
    echo "          disk_source: $src" >&2
    awk -v r="$rb" 'BEGIN { exit !(r != "-" && r >= 0.9 && r <= 1.1) }' || fail=1
    [[ $src == "block device "* ]] || fail=1
  done
  "$FB" cleanup "${common[@]}" --workload oltp_read_write >/dev/null
  stop_server
done
exit $fail
