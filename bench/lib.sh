# Shared by the bench scripts (source it): builds fairbench, keeps a temp dir, starts and stops one
# throwaway server with `fairbench serve`, and takes its DSN apart for other tools' flags.
# Sets FB (the binary), tmp (a temp dir removed on exit), and after start_server: dsn, port, db,
# user, pass.

go build -o bin/fairbench ./cmd/fairbench
FB=bin/fairbench

tmp=$(mktemp -d)
serve_pid=""
stop_server() {
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
  fi
}
cleanup() {
  stop_server
  rm -rf "$tmp"
}
trap cleanup EXIT

# start_server ENGINE [LOG] [serve flags...]: waits until the server's DSN is printed.
start_server() {
  local engine=$1 log=${2:-$tmp/serve.log}
  shift 2 2>/dev/null || shift $#
  rm -f "$tmp/dsn"
  "$FB" serve --engine "$engine" "$@" >"$tmp/dsn" 2>"$log" &
  serve_pid=$!
  for _ in $(seq 240); do [ -s "$tmp/dsn" ] && break; sleep 0.5; done
  if [ ! -s "$tmp/dsn" ]; then
    echo "== $engine: the server did not start:" >&2
    tail -n 20 "$log" >&2
    return 1
  fi
  dsn=$(head -n 1 "$tmp/dsn")
  # Other tools' connection flags for the same server, taken apart from the DSN.
  local hostport=${dsn#*@} userpass=${dsn#*://}
  hostport=${hostport%%/*}; port=${hostport##*:}; db=${dsn##*/}; db=${db%%\?*}
  userpass=${userpass%%@*}; user=${userpass%%:*}; pass=""
  [[ $userpass == *:* ]] && pass=${userpass#*:}
  # serve leaves the password out and names the root-only file that holds it (password_file=).
  local pwfile
  pwfile=$(sed -n 's/.*[?&]password_file=\([^&]*\).*/\1/p' <<<"$dsn")
  if [ -n "$pwfile" ]; then
    pwfile=$(printf '%b' "${pwfile//%/\\x}")
    pass=$(head -n 1 "$pwfile")
  fi
  return 0
}

# second_database NAME: on the PostgreSQL that start_server started, creates database NAME for
# fairbench beside the default one a peer tool uses (fairbench touches only tables it created),
# and sets pg (psql/pgbench connection flags) and fbdsn (fairbench's DSN for NAME).
second_database() {
  export PGPASSWORD="$pass"
  pg=(-h 127.0.0.1 -p "$port" -U "$user")
  psql "${pg[@]}" -d "$db" -qAtc "CREATE DATABASE $1" >/dev/null
  local base=${dsn%%\?*}
  fbdsn="${base%/*}/$1"
  [[ $dsn == *\?* ]] && fbdsn="$fbdsn?${dsn#*\?}"
  return 0
}

# engine_version ENGINE: "postgres@18 18.6", the release and version `fairbench engines` lists for
# ENGINE (a kind, its newest release, or KIND@RELEASE).
engine_version() {
  "$FB" engines | awk -v e="$1" '$1 == e || index($1, e "@") == 1 {n = $1; sub(/^[^)]*\) +/, ""); v = n " " $1} END {print v}'
}

# cpu_of FILE: user+system seconds that /usr/bin/time -f '%U %S' wrote on the last line.
cpu_of() { tail -n 1 "$1" | awk '{printf "%.3f", $1 + $2}'; }
per_txn_us() { awk -v c="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", c * 1e6 / n; else print "-" }'; }

# stat_ticks: the machine's total and stolen CPU ticks (/proc/stat). On a virtual machine the
# hypervisor may take CPU from it ("steal"); a run with much steal is not comparable with one
# without, so the scripts print how much each run lost.
stat_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9}' /proc/stat; }
# steal_pct BEFORE AFTER: percent of the machine's time stolen between two stat_ticks.
steal_pct() { echo "$1 $2" | awk '{t = $3 - $1; printf "%.0f", (t > 0 ? ($4 - $2) * 100 / t : 0)}'; }

# wait_quiet [MAX_SECONDS]: waits (at most MAX_SECONDS, 900 by default) until the 1-minute load
# average is under 1.5, so that the rounds after a long load are not measured beside whatever
# else ran meanwhile; says how long it waited, or that the machine stayed busy.
wait_quiet() {
  local max=${1:-900} waited=0
  while awk '{exit !($1 >= 1.5)}' /proc/loadavg && [ "$waited" -lt "$max" ]; do
    sleep 10
    waited=$((waited + 10))
  done
  if awk '{exit !($1 >= 1.5)}' /proc/loadavg; then
    echo "the machine stayed busy for ${max}s (load $(cut -d' ' -f1-3 /proc/loadavg)): the figures below are weak" >&2
  elif [ "$waited" -gt 0 ]; then
    echo "waited ${waited}s for the machine to be quiet (load $(cut -d' ' -f1 /proc/loadavg))"
  fi
}
