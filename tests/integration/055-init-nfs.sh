#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-init --server: the initial image built through NFSv3 calls to the real lab server
# (NFS-Ganesha on an ext4 loop image, tools/tbbt-lab, started here inside a private
# network namespace, tools/lab-ns), docs/tbbt-init.md "Building through NFS":
#  1. a generated map (tests/integration/gen-map.py) built over NFS is complete and exact
#     on the export's local directory (check-image.py: types, sizes, links, symlink
#     targets, modes, owners, the image root's mode and owner); the manifest names the
#     server and the export; a local build of the same map with the same seed makes the
#     same manifest and the same tree; --clones 1 builds the image at the root itself;
#  2. --fill with aging and fillers reaches the target utilization within 2 %; --clones 2,
#     --spread, spacers and aging by class give exact images; --force removes the
#     earlier image over NFS, and refuses a root holding a file it did not make;
#  3. a root path through a symbolic link, a map path through a symbolic link, a full file
#     system, --measure with --server and a server that stops answering each fail with
#     exit status 1 (2 for the usage error) and one line;
#  4. tbbt-play --verify replays traces against images built this way (zero replay
#     failures), also a trace whose non-root user creates files in the image root (the
#     map root's mode and owner are applied, by both backends).
# Needs root; fails, never skips, without it.
#   055-init-nfs.sh BUILD_DIR
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: 055-init-nfs.sh BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${TBBT_LAB_NS:-}" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL: 055-init-nfs needs root (it starts the lab NFS server)" >&2
    exit 1
  fi
  # Again inside a private namespace with a fresh state directory (TBBT_LAB_DIR).
  exec "$top/tools/lab-ns" --tmp 055 -- bash "$0" "$@"
fi

