#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mounts a fresh file system on a loop device, for tests that need a real ext4, XFS
# or btrfs file system (tbbt-init --measure, aging).  Needs root.
#
#   tools/loopfs.sh mount --fs ext4|xfs|btrfs --size SIZE [--mkfs-opts "OPTS"] DIR
#       Creates DIR.img (sparse, SIZE as truncate(1) reads it: 256M, 1G), makes the
#       file system on it and mounts it on DIR (created if missing) with -o loop.
#       A stale mount on DIR and loop devices still attached to DIR.img are cleaned
#       up first, so a crashed earlier run does not get in the way.
#   tools/loopfs.sh umount DIR
#       Unmounts DIR, detaches its loop device(s) and removes DIR.img.  Idempotent:
#       succeeds when nothing is mounted.
# Exit status: 0 success, 1 failure, 2 usage error.
set -euo pipefail

usage() {
  echo "usage: loopfs.sh mount --fs ext4|xfs|btrfs --size SIZE [--mkfs-opts OPTS] DIR" >&2
  echo "       loopfs.sh umount DIR" >&2
  exit 2
}
die() { echo "loopfs.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (mount, losetup)"
[ $# -ge 1 ] || usage

# Detaches every loop device backed by the image (losetup -j), quietly.
detach_image() {
  local img=$1 dev
  [ -e "$img" ] || return 0
  for dev in $(losetup -j "$img" -O NAME -n 2>/dev/null); do
    losetup -d "$dev" 2>/dev/null || true
  done
}

cleanup() {
  local dir=$1 img="${1%/}.img" tries=0
  if [ -d "$dir" ]; then
    while mountpoint -q "$dir"; do
      umount "$dir" 2>/dev/null || umount -l "$dir" || die "cannot unmount $dir"
      tries=$((tries + 1))
      [ $tries -lt 10 ] || die "$dir stays mounted"
    done
  fi
  detach_image "$img"
  rm -f "$img"
}

do_mount() {
  local fs="" size="" opts="" dir=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --fs) fs=${2:-}; shift 2 || usage ;;
      --size) size=${2:-}; shift 2 || usage ;;
      --mkfs-opts) opts=${2:-}; shift 2 || usage ;;
      -*) usage ;;
      *) [ -z "$dir" ] || usage; dir=$1; shift ;;
    esac
  done
  [ -n "$fs" ] && [ -n "$size" ] && [ -n "$dir" ] || usage
  local mkfs
  case "$fs" in
    ext4) mkfs=(mkfs.ext4 -q -F) ;;
    xfs) mkfs=(mkfs.xfs -q -f) ;;
    btrfs) mkfs=(mkfs.btrfs -q -f) ;;
    *) usage ;;
  esac
  command -v "${mkfs[0]}" >/dev/null || die "${mkfs[0]} is not installed"
  dir=${dir%/}
  local img="$dir.img"
  cleanup "$dir"
  mkdir -p "$dir"
  truncate -s "$size" "$img" || die "cannot create $img of size $size"
  # shellcheck disable=SC2086  # opts are words for mkfs
  "${mkfs[@]}" $opts "$img" >/dev/null || { rm -f "$img"; die "mkfs.$fs failed on $img"; }
  mount -o loop -t "$fs" "$img" "$dir" || { rm -f "$img"; die "cannot mount $img on $dir"; }
}

case "$1" in
  mount) shift; do_mount "$@" ;;
  umount) [ $# -eq 2 ] || usage; cleanup "${2%/}" ;;
  *) usage ;;
esac
