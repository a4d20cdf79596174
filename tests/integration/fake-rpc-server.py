#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fake ONC RPC server and test client for 065-rpc-proxy.sh (docs/rpc-proxy.md).

serve: one TCP and one UDP socket on the same port.  Every call (RFC 5531 section 9;
any program, version, procedure) gets an accepted SUCCESS reply with an AUTH_NONE
verifier and a body of 4 zero bytes.  TCP uses record marking (section 11), records may
come in several fragments; a fragment longer than 16 MiB closes the connection.  By
default the calls that one read brings are answered in reverse order (like a server
with several threads); --in-order answers each call in arrival order.  --calls-log
writes "tcp|udp XID PROC" per call.  SIGTERM ends it with status 0.

client SCENARIO --port P [--udp]: drives a proxy (or the server) and checks what comes
back; prints "ok: ..." and exits 0, or "FAIL: ..." and exits 1.  Scenarios: pass, delay,
drop, reset, garbage.  checklog FILE EVENT[:PROC]...: checks an rpc-proxy event log.

Python 3 standard library only.
"""
import argparse
import os
import re
import selectors
import signal
import socket
import struct
import sys
import time

MAX_FRAGMENT = 16 << 20
NFS_PROG, NFS_VERS = 100003, 3
PROCS = {"null": 0, "getattr": 1, "create": 8}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def reply_for(xid):
    """Accepted SUCCESS reply: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS, body."""
    return struct.pack(">7I", xid, 1, 0, 0, 0, 0, 0)


def call_msg(xid, proc, args=b"", prog=NFS_PROG, vers=NFS_VERS):
    """A call with AUTH_NONE credential and verifier."""
    return struct.pack(">10I", xid, 0, 2, prog, vers, proc, 0, 0, 0, 0) + args


def record(msg, frag_sizes=None):
    """Record-marks msg, in one fragment or in fragments of the given sizes."""
    if not frag_sizes:
        return struct.pack(">I", 0x80000000 | len(msg)) + msg
    out, pos = b"", 0
    for i, n in enumerate(frag_sizes):
        last = i == len(frag_sizes) - 1
        chunk = msg[pos:] if last else msg[pos:pos + n]
        pos += len(chunk)
        out += struct.pack(">I", (0x80000000 if last else 0) | len(chunk)) + chunk
    return out


class Records:
    """Record-marking reassembly over a byte stream."""

    def __init__(self):
        self.buf = b""
        self.frags = []

    def feed(self, data):
        """Returns the whole records data completes; raises ValueError when malformed."""
        self.buf += data
        out = []
        while len(self.buf) >= 4:
            (mark,) = struct.unpack(">I", self.buf[:4])
            n = mark & 0x7FFFFFFF
            if n > MAX_FRAGMENT:
                raise ValueError("fragment too long")
            if len(self.buf) < 4 + n:
                break
            self.frags.append(self.buf[4:4 + n])
            self.buf = self.buf[4 + n:]
            if mark & 0x80000000:
                out.append(b"".join(self.frags))
                self.frags = []
        return out


# ---------------------------------------------------------------------------- server

class Server:
    def __init__(self, args):
        self.in_order = args.in_order
        self.calls_log = open(args.calls_log, "a", buffering=1) if args.calls_log else None
        self.sel = selectors.DefaultSelector()
        self.tcp, self.udp = self.bind(args.host, args.port)
        self.sel.register(self.tcp, selectors.EVENT_READ, ("accept", None))
        self.sel.register(self.udp, selectors.EVENT_READ, ("udp", None))

    @staticmethod
    def bind(host, port):
        for _ in range(50):
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind((host, port))
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                udp.bind((host, tcp.getsockname()[1]))
            except OSError:
                tcp.close()
                udp.close()
                if port:
                    raise
                continue
            tcp.listen(64)
            tcp.setblocking(False)
            udp.setblocking(False)
            return tcp, udp
        raise OSError("no port free for both TCP and UDP")

    def answer(self, transport, msgs):
        """Replies for the calls in msgs, in arrival order or reversed."""
        out = []
        for m in msgs:
            if len(m) < 24:
                continue
            xid, mtype, _, _, _, proc = struct.unpack(">6I", m[:24])
            if mtype != 0:
                continue
            if self.calls_log:
                self.calls_log.write(f"{transport} {xid:08x} {proc}\n")
            out.append(reply_for(xid))
        return out if self.in_order else out[::-1]

    def on_accept(self):
        try:
            conn, _ = self.tcp.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sel.register(conn, selectors.EVENT_READ, ("tcp", Records()))

    def close(self, conn):
        self.sel.unregister(conn)
        conn.close()

    def on_tcp(self, conn, recs):
        try:
            data = conn.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.close(conn)
            return
        try:
            msgs = recs.feed(data)
        except ValueError:
            self.close(conn)
            return
        try:
            conn.setblocking(True)
            for r in self.answer("tcp", msgs):
                conn.sendall(record(r))
            conn.setblocking(False)
        except OSError:
            self.close(conn)

    def on_udp(self):
        batch = []
        while True:
            try:
                data, addr = self.udp.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                continue
            batch.append((data, addr))
        if self.in_order:
            groups = [[b] for b in batch]
        else:
            groups = [batch]
        for g in groups:
            answered = self.answer("udp", [d for d, _ in g])
            addrs = [a for d, a in g if len(d) >= 24 and struct.unpack(">I", d[4:8])[0] == 0]
            if not self.in_order:
                addrs = addrs[::-1]
            for r, a in zip(answered, addrs):
                try:
                    self.udp.sendto(r, a)
                except OSError:
                    pass

    def run(self):
        while True:
            for key, _ in self.sel.select():
                kind, state = key.data
                if kind == "accept":
                    self.on_accept()
                elif kind == "udp":
                    self.on_udp()
                else:
                    self.on_tcp(key.fileobj, state)


def serve(args):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = Server(args)
    port = srv.tcp.getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.rename(tmp, args.port_file)
    try:
        srv.run()
    except KeyboardInterrupt:
        pass
    return 0


# ---------------------------------------------------------------------------- client

class Tcp:
    def __init__(self, port, timeout=3.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.recs = Records()
        self.pending = []

    def send(self, data):
        self.s.sendall(data)

    def recv_msg(self, timeout):
        """Next reply message, or None after timeout seconds; raises on reset/EOF."""
        deadline = time.monotonic() + timeout
        while not self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.s.settimeout(left)
            try:
                data = self.s.recv(65536)
            except socket.timeout:
                return None
            if not data:
                raise EOFError("connection closed")
            self.pending += self.recs.feed(data)
        return self.pending.pop(0)

    def close(self):
        self.s.close()


class Udp:
    def __init__(self, port):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.connect(("127.0.0.1", port))

    def send_call(self, xid, proc, args=b""):
        self.s.send(call_msg(xid, proc, args))

    def recv_msg(self, timeout):
        self.s.settimeout(timeout)
        try:
            return self.s.recv(65536)
        except socket.timeout:
            return None

    def close(self):
        self.s.close()


def check_reply(msg, xid=None):
    if msg is None:
        fail(f"no reply to xid {xid:08x}" if xid is not None else "no reply")
    if len(msg) != 28:
        fail(f"reply of {len(msg)} bytes, expected 28")
    rxid, mtype, stat, vf, vl, astat, body = struct.unpack(">7I", msg)
    if (mtype, stat, vf, vl, astat, body) != (1, 0, 0, 0, 0, 0):
        fail(f"reply {rxid:08x} is not an accepted SUCCESS with a 4-byte zero body")
    if xid is not None and rxid != xid:
        fail(f"reply xid {rxid:08x}, expected {xid:08x}")
    return rxid


def xid_base():
    return (os.getpid() << 16) & 0xFFFF0000


def scenario_pass(args):
    """N calls with matching XIDs; TCP also sends records batched, split byte by byte,
    in several fragments, and one 1 MiB record in fragments."""
    base, n = xid_base(), args.count
    xids = [base + i for i in range(n)]
    if args.udp:
        c = Udp(args.port)
        for x in xids:
            c.send_call(x, 1)
            check_reply(c.recv_msg(2.0), x)
        c.close()
        print(f"ok: {n} calls over UDP, XIDs match")
        return
    c = Tcp(args.port)
    third = n // 3
    c.send(b"".join(record(call_msg(x, 1)) for x in xids[:third]))       # several per read
    for x in xids[third:2 * third]:                                        # split over sends
        data = record(call_msg(x, 1))
        for i in range(0, len(data), 7):
            c.send(data[i:i + 7])
            time.sleep(0.001)
    for x in xids[2 * third:]:                                              # multi-fragment
        c.send(record(call_msg(x, 4, b"\0" * 64), [8, 16, 20, 40]))
    big = base + n
    c.send(record(call_msg(big, 7, b"\x55" * (1 << 20)), [300000, 300000, 300000, 200000]))
    got = [check_reply(c.recv_msg(5.0)) for _ in range(n + 1)]
    if got != xids + [big]:
        fail(f"TCP replies {sorted(set(xids + [big]) - set(got))} missing or out of order")
    c.close()
    print(f"ok: {n + 1} calls over TCP (batched, split, multi-fragment, 1 MiB), XIDs match")


def scenario_delay(args):
    """CREATE then GETATTR: GETATTR's reply first, CREATE's about --ms later."""
    base, ms = xid_base(), args.ms
    c = Udp(args.port) if args.udp else Tcp(args.port)
    t0 = time.monotonic()
    if args.udp:
        c.send_call(base + 1, PROCS["create"], b"\0" * 32)
        c.send_call(base + 2, PROCS["getattr"])
    else:
        c.send(record(call_msg(base + 1, PROCS["create"], b"\0" * 32)))
        c.send(record(call_msg(base + 2, PROCS["getattr"])))
    first = check_reply(c.recv_msg(ms / 1000 + 2))
    t1 = time.monotonic() - t0
    second = check_reply(c.recv_msg(ms / 1000 + 2))
    t2 = time.monotonic() - t0
    c.close()
    if (first, second) != (base + 2, base + 1):
        fail(f"reply order {first:08x} {second:08x}: GETATTR's should come before CREATE's")
    if t1 > 0.15:
        fail(f"GETATTR's reply took {t1 * 1000:.0f} ms, expected at once")
    if not (ms / 1000 - 0.02 <= t2 <= ms / 1000 + 0.25):
        fail(f"CREATE's reply after {t2 * 1000:.0f} ms, expected about {ms} ms")
    print(f"ok: {'UDP' if args.udp else 'TCP'} GETATTR reply after {t1 * 1000:.1f} ms, "
          f"CREATE reply after {t2 * 1000:.1f} ms")


def scenario_drop(args):
    """Sequential calls cycling through --procs; the first --first counted replies and
    then every --every-th of the other counted ones go missing."""
    base, procs = xid_base(), args.procs.split(",")
    counted = set(args.counted.split(",")) if args.counted else set(procs)
    c = Udp(args.port) if args.udp else Tcp(args.port)
    k, firsts, missing, expect = 0, 0, [], []
    for i in range(args.count):
        name = procs[i % len(procs)]
        if name in counted and firsts < args.first:
            firsts += 1
            expect.append(i + 1)
        elif name in counted:
            k += 1
            if args.every and k % args.every == 0:
                expect.append(i + 1)
        if args.udp:
            c.send_call(base + i, PROCS[name])
        else:
            c.send(record(call_msg(base + i, PROCS[name])))
        m = c.recv_msg(0.3)
        if m is None:
            missing.append(i + 1)
        else:
            check_reply(m, base + i)
    c.close()
    if missing != expect:
        fail(f"calls without reply {missing}, expected {expect}")
    print(f"ok: {'UDP' if args.udp else 'TCP'} replies {missing} of {args.count} dropped")


def expect_reset(c, what):
    try:
        m = c.recv_msg(2.0)
    except ConnectionResetError:
        return
    except EOFError:
        fail(f"{what}: connection closed with FIN, expected a reset (RST)")
    fail(f"{what}: {'a reply' if m else 'nothing'} instead of a reset")


def scenario_reset(args):
    """Sequential calls; after the --after-th the connection is reset; reconnect."""
    base, x = xid_base(), 0
    for conn in range(args.rounds):
        c = Tcp(args.port)
        for i in range(args.after):
            c.send(record(call_msg(base + x, PROCS["null"])))
            x += 1
            if i < args.after - 1:
                check_reply(c.recv_msg(2.0), base + x - 1)
        expect_reset(c, f"connection {conn + 1}, call {args.after}")
        c.close()
    c = Tcp(args.port)
    for i in range(args.then):
        c.send(record(call_msg(base + x, PROCS["null"])))
        check_reply(c.recv_msg(2.0), base + x)
        x += 1
    c.close()
    print(f"ok: reset after call {args.after} ({args.rounds} times), then {args.then} calls "
          f"on a new connection")


def scenario_garbage(args):
    """A bogus record mark closes the connection; the proxy serves the next one."""
    base = xid_base()
    if args.udp:
        c = Udp(args.port)
        c.s.send(b"\xff\xff\xff\xff")
        c.s.send(b"xyz")
        c.send_call(base, 1)
        check_reply(c.recv_msg(2.0), base)
        c.close()
        print("ok: UDP garbage datagrams ignored, next call answered")
        return
    c = Tcp(args.port)
    c.send(b"\xff\xff\xff\xff" + b"garbage" * 10)
    try:
        m = c.recv_msg(2.0)
    except (EOFError, ConnectionResetError):
        m = "closed"
    if m != "closed":
        fail("connection not closed after a bogus record mark")
    c.close()
    c = Tcp(args.port)
    c.send(record(call_msg(base + 1, 1)))
    check_reply(c.recv_msg(2.0), base + 1)
    c.close()
    print("ok: bogus record mark closed the connection, next connection answered")


LOG_LINE = re.compile(r"^(\d+\.\d{6}) (\d+) (open|close|call|reply|delay|drop|reset) "
                      r"(-|[0-9a-f]{8}) (-|\d+) (-|\d+) (-|\d+)( .*)?$")


def checklog(args):
    """Every line well formed, time not going backwards; each SPEC EVENT[:PROC][=N] is
    present (exactly N times when given); each --match REGEX matches some line."""
    lines = open(args.file).read().splitlines()
    if not lines or not lines[0].startswith("# rpc-proxy "):
        fail(f"{args.file}: no header line")
    counts, last_t = {}, 0.0
    for n, line in enumerate(lines[1:], 2):
        m = LOG_LINE.match(line)
        if not m:
            fail(f"{args.file}:{n}: malformed line: {line!r}")
        t = float(m.group(1))
        if t < last_t:
            fail(f"{args.file}:{n}: time goes backwards")
        last_t = t
        for key in (m.group(3), f"{m.group(3)}:{m.group(7)}"):
            counts[key] = counts.get(key, 0) + 1
    for spec in args.specs:
        key, _, want = spec.partition("=")
        have = counts.get(key, 0)
        if (want and have != int(want)) or (not want and have == 0):
            fail(f"{args.file}: {have} '{key}' events, expected {want or 'some'}")
    for rx in args.match or []:
        if not any(re.search(rx, line) for line in lines[1:]):
            fail(f"{args.file}: no line matches {rx!r}")
    print(f"ok: {args.file}: {len(lines) - 1} well-formed events, has {' '.join(args.specs)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="run the fake server")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=0, help="0: pick a free port")
    s.add_argument("--port-file")
    s.add_argument("--in-order", action="store_true", help="answer calls in arrival order")
    s.add_argument("--calls-log", help="append 'tcp|udp XID PROC' per call")
    c = sub.add_parser("client", help="run a test scenario against a proxy")
    c.add_argument("scenario", choices=["pass", "delay", "drop", "reset", "garbage"])
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--udp", action="store_true")
    c.add_argument("--count", type=int, default=30)
    c.add_argument("--ms", type=int, default=300, help="delay: expected hold time")
    c.add_argument("--every", type=int, default=3, help="drop: every Nth counted reply")
    c.add_argument("--first", type=int, default=0, help="drop: the first N counted replies")
    c.add_argument("--procs", default="null", help="drop: procedures to cycle through")
    c.add_argument("--counted", help="drop: procedures that count (default all)")
    c.add_argument("--after", type=int, default=5, help="reset: calls per reset")
    c.add_argument("--rounds", type=int, default=1, help="reset: connections reset")
    c.add_argument("--then", type=int, default=5, help="reset: calls afterwards")
    lg = sub.add_parser("checklog", help="check an rpc-proxy event log")
    lg.add_argument("file")
    lg.add_argument("specs", nargs="+", metavar="EVENT[:PROC][=N]")
    lg.add_argument("--match", action="append", help="a line must match this regex")
    args = ap.parse_args()
    if args.cmd == "serve":
        return serve(args)
    if args.cmd == "checklog":
        return checklog(args)
    globals()["scenario_" + args.scenario](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
