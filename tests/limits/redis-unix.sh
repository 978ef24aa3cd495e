#!/usr/bin/env bash
# tests/limits/redis.sh with Redis on a unix socket: every redis-server listens on a socket
# in the suite's temp dir and on no TCP port, and every store is unix://PATH?db=N (with
# credentials before the '@' for AUTH). The same two hosts, one limit across them, 40 at
# once, one round trip a request, DELETE seen on both, shared-cache, Redis hung and
# stopped (fail closed on A, open on B) then back without a restart, CGI runs, AUTH.
# Prints TAP. Env: MCPGATE_BIN.
REDIS_VIA=unix exec "$(dirname "$0")/redis.sh" "$@"
