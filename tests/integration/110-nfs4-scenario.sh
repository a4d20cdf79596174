#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NFSv4 traffic of our own client against the real lab server: starts NFS-Ganesha with
# NFSv4 (tools/tbbt-lab start --nfs4, VFS FSAL) in a private lab namespace, runs
# tools/nfs4-scenario for minor versions 0, 1 and 2 with 2 clients each (every
# operation's status is checked by the tool: exit 0 needed), captures each run with
# tcpdump and checks with tshark (the independent decoder) that every operation the tool
# reports sending is in the calls with the same count, that the calls carry the minor
# version asked for, and that the expected errors (NFS4ERR_NOENT, NOTEMPTY, SAME,
# DENIED) are in the replies.  Needs root, tcpdump and tshark; fails, never skips,
# without them or without the tool.
#   110-nfs4-scenario.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 110-nfs4-scenario.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/integration/lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 110-nfs4-scenario "$0" "$@"

fail() { echo "FAIL: $*" >&2; exit 1; }
scn=$build/tools/nfs4-scenario
lab=$top/tools/tbbt-lab
[ -x "$scn" ] || fail "$scn not built"
for t in tcpdump tshark; do
  command -v "$t" >/dev/null || fail "$t is not installed"
done
work=$(mktemp -d)
PROG=110-nfs4-scenario
# shellcheck source=tools/capture-lib.sh
. "$top/tools/capture-lib.sh"
cleanup() {
  capture_stop 0 >/dev/null 2>&1 || true
  bash "$lab" stop -q >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

bash "$lab" start --nfs4 --fsal vfs --size 64M -q >/dev/null || fail "cannot start the lab with --nfs4"
timeout 5 rpcinfo -T tcp 127.0.0.1 100003 4 >/dev/null || fail "the lab does not answer NFSv4 NULL"

# check_counts PCAP COUNTS MINOR: tshark's per-operation call counts equal the tool's.
check_counts() {
  local pcap=$1 counts=$2 minor=$3 got minors
  got=$(tshark -r "$pcap" -T fields -e nfs.opcode \
    -Y 'rpc.msgtyp == 0 && rpc.program == 100003 && rpc.programversion == 4' 2>/dev/null |
    tr ',' '\n' | awk 'NF { n[$1]++ } END { for (o in n) print o, n[o] }')
  [ -n "$got" ] || fail "minor $minor: tshark finds no NFSv4 calls in the capture"
  awk 'NR == FNR { name[$2] = $1; want[$2] = $3; next }
       { got[$1] = $2; if (!($1 in want)) { print "operation " $1 " seen, never sent"; bad = 1 } }
       END { for (o in want) if (got[o] + 0 != want[o]) {
               print name[o] ": sent " want[o] ", tshark sees " got[o] + 0; bad = 1 }
             exit bad }' "$counts" <(echo "$got") >"$work/diff.$minor" ||
    fail "minor $minor: counts differ from tshark: $(tr '\n' ';' <"$work/diff.$minor")"
  minors=$(tshark -r "$pcap" -T fields -e nfs.minorversion \
    -Y 'rpc.msgtyp == 0 && nfs.minorversion' 2>/dev/null | sort -u | tr '\n' ' ')
  [ "$minors" = "$minor " ] || fail "minor $minor: calls carry minor versions '$minors'"
  local st
  # NOENT, NOTEMPTY, SAME, DENIED: once per client each, as the operation's status and
  # as the COMPOUND's (nfs.nfsstat4 has both).
  for st in 2 66 10009 10010; do
    [ "$(tshark -r "$pcap" -T fields -e nfs.nfsstat4 -Y 'rpc.msgtyp == 1' 2>/dev/null |
      tr ',' '\n' | grep -cx "$st")" -eq 4 ] || fail "minor $minor: status $st not seen 4 times"
  done
}

for minor in 0 1 2; do
  pcap=$work/v4$minor.pcap
  capture_start "$pcap" "$work/tcpdump.$minor" 0 'port 2049' || fail "tcpdump did not start"
  if ! timeout 30 "$scn" --minor "$minor" --clients 2 --seed "$minor" >"$work/counts.$minor" \
    2>"$work/err.$minor"; then
    fail "nfs4-scenario --minor $minor: $(tail -n 3 "$work/err.$minor")"
  fi
  capture_stop 1 || fail "tcpdump wrote no capture"
  grep -q '^SEQUENCE ' "$work/counts.$minor" && [ "$minor" -eq 0 ] &&
    fail "minor 0 sent SEQUENCE"
  grep -q '^SEQUENCE ' "$work/counts.$minor" || [ "$minor" -eq 0 ] ||
    fail "minor $minor sent no SEQUENCE"
  check_counts "$pcap" "$work/counts.$minor" "$minor"
  echo "ok: minor $minor: $(awk '{ s += $3 } END { print s }' "$work/counts.$minor")" \
    "operations in $(wc -l <"$work/counts.$minor") kinds agree with tshark"
done
echo "ok: nfs4-scenario NFSv4.0, 4.1 and 4.2 against the lab server"
