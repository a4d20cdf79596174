#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, from a fresh Debian 12 machine: installs what it needs
# (idempotently), builds with -Werror, runs the unit tests, the integration
# tests against a real NFS-Ganesha lab server (root needed: loop devices),
# the unit tests again under ASan+UBSan, and a short bounded fuzzing run.
#
#   bash tools/test.sh [--quick]      (--quick: skip the sanitizer build and fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc 2>/dev/null || echo 2)

say() { echo "tbbt-test: $*"; }

if [ "$(id -u)" -ne 0 ]; then
  echo "tbbt-test: must run as root (installs packages, mounts loop-device images)" >&2
  exit 1
fi
bash tools/install-deps.sh

# Never leave a lab server running, whatever happens below.
cleanup() { bash tools/tbbt-lab stop >/dev/null 2>&1 || true; }
trap cleanup EXIT

say "build (Release, -Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBBT_WERROR=ON >/dev/null
cmake --build build -j "$jobs" >/dev/null

say "unit and integration tests"
(cd build && ctest --output-on-failure -j 1)

if [ $quick -eq 0 ]; then
  say "build with ASan+UBSan"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTBBT_SANITIZE=ON -DTBBT_WERROR=ON >/dev/null
  cmake --build build-asan -j "$jobs" >/dev/null
  say "unit tests, capture checks and the player under ASan+UBSan"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" -L 'unit|sanitize')

  say "fuzzing (bounded)"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DTBBT_FUZZ=ON \
    -DTBBT_BUILD_TESTS=OFF >/dev/null
  cmake --build build-fuzz -j "$jobs" >/dev/null
  for f in build-fuzz/tests/fuzz/fuzz-*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    corpus=$top/tests/fuzz/corpus/${name#fuzz-}
    work=$(mktemp -d)
    [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
    say "$name: ${TBBT_FUZZ_SECONDS:-45} s"
    "$f" -max_total_time="${TBBT_FUZZ_SECONDS:-45}" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 "$work" 2>&1 | tail -n 3
    rm -rf "$work"
  done
fi
say "all tests passed"
