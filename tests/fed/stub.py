#!/usr/bin/env python3
"""tests/fed/stub.py — a faulty upstream MCP server on loopback, for tests/fed/upstream.sh.

    python3 tests/fed/stub.py --mode MODE --ready-file F

It answers initialize (a session id, protocol version 2025-11-25) and
notifications/initialized (202) as a real server does, then fails every other request
the way MODE says:

    500        HTTP 500 with a JSON-RPC error body
    garbage    200 application/json whose body is not JSON
    big        200 application/json, a 50 MB body (Content-Length), sent as fast as read
    big-chunked  the same without Content-Length (chunked): the cap must hit mid-stream
    hang       reads the request, never answers
    sse-die    200 text/event-stream (chunked): one progress notification, then the
               connection is cut in the middle of the stream
    sse-end    200 text/event-stream: one progress notification, then a clean end
               without the answer

With --list-ok it answers tools/list too (one tool, "x"), so that a gateway lists the
stub and only tools/call meets the fault.

Writes "ready http://127.0.0.1:PORT/mcp" to F (whole, by rename) once listening, and
one line per request to stderr. Stops on SIGTERM.
"""
import argparse
import json
import os
import signal
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("500", "garbage", "big", "big-chunked", "hang", "sse-die", "sse-end")
BIG = 50 * 1000 * 1000


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "500"
    list_ok = False

    def log_message(self, fmt, *args):
        sys.stderr.write("stub %s: %s\n" % (self.mode, fmt % args))

    def send(self, status, body, ctype="application/json", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        try:
            msg = json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            return self.send(400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
        method = msg.get("method") if isinstance(msg, dict) else None
        rid = msg.get("id") if isinstance(msg, dict) else None
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "fault-stub", "version": "1"}}
            return self.send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}),
                             headers=[("Mcp-Session-Id", "stub-session-1")])
        if method == "tools/list" and Handler.list_ok:
            tool = {"name": "x", "description": "meets the fault", "inputSchema": {"type": "object"}}
            return self.send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}}))
        if rid is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        getattr(self, "fault_" + self.mode.replace("-", "_"))(rid)

    def fault_500(self, rid):
        self.send(500, json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "boom"}}))

    def fault_garbage(self, rid):
        self.send(200, "<html>this is not JSON {")

    def fault_big(self, rid):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(BIG))
        self.end_headers()
        chunk = b" " * 65536
        sent = 0
        try:
            while sent < BIG:
                self.wfile.write(chunk[:min(len(chunk), BIG - sent)])
                sent += len(chunk)
        except OSError:
            pass  # the client stopped reading: what it should do
        self.close_connection = True

    def fault_big_chunked(self, rid):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        try:
            for _ in range(BIG // 65536):
                self.wfile.write(chunk)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass
        self.close_connection = True

    def fault_hang(self, rid):
        # Wait until the client gives up (closes), at most a minute.
        self.connection.settimeout(0.1)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                if self.connection.recv(1) == b"":
                    break
            except socket.timeout:
                continue
            except OSError:
                break
        self.close_connection = True

    def sse_start(self, chunked):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
        self.end_headers()

    def progress_event(self):
        note = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "t", "progress": 1, "total": 2}}
        return ("event: message\ndata: %s\n\n" % json.dumps(note)).encode()

    def fault_sse_die(self, rid):
        self.sse_start(chunked=True)
        ev = self.progress_event()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
        self.wfile.flush()
        time.sleep(0.2)
        # Half an event, then the connection is cut: no last chunk.
        self.wfile.write(b"20\r\nevent: message\ndata: {\"jsonr")
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def fault_sse_end(self, rid):
        self.sse_start(chunked=False)
        self.wfile.write(self.progress_event())
        self.wfile.flush()
        self.close_connection = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=MODES, required=True)
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--list-ok", action="store_true")
    a = ap.parse_args()
    Handler.mode = a.mode
    Handler.list_ok = a.list_ok
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    line = "ready http://127.0.0.1:%d/mcp\n" % srv.server_address[1]
    with open(a.ready_file + ".tmp", "w") as f:
        f.write(line)
    os.rename(a.ready_file + ".tmp", a.ready_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
