#!/usr/bin/env bash
# Ring (b): the command line (docs/ARCHITECTURE.md §2) and `mcpgate -t`.
. "$(dirname "$0")/lib.sh"
write_conf

# tcheck [FILE]: mcpgate -t on FILE ($T/gw.conf): its output (stdout and stderr) in out,
# its exit status in rc.
tcheck() { out=$("$MCPGATE_BIN" -t -c "${1:-$T/gw.conf}" 2>&1); rc=$?; }
# try_conf NAME FORMAT [ARG...]: tcheck on gw.conf with printf FORMAT ARG... appended, as
# $T/NAME.conf.
try_conf() {
	local f=$T/$1.conf fmt=$2
	shift 2
	cp "$T/gw.conf" "$f"
	# shellcheck disable=SC2059 # the format is the caller's
	printf "$fmt" "$@" >> "$f"
	tcheck "$f"
}

out=$("$MCPGATE_BIN" --version)
like "--version" "$out" '^mcpgate [0-9]+\.[0-9]+\.[0-9]+$'
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf"); rc=$?
is "-t on a good file: exit 0" "$rc" 0
like "-t on a good file: says ok" "$out" 'gw.conf: ok'
out=$(MCPGATE_CONFIG="$T/gw.conf" "$MCPGATE_BIN" -t); rc=$?
is "\$MCPGATE_CONFIG is the default path" "$rc" 0

printf '[gateway]\nresource = ftp://x\nmax-body = 1\n[auth]\nissuer = http://i\n[tenant "t"]\ngroups = g\n' > "$T/bad.conf"
tcheck "$T/bad.conf"
is "-t on a bad file: exit 1" "$rc" 1
like "-t: first error with file:line and key" "$out" "$T/bad.conf:2: resource: expected an absolute"
like "-t: every error reported" "$out" "$T/bad.conf:3: max-body"
# A tenant's limit-gateway and limit-ip load (nothing can apply them: those limits are
# decided before the caller's tenant is known), with a warning each on stderr; the limits
# that apply, and trusted-proxies, load without one.
cp "$T/gw.conf" "$T/inert.conf"
printf '[limits]\nip = 300/60\ntoken = 0\ntool = 10/60 burst 5\n[tenant "t"]\ngroups = g\nlimit-token = 5/1\nlimit-ip = 5/1\n[group "g"]\ntools = *\n' >> "$T/inert.conf"
sed -i 's|^\[gateway\]$|[gateway]\ntrusted-proxies = 127.0.0.1 10.0.0.0/8 2001:db8::/32|' "$T/inert.conf"
out=$("$MCPGATE_BIN" -t -c "$T/inert.conf" 2> "$T/inert.err"); rc=$?
is "-t with limits, trusted-proxies and a tenant's limit-ip: exit 0" "$rc" 0
like "-t with them: ok" "$out" 'inert.conf: ok'
err=$(cat "$T/inert.err")
like "-t warns: tenant limit-ip, file:line" "$err" "warning: $T/inert.conf:[0-9]+: limit-ip: has no effect yet \\(the ip limit is decided before"
unlike "-t: [limits] ip, token = 0, a burst, limit-token: no warning" "$err" "conf:[0-9]+: (ip|token|tool|limit-token):"
unlike "-t: trusted-proxies: no warning" "$err" "trusted-proxies"
# Bad limit values and proxies: refused with file:line, the reason named.
for bad in "ip = 10" "ip = 10/0" "ip = -1/60" "ip = 10/60 burst" "ip = 10/60 burst x" "ip = 10/60 bust 5" \
    "ip = 10/60x" "ip = 10/60 burst 5 6" "ip = 99999999999/60" "store = redis://127.0.0.1:6379/0" \
    "store = memcached://127.0.0.1" "redis-timeout-ms = 0" "redis-fail = maybe"; do
	try_conf bad '[limits]\n%s\n' "$bad"
	is "-t refuses [limits] $bad: exit 1" "$rc" 1
	like "-t refuses [limits] $bad: file:line" "$out" "$T/bad.conf:[0-9]+: "
done
# A [group]'s limit-tool: a bad value refused at its file:line; 0 (none of its own) and
# a rate accepted, without a warning.
for bad in "10" "10/0" "-1/60" "10/60 bust 5" "99999999999/60"; do
	try_conf bad '[group "g"]\ntools = *\nlimit-tool = %s\n' "$bad"
	is "-t refuses [group] limit-tool = $bad: exit 1" "$rc" 1
	like "-t refuses [group] limit-tool = $bad: its file:line" "$out" "$T/bad.conf:$(wc -l < "$T/bad.conf"): limit-tool: expected N/SECONDS"
