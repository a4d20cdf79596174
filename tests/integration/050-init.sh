#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-init on real file systems: ext4 and xfs in loop-device images.  For each:
#  - the start image of a generated map (tests/integration/gen-map.py) is complete and
#    exact (check-image.py: type, size, links, symlink targets, mode, owner; nothing made
#    during the trace);
#  - --fill with aging and filler files reaches the target utilization within 2 %;
#  - the same seed makes the same layout decisions (identical manifests), --clones 2
#    builds two complete copies;
#  - a map whose path goes through a symlink, a map with a '..' component, a non-empty
#    target and a too-small file system each fail with exit status 1 and one clear line,
#    leave nothing outside the target and keep the user's files.
# Needs root (loop devices); fails loudly without it.
#   050-init.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
init=$build/src/aging/tbbt-init
[ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (loop devices)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/tbbt-init-test.XXXXXX)
mnt=$work/mnt
cleanup() {
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  rm -rf "$work"
}
trap cleanup EXIT
fsmount() {   # fsmount FS: a fresh 512 MiB file system on $mnt
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  rm -f "$work/img"; mkdir -p "$mnt"
  truncate -s 512M "$work/img"
  case "$1" in
    ext4) mkfs.ext4 -q -F "$work/img" ;;
    xfs) mkfs.xfs -q -f "$work/img" ;;
  esac
  mount -o loop "$work/img" "$mnt"
}
manifest_stat() {   # manifest_stat FILE KEY
  awk -v k="$2" '$1 == "stats" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"
}
expect_fail() {   # expect_fail WHAT PATTERN CMD...: exit 1 and one line matching PATTERN
  local what=$1 pat=$2; shift 2
  if "$@" > "$work/out" 2> "$work/err"; then
    echo "FAIL: $what: succeeded"; exit 1
  fi
  grep -q -- "$pat" "$work/err" || { echo "FAIL: $what: message '$(cat "$work/err")'"; exit 1; }
  [ "$(wc -l < "$work/err")" -eq 1 ] || { echo "FAIL: $what: not one line"; cat "$work/err"; exit 1; }
  echo "ok: $what: $(cat "$work/err")"
}

