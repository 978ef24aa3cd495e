#!/usr/bin/env python3
"""tests/fault/fcgi-stall.py SOCKET KIND N HOLD -- N FastCGI connections to the
unix socket SOCKET that never finish delivering a request, the way a slowloris
client would hold a responder's workers:

  header   half a record header (4 of its 8 bytes), then nothing
  trickle  FCGI_BEGIN_REQUEST, then an FCGI_PARAMS record announcing 4000 bytes,
           of which one byte arrives every 200 ms (the connection is never idle)
  body     a whole request for POST /mcp/health with CONTENT_LENGTH 100, of
           whose body only 10 bytes come
  kept     a whole GET /mcp/health with FCGI_KEEP_CONN; its answer is read;
           then the connection stays open and idle

Once every connection has sent what it sends first, prints "ready" (stdout,
flushed). Then waits, HOLD seconds at most, for the peer to close each
connection, and prints one JSON line: {"closed_ms": [...], "answered": [...]}
with, per connection, the milliseconds from the moment it had sent what it
sends first (for kept: the end of its answer; the trickle goes on after it) to
the close (null: still open after HOLD), and for kept whether the answer
(Status 200, FCGI_END_REQUEST) came."""
import json
import select
import socket
import struct
import sys
import time

BEGIN, END, PARAMS, STDIN, STDOUT = 1, 3, 4, 5, 6
KEEP_CONN = 1


def record(kind, content=b"", rid=1):
    return struct.pack(">BBHHBx", 1, kind, rid, len(content), 0) + content


def pair(name, value):
    def length(n):
        return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)

    return length(len(name)) + length(len(value)) + name + value


def params(method, length=None):
    p = pair(b"REQUEST_METHOD", method) + pair(b"SCRIPT_NAME", b"/mcp/health")
    p += pair(b"SERVER_PROTOCOL", b"HTTP/1.1") + pair(b"REMOTE_ADDR", b"127.0.0.1")
    if length is not None:
        p += pair(b"CONTENT_LENGTH", str(length).encode())
    return record(PARAMS, p) + record(PARAMS)


def begin(flags=0):
    return record(BEGIN, struct.pack(">HB5x", 1, flags))


def read_answer(s, deadline):
    """Reads records until FCGI_END_REQUEST: (status line seen, ended)."""
    data, out, ended = b"", b"", False
    while not ended and time.monotonic() < deadline:
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            continue
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        while len(data) >= 8:
            _, kind, _, clen, plen = struct.unpack(">BBHHBx", data[:8])
            if len(data) < 8 + clen + plen:
                break
            if kind == STDOUT:
                out += data[8:8 + clen]
            elif kind == END:
                ended = True
            data = data[8 + clen + plen:]
    return out.startswith(b"Status: 200"), ended


def main():
    path, kind, n, hold = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    conns, last, answered = [], [], []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        ok = None
        if kind == "header":
            s.sendall(begin()[:4])
        elif kind == "trickle":
            s.sendall(begin() + struct.pack(">BBHHBx", 1, PARAMS, 1, 4000, 0))
        elif kind == "body":
            s.sendall(begin() + params(b"POST", 100) + record(STDIN, b"x" * 10))
        elif kind == "kept":
            s.sendall(begin(KEEP_CONN) + params(b"GET") + record(STDIN))
            ok = all(read_answer(s, time.monotonic() + 10))
        else:
            sys.exit("unknown kind " + kind)
        conns.append(s)
        last.append(time.monotonic())
        answered.append(ok)
    print("ready", flush=True)
    closed = [None] * n
    end = time.monotonic() + hold
    next_byte = time.monotonic() + 0.2
    while None in closed and time.monotonic() < end:
        open_ = [s for i, s in enumerate(conns) if closed[i] is None]
        r, _, _ = select.select(open_, [], [], 0.05)
        for s in r:
            i = conns.index(s)
            try:
                gone = s.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                closed[i] = round((time.monotonic() - last[i]) * 1000)
        if kind == "trickle" and time.monotonic() >= next_byte:
            next_byte += 0.2
            for i, s in enumerate(conns):
                if closed[i] is None:
                    try:
                        s.send(b"a")
                    except OSError:
                        closed[i] = round((time.monotonic() - last[i]) * 1000)
    print(json.dumps({"closed_ms": closed, "answered": answered}), flush=True)


if __name__ == "__main__":
    main()