done
for good in "0" "2/60" "2/60 burst 1"; do
	try_conf good '[group "g"]\ntools = *\nlimit-tool = %s\n' "$good"
	is "-t accepts [group] limit-tool = $good: exit 0" "$rc" 0
	if [ "$good" = 0 ]; then	# no tenant and no limit of its own: its tools do nothing
		like "… its tools (no tenant, no limit) said to have no effect" "$out" \
			"warning: $T/good.conf:[0-9]+: tools: has no effect: without a \\[tenant\\]"
	else
		unlike "… without a warning (its tools are what its limit-tool applies to)" "$out" "warning"
	fi
done

# --- [metrics] -------------------------------------------------------------------------
for bad in "path = /mcp" "path = /mcp/health" "path = /.well-known/metrics" "path = metrics" \
    "allow = 10.0.0.1/8" "allow = example.com"; do
	try_conf bad '[metrics]\n%s\n' "$bad"
	is "-t refuses [metrics] $bad: exit 1" "$rc" 1
	like "-t refuses [metrics] $bad: its file:line and key" "$out" "$T/bad.conf:$(wc -l < "$T/bad.conf"): ${bad%% *}: "
done
try_conf good '[metrics]\npath = /internal/metrics\nallow = 127.0.0.1 10.0.0.0/8 ::1\n'
is "-t accepts [metrics] with path and allow: exit 0, no warning" "$rc $(grep -c warning <<<"$out")" "0 0"

# --- -t warns about what cannot do what it seems to (exit 0 all the same) -------------------
# wconf LINES...: gw.conf and these lines as w.conf; wcheck [ARGS...]: -t on it, stdout and
# stderr in $out, the exit in $rc; at KEY-OR-SECTION: the line of w.conf where it is.
wconf() { { cat "$T/gw.conf"; printf '%s\n' "$@"; } > "$T/w.conf"; }
wcheck() { out=$("$MCPGATE_BIN" -t -c "$T/w.conf" "$@" 2>&1); rc=$?; }
at() { grep -n -F -x -- "$1" "$T/w.conf" | head -n 1 | cut -d: -f1; }
UP='[upstream "u"]'
UPURL='url = http://127.0.0.1:9/mcp'

# Without a [tenant] the policy is off: its keys do nothing.
wconf '[group "g"]' 'scopes = mcp:x' 'members = ops' "$UP" "$UPURL" 'read-only-tools = u_*'
wcheck
is "no tenant: exit 0" "$rc" 0
like "no tenant: a group's scopes have no effect (file:line)" "$out" "warning: $T/w.conf:$(at 'scopes = mcp:x'): scopes: has no effect: without a \\[tenant\\]"
like "no tenant: members too" "$out" "warning: $T/w.conf:$(at 'members = ops'): members: has no effect"
like "no tenant: an upstream's read-only-tools too" "$out" "warning: $T/w.conf:$(at 'read-only-tools = u_*'): read-only-tools: has no effect: without"

# A group no tenant lists; a feature no tenant listing the group has; one nobody needs.
wconf "$UP" "$UPURL" '[group "all"]' 'tools = *' '[group "lonely"]' 'tools = x_*' '[group "beta"]' 'tools = b_*' \
	'feature = beta' '[tenant "*"]' 'groups = all beta u' 'features = gamma'
wcheck
is "groups and features: exit 0" "$rc" 0
like "a group no tenant lists: at its section" "$out" "warning: $T/w.conf:$(at '[group "lonely"]'): \\[group \"lonely\"\\]: no tenant lists it in groups: it grants nothing"
unlike "… not the groups a tenant lists" "$out" '\[group "(all|beta)"\]: no tenant lists'
like "a group whose feature no tenant listing it has: at its feature line" "$out" "warning: $T/w.conf:$(at 'feature = beta'): feature: no tenant that lists \\[group \"beta\"\\] has beta"
like "a tenant's feature no group needs: at its features line" "$out" "warning: $T/w.conf:$(at 'features = gamma'): features: gamma: no \\[group\\] needs this feature"
sed -i 's/^features = gamma$/features = beta/' "$T/w.conf"
wcheck
unlike "… with the feature listed: neither feature warning" "$out" 'feature(s)?: (no tenant|beta: no)'

# An upstream whose prompts and resources follow a group no tenant lists: a tools-only
# [group] granted to every tenant still hides them; prompts = * and resources = * in it,
# or the upstream's group listed, reach them.
wconf "$UP" "$UPURL" '[group "all"]' 'tools = *' '[tenant "*"]' 'groups = all'
wcheck
like "prompts and resources nobody reaches: at the upstream's section" "$out" "warning: $T/w.conf:$(at "$UP"): \\[upstream \"u\"\\]: no tenant lists its group \"u\", and no group a tenant lists has prompts or resources"
wconf "$UP" "$UPURL" '[group "all"]' 'tools = *' 'prompts = *' 'resources = *' '[tenant "*"]' 'groups = all'
wcheck
unlike "… a group with prompts = * and resources = *: no warning" "$out" 'upstream "u"'
wconf "$UP" "$UPURL" '[group "all"]' 'tools = *' '[tenant "*"]' 'groups = all u'
wcheck
unlike "… the upstream's group listed: no warning" "$out" 'upstream "u"'