python3 "$top/tests/integration/gen-map.py" "$work/g.map" --dirs 40 --files 400 --max-size 2097152
for fs in ext4 xfs; do
  echo "== $fs"
  fsmount "$fs"
  mkdir "$mnt/a"
  "$init" -q --map "$work/g.map" --root "$mnt/a" --manifest "$work/a.manifest"
  python3 "$top/tests/integration/check-image.py" "$work/g.map" "$mnt/a"

  # fill with aging and fillers, over the earlier image
  "$init" -q --map "$work/g.map" --root "$mnt/a" --manifest "$work/a.manifest" --force \
    --fill 0.45 --scope 8M --appends 8
  python3 "$top/tests/integration/check-image.py" "$work/g.map" "$mnt/a"
  u=$(manifest_stat "$work/a.manifest" utilization)
  awk -v u="$u" 'BEGIN { exit !(u >= 0.44 && u <= 0.46) }' \
    || { echo "FAIL: utilization $u, want 0.45 within 2 %"; exit 1; }
  echo "ok: --fill 0.45: utilization $u, $(manifest_stat "$work/a.manifest" synthetic_files) synthetic files, $(manifest_stat "$work/a.manifest" fillers) fillers deleted"

  # the same seed, the same decisions; two clones
  "$init" -q --map "$work/g.map" --root "$mnt/a" --manifest "$work/a.manifest" --force --scope 4M --appends 4 --seed 7
  mkdir "$mnt/b"
  "$init" -q --map "$work/g.map" --root "$mnt/b" --manifest "$work/b.manifest" --scope 4M --appends 4 --seed 7
  diff <(grep -v '^stats\|^root\|^# crc32' "$work/a.manifest") <(grep -v '^stats\|^root\|^# crc32' "$work/b.manifest") > /dev/null \
    || { echo "FAIL: the same seed made different images"; exit 1; }
  [ "$(manifest_stat "$work/a.manifest" appends)" = "$(manifest_stat "$work/b.manifest" appends)" ] \
    || { echo "FAIL: the same seed wrote in different appends"; exit 1; }
  echo "ok: the same seed makes the same manifest"
  "$init" -q --map "$work/g.map" --root "$mnt/b" --manifest "$work/b.manifest" --force --clones 2
  for k in 0 1; do python3 "$top/tests/integration/check-image.py" "$work/g.map" "$mnt/b/tbbt-clone-$k"; done
  # the distance controls and aging by class still give the exact image, spacers gone
  "$init" -q --map "$work/g.map" --root "$mnt/b" --manifest "$work/b.manifest" --force --spread \
    --spacers 2 --spacer-size 16K --scope 4M --appends 4 --synthetic-appends 2 --large-size 512K \
    --large-appends 16 --fill 0.3
  python3 "$top/tests/integration/check-image.py" "$work/g.map" "$mnt/b"
  [ -z "$(find "$mnt/b" -name 'tbbt-spacer-*' -print -quit)" ] || { echo "FAIL: spacers left"; exit 1; }
  [ "$(manifest_stat "$work/b.manifest" spacers)" -gt 0 ] || { echo "FAIL: no spacers made"; exit 1; }
  echo "ok: --spread, --spacers and aging by class"
  "$init" -q --map "$work/g.map" --root "$mnt/b" --manifest "$work/b.manifest" --force

  # names with bytes the manifest escapes are made, and removed again by --force
  printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n2\td\t-\t0\t-\tsp ace\\x09tab\tsp ace\\x09tab\t-\t1\t-\n3\tf\t5\t0\t-\tsp ace\\x09tab/\\xffx\tsp ace\\x09tab/\\xffx\t-\t1\t-\n' > "$work/esc2.map"
  python3 "$top/tests/integration/mapsum.py" "$work/esc2.map"   # version 3, checksum line
  mkdir "$mnt/g"
  "$init" -q --map "$work/esc2.map" --root "$mnt/g" --manifest "$work/g.manifest"
  python3 "$top/tests/integration/check-image.py" "$work/esc2.map" "$mnt/g"
  "$init" -q --map "$work/g.map" --root "$mnt/g" --manifest "$work/g.manifest" --force
  [ -z "$(find "$mnt/g" -name 'sp ace*' -print -quit)" ] || { echo "FAIL: --force left escaped names"; exit 1; }
  python3 "$top/tests/integration/check-image.py" "$work/g.map" "$mnt/g"
  echo "ok: escaped names made and removed"

  # bad input
  mkdir "$mnt/c" "$mnt/outside"
  printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n2\tl\t0\t0\t-\tesc\tesc\t../outside\t1\t-\n3\td\t-\t0\t-\tesc/x\tesc/x\t-\t1\t-\n' > "$work/esc.map"
  python3 "$top/tests/integration/mapsum.py" "$work/esc.map"   # version 3, checksum line
  expect_fail "a path through a symlink" "line 4: path: its directory is no earlier directory entry" "$init" -q --map "$work/esc.map" --root "$mnt/c"
  [ ! -e "$mnt/outside/x" ] || { echo "FAIL: wrote outside the target"; exit 1; }
  "$init" -q --map "$work/g.map" --root "$mnt/c" --force > /dev/null 2>&1 || true   # cleans c
  printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n2\td\t-\t0\t-\ta/../b\tb\t-\t1\t-\n' > "$work/dots.map"
  python3 "$top/tests/integration/mapsum.py" "$work/dots.map"   # version 3, checksum line
  mkdir "$mnt/e"
  expect_fail "a '..' component" "line 3" "$init" -q --map "$work/dots.map" --root "$mnt/e"
  mkdir "$mnt/d"; echo keep > "$mnt/d/user-file"
  expect_fail "a non-empty target" "not empty" "$init" -q --map "$work/g.map" --root "$mnt/d"
  expect_fail "a non-empty target with --force" "not empty" "$init" -q --map "$work/g.map" --root "$mnt/d" --force
  [ "$(cat "$mnt/d/user-file")" = keep ] || { echo "FAIL: the user's file changed"; exit 1; }
  printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n2\tf\t2000000000\t0\t-\thuge\thuge\t-\t1\t-\n' > "$work/huge.map"
  python3 "$top/tests/integration/mapsum.py" "$work/huge.map"   # version 3, checksum line
  mkdir "$mnt/f"
  expect_fail "a too-small file system" "No space left" "$init" -q --map "$work/huge.map" --root "$mnt/f" --manifest "$work/f.manifest"
  grep -q '^status	failed' "$work/f.manifest" || { echo "FAIL: the manifest does not say it failed"; exit 1; }
done
echo "ok: tbbt-init"
