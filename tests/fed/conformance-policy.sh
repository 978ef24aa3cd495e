#!/usr/bin/env bash
# The conformance suite through the gateway with a tenant policy whose one group grants
# tools = *, prompts = * and resources = * (tests/fed/conformance.sh, MG_CONFORMANCE_POLICY):
# every scenario passes, as without a policy. Env: MCPGATE_BIN, MG_KEEP.
MG_CONFORMANCE_POLICY=1 exec "$(dirname "$0")/conformance.sh" "$@"
