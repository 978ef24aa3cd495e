#!/usr/bin/env python3
"""tests/auth/tls-issuer.py — an authorization server over https, for tests/auth/tls.sh.

    python3 tests/auth/tls-issuer.py --cert C --key K --resource URL \
        --endpoint-file F --ready-file R

Serves, over TLS with the given certificate, the RFC 8414 metadata of its own issuer
(https://127.0.0.1:PORT) whose introspection_endpoint is the first line of F (read on
every request, so the test can point it elsewhere), and an introspection endpoint at
/introspect that calls every token active for --resource (mcp:tools, 5 minutes).
oidc-provider cannot serve TLS without a proxy in front of it; this stub stands in for
the issuer only where the tests need an https one. Writes "ready https://127.0.0.1:PORT"
to R (whole, by rename) once listening, one line per request to stderr; stops on SIGTERM.
"""
import argparse
import json
import os
import signal
import ssl
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("tls-issuer: " + (fmt % args) + "\n")

    def send_json(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path not in ("/.well-known/oauth-authorization-server",
                             "/.well-known/openid-configuration"):
            self.send_json(404, {"error": "not_found"})
            return
        with open(self.server.endpoint_file) as f:
            endpoint = f.readline().strip()
        self.send_json(200, {"issuer": self.server.issuer, "introspection_endpoint": endpoint,
                             "token_endpoint": self.server.issuer + "/token"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path != "/introspect":
            self.send_json(404, {"error": "not_found"})
            return
        self.send_json(200, {"active": True, "client_id": "tls-client", "scope": "mcp:tools",
                             "aud": self.server.resource, "iss": self.server.issuer,
                             "exp": int(time.time()) + 300})


def main():
    ap = argparse.ArgumentParser()
    for a in ("--cert", "--key", "--resource", "--endpoint-file", "--ready-file"):
        ap.add_argument(a, required=True)
    o = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(o.cert, o.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.issuer = "https://127.0.0.1:%d" % srv.server_address[1]
    srv.resource = o.resource
    srv.endpoint_file = o.endpoint_file
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(o.ready_file + ".tmp", "w") as f:
        f.write("ready %s\n" % srv.issuer)
    os.rename(o.ready_file + ".tmp", o.ready_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
