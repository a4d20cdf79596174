#!/bin/sh
# Rewrites the expected dumps (*.dump) of the nfsdump fixtures with the current reader, and
# the gzip copy of v3-all.txt; review the result with `git diff tests/golden/nfsdump`.
#   tests/golden/nfsdump/regen.sh [BUILD_DIR]      (default: build)
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
gzip -n -9 -c "$here/v3-all.txt" > "$here/v3-all.txt.gz"
TBBT_ND_REGEN=1 "$build/tests/test-nfsdump"
