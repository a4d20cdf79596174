#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tools and their pages agree: every tbbt-* tool (and tools/rpc-proxy) answers --help
# and --version with exit 0 ("NAME (tbbt) VERSION" first), refuses an unknown option with
# exit 2 and one line naming it, and every long option its --help-all lists is named
# (as --option) on its page in docs/; every key of the reports' key tables
# (src/*/*-keys.def) is named on the tool's page.  No server.
#   005-docs.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }

# check BINARY PAGE
check() {
  local bin=$1 page=$2 name out rc opt missing=()
  name=$(basename "$bin")
  [ -x "$bin" ] || fail "$name: not built ($bin)"
  [ -f "$page" ] || fail "$name: no page $page"
  out=$("$bin" --help 2>&1) || fail "$name --help exited $?"
  echo "$out" | grep -q "^Usage:" || fail "$name --help: no Usage line"
  out=$("$bin" --version 2>&1) || fail "$name --version exited $?"
  echo "$out" | head -n 1 | grep -Eq "^$name \(tbbt\) [0-9]+\.[0-9]+" \
    || fail "$name --version: first line '$(echo "$out" | head -n 1)'"
  rc=0; out=$("$bin" --no-such-option 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq 2 ] || fail "$name --no-such-option exited $rc, not 2"
  echo "$out" | head -n 1 | grep -q -- "--no-such-option" \
    || fail "$name --no-such-option: the error does not name it: $out"
  for opt in $("$bin" --help-all | grep -oE '^ +(-[[:alnum:]], )?--[a-z0-9-]+' |
               grep -oE -- '--[a-z0-9-]+' | sort -u); do
    case $opt in --help|--help-all|--help-*) continue ;; esac
    grep -qE -- "$opt([^a-z0-9-]|\$)" "$page" || missing+=("$opt")
  done
  [ ${#missing[@]} -eq 0 ] || fail "$name: options not on $(basename "$page"): ${missing[*]}"
  echo "$name: --help, --version, usage error and $(basename "$page") agree"
}

for t in aging/tbbt-init compare/tbbt-compare extract/tbbt-convert player/tbbt-play \
         raheur/tbbt-raheur stats/tbbt-stats synth/tbbt-synth trace/tbbt-dump; do
  check "$build/src/$t" "$top/docs/$(basename "$t").md"
done
check "$build/tools/rpc-proxy" "$top/docs/rpc-proxy.md"

# keys TABLE PAGE: every JSON key of a report's key table (src/*/*-keys.def, rows
# NAME("key", ...)) is named on the tool's page.
keys() {
  local k missing=()
  for k in $(grep -oE '^[A-Z_]+\("[a-z0-9_]+"' "$top/src/$1" | grep -oE '"[a-z0-9_]+"' |
             tr -d '"' | sort -u); do
    grep -qE "(^|[^a-z0-9_])$k([^a-z0-9_]|\$)" "$top/docs/$2" || missing+=("$k")
  done
  [ ${#missing[@]} -eq 0 ] || fail "src/$1: keys not on $2: ${missing[*]}"
  echo "src/$1: every key is on $2"
}
keys player/report-keys.def tbbt-play.md
keys stats/report-keys.def tbbt-stats.md
keys compare/report-keys.def tbbt-compare.md
keys aging/measure-keys.def tbbt-init.md
echo "005-docs: ok"
