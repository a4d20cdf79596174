# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034  # sourced: base_build is read by the caller
# bench/baseline.sh: the baseline build of an A/B benchmark (sourced, not run).
#
# A refactor must not cost speed: convert-bench.sh, play-bench.sh and roundtrip-bench.sh
# measure, in the same run and interleaved, the build under test ("new") and a baseline
# build ("old") given by one of
#   --baseline-build DIR   a build tree made earlier (e.g. the commit before the work)
#   --baseline-src DIR     a source tree, built here (RelWithDebInfo, no tests)
#   --baseline-rev REV     a git revision of this repository, exported with `git archive`
#                          and built here
# Built baselines are kept in bench/out/baseline/<name>/ and reused by later runs (a
# source tree is rebuilt incrementally, a revision only once).  This file only finds or
# builds the baseline and describes builds; each bench times them, and bench/ab.py turns
# the timings into new/old ratios.  It does not judge whether the two builds are the same
# configuration: it prints both so that the reader can.
#
#   baseline_resolve PROG TOP BUILD SRC REV  sets base_build (empty: no baseline)
#   build_info BUILD                         prints one JSON object describing BUILD
#   builds_show PROG NEW OLD                 prints both builds, warns if they are one

# baseline_resolve PROG TOP BUILD SRC REV: at most one of BUILD, SRC, REV is non-empty;
# sets base_build to the baseline build directory (built first if need be) or to "".
# Exits with status 2 on a usage error, 1 when the baseline cannot be built.
baseline_resolve() {
  local prog=$1 top=$2 b=$3 src=$4 rev=$5 n=0 dir commit
  base_build=""
  [ -z "$b" ] || n=$((n + 1))
  [ -z "$src" ] || n=$((n + 1))
  [ -z "$rev" ] || n=$((n + 1))
  [ $n -le 1 ] || { echo "$prog: give one of --baseline-build, --baseline-src, --baseline-rev" >&2; exit 2; }
  if [ -n "$b" ]; then
    [ -d "$b" ] || { echo "$prog: --baseline-build $b: no such directory" >&2; exit 2; }
    base_build=$(cd "$b" && pwd)
    return 0
  fi
  if [ -n "$src" ]; then
    [ -f "$src/CMakeLists.txt" ] || { echo "$prog: --baseline-src $src: not a tbbt source tree" >&2; exit 2; }
    src=$(cd "$src" && pwd)
    dir=$top/bench/out/baseline/src-$(printf '%s' "$src" | sha1sum | cut -c1-12)
  elif [ -n "$rev" ]; then
    commit=$(git -C "$top" rev-parse --verify -q "$rev^{commit}") ||
      { echo "$prog: --baseline-rev $rev: not a commit of $top" >&2; exit 2; }
    dir=$top/bench/out/baseline/rev-${commit:0:12}
    src=$dir/src
    if [ ! -f "$src/CMakeLists.txt" ]; then
      rm -rf "$src"; mkdir -p "$src"
      git -C "$top" archive "$commit" | tar -x -C "$src" ||
        { echo "$prog: git archive $rev failed" >&2; exit 1; }
      echo "$commit" > "$dir/commit"
    fi
  else
    return 0
  fi
  echo "$prog: building the baseline ${rev:-$src} in $dir/build"
  mkdir -p "$dir"
  { cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBBT_BUILD_TESTS=OFF &&
    cmake --build "$dir/build" -j2; } > "$dir/build.log" 2>&1 ||
    { tail -n 20 "$dir/build.log" >&2; echo "$prog: the baseline does not build" >&2; exit 1; }
  base_build=$dir/build
}

# build_info BUILD: one JSON object: the build directory, its source tree and that tree's
# commit (with "dirty" when it has uncommitted changes), CMAKE_BUILD_TYPE, and
# tbbt-convert's --version and SHA-256 (two builds with the same hash are one build).
build_info() {
  local b=$1 src="" commit="" dirty=false type="" ver="" sum=""
  if [ -f "$b/CMakeCache.txt" ]; then
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$b/CMakeCache.txt")
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$b/CMakeCache.txt")
  fi
  if [ -n "$src" ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
     [ "$(git -C "$src" rev-parse --show-toplevel)" = "$src" ]; then
    commit=$(git -C "$src" rev-parse HEAD)
    [ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] || dirty=true
  elif [ -f "$src/../commit" ]; then
    commit=$(cat "$src/../commit")          # a --baseline-rev export
  fi
  if [ -x "$b/src/extract/tbbt-convert" ]; then
    ver=$("$b/src/extract/tbbt-convert" --version 2>/dev/null | head -n 1)
    sum=$(sha256sum "$b/src/extract/tbbt-convert" | cut -c1-16)
  fi
  python3 -c 'import json, sys
k = ("build", "source", "commit", "dirty", "build_type", "convert_version", "convert_sha256")
v = sys.argv[1:]
v[3] = v[3] == "true"
print(json.dumps(dict(zip(k, v))))' "$b" "$src" "$commit" "$dirty" "$type" "$ver" "$sum"
}

# builds_show PROG NEW OLD: prints both builds (path, build type, source, commit,
# tbbt-convert version and hash); when the variables ab_new_json and ab_old_json name
# files, writes each build's JSON object there.  Warns when the two tbbt-convert binaries
# are identical or the build types differ.
builds_show() {
  local prog=$1 nj oj
  nj=$(build_info "$2") oj=$(build_info "$3")
  [ -z "${ab_new_json:-}" ] || echo "$nj" > "$ab_new_json"
  [ -z "${ab_old_json:-}" ] || echo "$oj" > "$ab_old_json"
  python3 - "$prog" "$nj" "$oj" <<'PY'
import json, sys
prog = sys.argv[1]
for label, s in (("new", sys.argv[2]), ("old", sys.argv[3])):
    d = json.loads(s)
    print("%s: %s build %s (%s), source %s at %s%s; %s, sha256 %s" % (
        prog, label, d["build"], d["build_type"] or "?", d["source"] or "?",
        (d["commit"] or "?")[:12], " + uncommitted changes" if d["dirty"] else "",
        d["convert_version"] or "no tbbt-convert", d["convert_sha256"] or "-"))
n, o = json.loads(sys.argv[2]), json.loads(sys.argv[3])
if n["convert_sha256"] and n["convert_sha256"] == o["convert_sha256"]:
    print("%s: warning: the new and the old tbbt-convert are the same binary" % prog)
if n["build_type"] != o["build_type"]:
    print("%s: warning: build types differ (%s, %s): the ratios compare configurations" % (
        prog, n["build_type"], o["build_type"]))
PY
}
