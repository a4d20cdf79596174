# SPDX-License-Identifier: MIT
# Sourced by the integration tests that replay against their own lab server (top must
# be set to the project's root first):
#   itest_private_lab NAME "$0" "$@"   unless already inside one (TBBT_LAB_NS), re-runs
#                                      the test in a private network and mount namespace
#                                      with a fresh lab state directory (tools/lab-ns);
#                                      fails, never skips, without root
#   itest_tools BUILD_DIR              sets play, convert, init, proxy and lab, and fails
#                                      unless they are built and python3 is installed

itest_private_lab() {
  local name=$1 script=$2
  shift 2
  [ -z "${TBBT_LAB_NS:-}" ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL: $name needs root (it starts the lab NFS server)" >&2
    exit 1
  fi
  exec "$top/tools/lab-ns" --tmp "${name%%-*}" -- bash "$script" "$@"
}

itest_tools() {
  local build=$1 b
  play=$build/src/player/tbbt-play
  convert=$build/src/extract/tbbt-convert
  init=$build/src/aging/tbbt-init
  proxy=$build/tools/rpc-proxy
  lab=$top/tools/tbbt-lab
  for b in "$play" "$convert" "$init" "$proxy"; do
    [ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
  done
  command -v python3 >/dev/null || { echo "FAIL: python3 is not installed" >&2; exit 1; }
}
