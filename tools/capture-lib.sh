# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# capture-lib.sh: tcpdump on loopback around a lab run, for scripts that source it
# (tools/make-captures.sh, tools/capture-workload.sh, tools/roundtrip.sh,
# tests/integration/097-compare.sh).  It starts tcpdump and waits until it listens, and
# stops it so that the capture is complete; it does not filter, convert or check what
# was captured beyond the file being a capture.  Options as docs/lab.md explains: -s
# SNAPLEN, -B 262144 (kernel buffer), -U (written per packet), -Z root (tcpdump keeps
# root and can write anywhere root can, so no directory needs opening up for its user).
#
#   capture_start FILE ERRFILE SNAPLEN FILTER
#       removes FILE and ERRFILE (a stale ERRFILE's "listening on" line would pass for
#       the new tcpdump's), starts tcpdump writing FILE (its messages into ERRFILE) and
#       waits at most CAPTURE_WAIT_S seconds for its "listening on" line.  Sets
#       capture_pid.  Returns 0, or 1 with one line on stderr (tcpdump failed or did not
#       start listening in time; it is stopped then).
#   capture_stop [LINGER_S]
#       waits LINGER_S seconds (default 2: libpcap hands packets over in blocks retired
#       after a 1 s timeout, and a block still open at SIGINT is lost), then sends
#       SIGINT (tcpdump flushes and prints its counts to ERRFILE), and after
#       CAPTURE_STOP_S seconds each SIGTERM, then SIGKILL.  Clears capture_pid.  Returns
#       0 when FILE holds at least a pcap file header (24 bytes), else 1 with one line on
#       stderr.  A no-op returning 0 when no capture runs.
# Messages start with "$PROG: " (the sourcing script's name) when PROG is set.

CAPTURE_WAIT_S=${CAPTURE_WAIT_S:-30}
CAPTURE_STOP_S=${CAPTURE_STOP_S:-10}
capture_pid=""
capture_file=""

capture_msg() { echo "${PROG:+$PROG: }$*" >&2; }

capture_start() {
  local file=$1 errf=$2 snap=$3 filter=$4 i
  rm -f "$file" "$errf"
  capture_file=$file
  tcpdump -i lo -s "$snap" -B 262144 -U -Z root -w "$file" "$filter" 2>"$errf" &
  capture_pid=$!
  for ((i = 0; i < CAPTURE_WAIT_S * 10; i++)); do
    grep -qs 'listening on' "$errf" && return 0
    if ! kill -0 "$capture_pid" 2>/dev/null; then
      wait "$capture_pid" 2>/dev/null || true
      capture_pid=""
      capture_msg "tcpdump failed: $(tail -n 1 "$errf" 2>/dev/null)"
      return 1
    fi
    sleep 0.1
  done
  capture_msg "tcpdump did not start listening within $CAPTURE_WAIT_S s"
  capture_stop 0 >/dev/null 2>&1 || true
  return 1
}

capture_stop() {
  local linger=${1:-2} sig i size
  [ -n "$capture_pid" ] || return 0
  sleep "$linger"
  for sig in INT TERM KILL; do
    kill -"$sig" "$capture_pid" 2>/dev/null || break
    for ((i = 0; i < CAPTURE_STOP_S * 10; i++)); do
      kill -0 "$capture_pid" 2>/dev/null || break 2
      sleep 0.1
    done
    capture_msg "tcpdump (pid $capture_pid) ignored SIG$sig for $CAPTURE_STOP_S s"
  done
  wait "$capture_pid" 2>/dev/null || true
  capture_pid=""
  size=$(stat -c %s "$capture_file" 2>/dev/null || echo 0)
  if [ "$size" -lt 24 ]; then
    capture_msg "tcpdump wrote no capture to $capture_file ($size bytes)"
    return 1
  fi
}
