#!/usr/bin/env bash
# TPC-H at scale factor 1 on each engine: a throwaway server per engine (fairbench serve),
# fairbench prepare (tpchgen-cli's data, bulk-loaded, keys, indexes, statistics), then one power
# run of the 22 queries with the validation parameters, every answer checked against the
# official SF 1 answers. Prints seconds and status per query and engine, the geometric means,
# the load times and the data size on disk.
#
# Usage: bench/tpch-sf1.sh [ENGINE...]      (default: postgres mariadb mysql)
# Environment: OUT results directory (default out/tpch-sf1), QUERY_TIMEOUT (default 5m),
#              SF (default 1; the official answers exist for 1 only, other sizes are checked
#              across the engines), BUFFER_POOL (fairbench serve --buffer-pool; default its own),
#              TBL_DIR (load these .tbl files instead of generating at each prepare)
# Exit status: non-zero when any engine's prepare or run failed (a wrong answer fails a run).
set -euo pipefail
cd "$(dirname "$0")/.."

SF=${SF:-1}
OUT=${OUT:-out/tpch-sf$SF}
QUERY_TIMEOUT=${QUERY_TIMEOUT:-5m}
ENGINES=("$@")
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(postgres mariadb mysql)

if [ -z "${TBL_DIR:-}" ] && ! command -v tpchgen-cli >/dev/null && [ ! -x /opt/fairbench/venv/bin/tpchgen-cli ]; then
  echo "tpch-sf1: tpchgen-cli is not installed: run scripts/install-engines.sh" >&2
  exit 2
fi
. bench/lib.sh
mkdir -p "$OUT"

serve_args=()
[ -n "${BUFFER_POOL:-}" ] && serve_args+=(--buffer-pool "$BUFFER_POOL")
data_args=(--scale-factor "$SF")
[ -n "${TBL_DIR:-}" ] && data_args+=(--tbl-dir "$TBL_DIR")

failed=0
for engine in "${ENGINES[@]}"; do
  if ! start_server "$engine" "$OUT/serve-$engine.log" "${serve_args[@]}"; then
    stop_server
    failed=1
    continue
  fi

  echo "== $engine: prepare --scale-factor $SF"
  if ! /usr/bin/time -f '%e' -o "$tmp/t" "$FB" prepare --target "$dsn" --workload tpch "${data_args[@]}" >"$OUT/prepare-$engine.log" 2>&1; then
    tail -n 20 "$OUT/prepare-$engine.log" >&2
    stop_server
    failed=1
    continue
  fi
  grep '^tpch:' "$OUT/prepare-$engine.log" || true
  echo "   prepare took $(tail -n 1 "$tmp/t")s (generation included)"

  echo "== $engine: run --mode power --query-timeout $QUERY_TIMEOUT"
  if ! "$FB" run --target "$dsn" --workload tpch "${data_args[@]}" --mode power --query-timeout "$QUERY_TIMEOUT" \
      --out "$OUT/tpch-$engine.json" >"$OUT/run-$engine.log" 2>&1; then
    failed=1
  fi
  grep '^tpch:' "$OUT/run-$engine.log" || true
  grep 'stopped' "$OUT/run-$engine.log" | tail -n 3 >&2 || true
  stop_server
done

# The table: one row per query, one column per engine that left a result.
python3 - "$OUT" "${ENGINES[@]}" <<'PY'
import json, os, sys

out, engines = sys.argv[1], sys.argv[2:]
res = {}
for e in engines:
    p = os.path.join(out, f"tpch-{e}.json")
    if os.path.exists(p):
        with open(p) as f:
            res[e] = json.load(f)
if not res:
    sys.exit("no results to show")
cols = list(res)
w = 16

def cell(q):
    if q is None:
        return "-"
    if q["status"] == "ok":
        return f'{q["seconds"]:.2f}s'
    return q["status"]

print()
print("query".ljust(8) + "".join(e.rjust(w) for e in cols))
for n in range(1, 23):
    row = f"Q{n}".ljust(8)
    for e in cols:
        qs = {q["query"]: q for q in res[e]["tpch"]["queries"]}
        row += cell(qs.get(n)).rjust(w)
    print(row)
print("geomean".ljust(8) + "".join((f'{res[e]["tpch"].get("geomean_s", 0):.3f}s').rjust(w) for e in cols))
print("all ok".ljust(8) + "".join(str(sum(q["status"] == "ok" for q in res[e]["tpch"]["queries"])).rjust(w) for e in cols))
print()
print("load (s)".ljust(8) + "".join(e.rjust(w) for e in cols))
tables = ["lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region", "total"]
for t in tables:
    print(t.ljust(8) + "".join(f'{res[e]["tpch"].get("load_seconds", {}).get(t, 0):.1f}'.rjust(w) for e in cols))
print("size MB".ljust(8) + "".join(f'{(res[e].get("server") or {}).get("data_size_bytes", 0) / 1e6:.0f}'.rjust(w) for e in cols))
print()
for e in cols:
    t = res[e]["tpch"]
    print(f'{e}: {res[e]["engine"]["version"][:60]}; answers checked: {t["answers_checked"]}; complete: {res[e]["complete"]}')
    for q in t["queries"]:
        if q["status"] != "ok":
            print(f'  Q{q["query"]} {q["status"]}: {q.get("detail", "")}')
PY

exit $failed
