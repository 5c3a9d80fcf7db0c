#!/usr/bin/env bash
# Installs what fairbench needs to start throwaway database servers on a Debian machine:
#   PostgreSQL 15 (with patroni and etcd-server for postgres-ha) and MariaDB 10.11 (with galera-4 for the
#   galera engine) from the host's (Debian 12) packages, and MySQL 9.7 from a
#   minimal Debian sid root (MySQL is not in Debian 12; sid ships it, and mysqld runs under chroot
#   on a loopback port).
# With --versions it also builds one minimal root per Debian suite for other engine versions:
#   trixie: postgres@17, mariadb@11.8      sid: postgres@18, mysql@9.7
# Each root holds the server packages of its suite only and is shared by the engines it carries.
# Also installs the comparison tools the benchmarks and tests use (sysbench, pgbench, chromium, prometheus)
# and the TPC-H data generator (tpchgen-cli, from PyPI, in /opt/fairbench/venv).
# Idempotent: when everything is present it does nothing and prints nothing.
#
# Usage: scripts/install-engines.sh [--versions all|ENGINE@VERSION,...]
#
# Environment:
#   FAIRBENCH_VERSIONS    the same as --versions (make passes it through)
#   FAIRBENCH_ROOTS       where the suite roots go (default /opt/fairbench/roots: trixie/, sid/)
#   FAIRBENCH_MYSQL_ROOT  where the sid root goes (default $FAIRBENCH_ROOTS/sid)
#   FAIRBENCH_NO_MYSQL=1  skip the MySQL root
#   FAIRBENCH_NO_EXTRAS=1 skip sysbench, chromium and tpchgen-cli (only the engines)
set -euo pipefail

ROOTS=${FAIRBENCH_ROOTS:-/opt/fairbench/roots}
SID_ROOT=${FAIRBENCH_MYSQL_ROOT:-$ROOTS/sid}
LEGACY_MYSQL_ROOT=/opt/fairbench/mysql-root
VERSIONS=${FAIRBENCH_VERSIONS:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --versions) VERSIONS=${2:-}; shift 2 || shift ;;
    --versions=*) VERSIONS=${1#--versions=}; shift ;;
    *) echo "install-engines: unknown argument $1: use --versions all or --versions postgres@17,mariadb@11.8" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-engines: needs root (or sudo) to install packages; run it as root" >&2; exit 2; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

say() { echo "install-engines: $*" >&2; }

# What to undo on exit, also when interrupted: a mounted /proc in a root, a policy-rc.d we added.
undo=()
run_undo() { local c; for c in "${undo[@]}"; do eval "$c" || true; done; }
trap run_undo EXIT
trap 'exit 130' INT TERM

# Every engine@version this script can install: where it comes from and its packages.
# host versions come with the default install; mysql@8.4 is in no Debian suite (see README).
ALL_VERSIONS="postgres@15 mariadb@10.11 postgres@17 mariadb@11.8 postgres@18 mysql@9.7"
suite_of() {
  case "$1" in
    postgres@15|mariadb@10.11) echo host ;;
    postgres@17|mariadb@11.8) echo trixie ;;
    postgres@18|mysql@9.7) echo sid ;;
    *) return 1 ;;
  esac
}
packages_of() {
  case "$1" in
    # mount: every server in a root gets a private tmpfs on /dev/shm, as on the host (see
    # privateShmCmd); the standalone tmpfiles/sysusers stand in for systemd, which
    # postgresql-common would otherwise pull in.
    postgres@*) echo "postgresql-${1#postgres@} mount systemd-standalone-tmpfiles systemd-standalone-sysusers" ;;
    mariadb@*) echo "mariadb-server-core mariadb-client-core mount" ;;
    mysql@*) echo "mysql-server-core mysql-client mount" ;;
  esac
}
root_of() { if [ "$1" = sid ]; then echo "$SID_ROOT"; else echo "$ROOTS/$1"; fi; }

