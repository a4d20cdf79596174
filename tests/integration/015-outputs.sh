#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Output files are never destroyed (util/outfile.h; docs/tbbt-convert.md "Output
# files"): a symlinked -o/--map keeps the link and rewrites its target (tbbt-convert,
# tbbt-synth), -o /dev/null and a device node stay devices, a FIFO and -o /dev/stdout
# get the trace in place, -o /dev/full exits 1 with one line naming it (convert, synth,
# dump both ways) and leaves the other output (map or trace) that exists as it was, a failed --from-text leaves an existing output byte for byte
# (tbbt-convert, tbbt-dump); tbbt-init refuses a manifest inside a symlinked --root
# (nothing written in the image) and stores the map and root absolute; no temporary is
# left.  Every case runs and reports; the script fails if any did.  No server.
#   015-outputs.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
convert="$build/src/extract/tbbt-convert"
dump="$build/src/trace/tbbt-dump"
synth="$build/src/synth/tbbt-synth"
init="$build/src/aging/tbbt-init"
cap="$top/traces/v3-tcp-s256.pcap"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

failed=0
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }

# The reference outputs, written to plain files.
"$convert" -q -o ref.tbbt "$cap" || { echo "FAIL: reference conversion" >&2; exit 1; }
"$dump" ref.tbbt > ref.txt || { echo "FAIL: reference dump" >&2; exit 1; }
"$synth" -q --readers 1 --stride 2 --scale 1/2048 -o sref.tbbt ||
  { echo "FAIL: reference synth" >&2; exit 1; }

# is_link_to LINK TARGET REF: LINK is still a symlink to TARGET, whose bytes are REF's.
is_link_to() {
  [ -L "$1" ] && [ "$(readlink "$1")" = "$2" ] && cmp -s "$(dirname "$1")/$2" "$3"
}

case_convert_symlinks() {
  mkdir -p sl && echo old > sl/t.real && echo old > sl/m.real
  ln -sf t.real sl/t.tbbt && ln -sf m.real sl/t.map
  ln -sf dangling.tbbt sl/d.tbbt
  if "$convert" -q -o sl/t.tbbt --map sl/t.map "$cap" && is_link_to sl/t.tbbt t.real ref.tbbt &&
     is_link_to sl/t.map m.real ref.tbbt.map &&
     "$convert" -q -o sl/d.tbbt --map sl/d.map "$cap" && is_link_to sl/d.tbbt dangling.tbbt ref.tbbt
  then ok "convert: symlinked -o and --map stay links, their targets rewritten"
  else fail "convert: symlinked -o/--map: $(ls -l sl | tr '\n' ' ')"; fi
}

case_dev_null() {
  if "$convert" -q -o /dev/null "$cap" && [ -c /dev/null ] && [ ! -e /dev/null.map ]; then
    ok "convert -o /dev/null: still a character device, no /dev/null.map"
  else
    fail "convert -o /dev/null: $(ls -l /dev/null /dev/null.map 2>&1 | tr '\n' ' ')"
  fi
  rm -f /dev/null.map
  # a device node elsewhere, reached through a symlink (root only: mknod)
  if mknod nullnode c 1 3 2> /dev/null; then
    ln -s nullnode nl
    if "$convert" -q -o nl --map nl.map "$cap" && [ -c nullnode ] && [ -L nl ]; then
      ok "convert -o LINK-TO-DEVICE: the link and the device node stay"
    else
      fail "convert -o LINK-TO-DEVICE: $(ls -l nullnode nl | tr '\n' ' ')"
    fi
  fi
}

case_dev_stdout() {
  if "$convert" -q -o /dev/stdout "$cap" | cmp -s - ref.tbbt && [ -L /dev/stdout ] &&
     [ ! -e /dev/stdout.map ]; then
    ok "convert -o /dev/stdout: the trace on standard output, /dev/stdout untouched"
  else
    fail "convert -o /dev/stdout: $(ls -l /dev/stdout* | tr '\n' ' ')"
  fi
}

case_fifo() {
  local pid
  mkfifo ff
  timeout 20 cat ff > from-fifo &
  pid=$!
  "$convert" -q -o ff --map ff.map "$cap"
  local rc=$?
  wait "$pid"
  if [ "$rc" -eq 0 ] && [ -p ff ] && cmp -s from-fifo ref.tbbt; then
    ok "convert -o FIFO: the trace written into the FIFO, which stays one"
  else
    fail "convert -o FIFO: exit $rc, $(ls -l ff | tr '\n' ' '), read $(wc -c < from-fifo) bytes"
  fi
}

# full TOOL ARGS...: exit 1 with one line on stderr naming /dev/full, which stays a device.
full() {
  local what=$1 rc
  shift
  "$@" 2> full.err > /dev/null
  rc=$?
  if [ "$rc" -eq 1 ] && [ "$(wc -l < full.err)" -eq 1 ] && grep -q "'/dev/full'" full.err &&
     [ -c /dev/full ]; then
    ok "$what -o /dev/full: exit 1, $(cat full.err)"
  else
    fail "$what -o /dev/full: exit $rc, stderr: $(tr '\n' '|' < full.err)"
  fi
}