# Read-only marks without a read-only tenant; settings for what is not there.
wconf "$UP" "$UPURL" 'read-only-tools = u_get*' 'trust-hints = yes' 'timeout-ms = 60000' '[tenant "*"]' 'groups = u'
sed -i 's|^\[gateway\]$|[gateway]\ntrusted-proxies = 10.0.0.0/8\nrequest-timeout-ms = 20000|; s|^\[auth\]$|[auth]\nclient-auth = client_secret_post|' "$T/w.conf"
printf '[limits]\nredis-fail = open\nredis-timeout-ms = 50\n' >> "$T/w.conf"
wcheck
is "inert keys: exit 0" "$rc" 0
like "read-only-tools without a read-only tenant" "$out" "warning: $T/w.conf:$(at 'read-only-tools = u_get*'): read-only-tools: has no effect: no \\[tenant\\] has access-mode = read-only"
like "trust-hints without a read-only tenant" "$out" "warning: $T/w.conf:$(at 'trust-hints = yes'): trust-hints: has no effect"
like "an upstream timeout-ms past request-timeout-ms" "$out" "warning: $T/w.conf:$(at 'timeout-ms = 60000'): timeout-ms: 60000 ms is longer than \\[gateway\\] request-timeout-ms \\(20000 ms\\)"
like "trusted-proxies that nothing reads" "$out" "warning: $T/w.conf:$(at 'trusted-proxies = 10.0.0.0/8'): trusted-proxies: has no effect"
like "client-auth without client-id" "$out" "warning: $T/w.conf:$(at 'client-auth = client_secret_post'): client-auth: has no effect without \\[auth\\] client-id"
like "redis-fail without a Redis store" "$out" "warning: $T/w.conf:$(at 'redis-fail = open'): redis-fail: has no effect: \\[limits\\] store is not a Redis store"
like "redis-timeout-ms without a Redis store" "$out" "warning: $T/w.conf:$(at 'redis-timeout-ms = 50'): redis-timeout-ms: has no effect"
sed -i 's/^groups = u$/groups = u\naccess-mode = read-only/; s/^redis-fail = open$//; s/^redis-timeout-ms = 50$/ip = 10\/1/' "$T/w.conf"
wcheck
unlike "… a read-only tenant, an ip limit, no Redis settings: none of those warnings" "$out" '(read-only-tools|trust-hints|trusted-proxies|redis-fail|redis-timeout-ms): has no effect'

# The keys of a token check that never runs: a JWT's with verify = introspection (the
# default), the introspection's with verify = jwt alone.
authconf() { wconf; sed -i "s|^\\[auth\\]\$|[auth]\n$(printf '%s\\n' "$@")|" "$T/w.conf"; }
authconf 'jwks-uri = http://127.0.0.1:8081/jwks' 'jwt-typ = lenient' 'clock-skew = 30' 'jwks-ttl = 120' 'audiences = urn:a'
wcheck
is "JWT keys with verify = introspection: exit 0" "$rc" 0
for k in 'jwks-uri = http://127.0.0.1:8081/jwks' 'jwt-typ = lenient' 'clock-skew = 30' 'jwks-ttl = 120'; do
	like "verify = introspection: ${k%% *} has no effect, at its line" "$out" \
		"warning: $T/w.conf:$(at "$k"): ${k%% *}: has no effect with verify = introspection"
done
unlike "… audiences apply to introspection responses too: no warning" "$out" 'audiences: has no effect'
authconf 'verify = jwt' 'introspection-endpoint = http://127.0.0.1:8081/introspect' 'client-id = gw' \
	'client-auth = client_secret_post'
wcheck
is "introspection keys with verify = jwt: exit 0" "$rc" 0
for k in 'introspection-endpoint = http://127.0.0.1:8081/introspect' 'client-id = gw' 'client-auth = client_secret_post'; do
	like "verify = jwt: ${k%% *} has no effect, at its line" "$out" \
		"warning: $T/w.conf:$(at "$k"): ${k%% *}: has no effect with verify = jwt"
