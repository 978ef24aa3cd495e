#!/usr/bin/env python3
"""tests/fronts/sse-stub.py SOCKET [PAUSE] -- a FastCGI responder that answers
every request with an event stream of three events, PAUSE seconds apart (1.5),
each in its own FastCGI record, the way mcpgate relays an upstream stream.

It stands in for mcpgate in tests/fronts/streaming.sh, which proves that the
deploy/ recipes hand events to the client as they are written (no response
buffering, no compression) -- a property of the web server configuration. It
listens on SOCKET itself and serves one connection at a time; FastCGI
keep-alive is not used (the recipes turn it off).

Each event also says ("rdhup") whether the server had shut down its side of
the connection by then: mcpgate takes that as its client gone, so a server
must not half-close while it waits for the answer."""
import os
import select
import socket
import struct
import sys
import time

FCGI_STDIN, FCGI_STDOUT, FCGI_END_REQUEST = 5, 6, 3


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def record(kind, rid, content=b""):
    return struct.pack(">BBHHBx", 1, kind, rid, len(content), 0) + content


def half_closed(conn):
    p = select.poll()
    p.register(conn, select.POLLRDHUP)
    return any(ev & (select.POLLRDHUP | select.POLLHUP) for _, ev in p.poll(0))


def serve(conn, pause):
    rid = 1
    while True:  # until the empty FCGI_STDIN record that ends the request
        version, kind, rid, clen, plen = struct.unpack(">BBHHBx", read_exact(conn, 8))
        read_exact(conn, clen + plen)
        if kind == FCGI_STDIN and clen == 0:
            break
    head = b"Status: 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\r\n"
    for i in (1, 2, 3):
        rdhup = b"true" if half_closed(conn) else b"false"
        event = b'event: message\ndata: {"n":%d,"rdhup":%s,"pad":"%s"}\n\n' % (i, rdhup, b"x" * 64)
        conn.sendall(record(FCGI_STDOUT, rid, (head if i == 1 else b"") + event))
        if i < 3:
            time.sleep(pause)
    conn.sendall(record(FCGI_STDOUT, rid))
    conn.sendall(record(FCGI_END_REQUEST, rid, struct.pack(">IB3x", 0, 0)))


def main():
    path = sys.argv[1]
    pause = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o666)
    listener.listen(16)
    while True:
        conn, _ = listener.accept()
        try:
            serve(conn, pause)
        except (EOFError, OSError):
            pass
        finally:
            conn.close()


if __name__ == "__main__":
    main()
