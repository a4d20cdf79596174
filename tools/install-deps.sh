#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install-deps.sh: installs every Debian 12 package tbbt needs, idempotently.
#
# Default: build packages plus the lab (NFS-Ganesha, rpcbind, libnfs, tcpdump, tshark,
# nfstrace, mkfs tools).  --build-only: just what compiling and the unit tests need.
# Both include Open MPI (mpirun and ompi-c, for tbbt-play on several ranks, docs/mpi.md);
# --no-mpi leaves it out, and the build then makes single-process tools only.
# When every package is already installed (checked with dpkg-query) apt-get is not run
# at all; otherwise `apt-get update` runs once, then one `apt-get install`.  Runs as root
# (no sudo), non-interactively, on a fresh minimal Debian 12.  See docs/lab.md.
set -euo pipefail

prog=install-deps.sh

build_pkgs=(
  cmake make gcc libc6-dev pkg-config rpcsvc-proto
  libtirpc-dev libpcap-dev libglib2.0-dev libjson-glib-dev libjemalloc-dev libcmocka-dev zlib1g-dev
  libxxhash-dev
  clang
  libclang-rt-14-dev python3 time
)
mpi_pkgs=(openmpi-bin libopenmpi-dev)
lab_pkgs=(
  nfs-ganesha nfs-ganesha-vfs nfs-ganesha-mem rpcbind
  libnfs-utils libnfs-dev tcpdump tshark wireshark-common nfstrace
  xfsprogs e2fsprogs util-linux mount procps psmisc iproute2 jq python3 gnuplot-nox
)

usage() {
  cat <<EOF
Usage: $prog [--build-only] [--no-mpi] [--verbose] [--help]
Installs the Debian packages tbbt needs (skips apt-get when all are present).
  --build-only  only the build and unit-test dependencies
  --no-mpi      without Open MPI (openmpi-bin, libopenmpi-dev)
  --verbose     show apt-get output
  --help        this text
EOF
}

say() { echo "$prog: $*" >&2; }

build_only=0
no_mpi=0
verbose=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-only) build_only=1 ;;
    --no-mpi) no_mpi=1 ;;
    --verbose|-v) verbose=1 ;;
    --help|-h) usage; exit 0 ;;
    *) say "unknown option '$1' (try --help)"; exit 2 ;;
  esac
  shift
done

pkgs=("${build_pkgs[@]}")
if [ "$no_mpi" -eq 0 ]; then
  pkgs+=("${mpi_pkgs[@]}")
fi
if [ "$build_only" -eq 0 ]; then
  pkgs+=("${lab_pkgs[@]}")
fi

# Prints the packages of "$@" that dpkg does not report as installed.
missing_pkgs() {
  local p st
  for p in "$@"; do
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    case "$st" in
      ii*) ;;
      *) echo "$p" ;;
    esac
  done
}

mapfile -t missing < <(missing_pkgs "${pkgs[@]}")
if [ "${#missing[@]}" -eq 0 ]; then
  [ "$verbose" -eq 1 ] && say "all ${#pkgs[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  say "must run as root to install: ${missing[*]}"
  exit 1
fi

say "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
if command -v debconf-set-selections >/dev/null 2>&1; then
  echo 'wireshark-common wireshark-common/install-setuid boolean false' |
    debconf-set-selections
fi

log=$(mktemp /tmp/install-deps.XXXXXX)
trap 'rm -f "$log"' EXIT
run() {
  if [ "$verbose" -eq 1 ]; then
    "$@"
  elif ! "$@" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    say "failed: $*"
    exit 1
  fi
}
run apt-get update
run apt-get install -y --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"

mapfile -t still < <(missing_pkgs "${pkgs[@]}")
if [ "${#still[@]}" -ne 0 ]; then
  say "still missing after install: ${still[*]}"
  exit 1
fi
say "done"