done
authconf 'verify = jwt' 'client-auth = client_secret_post'
wcheck
is "verify = jwt, client-auth without client-id: one warning for it" "$(grep -c 'client-auth: has no effect' <<<"$out")" 1
for v in 'verify = auto' 'verify = jwt'; do
	authconf "$v" 'introspect-jwt = yes' 'jwks-uri = http://127.0.0.1:8081/jwks' 'client-id = gw'
	wcheck
	unlike "$v with introspect-jwt = yes: no verify warning" "$out" 'has no effect with verify'
done

# Against a catalog (what explain --save-catalog writes): tools no group a tenant lists
# holds, and patterns that match nothing.
cat > "$T/catalog.json" <<'JSON'
{"u": {"caps": {"tools": {}, "prompts": {}, "resources": {}},
       "tools": [{"name": "a_one", "inputSchema": {"type": "object"}}, {"name": "a_two", "inputSchema": {"type": "object"}},
                 {"name": "b_one", "inputSchema": {"type": "object"}}],
       "prompts": [{"name": "greet"}],
       "resources": [{"uri": "file:///docs/a.md", "name": "a"}],
       "resourceTemplates": [{"uriTemplate": "file:///logs/{day}", "name": "logs"}]}}
JSON
wconf "$UP" "$UPURL" 'group = ug' 'read-only-tools = a_* zz_*' '[group "all"]' 'tools = a_* x_*' 'prompts = greet nope*' \
	'resources = file:///logs/* file:///none/*' '[tenant "*"]' 'groups = all' 'deny = a_two qq' 'allow = a_* b_* c_*' 'access-mode = read-only'
wcheck --catalog "$T/catalog.json"
is "-t --catalog: exit 0" "$rc" 0
like "-t --catalog: says what it checked against" "$out" "catalog: checked against $T/catalog.json \\(3 tools, 1 prompts, 1 resources, 1 resource templates\\)"
like "a tool no group a tenant lists holds: named, at its upstream" "$out" "warning: $T/w.conf:$(at "$UP"): \\[upstream \"u\"\\]: tool b_one: no group a tenant lists holds it"
unlike "… not the tools a listed group holds" "$out" 'tool a_(one|two): no group'
for p in "tools|x_\\*|tool" "prompts|nope\\*|prompt" "resources|file:///none/\\*|resource or resource template" \
    "deny|qq|tool" "allow|c_\\*|tool" "read-only-tools|zz_\\*|tool of this upstream"; do
	IFS='|' read -r key pat what <<<"$p"
	like "a pattern matching nothing: $key $pat, at its line" "$out" \
		"warning: $T/w.conf:$(grep -n "^$key = " "$T/w.conf" | head -n 1 | cut -d: -f1): $key: $pat matches no $what in the catalog"
done
unlike "… not the patterns that match (a_*, greet, a template by file:///logs/*, a_two, b_*)" "$out" \
	'(a_\*|greet|file:///logs/\*|a_two|b_\*) matches no'
echo '{"u": ' > "$T/broken.json"
wcheck --catalog "$T/broken.json"
like "-t --catalog on a file that is not JSON: exit 1, says where" "rc=$rc $out" "^rc=1 .*--catalog $T/broken.json:"
"$MCPGATE_BIN" -c "$T/w.conf" --catalog "$T/catalog.json" >/dev/null 2>&1; is "--catalog without -t: exit 2" "$?" 2
like "-t: a Redis store without session-key-file is refused, saying why" \
	"$(printf '[limits]\nstore = redis://127.0.0.1:6379/0\n' | cat "$T/gw.conf" - > "$T/bad.conf"; "$MCPGATE_BIN" -t -c "$T/bad.conf" 2>&1)" \
	"bad.conf:[0-9]+: store: a Redis store needs \\[gateway\\] session-key-file"
like "-t: [auth] shared-cache without a Redis store is refused, file:line" \
	"$(sed 's/^\[auth\]$/[auth]\nshared-cache = yes/' "$T/gw.conf" > "$T/bad.conf"; "$MCPGATE_BIN" -t -c "$T/bad.conf" 2>&1)" \
	"bad.conf:[0-9]+: shared-cache: needs a store several hosts share"
head -c 32 /dev/urandom > "$T/session.key"
sed "s|^\\[gateway\\]$|[gateway]\\nsession-key-file = $T/session.key|" "$T/gw.conf" > "$T/redis.conf"
for bad in "rediss://127.0.0.1" "memcached://127.0.0.1" "redis://" "redis://:6379" "redis://h:0" "redis://h:70000" \
    "redis://h:6379/x" "redis://h/-1" "redis://pass@h" "redis://[::1:6379" "redis://h:6379junk" \
    "unix://" "unix:///" "unix://localhost/run/redis.sock" "unix:///run/redis/" "unix:///run/r.sock?db=x" \
    "unix:///run/r.sock?db=1&db=2" "unix:///run/r.sock?password=x" "unix:///run/r.sock?timeout=5" \
    "unix:///run/r%01.sock" "unix:///run/r sock" "unix:///$(printf 'p%.0s' $(seq 1 110))" "redis+unix://"; do
	printf '[limits]\nstore = %s\n' "$bad" | cat "$T/redis.conf" - > "$T/bad.conf"
	tcheck "$T/bad.conf"
	is "-t refuses store = $bad: exit 1" "$rc" 1
	like "-t refuses store = $bad: file:line, the key named" "$out" "$T/bad.conf:[0-9]+: store: "
