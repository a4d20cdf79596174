#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a synthetic raw trace for the player benchmark (bench/play-bench.sh), in the TBBT
trace's text form (docs/trace-format.md); `tbbt-convert --from-text` turns it into a
binary raw trace, `tbbt-convert -o TRACE RAW` into a trace with TBBT-IDs and a map.

    gen-play-trace.py [--mix null|getattr|meta] [--ops N] [--files F] [--dirs D]
                      [--make-files] [--top NAME] [--rate R] [--latency-us L]
                      [--seed S] -o OUT.txt

The trace starts with MNT (the root handle), then either LOOKUPs of every directory and
file with their attributes (so they exist at trace start and tbbt-init builds them, with
their sizes), or with --make-files MKDIR, CREATE and one FILE_SYNC WRITE per file (for
the MEM FSAL, where tbbt-init cannot write; sizes stay below its 64 KiB per file).  With
--top NAME everything lies in directory NAME of the export root (made or looked up
first), so several traces can share one export.  Then N operations of the mix:

- null:    NFSv3 NULL only (no files unless --files is given explicitly);
- getattr: GETATTR of the files, uniformly;
- meta:    a metadata-heavy site: 45 % GETATTR, 30 % LOOKUP, 20 % READ of 4-32 KiB,
           3 % ACCESS, 2 % READDIRPLUS; files picked with a skew (a few are hot).

