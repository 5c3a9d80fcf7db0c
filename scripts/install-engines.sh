#!/usr/bin/env bash
# Installs what fairbench needs to start throwaway database servers on a Debian machine:
#   PostgreSQL and MariaDB from Debian's packages, and MySQL from a minimal Debian sid root
#   (MySQL is not in Debian 12; sid ships it, and mysqld runs under chroot on a loopback port).
# Also installs the comparison tools the benchmarks and tests use (sysbench, pgbench, chromium, prometheus)
# and the TPC-H data generator (tpchgen-cli, from PyPI, in /opt/fairbench/venv).
# Idempotent: when everything is present it does nothing and prints nothing.
#
# Environment:
#   FAIRBENCH_MYSQL_ROOT  where the sid root goes (default /opt/fairbench/mysql-root)
#   FAIRBENCH_NO_MYSQL=1  skip the MySQL root
#   FAIRBENCH_NO_EXTRAS=1 skip sysbench, chromium and tpchgen-cli (only the engines)
set -euo pipefail

MYSQL_ROOT=${FAIRBENCH_MYSQL_ROOT:-/opt/fairbench/mysql-root}
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-engines: needs root (or sudo) to install packages; run it as root" >&2; exit 2; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

say() { echo "install-engines: $*" >&2; }

# Debian packages that are missing, by the binary that proves each one present.
want=()
have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
have_pg || want+=(postgresql postgresql-contrib)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || want+=(mariadb-server mariadb-client)
if [ -z "${FAIRBENCH_NO_EXTRAS:-}" ]; then
  command -v sysbench >/dev/null 2>&1 || want+=(sysbench)
  command -v pgbench >/dev/null 2>&1 || [ -x /usr/lib/postgresql/15/bin/pgbench ] || want+=(postgresql-client)
  command -v chromium >/dev/null 2>&1 || want+=(chromium)
  # A real Prometheus scrapes --metrics-addr in the live-metrics test.
  command -v prometheus >/dev/null 2>&1 || want+=(prometheus)
  # run --node-exporter is tested against Debian's node_exporter on loopback.
  [ -x /usr/bin/prometheus-node-exporter ] || want+=(prometheus-node-exporter)
fi
need_mysql=""
if [ -z "${FAIRBENCH_NO_MYSQL:-}" ] && [ ! -x "$MYSQL_ROOT/usr/sbin/mysqld" ]; then
  need_mysql=1
  command -v debootstrap >/dev/null 2>&1 || want+=(debootstrap)
fi

if [ ${#want[@]} -gt 0 ]; then
  say "installing ${want[*]}"
  $SUDO apt-get update -qq
  # Package installs must not start system-wide servers: fairbench starts its own throwaway ones.
  # policy-rc.d is Debian's documented switch for that; remove it only if we put it there.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  trap '[ -n "$added_policy" ] && $SUDO rm -f /usr/sbin/policy-rc.d' EXIT
  $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi

if [ -n "$need_mysql" ]; then
  say "building the Debian sid root for MySQL in $MYSQL_ROOT (about a minute)"
  tmp="$MYSQL_ROOT.tmp"
  $SUDO rm -rf "$tmp"
  $SUDO mkdir -p "$(dirname "$MYSQL_ROOT")"
  $SUDO debootstrap --variant=minbase sid "$tmp" http://deb.debian.org/debian >/dev/null
  # Services must not start inside the root either.
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$tmp/usr/sbin/policy-rc.d" >/dev/null
  $SUDO chmod +x "$tmp/usr/sbin/policy-rc.d"
  $SUDO chroot "$tmp" apt-get -qq -o Acquire::Check-Valid-Until=false update
  $SUDO chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    mysql-server-core mysql-client >/dev/null
  $SUDO chroot "$tmp" apt-get clean
  # Rename last so a half-built root is never mistaken for a finished one.
  $SUDO mv "$tmp" "$MYSQL_ROOT"
  say "MySQL $($SUDO chroot "$MYSQL_ROOT" mysqld --version 2>/dev/null | sed 's/.*Ver //')"
fi

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