done
for good in "redis://127.0.0.1" "redis://127.0.0.1:6380/2" "redis://:secret@127.0.0.1:6379/0" \
    "redis://app:p%40ss@[::1]:6379/15" "redis://redis.internal:6379" "unix:///run/redis/redis.sock" \
    "unix://:secret@/run/redis/redis.sock?db=3" "redis+unix://app:p%40ss@/var/run/redis%20a/r.sock?db=15"; do
	printf '[limits]\nstore = %s\ntoken = 10/60\nredis-timeout-ms = 5\nredis-fail = open\n' "$good" | cat "$T/redis.conf" - > "$T/good.conf"
	tcheck "$T/good.conf"
	is "-t accepts store = $good (and redis-timeout-ms, redis-fail): exit 0" "$rc" 0
	unlike "… and never prints its password" "$out" "secret|p@ss|p%40ss"
	case $good in
	unix://*) like "… names the socket and the database" "$out" "shared store: Redis at unix socket /run/redis/redis.sock, database [03][ ,]" ;;
	redis+unix://*) like "… names the socket (percent-decoded) and the database" "$out" "shared store: Redis at unix socket /var/run/redis a/r.sock, database 15, with AUTH" ;;
	esac
done
for bad in "10.0.0.1/8" "10.0.0.0/33" "proxy.example" "::1/129"; do
	sed "s|^\\[gateway\\]$|[gateway]\\ntrusted-proxies = $bad|" "$T/gw.conf" > "$T/bad.conf"
	tcheck "$T/bad.conf"
	is "-t refuses trusted-proxies = $bad: exit 1" "$rc" 1
	like "-t refuses trusted-proxies = $bad: names it" "$out" "$T/bad.conf:[0-9]+: trusted-proxies: $bad is not an address"
done
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1 >/dev/null)
is "-t without such keys: no warning" "$out" ""
tcheck "$T/nonexistent.conf"
is "-t on a missing file: exit 1" "$rc" 1
like "-t on a missing file: says why" "$out" 'No such file'

mkdir "$T/conf.d"
printf '[tenant "acme"]\ngroups = gh\n' > "$T/conf.d/acme.conf"
printf '[group "gh"]\ntools = gh_*\n' > "$T/conf.d/groups.conf"
write_conf "include = conf.d/*.conf"
out=$("$MCPGATE_BIN" -t -c "$T/gw.conf"); rc=$?
is "-t with includes: exit 0" "$rc" 0
like "-t with includes: counts sections" "$out" '1 groups, 1 tenants'

# Files that are not regular files are refused at once, never read (a FIFO would block
# the loader, /dev/zero never ends); so is a NUL byte in a line.
mkfifo "$T/fifo"
for inc in "$T/fifo" /dev/zero conf.d; do
	write_conf "include = $inc"
	start=$(date +%s%N)
	out=$(timeout 20 "$MCPGATE_BIN" -t -c "$T/gw.conf" 2>&1); rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	is "-t with include = $inc: exit 1 (after ${ms} ms)" "$rc" 1
	like "-t with include = $inc: file:line says why" "$out" "gw.conf:[0-9]+: include: .*: not a regular file"
done
printf '[gateway]\nresource = http://127.0.0.1:8080/mcp\ntitle = a\0b\n[auth]\nissuer = http://i\n' > "$T/nul.conf"
tcheck "$T/nul.conf"
is "-t on a NUL byte: exit 1" "$rc" 1
like "-t on a NUL byte: names the line" "$out" "nul.conf:3: NUL byte in line"
write_conf "include = conf.d/*.conf"

# Every secret file that is missing is named at once, each at its key's line (not only
# the first, one run at a time).
write_conf 'client-secret-file = /nonexistent/mcpgate/introspection.secret' \
	'[gateway]' 'session-key-file = /nonexistent/mcpgate/session.key' \
	'[upstream "a"]' 'url = http://127.0.0.1:9/mcp' 'auth-header-file = /nonexistent/mcpgate/a.header'
tcheck
is "-t with three missing secret files: exit 1" "$rc" 1
is "… all three named, each at its line" "$(grep -c "^$T/gw.conf:[0-9]*: [a-z-]*-file: /nonexistent/mcpgate/.*: No such file" <<<"$out")" 3

