#!/usr/bin/env bash
# tests/auth/sdk.sh against an issuer of JWT access tokens (RFC 9068) that offers no
# introspection endpoint, as Entra ID and Auth0 do: the official MCP SDK client's whole
# OAuth flow through nginx, the gateway verifying its tokens itself (verify = jwt).
SDK_JWT=1 exec "$(cd "$(dirname "$0")" && pwd)/sdk.sh"