case_dev_full() {
  full "convert" "$convert" -q -o /dev/full --map full.map "$cap"
  full "synth" "$synth" -q --readers 1 --scale 1/2048 -o /dev/full --map full2.map
  full "dump" "$dump" -o /dev/full ref.tbbt
  full "dump --from-text" "$dump" --from-text ref.txt -o /dev/full
  rm -f /dev/full.map
  # the other output of the pair already exists: a failed run leaves it as it was
  local k
  for k in convert-map synth-trace synth-map; do
    echo "old $k" > "keep-$k"
  done
  full "convert --map" "$convert" -q -o keep-convert-map --map /dev/full "$cap"
  full "synth (existing map)" "$synth" -q --readers 1 --scale 1/2048 -o /dev/full \
    --map keep-synth-map
  full "synth --map" "$synth" -q --readers 1 --scale 1/2048 -o keep-synth-trace \
    --map /dev/full
  for k in convert-map synth-trace synth-map; do
    if [ "$(cat "keep-$k")" = "old $k" ]; then
      ok "$k: an existing output is left as it was when the other one fails"
    else
      fail "$k: a failed run replaced the existing output"
    fi
  done
}

case_from_text_keeps() {
  printf '# tbbt-trace 1.1\nthis is not a record\n' > bad.txt
  cp ref.tbbt keep1.tbbt && cp ref.tbbt keep2.tbbt
  chmod 640 keep2.tbbt
  "$convert" --from-text bad.txt -o keep1.tbbt 2> /dev/null
  local rc1=$?
  "$dump" --from-text bad.txt -o keep2.tbbt 2> /dev/null
  local rc2=$?
  if [ "$rc1" -eq 1 ] && cmp -s keep1.tbbt ref.tbbt && [ "$rc2" -eq 1 ] &&
     cmp -s keep2.tbbt ref.tbbt; then
    ok "failed --from-text (convert, dump): exit 1, the existing output byte-identical"
  else
    fail "failed --from-text: exits $rc1 $rc2, $(ls -l keep1.tbbt keep2.tbbt 2>&1 | tr '\n' ' ')"
  fi
  # and a good one replaces the file, keeping its permission bits
  if "$dump" --from-text ref.txt -o keep2.tbbt && cmp -s keep2.tbbt ref.tbbt &&
     [ "$(stat -c %a keep2.tbbt)" = 640 ] && [ -z "$(ls -A | grep '\.tmp-')" ]; then
    ok "--from-text over an existing file: mode 640 kept, no temporary left"
  else
    fail "--from-text over an existing file: $(stat -c %a keep2.tbbt) $(ls -A | tr '\n' ' ')"
  fi
}

case_synth_symlink() {
  mkdir -p ss && echo old > ss/s.real && ln -sf s.real ss/s.tbbt && ln -sf sm.real ss/s.map
  if "$synth" -q --readers 1 --stride 2 --scale 1/2048 -o ss/s.tbbt --map ss/s.map &&
     is_link_to ss/s.tbbt s.real sref.tbbt && is_link_to ss/s.map sm.real sref.tbbt.map; then
    ok "synth: symlinked -o and --map stay links, their targets rewritten"
  else
    fail "synth: symlinked -o/--map: $(ls -l ss | tr '\n' ' ')"
  fi
}

case_init_symlinked_root() {
  mkdir -p img && ln -sf img imglink
  "$init" -q --map ref.tbbt.map --root imglink --manifest img/m.manifest 2> init.err
  local rc=$?
  if [ "$rc" -eq 1 ] && [ -z "$(ls -A img)" ] && grep -q "inside the root" init.err; then
    ok "init: a manifest inside a symlinked --root is refused, nothing written in the image"
  else
    fail "init with a symlinked --root: exit $rc, image holds: $(ls -A img | tr '\n' ' ')"
  fi
  rm -rf img/* img/.[!.]*
  ln -sf img/m2.manifest mlink      # the manifest's own link points into the image
  "$init" -q --map ref.tbbt.map --root img --manifest mlink 2> init.err
  rc=$?
  if [ "$rc" -eq 1 ] && [ -z "$(ls -A img)" ] && grep -q "inside the root" init.err; then
    ok "init: a symlinked manifest pointing into --root is refused, nothing written"
  else
    fail "init with a manifest linked into the root: exit $rc, image holds: $(ls -A img | tr '\n' ' ')"
  fi
  rm -rf img/* img/.[!.]*
}

case_init_absolute_paths() {
  mkdir -p rel/img sub && cp ref.tbbt.map rel/g.map
  (cd rel && "$init" -q --map g.map --root img --manifest ../sub/m.manifest)
  local rc=$?
  if [ "$rc" -eq 0 ] && grep -qx "map	$work/rel/g.map" sub/m.manifest &&
     grep -qx "root	$work/rel/img" sub/m.manifest; then
    ok "init: relative --map and --root stored absolute in the manifest"
  else
    fail "init relative paths: exit $rc, $(grep -E '^(map|root)' sub/m.manifest | tr '\n' ' ')"
  fi
}

work=$(pwd -P)
case_convert_symlinks
case_dev_null
case_dev_stdout
case_fifo
case_dev_full
case_from_text_keeps
case_synth_symlink
case_init_symlinked_root
case_init_absolute_paths
left=$(find "$work" \( -name '.*.tmp-*' -o -name '*.raw-*' -o -name '*.partial-*' \) | head -3)
[ -z "$left" ] || fail "temporaries left behind: $left"
[ "$failed" -eq 0 ] || { echo "FAIL: $failed case(s) failed" >&2; exit 1; }
echo "ok: outputs are never destroyed"