# The files a configuration trusts. A secret file (session-key-file, client-secret-file,
# auth-header-file) writable by group or others, or owned by another user than root or
# the one running the gateway, is refused at its key's line; one readable by others
# loads with a warning (-t, and the log of every load). ca-file, a jwks-uri file, an
# as-metadata file, the configuration's own files and the directory of an explicit
# state file follow the owner and write rules (nothing of them is secret).
mkdir -p "$T/sec"
head -c 32 /dev/urandom > "$T/sec/session.key"
printf 'mcpgate-secret\n' > "$T/sec/client.secret"
printf 'X-Api-Key: k\n' > "$T/sec/a.header"
write_conf 'client-id = mcpgate' "client-secret-file = $T/sec/client.secret" \
	'[gateway]' "session-key-file = $T/sec/session.key" \
	'[upstream "a"]' 'url = http://127.0.0.1:9/mcp' "auth-header-file = $T/sec/a.header"
lineof() { grep -n "^$1 = " "${2:-$T/gw.conf}" | head -n 1 | cut -d: -f1; }
chmod 600 "$T"/sec/*
tcheck
is "secret files 0600: exit 0, no warning" "rc=$rc $(grep -c warning <<<"$out")" "rc=0 0"
chmod 640 "$T"/sec/*
tcheck
is "secret files 0640 (readable by the gateway's group): exit 0, no warning" "rc=$rc $(grep -c warning <<<"$out")" "rc=0 0"
for kf in session-key-file:session.key client-secret-file:client.secret auth-header-file:a.header; do
	key=${kf%%:*} f=$T/sec/${kf#*:}
	for mode in 666 602 620 660; do
		chmod 600 "$T"/sec/*
		chmod "$mode" "$f"
		tcheck
		like "$key mode 0$mode: refused (exit 1) at its line, saying why" "rc=$rc $out" \
			"^rc=1 $T/gw.conf:$(lineof "$key"): $key: $f: writable by group or others \\(mode 0$mode\\)"
	done
	chmod 600 "$T"/sec/*
	chmod 604 "$f"
	tcheck
	is "$key readable by others (0604): loads (exit 0)" "$rc" 0
	like "… with a warning at its line" "$out" \
		"warning: $T/gw.conf:$(lineof "$key"): $key: $f: readable by others \\(mode 0604\\)"
	if [ "$(id -u)" -eq 0 ]; then
		chmod 600 "$f"
		chown 65534 "$f"
		tcheck
		like "$key owned by another user (nobody), 0600: refused at its line" "rc=$rc $out" \
			"^rc=1 $T/gw.conf:$(lineof "$key"): $key: $f: owned by uid 65534, neither root nor the user running the gateway \\(uid 0\\)"
		chown 0 "$f"
	else
		pass "$key owned by another user # SKIP not root"
	fi
done
chmod 666 "$T"/sec/*
tcheck
is "three world-writable secret files: all three named at once" \
	"rc=$rc $(grep -c "^$T/gw.conf:[0-9]*: [a-z-]*-file: .*: writable by group or others" <<<"$out")" "rc=1 3"
chmod 644 "$T"/sec/*
cgi GET /mcp/health
is "secret files 0644: a CGI run serves" "$(status)" 200
like "… and logs the warning of its load" "$(cat "$T/err")" "config: $T/gw.conf:[0-9]+: session-key-file: $T/sec/session.key: readable by others"
chmod 600 "$T"/sec/*

# ca-file, a jwks-uri file, an as-metadata file: the owner and write rules, no warning
# when others may read them.
printf -- '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n' > "$T/sec/ca.pem"
printf '%s\n' '{"keys":[{"kty":"EC","x":"5Fp1epUHvna6-zSW_yuyA9JrtcgHE1TBmA11SHUzYVU","y":"lj6YyM_9BUC3Amm8eEOjlTTadepzOaVNY05IwkeFvyw","crv":"P-256","kid":"t","use":"sig","alg":"ES256"}]}' > "$T/sec/jwks.json"
printf '{"issuer":"http://127.0.0.1:8081"}\n' > "$T/sec/as.json"
write_conf 'verify = jwt' "ca-file = $T/sec/ca.pem" "jwks-uri = $T/sec/jwks.json" "as-metadata = $T/sec/as.json"
for kf in ca-file:ca.pem jwks-uri:jwks.json as-metadata:as.json; do
	key=${kf%%:*} f=$T/sec/${kf#*:}
	chmod 644 "$T"/sec/ca.pem "$T"/sec/jwks.json "$T"/sec/as.json
	tcheck
	is "$key 0644: exit 0, no warning" "rc=$rc $(grep -c warning <<<"$out")" "rc=0 0"
	chmod 664 "$f"
	tcheck
	like "$key group-writable (0664): refused at its line" "rc=$rc $out" \
		"^rc=1 $T/gw.conf:$(lineof "$key"): $key: $f: writable by group or others \\(mode 0664\\)"
	chmod 646 "$f"
	tcheck
	like "$key writable by others (0646): refused at its line" "rc=$rc $out" \
		"^rc=1 $T/gw.conf:$(lineof "$key"): $key: $f: writable by group or others \\(mode 0646\\)"
	chmod 644 "$f"
done
rm -f "$T/sec/as.json"
tcheck
like "as-metadata naming a missing file: refused at its line" "rc=$rc $out" \
	"^rc=1 $T/gw.conf:$(lineof as-metadata): as-metadata: $T/sec/as.json: No such file"

# The configuration's own files: the main one and what it includes.
mkdir -p "$T/inc.d"
printf '[tenant "acme"]\ngroups = gh\n[group "gh"]\ntools = gh_*\n' > "$T/inc.d/acme.conf"
write_conf 'include = inc.d/*.conf'
chmod 646 "$T/inc.d/acme.conf"
tcheck
like "an included file writable by others: refused at the include's line" "rc=$rc $out" \
	"^rc=1 $T/gw.conf:$(grep -n '^include = ' "$T/gw.conf" | cut -d: -f1): include: $T/inc.d/acme.conf: writable by group or others \\(mode 0646\\)"
chmod 644 "$T/inc.d/acme.conf"
tcheck
is "… 0644: exit 0" "$rc" 0
if [ "$(id -u)" -eq 0 ]; then
	chown 65534 "$T/inc.d/acme.conf"
	tcheck
	like "an included file of another user (nobody): refused" "rc=$rc $out" \
		"^rc=1 $T/gw.conf:[0-9]+: include: $T/inc.d/acme.conf: owned by uid 65534"
	chown 0 "$T/inc.d/acme.conf"
else
	pass "an included file of another user # SKIP not root"
fi
chmod 620 "$T/gw.conf"
tcheck
like "the main file group-writable: refused" "rc=$rc $out" "^rc=1 $T/gw.conf: writable by group or others \\(mode 0620\\)"
chmod 644 "$T/gw.conf"

# An explicit state file's directory: another user able to write there could make
# <state>.lock first (no process would start) or put files in its place.
for mode in 777 1777 775; do
	mkdir -p "$T/st-$mode"
	chmod "$mode" "$T/st-$mode"
	write_conf
	sed -i "s|^state = .*|state = $T/st-$mode/state|" "$T/gw.conf"
	tcheck
	like "state in a directory of mode $mode: refused at its line" "rc=$rc $out" \
		"^rc=1 $T/gw.conf:$(lineof state): state: $T/st-$mode: writable by group or others \\(mode 0*$mode\\)"
done
chmod 755 "$T/st-775"
tcheck
is "… that directory 0755: exit 0" "$rc" 0
# An explicit state file in a directory that does not exist yet (state = /run/mcpgate/state
# on a fresh boot): made at start, 0700, as the default's is; -t makes nothing.
write_conf
sed -i "s|^state = .*|state = $T/st-new/state|" "$T/gw.conf"
tcheck
is "state in a missing directory: -t exit 0" "rc=$rc $([ -e "$T/st-new" ] && echo made)" "rc=0 "
cgi GET /mcp/health
is "state in a missing directory: served (200)" "$(status)" 200
is "… the directory made, 0700" "$(stat -c %a "$T/st-new" 2>/dev/null)" 700
[ -f "$T/st-new/state" ] && pass "… the state file in it" || fail "the state file in the made directory"
# Only the last component is made: a missing parent is an error that says which.
sed -i "s|^state = .*|state = $T/no/such/state|" "$T/gw.conf"
cgi GET /mcp/health
like "state under a missing parent: refused (500), saying why" "$(status) $(cat "$T/err")" \
	"^500 .*state: cannot make $T/no/such: No such file or directory"
[ ! -e "$T/no" ] && pass "… and nothing made" || fail "nothing made under a missing parent"
# A world-writable directory is refused with the reason, never used.
mkdir -m 777 "$T/st-ww" && chmod 777 "$T/st-ww"
sed -i "s|^state = .*|state = $T/st-ww/state|" "$T/gw.conf"
cgi GET /mcp/health
like "state in a world-writable directory: refused (500), saying why" "$(status) $(cat "$T/err")" \
	"^500 .*state: $T/st-ww: writable by group or others"
[ ! -e "$T/st-ww/state" ] && pass "… and nothing written there" || fail "nothing written in a world-writable directory"

# A FastCGI start that fails says why where the operator looks, not only on stderr
# (spawn-fcgi may send that to /dev/null, leaving "child exited with: 1"): in the
# log-file, even the one a configuration that fails names. (Without a log-file it goes
# to syslog: not checked here, glibc's syslog has no path to point at a test socket.)
if command -v spawn-fcgi > /dev/null; then
	fcgi_start() {	# fcgi_start: spawn-fcgi -n (mcpgate in its place) with stderr to /dev/null → rc
		rm -f "$T/fcgi.sock"
		timeout 20 spawn-fcgi -n -s "$T/fcgi.sock" -- "$MCPGATE_BIN" -c "$T/gw.conf" > /dev/null 2>&1
		rc=$?
	}
	write_conf
	sed -i "s|^state = .*|state = $T/st-ww/state\nlog-file = $T/start.log|" "$T/gw.conf"
	rm -f "$T/start.log"
	fcgi_start
	like "FastCGI, state in a world-writable directory: exit 1, the reason with file:line in the log-file" \
		"rc=$rc $(cat "$T/start.log" 2>/dev/null)" \
		"^rc=1 .*\"level\":\"error\",\"msg\":\"config: $T/gw.conf:$(lineof state): state: $T/st-ww: writable by group or others"
	like "… and that it does not start" "$(cat "$T/start.log" 2>/dev/null)" "$T/gw.conf: not starting"
	sed -i "s|^state = .*|state = $T/no/such/state|" "$T/gw.conf"
	rm -f "$T/start.log"
	fcgi_start
	like "FastCGI, state under a missing parent: exit 1, the reason in the log-file" \
		"rc=$rc $(cat "$T/start.log" 2>/dev/null)" \
		"^rc=1 .*\"msg\":\"state: cannot make $T/no/such: No such file or directory; not serving"
	rm -f "$T/fcgi.sock"
	out=$(timeout 20 spawn-fcgi -n -s "$T/fcgi.sock" -- "$MCPGATE_BIN" -c "$T/gw.conf" 2>&1 > /dev/null)
	like "… and on stderr too" "$out" "mcpgate: state: cannot make $T/no/such"
	write_conf
else
	pass "# SKIP FastCGI start failures in the log-file: no spawn-fcgi"
fi
write_conf "include = conf.d/*.conf"

# log-level: error, warn or info; another value is refused at its line. At warn, a
# CGI run writes no request line; at info (the default) it does.
write_conf '[gateway]' 'log-level = loud'
tcheck
like "-t refuses log-level = loud at its line" "rc=$rc $out" "^rc=1 $T/gw.conf:[0-9]+: log-level: unknown value"
for lv in error warn info; do
	write_conf '[gateway]' "log-level = $lv"
	"$MCPGATE_BIN" -t -c "$T/gw.conf" >/dev/null 2>&1; is "-t accepts log-level = $lv" "$?" 0
done
write_conf '[gateway]' 'log-level = warn'
cgi GET /mcp/health
is "log-level = warn: the request is served" "$(status)" 200
unlike "… and its request line is not written" "$(cat "$T/err")" '"path":"/mcp/health"'
write_conf
cgi GET /mcp/health
like "log-level unset (info): the request line is written" "$(cat "$T/err")" '"path":"/mcp/health"'

# -h: every form, explain's catalog options, and the configuration path this build reads.
out=$("$MCPGATE_BIN" -h); rc=$?
is "-h: exit 0" "$rc" 0
like "-h: explain's --catalog and --save-catalog" "$(tr '\n' ' ' <<<"$out")" 'explain .*--catalog FILE \| --save-catalog FILE'
like "-h: the default configuration path" "$out" '^FILE defaults to \$MCPGATE_CONFIG, else /.*/mcpgate/mcpgate\.conf\.$'
write_conf "include = conf.d/*.conf"

"$MCPGATE_BIN" -w 0 -t -c "$T/gw.conf" >/dev/null 2>&1; is "-w 0 refused" "$?" 2
"$MCPGATE_BIN" --nonsense >/dev/null 2>&1; is "unknown option: exit 2" "$?" 2
"$MCPGATE_BIN" -c "$T/gw.conf" extra >/dev/null 2>&1; is "stray argument: exit 2" "$?" 2
out=$("$MCPGATE_BIN" explain -c "$T/gw.conf" --claims '{"tenant":"acme"}' 2>&1); rc=$?
is "explain: exit 0" "$rc" 0
like "explain: the tenant, from the included file that declares it" "$out" 'tenant: acme \(.*conf\.d/acme\.conf:1\)'
"$MCPGATE_BIN" explain -c "$T/gw.conf" >/dev/null 2>&1; is "explain without --claims: exit 1" "$?" 1

tap_done
