#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Damaged input (docs/tbbt-convert.md "Damaged input"): copies of a committed capture
# and of an nfsdump fixture are damaged with python3 - a record header with a huge
# captured length in the middle and in the last packet (pcap, pcapng, pcap.gz), a pcapng
# block with a bad length, a gzip file cut at 90 % and one with a corrupt byte at 90 %, a
# text trace with a corrupt first line and a corrupt middle line, a small gzip file with a
# corrupt byte at 10 % (inside the first 64 KiB inflated), a gzip file followed by other
# bytes (zero padding is no damage) - and each converts
# with exit status 3, the summary's skip counters, and at least 99 % of the calls of the
# good part (the undamaged conversion's, restricted to the part before the damage for
# the gzip cases, to the good lines for the text trace).  Two inputs, one damaged: the
# other is read whole.  A wrong snapshot length in a file header is not damage.  A TBBT
# trace cut short, as input, is no salvage: exit 1, nothing written.  No server.
#   025-salvage.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
conv="$build/src/extract/tbbt-convert"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Writes the damaged copies into $work, with damage.json saying what each should give.
python3 - "$top" "$work" <<'PY'
import gzip, json, struct, sys, zlib
top, work = sys.argv[1], sys.argv[2]
src = open(f"{top}/traces/v3-tcp-mid.pcap", "rb").read()
ng = open(f"{top}/traces/v3-tcp.pcapng", "rb").read()
text = open(f"{top}/tests/golden/nfsdump/v3-all.txt", "rb").read().split(b"\n")
out = {}

def classic_records(b):
    off, recs = 24, []
    while off + 16 <= len(b):
        recs.append(off)
        off += 16 + struct.unpack("<I", b[off + 8:off + 12])[0]
    return recs

def ng_blocks(b):
    off, blocks = 0, []
    while off + 12 <= len(b):
        t, l = struct.unpack("<II", b[off:off + 8])
        blocks.append((off, t, l))
        off += l
    return blocks

def put(name, data, **want):
    open(f"{work}/{name}", "wb").write(data)
    out[name] = want

