#!/usr/bin/env bash
# Ring (b): `mcpgate validate` — instances against a JSON Schema (jschema.h): its lines,
# its exit codes, --remotes, --format.
. "$(dirname "$0")/lib.sh"

suite=${MCPGATE_SRCDIR:-$(dirname "$0")/../..}/tests/data/json-schema-test-suite/remotes
printf '{"type":"object","properties":{"n":{"$ref":"http://localhost:1234/integer.json"},"d":{"format":"date"}},"required":["n"]}' > "$T/s.json"
echo '{"n":1}' > "$T/good.json"
echo '{"n":"x"}' > "$T/bad.json"
echo '{"n":1,"d":"2023-02-29"}' > "$T/date.json"
echo '{"n":' > "$T/broken.json"

v() { out=$("$MCPGATE_BIN" validate "$@" 2>&1); rc=$?; }
v --remotes "$suite" "$T/s.json" "$T/good.json"
is "a valid instance: exit 0" "$rc" 0
like "… said valid" "$out" 'good.json: valid'
v --remotes "$suite" "$T/s.json" "$T/good.json" "$T/bad.json"
is "an invalid one among them: exit 1" "$rc" 1
like "… its first error: instance path, message, keyword, schema path" "$out" \
	'bad.json: invalid at "/n": string is not of type integer \(keyword type, schema "/properties/n/\$ref/type"\)'
v "$T/s.json" "$T/good.json"
is "a remote \$ref without --remotes: the schema does not compile, exit 2" "$rc" 2
like "… never fetched, it says" "$out" 'never fetched'
v --remotes "$suite" "$T/s.json" "$T/date.json"
is "format is an annotation by default" "$rc" 0
v --remotes "$suite" --format "$T/s.json" "$T/date.json"
is "--format: a date February lacks is invalid" "$rc" 1
v --remotes "$suite" "$T/s.json" "$T/broken.json"
is "an instance that is no JSON: exit 2" "$rc" 2
v "$T/s.json"
is "no instance: a usage error, exit 2" "$rc" 2
printf '{"pattern":"(a)\\\\1"}' > "$T/backref.json"
v "$T/backref.json" "$T/good.json"
is "a pattern with a backreference: a schema error, exit 2" "$rc" 2
like "… said so" "$out" 'backreferences are not supported'
tap_done