# The versions wanted in roots, by suite.
declare -A want_root=()
add_version() {
  local v=$1 s
  if ! s=$(suite_of "$v"); then
    echo "install-engines: unknown engine version $v: choose from ${ALL_VERSIONS// /, } (or all); mysql@8.4 is in no Debian suite" >&2
    exit 2
  fi
  [ "$s" = host ] || want_root[$s]="${want_root[$s]:-} $v"
}
[ -n "${FAIRBENCH_NO_MYSQL:-}" ] || add_version mysql@9.7
case "$VERSIONS" in
  "") ;;
  all) for v in $ALL_VERSIONS; do add_version "$v"; done ;;
  *) for v in ${VERSIONS//,/ }; do add_version "$v"; done ;;
esac

# A sid root built before the per-suite layout lives in /opt/fairbench/mysql-root: it becomes the
# sid root, and the old path stays a link to it so that older checkouts still find MySQL there.
if [ -z "${FAIRBENCH_MYSQL_ROOT:-}" ] && [ -d "$LEGACY_MYSQL_ROOT" ] && [ ! -L "$LEGACY_MYSQL_ROOT" ] && [ ! -e "$SID_ROOT" ]; then
  say "moving the sid root from $LEGACY_MYSQL_ROOT to $SID_ROOT"
  $SUDO mkdir -p "$(dirname "$SID_ROOT")"
  $SUDO mv "$LEGACY_MYSQL_ROOT" "$SID_ROOT"
  $SUDO ln -s "$SID_ROOT" "$LEGACY_MYSQL_ROOT"
fi

# missing_packages ROOT PKG...: the packages not fully installed in ROOT.
missing_packages() {
  local root=$1 p
  shift
  for p in "$@"; do
    [ "$($SUDO chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] || echo "$p"
  done
}

# Roots to build or complete: suite -> packages missing there.
declare -A root_needs=()
for s in "${!want_root[@]}"; do
  root=$(root_of "$s")
  pkgs=()
  for v in ${want_root[$s]}; do read -ra p <<<"$(packages_of "$v")"; pkgs+=("${p[@]}"); done
  if [ -d "$root/usr" ]; then
    miss=$(missing_packages "$root" "${pkgs[@]}" | tr '\n' ' ')
  else
    miss="${pkgs[*]}"
  fi
  [ -z "${miss// /}" ] || root_needs[$s]=$miss
done

# Debian packages that are missing, by the binary that proves each one present.
want=()
have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
have_pg || want+=(postgresql postgresql-contrib)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || want+=(mariadb-server mariadb-client)
# The galera engine: three host MariaDB nodes joined by galera-4; a joining node copies the
# first one's data with rsync (wsrep_sst_method=rsync, the one SST method with no extra tools).
[ -e /usr/lib/galera/libgalera_smm.so ] || want+=(galera-4)
command -v rsync >/dev/null 2>&1 || want+=(rsync)
# The postgres-ha engine: three host PostgreSQL nodes under Patroni, which keeps its leader lock in etcd.
# python3-etcd named too: patroni's etcd3 store imports it, and it is only the first of patroni's alternatives.
[ -x /usr/bin/patroni ] && [ -e /usr/lib/python3/dist-packages/etcd/__init__.py ] || want+=(patroni python3-etcd)
[ -x /usr/bin/etcd ] || want+=(etcd-server)
# compare --clients/--network make network namespaces, veths and a bridge with ip and tc.
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || want+=(iproute2)
# --fault partition-node cuts a cluster node off on loopback with nftables (nft).
command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || want+=(nftables)
if [ -z "${FAIRBENCH_NO_EXTRAS:-}" ]; then
  command -v sysbench >/dev/null 2>&1 || want+=(sysbench)
  command -v pgbench >/dev/null 2>&1 || [ -x /usr/lib/postgresql/15/bin/pgbench ] || want+=(postgresql-client)
  command -v chromium >/dev/null 2>&1 || want+=(chromium)
  # A real Prometheus scrapes --metrics-addr in the live-metrics test.
  command -v prometheus >/dev/null 2>&1 || want+=(prometheus)
  # run --node-exporter is tested against Debian's node_exporter on loopback.
  [ -x /usr/bin/prometheus-node-exporter ] || want+=(prometheus-node-exporter)
fi
if [ ${#root_needs[@]} -gt 0 ]; then
  command -v debootstrap >/dev/null 2>&1 || want+=(debootstrap)
fi

# policy_rc_d DIR: Debian's documented switch that keeps package installs from starting
# system-wide servers: fairbench starts its own throwaway ones.
policy_rc_d() { printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$1/usr/sbin/policy-rc.d" >/dev/null; $SUDO chmod +x "$1/usr/sbin/policy-rc.d"; }

if [ ${#want[@]} -gt 0 ]; then
  say "installing ${want[*]}"
  $SUDO apt-get update -qq
  # Remove the host's policy-rc.d only if we put it there.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy_rc_d ""
    undo+=('$SUDO rm -f /usr/sbin/policy-rc.d')
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi

# bootstrap_root SUITE DIR: a minimal Debian root, renamed into place only when complete so
# that a half-built root is never mistaken for a finished one.
bootstrap_root() {
  local suite=$1 dir=$2 tmp="$2.tmp"
  $SUDO rm -rf "$tmp"
  $SUDO mkdir -p "$(dirname "$dir")"
  $SUDO debootstrap --variant=minbase "$suite" "$tmp" http://deb.debian.org/debian >/dev/null
  policy_rc_d "$tmp"
  $SUDO mv "$tmp" "$dir"
}

# install_in_root DIR PKG...: apt-get inside the root. Maintainer scripts (postgresql-common's
# among them) need /proc, mounted for the install only.
install_in_root() {
  local dir=$1
  shift
  # postgresql-common would create a "main" cluster; fairbench makes its own.
  $SUDO mkdir -p "$dir/etc/postgresql-common/createcluster.d"
  echo "create_main_cluster = false" | $SUDO tee "$dir/etc/postgresql-common/createcluster.d/fairbench.conf" >/dev/null
  $SUDO mount -t proc proc "$dir/proc"
  undo+=("mountpoint -q '$dir/proc' && \$SUDO umount '$dir/proc'")
  local rc=0
  {
    $SUDO chroot "$dir" apt-get -qq -o Acquire::Check-Valid-Until=false update &&
      $SUDO chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" &&
      $SUDO chroot "$dir" apt-get clean
  } >"$dir.install.log" 2>&1 || rc=$?
  $SUDO umount "$dir/proc"
  if [ $rc != 0 ]; then
    say "installing $* in $dir failed; the last lines of $dir.install.log:"
    tail -n 20 "$dir.install.log" >&2
    exit 1
  fi
  $SUDO rm -f "$dir.install.log"
}

for s in "${!root_needs[@]}"; do
  root=$(root_of "$s")
  read -ra pkgs <<<"${root_needs[$s]}"
  started=$(date +%s)
  if [ ! -d "$root/usr" ]; then
    say "building the Debian $s root in $root (a minute or two)"
    bootstrap_root "$s" "$root"
  fi
  say "installing ${pkgs[*]} in the $s root"
  install_in_root "$root" "${pkgs[@]}"
  say "the $s root is ready ($(( $(date +%s) - started )) s): $(for v in ${want_root[$s]}; do printf '%s ' "$v"; done)"
done

# MySQL and MariaDB servers run as an unprivileged mysql user, as PostgreSQL runs as postgres
# (a server running as root lets anyone with its password write root-owned files anywhere). The
# -core packages a root holds create no such user, so each root that carries one gets it here;
# the host's comes with mariadb-server.
for s in "${!want_root[@]}"; do
  case " ${want_root[$s]} " in *" mysql@"*|*" mariadb@"*) ;; *) continue ;; esac
  root=$(root_of "$s")
  if [ -d "$root/usr" ] && ! grep -q '^mysql:' "$root/etc/passwd"; then
    say "adding the unprivileged mysql user to the $s root"
    $SUDO chroot "$root" useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mysql
  fi
done

# tpchgen-cli writes the TPC-H data (the same rows as dbgen); it comes from PyPI. Debian 12's
# Python refuses pip installs into the system (PEP 668), so it gets a virtual environment of its
# own, linked onto PATH; the tpch workload also looks for it there.
TPCHGEN_VENV=/opt/fairbench/venv
if [ -z "${FAIRBENCH_NO_EXTRAS:-}" ] && ! command -v tpchgen-cli >/dev/null 2>&1 && [ ! -x "$TPCHGEN_VENV/bin/tpchgen-cli" ]; then
  say "installing tpchgen-cli (the TPC-H data generator) in $TPCHGEN_VENV"
  # Debian leaves ensurepip, which venv needs, to python3-venv.
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  $SUDO mkdir -p "$(dirname "$TPCHGEN_VENV")"
  $SUDO python3 -m venv "$TPCHGEN_VENV"
  $SUDO "$TPCHGEN_VENV/bin/pip" install --quiet --disable-pip-version-check tpchgen-cli
  $SUDO ln -sf "$TPCHGEN_VENV/bin/tpchgen-cli" /usr/local/bin/tpchgen-cli
fi