Calls are 1/R s apart (R calls/s, default 20000), each reply L us after its call
(default 100).  Every reply is OK and consistent (READ counts within the file, eof
right), so a replay of it on a faithful image has no replay failures.
"""
import argparse
import random
import sys

T0 = 1700000000 * 10**9
FILE_TIME = "1699990000.000000000"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mix", choices=("null", "getattr", "meta"), default="meta")
    ap.add_argument("--ops", type=int, default=200000, help="operations after the set-up")
    ap.add_argument("--files", type=int, default=None, help="files (default 2000; null: 0)")
    ap.add_argument("--dirs", type=int, default=40, help="directories (default 40)")
    ap.add_argument("--make-files", action="store_true",
                    help="the trace makes its directories and files (MEM FSAL)")
    ap.add_argument("--top", default=None, help="put everything in this directory of the root")
    ap.add_argument("--rate", type=float, default=20000.0, help="calls per second of the trace")
    ap.add_argument("--latency-us", type=float, default=100.0, help="reply time after call")
    ap.add_argument("--min-size", type=int, default=4096)
    ap.add_argument("--max-size", type=int, default=65536)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.ops < 0 or a.rate <= 0 or a.dirs < 1:
        ap.error("--ops >= 0, --rate > 0 and --dirs >= 1 are needed")
    nfiles = a.files if a.files is not None else (0 if a.mix == "null" else 2000)
    if nfiles < 1 and a.mix != "null":
        ap.error("--mix %s needs files" % a.mix)
    if a.make_files and a.max_size > 65536:
        ap.error("--make-files: the MEM FSAL keeps at most 64 KiB per file")
    rng = random.Random(a.seed)

    out = open(a.output, "w", buffering=1 << 20)
    w = out.write
    step = int(round(1e9 / a.rate))
    lat = int(round(a.latency_us * 1000))
    state = {"t": T0, "xid": 0x10000000, "n": 0, "fh": 0}

    def ts(ns):
        return "%d.%09d" % (ns // 1000000000, ns % 1000000000)

    def new_fh():
        r = state["fh"]
        state["fh"] += 1
        w("fh %d %064x\n" % (r, 0x7b000000 + r))
        return r

    def op(body):
        t = state["t"]
        w("op %s %s %s xid=0x%08x ep=0 uid=0 gid=0 flags=reply|status|tcp rpc=success%s\n"
          % (ts(t), ts(t + lat), body[0], state["xid"] & 0xffffffff, body[1]))
        state["xid"] += 1
        state["n"] += 1
        state["t"] = t + step

    def fattr(ftype, fileid, size, nlink=1):
        mode = "0755" if ftype == 2 else "0644"
        used = (size + 4095) // 4096 * 4096
        return ("{type=%d,mode=%s,nlink=%d,uid=0,gid=0,size=%d,used=%d,rdev=0,fsid=1,"
                "fileid=%d,atime=%s,mtime=%s,ctime=%s}"
                % (ftype, mode, nlink, size, used, fileid, FILE_TIME, FILE_TIME, FILE_TIME))

    w("# tbbt-trace 1.0\n")
    w("# gen-play-trace.py --mix %s --ops %d --files %d --dirs %d%s --rate %g --seed %d\n"
      % (a.mix, a.ops, nfiles, a.dirs, " --make-files" if a.make_files else "", a.rate, a.seed))
    w("ep 0 tcp 127.0.0.1:900 127.0.0.1:2049\n")
    root = new_fh()
    op(("mnt3 mnt", ' status=OK dirpath="/export" new_fh=%d' % root))

    ndirs = min(a.dirs, nfiles) if nfiles else 0
    root_attr = fattr(2, 1, 4096, 2 + (1 if a.top else ndirs))
    base, base_attr = root, root_attr
    if a.top:
        top = new_fh()
        top_attr = fattr(2, 50, 4096, 2 + ndirs)
        if a.make_files:
            op(("v3 mkdir", ' status=OK fh=%d name="%s" sattr={mask=mode,mode=0755} new_fh=%d '
                'obj_attr=%s dir_attr=%s' % (root, a.top, top, top_attr, root_attr)))
        else:
            op(("v3 lookup", ' status=OK fh=%d name="%s" new_fh=%d obj_attr=%s dir_attr=%s'
                % (root, a.top, top, top_attr, root_attr)))
        base, base_attr = top, top_attr

    # Directories and files: handle, attribute text, size.
    dirs = []
    for i in range(ndirs):
        h = new_fh()
        nin = nfiles // ndirs + (1 if i < nfiles % ndirs else 0)
        attr = fattr(2, 100 + i, 4096, 2)
        name = "d%02d" % i
        if a.make_files:
            op(("v3 mkdir", ' status=OK fh=%d name="%s" sattr={mask=mode,mode=0755} new_fh=%d '
                'obj_attr=%s dir_attr=%s' % (base, name, h, attr, base_attr)))
        else:
            op(("v3 lookup", ' status=OK fh=%d name="%s" new_fh=%d obj_attr=%s dir_attr=%s'
                % (base, name, h, attr, base_attr)))
        dirs.append((h, attr, nin))
    files = []   # (dir index, name, handle, size, attr)
    for j in range(nfiles):
        d = j % ndirs
        dh, dattr, _ = dirs[d]
        h = new_fh()
        size = rng.randint(a.min_size, a.max_size)
        name = "f%05d" % j
        attr = fattr(1, 10000 + j, size)
        if a.make_files:
            op(("v3 create", ' status=OK fh=%d name="%s" sattr={mask=mode,mode=0644} '
                'createmode=0 new_fh=%d obj_attr=%s dir_attr=%s'
                % (dh, name, h, fattr(1, 10000 + j, 0), dattr)))
            op(("v3 write", ' status=OK fh=%d offset=0 count=%d stable=2 obj_attr=%s '
                'res_count=%d committed=2' % (h, size, attr, size)))
        else:
            op(("v3 lookup", ' status=OK fh=%d name="%s" new_fh=%d obj_attr=%s dir_attr=%s'
                % (dh, name, h, attr, dattr)))
        files.append((d, name, h, size, attr))

    # The body.  Per-file text that does not change is built once.
    getattr_txt = [(" status=OK fh=%d obj_attr=%s" % (f[2], f[4])) for f in files]
    if a.mix == "null":
        body = ("v3 null", "")
        for _ in range(a.ops):
            op(body)
    elif a.mix == "getattr":
        for _ in range(a.ops):
            op(("v3 getattr", getattr_txt[rng.randrange(nfiles)]))
    else:
        lookup_txt = [(' status=OK fh=%d name="%s" new_fh=%d obj_attr=%s dir_attr=%s'
                       % (dirs[f[0]][0], f[1], f[2], f[4], dirs[f[0]][1])) for f in files]
        # A skewed choice: 20 % of the files get 80 % of the operations.
        hot = max(1, nfiles // 5)
        order = list(range(nfiles))
        rng.shuffle(order)
        rnd, randrange = rng.random, rng.randrange
        for _ in range(a.ops):
            f = order[randrange(hot)] if rnd() < 0.8 else order[randrange(nfiles)]
            x = rnd()
            if x < 0.45:
                op(("v3 getattr", getattr_txt[f]))
            elif x < 0.75:
                op(("v3 lookup", lookup_txt[f]))
            elif x < 0.95:
                _, _, h, size, attr = files[f]
                count = 4096 * randrange(1, 9)
                offset = 0 if rnd() < 0.6 else 4096 * randrange(0, (size - 1) // 4096 + 1)
                res = min(count, size - offset)
                op(("v3 read", " status=OK fh=%d offset=%d count=%d obj_attr=%s res_count=%d eof=%d"
                    % (h, offset, count, attr, res, 1 if offset + res >= size else 0)))
            elif x < 0.98:
                op(("v3 access", " status=OK fh=%d access=7 obj_attr=%s access_res=3"
                    % (files[f][2], files[f][4])))
            else:
                dh, dattr, nin = dirs[files[f][0]]
                op(("v3 readdirplus", " status=OK fh=%d cookie=0 cookieverf=0 dircount=4096 "
                    "maxcount=32768 dir_attr=%s res_count=0 eof=%d"
                    % (dh, dattr, 1 if nin < 50 else 0)))
    w("end %d\n" % state["n"])
    out.close()
    print("gen-play-trace: %s: %d ops (%d of set-up), %d files in %d directories"
          % (a.output, state["n"], state["n"] - a.ops, nfiles, ndirs), file=sys.stderr)


if __name__ == "__main__":
    main()
