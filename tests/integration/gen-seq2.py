#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes, in the TBBT trace's text form (docs/trace-format.md), a raw trace shaped like
sequence 2 of the TBBT paper's Table 3: N times "create d<i>/A call, create reply, write B
call, write B reply", the creates in N different directories, all writes to one file B
that exists at trace start.  With CREATE slow on the tested server, the conservative
order waits for every create before the next write; the FS-dependency order does not
(no object is shared), so it finishes sooner.  tbbt-convert turns the raw trace into a
trace with TBBT-IDs and a hierarchy map (tests/integration/070-play.sh).

    gen-seq2.py N OUT.txt
"""
import sys

n = int(sys.argv[1])
out = open(sys.argv[2], "w")
T0 = 1700000000 * 10**9
t = T0


def ts(ns):
    return "%d.%09d" % (ns // 10**9, ns % 10**9)


def attr(ftype, fileid, size=0):
    mode = "0755" if ftype == 2 else "0644"
    return ("{type=%d,mode=%s,nlink=%d,uid=0,gid=0,size=%d,used=%d,rdev=0,fsid=1,fileid=%d,"
            "atime=1699990000.000000000,mtime=1699990000.000000000,ctime=1699990000.000000000}"
            % (ftype, mode, 2 if ftype == 2 else 1, size, size, fileid))


def fh(ref):
    return "fh %d %064x" % (ref, 0x1000 + ref)


xid = 0x100


def op(dt_call, dt_reply, rest):
    global t, xid
    prog, proc, fields = rest.split(" ", 2)
    line = ("op %s %s %s %s xid=0x%08x ep=0 uid=0 gid=0 flags=reply|status|tcp rpc=success %s"
            % (ts(t + dt_call), ts(t + dt_reply), prog, proc, xid, fields))
    xid += 1
    print(line, file=out)


print("# tbbt-trace 1.0", file=out)
print("ep 0 tcp 127.0.0.1:900 127.0.0.1:2049", file=out)
print(fh(0), file=out)
op(0, 100000, 'mnt3 mnt status=OK dirpath="/export" new_fh=0')
t += 1000000
for i in range(n):
    print(fh(1 + i), file=out)
    op(0, 100000, 'v3 lookup status=OK fh=0 name="d%d" new_fh=%d obj_attr=%s dir_attr=%s'
       % (i, 1 + i, attr(2, 100 + i), attr(2, 1)))
    t += 200000
B = 1 + n
print(fh(B), file=out)
op(0, 100000, 'v3 lookup status=OK fh=0 name="B" new_fh=%d obj_attr=%s dir_attr=%s'
   % (B, attr(1, 99, 0), attr(2, 1)))
t += 1000000
for i in range(n):
    a = B + 1 + i
    print(fh(a), file=out)
    # Table 3, sequence 2: create A call (0), create A reply (1), write B call (2), reply (3).
    op(0, 1000000, 'v3 create status=OK fh=%d name="A" createmode=0 sattr={mask=mode,mode=0644} '
       'new_fh=%d obj_attr=%s' % (1 + i, a, attr(1, 1000 + i)))
    op(2000000, 3000000, 'v3 write status=OK fh=%d offset=%d count=4096 stable=2 obj_attr=%s '
       'res_count=4096 committed=2' % (B, i * 4096, attr(1, 99, (i + 1) * 4096)))
    t += 4000000
print("end %d" % (xid - 0x100), file=out)
out.close()
