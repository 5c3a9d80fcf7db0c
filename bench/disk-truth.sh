#!/usr/bin/env bash
# Are fairbench's disk figures true? Each engine runs with its data directory on a loop device of
# its own (`fairbench serve --device`), so the device's own counters (/sys/block/loopN/stat) count
# that server's I/O and nothing else. For 30 s of oltp_read_write and of oltp_insert, this prints
# fairbench's disk write bytes and operations (from the server's cgroup) beside the device's, and
# their ratio: they should agree within 10%.
#
#   bench/disk-truth.sh [ENGINE...]        (default: postgres mariadb mysql; needs root)
#   TIME=30s THREADS=4 TABLES=4 TABLE_SIZE=100000 bench/disk-truth.sh postgres
#
# run's own flush before the measured window (--flush) is off, since the device's counters here
# span the whole run command; instead each run starts from a quiet device: PostgreSQL gets a CHECKPOINT and the device's filesystem is
# synced (sync -f), so that what the previous step left dirty (prepare's rows in shared_buffers and
# in the page cache) is not written during the measured run by the kernel's flusher, which on
# cgroup v1 no cgroup is charged for (CHECKPOINT=no leaves that out, to see the difference).
#
# Device operations are completed write requests plus the bios merged into them (diskstats fields
# 5 and 6), since the cgroup counts bios before the block layer merges them.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

TIME=${TIME:-30s}
# JOURNAL=no makes the device's ext4 without a journal (serve --device-no-journal), like this
# machine's own data filesystem; with JOURNAL=yes the journal's commits, written by a kernel thread
# that no cgroup is charged for, show as the gap between the two columns.
JOURNAL=${JOURNAL:-no}
CHECKPOINT=${CHECKPOINT:-yes}
THREADS=${THREADS:-4}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
engines=("$@")
[ ${#engines[@]} -gt 0 ] || engines=(postgres mariadb mysql)

# dev_writes LOOP: "sectors_written writes_completed writes_merged" from /sys/block/LOOP/stat.
dev_writes() { awk '{print $7, $5, $6}' "/sys/block/$1/stat"; }

echo "== $TIME per run, $THREADS threads, $TABLES x $TABLE_SIZE rows, device ext4 journal: $JOURNAL, checkpoint and sync before each run: $CHECKPOINT"
printf '%-9s %-16s %14s %14s %7s   %11s %11s %7s  %6s\n' engine workload "fairbench B" "device B" ratio "fairbench op" "device op" ratio steal%
fail=0
for engine in "${engines[@]}"; do
  devflags=(--device 8G)
  [ "$JOURNAL" = no ] && devflags+=(--device-no-journal)
  if ! start_server "$engine" "$tmp/serve-$engine.log" "${devflags[@]}"; then
    fail=1
    continue
  fi
  loop=$(sed -n 's|.*counters: /sys/block/\([a-z0-9]*\)/stat.*|\1|p' "$tmp/serve-$engine.log")
  datadir=$(sed -n 's|.*Ctrl-C stops it and removes \(/.*\)$|\1|p' "$tmp/serve-$engine.log")
  common=(--target "$dsn" --tables "$TABLES" --table-size "$TABLE_SIZE")
  "$FB" prepare "${common[@]}" --workload oltp_read_write >/dev/null
  for wl in oltp_read_write oltp_insert; do
    out="$tmp/$engine-$wl.json"
    if [ "$CHECKPOINT" = yes ]; then
      [ "$engine" = postgres ] && psql -q "$dsn" -c CHECKPOINT
      sync -f "$datadir"
    fi
    read -r s0 w0 m0 < <(dev_writes "$loop")
    t0=$(stat_ticks)
    "$FB" run "${common[@]}" --workload "$wl" --threads "$THREADS" --time "$TIME" --warmup 0s --flush=false --out "$out" >/dev/null 2>"$tmp/run.log"
    t1=$(stat_ticks)
    read -r s1 w1 m1 < <(dev_writes "$loop")
    read -r fb_bytes fb_ops src < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["server"]
print(s.get("disk_write_bytes", 0), s.get("disk_write_ops", 0), s.get("disk_source", "-").split(" (")[0].replace(" ", "_"))' "$out")
    dev_bytes=$(( (s1 - s0) * 512 ))
    dev_ops=$(( (w1 - w0) + (m1 - m0) ))
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
    rb=$(ratio "$fb_bytes" "$dev_bytes")
    ro=$(ratio "$fb_ops" "$dev_ops")
    printf '%-9s %-16s %14d %14d %7s   %11d %11d %7s  %6s\n' "$engine" "$wl" "$fb_bytes" "$dev_bytes" "$rb" "$fb_ops" "$dev_ops" "$ro" "$(steal_pct "$t0" "$t1")"
    echo "          source: $src" >&2
    awk -v r="$rb" 'BEGIN { exit !(r != "-" && r >= 0.9 && r <= 1.1) }' || fail=1
  done
  "$FB" cleanup "${common[@]}" --workload oltp_read_write >/dev/null
  stop_server
done
exit $fail