recs = classic_records(src)
for where, i in (("mid", len(recs) // 2), ("last", len(recs) - 1)):
    b = bytearray(src)
    b[recs[i] + 8:recs[i] + 12] = struct.pack("<I", 0x7fffff00)
    resyncs = 1 if where == "mid" else 0
    put(f"{where}.pcap", bytes(b), skipped=1, resyncs=resyncs, good="v3-tcp-mid.pcap")
    put(f"{where}.pcap.gz", gzip.compress(bytes(b)), skipped=1, resyncs=resyncs,
        good="v3-tcp-mid.pcap")
epbs = [o for o, t, l in ng_blocks(ng) if t == 6]
for where, o in (("mid", epbs[len(epbs) // 2]), ("last", epbs[-1])):
    b = bytearray(ng)
    b[o + 20:o + 24] = struct.pack("<I", 0x7fffff00)          # the EPB's captured length
    put(f"{where}.pcapng", bytes(b), skipped=1, resyncs=0, good="v3-tcp.pcapng")
o = epbs[len(epbs) // 3]
b = bytearray(ng)
b[o + 4:o + 8] = struct.pack("<I", 0x7fffff00)                # a block's total length
put("badlen.pcapng", bytes(b), skipped=1, resyncs=1, good="v3-tcp.pcapng")

# gzip damage at 90 % (and 10 %): the good part is the records wholly inflated before the damage
z = gzip.compress(src)
def prefix_pcap(name, damaged, src=src):
    recs = classic_records(src)
    d = zlib.decompressobj(16 + 15)
    got = b""
    try:
        for k in range(0, len(damaged), 512):
            got += d.decompress(damaged[k:k + 512])
    except zlib.error:
        pass
    same = 0
    while same < min(len(got), len(src)) and got[same] == src[same]:
        same += 1
    keep = [r for r in recs if r + 16 <= same and
            r + 16 + struct.unpack("<I", src[r + 8:r + 12])[0] <= same]
    end = keep[-1] + 16 + struct.unpack("<I", src[keep[-1] + 8:keep[-1] + 12])[0]
    open(f"{work}/{name}.good.pcap", "wb").write(src[:end])
    return f"{name}.good.pcap"
cut = z[:len(z) * 9 // 10]
put("cut.pcap.gz", cut, ends_early=True, good=prefix_pcap("cut", cut))
bad = bytearray(z)
bad[len(z) * 9 // 10] ^= 0xff
put("corrupt.pcap.gz", bytes(bad), ends_early=True, good=prefix_pcap("corrupt", bytes(bad)))
# damage within the first 64 KiB inflated (what libpcap's check of the header reads)
small = open(f"{top}/traces/v3-tcp.pcap", "rb").read()
z = gzip.compress(small)
bad = bytearray(z)
bad[len(z) // 10] ^= 0xff
put("corrupt-early.pcap.gz", bytes(bad), ends_early=True,
    good=prefix_pcap("corrupt-early", bytes(bad), small))
# something else after the last gzip member (not zero padding): all of it passed over
put("trailing.pcap.gz", gzip.compress(src) + b"not gzip \x00\x01", trailing=11,
    good="v3-tcp-mid.pcap")
# zero padding after it (tape blocks) is no damage, as for gzip(1)
open(f"{work}/padded.pcap.gz", "wb").write(gzip.compress(src) + bytes(4096))

# nfsdump text: the first message line and a middle one corrupt; the good lines alone too
msg = [i for i, l in enumerate(text) if l and not l.startswith(b"#")]
first, middle = msg[0], msg[len(msg) // 2]
t = list(text)
t[first] = b"\x00\xff\x13garbage 1100000000.0001 30.03ef ?? C3 zz"
t[middle] = t[middle][:12] + b"\x01\x02 not a line \xfe"
put("bad.txt", b"\n".join(t), skipped_lines=2,
    good_lines=b"\n".join(l for i, l in enumerate(text) if i not in (first, middle)))
open(f"{work}/good.txt", "wb").write(out["bad.txt"].pop("good_lines"))
out["bad.txt"]["good"] = "good.txt"
json.dump(out, open(f"{work}/damage.json", "w"))
PY

cp "$top/traces/v3-tcp-mid.pcap" "$top/traces/v3-tcp.pcapng" "$top/traces/v3-udp.pcap" "$work/"
calls() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rpc_calls"])' "$1"; }
good_calls() {   # calls of the undamaged conversion of $1
  "$conv" -q --summary-json "$work/$1.json" -o "$work/$1.tbbt" "$work/$1" ||
    fail "the undamaged $1 does not convert"
  calls "$work/$1.json"
}

n=0
for name in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' \
                "$work/damage.json"); do
  rc=0
  "$conv" --summary-json "$work/$name.json" -o "$work/$name.tbbt" "$work/$name" \
      2> "$work/$name.err" || rc=$?
  [ "$rc" -eq 3 ] || fail "$name: exit $rc, expected 3: $(cat "$work/$name.err")"
  grep -q "warning: '$work/$name'" "$work/$name.err" ||
      fail "$name: no warning naming the file: $(cat "$work/$name.err")"
  [ -s "$work/$name.tbbt" ] || fail "$name: no trace"
  good=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["good"])' \
           "$work/damage.json" "$name")
  want=$(good_calls "$good")
  python3 - "$work/damage.json" "$name" "$work/$name.json" "$want" <<'PY'
import json, sys
want_all, name, got, good = json.load(open(sys.argv[1]))[sys.argv[2]], sys.argv[2], \
    json.load(open(sys.argv[3])), int(sys.argv[4])
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {name}: {what}")
if "skipped" in want_all:
    check(got["skipped_records"] == want_all["skipped"],
          f"skipped_records {got['skipped_records']}, expected {want_all['skipped']}")
    check(got["resyncs"] == want_all["resyncs"],
          f"resyncs {got['resyncs']}, expected {want_all['resyncs']}")
    check(got["damaged_bytes"] > 0, "damaged_bytes 0")
if "ends_early" in want_all:
    check(got["damaged_files"] and got["damaged_files"][0]["ends_early"], "ends_early not set")
if "trailing" in want_all:
    check(got["damaged_bytes"] == want_all["trailing"],
          f"damaged_bytes {got['damaged_bytes']}, expected {want_all['trailing']}")
    check("after the end of the compressed data" in got["damaged_files"][0]["why"],
          f"why {got['damaged_files'][0]['why']!r}")
if "skipped_lines" in want_all:
    check(got["skipped_lines"] == want_all["skipped_lines"],
          f"skipped_lines {got['skipped_lines']}, expected {want_all['skipped_lines']}")
check(len(got["damaged_files"]) == 1 and got["damaged_files"][0]["file"].endswith(name),
      f"damaged_files {got['damaged_files']}")
check(got["rpc_calls"] >= 0.99 * good,
      f"{got['rpc_calls']} calls, fewer than 99 % of the good part's {good}")
print(f"ok: {name}: exit 3, {got['rpc_calls']} of {good} calls")
PY
  n=$((n + 1))
done
[ "$n" -ge 12 ] || fail "only $n damaged inputs"

# Not damage: zero bytes after the last gzip member (block padding): exit 0, every call.
"$conv" -q --summary-json "$work/padded.json" -o "$work/padded.tbbt" \
    "$work/padded.pcap.gz" || fail "zero padding after the gzip data: exit $?"
[ "$(calls "$work/padded.json")" -eq "$(good_calls v3-tcp-mid.pcap)" ] ||
    fail "zero padding after the gzip data: calls differ"
echo "ok: zero padding after the gzip data is not damage"

# Not damage: a file header whose snapshot length (96) is below the records' captured
# lengths (some writers get it wrong): exit 0, every call.
python3 -c 'import struct,sys; b=bytearray(open(sys.argv[1],"rb").read())
b[16:20]=struct.pack("<I",96); open(sys.argv[2],"wb").write(b)' \
    "$work/v3-tcp-mid.pcap" "$work/snap96.pcap"
"$conv" -q --summary-json "$work/snap96.json" -o "$work/snap96.tbbt" "$work/snap96.pcap" ||
    fail "snapshot length 96: exit $?"
[ "$(calls "$work/snap96.json")" -eq "$(good_calls v3-tcp-mid.pcap)" ] ||
    fail "snapshot length 96: calls differ"
echo "ok: a wrong snapshot length in the file header is not damage"

# Several inputs: the damage in one loses nothing of the other.
want=$(( $(good_calls v3-tcp-mid.pcap) + $(good_calls v3-udp.pcap) ))
rc=0
"$conv" -q --summary-json "$work/two.json" -o "$work/two.tbbt" "$work/mid.pcap" \
    "$work/v3-udp.pcap" || rc=$?
[ "$rc" -eq 3 ] || fail "two inputs, one damaged: exit $rc, expected 3"
got=$(calls "$work/two.json")
[ $((got * 100)) -ge $((want * 99)) ] || fail "two inputs: $got calls of $want"
echo "ok: two inputs, one damaged: $got of $want calls"
echo "ok: $n damaged inputs converted with exit 3"

# Not salvage: a TBBT trace given as input that is cut short gives no output at all, so
# it is exit status 1 (no usable output), not 3, and no trace is written.
"$conv" -q -o "$work/whole.tbbt" "$top/traces/v3-tcp.pcap" || fail "v3-tcp.pcap: exit $?"
size=$(stat -c %s "$work/whole.tbbt")
head -c $((size - 40)) "$work/whole.tbbt" > "$work/cut.tbbt"
rc=0
"$conv" -q -o "$work/recut.tbbt" "$work/cut.tbbt" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "a cut TBBT trace as input: exit $rc, expected 1"
[ ! -e "$work/recut.tbbt" ] || fail "a cut TBBT trace as input: an output was written"
echo "ok: a cut TBBT trace as input: exit 1, nothing written"