build=$(cd "$1" && pwd)
here=$top/tests/integration
init=$build/src/aging/tbbt-init
play=$build/src/player/tbbt-play
convert=$build/src/extract/tbbt-convert
proxy=$build/tools/rpc-proxy
lab=$top/tools/tbbt-lab
for b in "$init" "$play" "$convert" "$proxy"; do
  [ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
done
work=$(mktemp -d)
proxy_pid=""
cleanup() {
  [ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true
  bash "$lab" stop -q || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "055-init-nfs: $*"; }

bash "$lab" start --size 512M -q || fail "cannot start the lab server in $TBBT_LAB_DIR"
lab_env=$(bash "$lab" env) || fail "tbbt-lab env failed"
eval "$lab_env"
E=$TBBT_LAB_EXPORT
S=$TBBT_LAB_SERVER
nfs() { "$init" -q --server "$S" --export "$E" "$@"; }   # tbbt-init over NFS
check() { python3 "$here/check-image.py" "$@" > "$work/check.out" || fail "check-image $*: $(cat "$work/check.out")"; }
manifest_stat() {   # manifest_stat FILE KEY
  awk -v k="$2" '$1 == "stats" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"
}
tree() { (cd "$1" && find . -mindepth 1 ! -name .tbbt-init -printf '%y %s %m %u:%g %n %l %p\n' |
          sed 's/^d [0-9]* /d - /' | sort); }
expect_fail() {   # expect_fail WHAT STATUS PATTERN CMD...: exit STATUS and one line matching PATTERN
  local what=$1 want=$2 pat=$3 rc=0; shift 3
  "$@" > "$work/out" 2> "$work/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "$what: exit status $rc, want $want: $(cat "$work/err")"
  grep -q -- "$pat" "$work/err" || fail "$what: message '$(cat "$work/err")'"
  [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$what: not one line: $(cat "$work/err")"
  say "ok: $what: $(cat "$work/err")"
}

# ------------------------------------------------------------------ 1. exact images
python3 "$here/gen-map.py" "$work/g.map" --dirs 40 --files 400 --max-size 2097152
mkdir "$E/a" "$E/b"
nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" || fail "build over NFS"
check "$work/g.map" "$E/a"
grep -qx "root	$E/a" "$work/a.manifest" || fail "manifest: no root line $E/a"
grep -qx "server	$S" "$work/a.manifest" || fail "manifest: no server line"
grep -qx "export	$E" "$work/a.manifest" || fail "manifest: no export line"
grep -qx "status	complete" "$work/a.manifest" || fail "manifest: not complete"
"$init" -q --map "$work/g.map" --root "$E/b" --manifest "$work/b.manifest" || fail "local build"
check "$work/g.map" "$E/b"
diff <(grep -v '^stats\|^root\|^server\|^export\|^# crc32' "$work/a.manifest") \
     <(grep -v '^stats\|^root\|^server\|^export\|^# crc32' "$work/b.manifest") > /dev/null ||
  fail "NFS and local builds of the same map and seed made different manifests"
diff <(tree "$E/a") <(tree "$E/b") > "$work/tree.diff" ||
  fail "NFS and local builds differ: $(head -5 "$work/tree.diff")"
[ "$(manifest_stat "$work/a.manifest" bytes)" = "$(manifest_stat "$work/b.manifest" bytes)" ] ||
  fail "NFS and local builds wrote different byte counts"
say "ok: the map built over NFS is exact and the same as a local build ($(grep -c '^made' "$work/a.manifest") objects)"
"$init" -q --map "$work/g.map" --root "$E/b" --manifest "$work/b.manifest" --force \
  --scope 4M --appends 4 --seed 7 || fail "local build, seed 7"
nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" --force --scope 4M \
  --appends 4 --seed 7 || fail "NFS build, seed 7, over the first"
check "$work/g.map" "$E/a"
diff <(grep -v '^stats\|^root\|^server\|^export\|^# crc32' "$work/a.manifest") \
     <(grep -v '^stats\|^root\|^server\|^export\|^# crc32' "$work/b.manifest") > /dev/null ||
  fail "aged NFS and local builds with the same seed made different manifests"
[ "$(manifest_stat "$work/a.manifest" appends)" = "$(manifest_stat "$work/b.manifest" appends)" ] ||
  fail "aged NFS and local builds wrote in different appends"
say "ok: aged builds (--scope 4M --appends 4) over NFS and locally make the same manifest"
# --clones 1 (docs/tbbt-init.md): the image is the root itself, no tbbt-clone-* directory.
"$init" -q --map "$work/g.map" --root "$E/b" --manifest "$work/b.manifest" --force \
  --clones 1 --seed 1 > /dev/null || fail "local build, --clones 1, over the aged one"
check "$work/g.map" "$E/b"
clones=$(find "$E/b" -maxdepth 1 -name 'tbbt-clone-*' -printf '%f ')
[ -z "$clones" ] || fail "--clones 1 made clone directories: $clones"
if ! grep -qx "clones	1" "$work/b.manifest" || ! grep -qx "clone	\." "$work/b.manifest"; then
  fail "--clones 1: the manifest does not say one clone at the root"
fi
rm -rf "${E:?}/b"
say "ok: --clones 1 builds the image at the root itself"

# ------------------------------------------------------------------ 2. fill, clones, force
nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" --force --fill 0.45 \
  --scope 8M --appends 8 || fail "--fill 0.45 over NFS"
check "$work/g.map" "$E/a"
u=$(manifest_stat "$work/a.manifest" utilization)
ul=$(python3 -c "import os,sys; v=os.statvfs(sys.argv[1]); print('%.4f' % ((v.f_blocks - v.f_bfree) / v.f_blocks))" "$E")
awk -v u="$u" -v l="$ul" 'BEGIN { exit !(u >= 0.44 && u <= 0.46 && l >= 0.44 && l <= 0.46) }' ||
  fail "utilization $u (statvfs: $ul), want 0.45 within 2 %"
say "ok: --fill 0.45 over NFS: utilization $u (statvfs $ul), $(manifest_stat "$work/a.manifest" synthetic_files) synthetic files, $(manifest_stat "$work/a.manifest" fillers) fillers deleted"
nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" --force --clones 2 ||
  fail "--clones 2 over NFS"
for k in 0 1; do check "$work/g.map" "$E/a/tbbt-clone-$k"; done
nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" --force --spread \
  --spacers 2 --spacer-size 16K --scope 4M --appends 4 --synthetic-appends 2 \
  --large-size 512K --large-appends 16 --fill 0.3 || fail "--spread, spacers, classes over NFS"
check "$work/g.map" "$E/a"
[ -z "$(find "$E/a" -name 'tbbt-spacer-*' -print -quit)" ] || fail "spacers left"
[ "$(manifest_stat "$work/a.manifest" spacers)" -gt 0 ] || fail "no spacers made"
say "ok: --clones 2, --spread, spacers and aging by class over NFS"
echo keep > "$E/a/user-file"
expect_fail "--force with a file tbbt-init did not make" 1 "still holds files" \
  nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" --force
[ "$(cat "$E/a/user-file")" = keep ] || fail "the user's file changed"
[ -z "$(find "$E/a" -mindepth 1 ! -name user-file ! -name .tbbt-init -print -quit)" ] ||
  fail "--force left objects of the earlier image"
rm "$E/a/user-file"
nfs --map "$work/g.map" --root "$E/a" --manifest "$work/a.manifest" --force || fail "--force"
check "$work/g.map" "$E/a"

# ------------------------------------------------------------------ 3. refusals and failures
ln -s a "$E/sl"
expect_fail "a root path through a symlink" 1 "symbolic link" \
  nfs --map "$work/g.map" --root "$E/sl" --manifest "$work/x.manifest"
expect_fail "a root outside the export" 1 "not an absolute path under the export" \
  nfs --map "$work/g.map" --root /tmp --manifest "$work/x.manifest"
mkdir "$E/c" "$E/outside"
printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n2\tl\t0\t0\t-\tesc\tesc\t../outside\t1\t-\n3\td\t-\t0\t-\tesc/x\tesc/x\t-\t1\t-\n' > "$work/esc.map"
python3 "$here/mapsum.py" "$work/esc.map"   # version 3, checksum line
expect_fail "a map path through a symlink" 1 "line 4: path: its directory is no earlier directory entry" \
  nfs --map "$work/esc.map" --root "$E/c" --manifest "$work/c.manifest"
[ -z "$(ls -A "$E/outside")" ] || fail "wrote outside the root"
[ ! -e "$work/c.manifest" ] || fail "a manifest for a map refused before the build"
printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n2\tf\t2000000000\t0\t-\thuge\thuge\t-\t1\t-\n' > "$work/huge.map"
python3 "$here/mapsum.py" "$work/huge.map"   # version 3, checksum line
mkdir "$E/f"
expect_fail "a too-small file system" 1 "WRITE 'huge' at offset [0-9]*: NFS3ERR_NOSPC" \
  nfs --map "$work/huge.map" --root "$E/f" --manifest "$work/f.manifest"
grep -q '^status	failed	WRITE' "$work/f.manifest" || fail "the manifest does not say it failed"
printf '# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n' > "$work/tiny.map"
python3 "$here/mapsum.py" "$work/tiny.map"
nfs --map "$work/tiny.map" --root "$E/f" --manifest "$work/f.manifest" --force > /dev/null 2>&1 || true
[ ! -e "$E/f/huge" ] || fail "--force did not remove the partial file"
expect_fail "--measure with --server" 2 "cannot work through --server" \
  "$init" --measure "$E" --server "$S" --export "$E"
rm -f "$work/proxy.port"
"$proxy" --listen 0 --server 127.0.0.1:2049 --port-file "$work/proxy.port" --delay mkdir=20000 \
  2> "$work/proxy.err" &
proxy_pid=$!
for _ in $(seq 50); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
[ -s "$work/proxy.port" ] || fail "rpc-proxy did not start: $(cat "$work/proxy.err")"
mkdir "$E/t"
t0=$(date +%s)
expect_fail "a server that stops answering" 1 "no reply from $S within 2 s" \
  "$init" -q --server "$S" --export "$E" --nfs-port "$(cat "$work/proxy.port")" \
  --mount-port "$TBBT_LAB_MOUNT_PORT" --timeout 2 --map "$work/g.map" --root "$E/t" \
  --manifest "$work/t.manifest"
[ $(( $(date +%s) - t0 )) -le 10 ] || fail "the timeout took $(( $(date +%s) - t0 )) s"
kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true; proxy_pid=""

# ------------------------------------------------------------------ 4. replays
replay() {   # replay NAME TRACE MANIFEST [--from-manifest] ARGS...: --verify, zero failures
  local name=$1 trace=$2 man=$3 where=(--server "$S" --export "$E"); shift 3
  [ "${1:-}" != --from-manifest ] || { where=(); shift; }
  timeout 300 "$play" --trace "$trace" --manifest "$man" "${where[@]}" \
    --verify -q --report-json "$work/$name.json" "$@" 2> "$work/$name.err" ||
    fail "$name: tbbt-play exit status $?: $(cat "$work/$name.err")"
  python3 - "$work/$name.json" "$name" <<'PY' || fail "$name: report $(cat "$work/$name.json")"
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["finished"] and r["replay_failures"] == 0 and r["verify"]["ok"]
ok &= r["ops_issued"] == r["ops_completed"] + r["ops_unknown"]
print(f'055-init-nfs: ok: replay {sys.argv[2]}: {r["ops_completed"]} ops, '
      f'{r["replay_failures"]} failures, verify {r["verify"]["ok"]}')
sys.exit(0 if ok else 1)
PY
}
"$convert" -q -o "$work/mid.tbbt" "$top/traces/v3-tcp-mid.pcap" || fail "convert v3-tcp-mid.pcap"
"$convert" -q -o "$work/scn.tbbt" "$top/traces/v3-tcp.pcap" || fail "convert v3-tcp.pcap"
for t in mid scn; do
  mkdir "$E/p-$t"
  nfs --map "$work/$t.tbbt.map" --root "$E/p-$t" --manifest "$work/p-$t.manifest" ||
    fail "build of $t over NFS"
  replay "$t-fsdep" "$work/$t.tbbt" "$work/p-$t.manifest" --order fsdep
  mkdir "$E/p3-$t"
  nfs --map "$work/$t.tbbt.map" --root "$E/p3-$t" --manifest "$work/p3-$t.manifest" \
    --clones 3 --scope 1M --appends 4 || fail "build of $t over NFS, 3 clones, aged"
  replay "$t-clones3" "$work/$t.tbbt" "$work/p3-$t.manifest" --clones 3
done
# The manifest of an image built through NFS names its server and export: tbbt-play's
# defaults.  A locally built image's names neither: without --server, a usage error.
mkdir "$E/pd"
nfs --map "$work/scn.tbbt.map" --root "$E/pd" --manifest "$work/pd.manifest" ||
  fail "build of scn over NFS for the manifest's defaults"
replay "scn-manifest-defaults" "$work/scn.tbbt" "$work/pd.manifest" --from-manifest
expect_fail "tbbt-play with a local image's manifest and no --server" 2 \
  "the manifest '$work/b.manifest' has no server and export lines" \
  "$play" --trace "$work/scn.tbbt" --manifest "$work/b.manifest"
# A non-root user (1000:100) owns the traced export root and makes a file in it: the image
# root gets the map root's mode and owner, so the replay is allowed to.
python3 - "$work/user.txt" <<'PY'
import sys
T = 1700000000 * 10**9
def ts(ns): return "%d.%09d" % (ns // 10**9, ns % 10**9)
def attr(t, mode, fileid, size=0):
    return ("{type=%d,mode=%s,nlink=%d,uid=1000,gid=100,size=%d,used=%d,rdev=0,fsid=1,fileid=%d,"
            "atime=1699990000.000000000,mtime=1699990000.000000000,ctime=1699990000.000000000}"
            % (t, mode, 2 if t == 2 else 1, size, size, fileid))
ops = [
    'mnt3 mnt status=OK dirpath="/export" new_fh=0',
    'v3 getattr status=OK fh=0 obj_attr=%s' % attr(2, "0755", 1),
    'v3 create status=OK fh=0 name="new" createmode=0 sattr={mask=mode,mode=0644} new_fh=1 '
    'obj_attr=%s' % attr(1, "0644", 2),
    'v3 write status=OK fh=1 offset=0 count=4096 stable=2 obj_attr=%s res_count=4096 '
    'committed=2' % attr(1, "0644", 2, 4096),
]
with open(sys.argv[1], "w") as f:
    print("# tbbt-trace 1.0\nep 0 tcp 127.0.0.1:900 127.0.0.1:2049\nfh 0 %064x" % 0x1000, file=f)
    for i, o in enumerate(ops):
        if i == 2:
            print("fh 1 %064x" % 0x1001, file=f)
        uid = 0 if i == 0 else 1000
        gid = 0 if i == 0 else 100
        prog, proc, fields = o.split(" ", 2)
        print("op %s %s %s %s xid=0x%08x ep=0 uid=%d gid=%d flags=reply|status|tcp "
              "rpc=success %s" % (ts(T + i * 10**6), ts(T + i * 10**6 + 10**5), prog, proc,
                                  0x100 + i, uid, gid, fields), file=f)
    print("end %d" % len(ops), file=f)
PY
"$convert" -q --from-text "$work/user.txt" -o "$work/user.raw" || fail "user trace from text"
"$convert" -q -o "$work/user.tbbt" "$work/user.raw" || fail "convert the user trace"
grep -q "	\.	\.	-	1	0755:1000:100$" "$work/user.tbbt.map" || fail "the user map's root: $(head -2 "$work/user.tbbt.map")"
mkdir -m 0755 "$E/un" "$E/ul"
nfs --map "$work/user.tbbt.map" --root "$E/un" --manifest "$work/un.manifest" || fail "user map over NFS"
"$init" -q --map "$work/user.tbbt.map" --root "$E/ul" --manifest "$work/ul.manifest" || fail "user map, local"
for k in un ul; do
  check "$work/user.tbbt.map" "$E/$k"
  replay "user-$k" "$work/user.tbbt" "$work/$k.manifest"
  [ "$(stat -c %u:%g "$E/$k/new")" = 1000:100 ] ||
    fail "$k: the replayed file is owned by $(stat -c %u:%g "$E/$k/new")"
done
say "ok: tbbt-init --server"
