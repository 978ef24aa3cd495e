#!/usr/bin/env bash
# The 2025-11-25 requirement set through the gateway to an upstream of 2026-07-28 alone
# (tests/fed/conformance-2026.sh, MG_CONF_ONLY): an older client's sampling, elicitation
# and roots are the gateway's own questions on the call's stream (an upstream's
# input_required translated), its answers the upstream's retry; its logging/setLevel is
# kept by the gateway for the session and asked of the upstream in each request's _meta
# (the revision removed the method), its resources/subscribe kept for the session too
# (its standalone stream listens at the upstream). No gaps: every scenario must be
# clean.
# Env: MCPGATE_BIN, MG_KEEP.
MG_CONF_ONLY=1 MG_CONF_SETS=2025-11-25 \
	MG_CONF_GAPS="" \
	exec "$(dirname "$0")/conformance-2026.sh" "$@"
