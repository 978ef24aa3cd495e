#!/usr/bin/env bash
# Faults on the host's shared state file, through real processes: spawn-fcgi (-F 2 and
# more) and CGI runs of one gateway, with oidc-provider tokens. None of them may die,
# hang, or split from the others:
#   - the file removed, truncated (`: > state`), overwritten in place with 0xff and
#     with random bytes while they run;
#   - a process started with another cache-entries;
#   - its file system full (a small tmpfs), then with room again;
#   - a read-only state directory, another user's <state>.lock, the default path's
#     directory (made 0700; another user's refused);
#   - a process SIGKILLed while it holds a pending introspection claim, or a token-cache
#     stripe lock (tests/fault/die-holding.c, preloaded).
# Convergence is read from /proc/PID/maps: every process maps the file now at the path.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cgi/lib.sh"
. "$here/../lib/idp.sh"
for c in spawn-fcgi cgi-fcgi setpriv cc jq; do
	command -v "$c" > /dev/null || { echo "Bail out! $c is required"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "Bail out! run as root (mounts, another user's files)"; exit 1; }
N=$(mktemp -d /tmp/mcpgate-fault-other.XXXXXX)	# for a run as another user (nobody)
chmod 755 "$N"
MOUNTS=()
cleanup() {
	local p m
	for f in "$T"/*.pids; do	# one file at a time: spawn-fcgi ends none with a newline
		for p in $(cat "$f" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	stop_idp
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
	rm -rf "$T" "$N"
}
trap cleanup EXIT

GW=http://127.0.0.1:8080/mcp
start_idp "$GW"
(umask 077 && printf 'mcpgate-secret\n' > "$T/secret")

# conf FILE STATE [extra [gateway] lines]: ENTRIES (cache-entries, 64), AUTH_MS (3000).
conf() {
	local out=$1 state=$2
	shift 2
	{
		printf '%s\n' '[gateway]' "resource = $GW" 'name = com.example/gateway' "log-file = ${LOG:-$T/gw.log}" \
			'workers = 2'
		[ -n "$state" ] && echo "state = $state"
		printf '%s\n' "$@" '[auth]' "issuer = $IDP" 'client-id = mcpgate' "client-secret-file = ${SECRET:-$T/secret}" \
			'required-scopes = mcp:tools' "timeout-ms = ${AUTH_MS:-3000}" "cache-entries = ${ENTRIES:-64}"
	} > "$out"
}

# wait_for SECONDS CMD...: until CMD succeeds (polled), or false after SECONDS. CMD runs
# again on each try, but a $(...) among its words was expanded once, before the first.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# spawn NAME CONF N [spawn-fcgi options]: N processes on $T/NAME.sock, pids in $T/NAME.pids.
spawn() {
	local name=$1 conf=$2 n=$3
	shift 3
	rm -f "$T/$name.sock" "$T/$name.pids"
	spawn-fcgi -s "$T/$name.sock" -F "$n" -P "$T/$name.pids" "$@" -- "$MCPGATE_BIN" -c "$conf" > /dev/null 2>&1
	wait_for 10 test -S "$T/$name.sock"
}
pids_of() { cat "$T/$1.pids" 2>/dev/null; }
running() { case $(ps -o stat= -p "$1" 2>/dev/null) in '' | Z*) return 1 ;; esac; }	# not a zombie either
alive() {	# alive NAME...: every process of them still runs
	local name p n=0
	for name in "$@"; do
		for p in $(pids_of "$name"); do running "$p" || return 1; n=$((n + 1)); done
	done
	[ "$n" -gt 0 ]
}
same() { alive a b && [ "$(pids_of a | xargs) $(pids_of b | xargs)" = "$(echo $a_pids $b_pids)" ]; }
stop() {	# stop NAME [SIGNAL]
	local p
	for p in $(pids_of "$1"); do kill "${2:--TERM}" "$p" 2> /dev/null; done
}
gone() {	# gone NAME: none of its processes runs
	local p
	for p in $(pids_of "$1"); do running "$p" && return 1; done
	return 0
}

# fc NAME METHOD PATH [VAR=value...] [< body]: one request to the processes on NAME.
fc() {
	local name=$1 method=$2 path=$3
	shift 3
	env -i PATH="$PATH" REQUEST_METHOD="$method" SCRIPT_NAME="$path" SERVER_PROTOCOL=HTTP/1.1 "$@" \
		timeout 30 cgi-fcgi -bind -connect "$T/$name.sock" > "$T/out" 2>/dev/null
	sed -n '1,/^\r$/p' "$T/out" | tr -d '\r' > "$T/head"
	sed '1,/^\r$/d' "$T/out" > "$T/body"
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
# mcp WHERE TOKEN SID BODY: POST /mcp to a spawn name or `cgi`; prints the status.
mcp() {
	local where=$1 tok=$2 sid=$3 body=$4
	local vars=(CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} HTTP_AUTHORIZATION="Bearer $tok")
	[ -n "$sid" ] && vars+=(HTTP_MCP_SESSION_ID="$sid" HTTP_MCP_PROTOCOL_VERSION=2025-06-18)
	if [ "$where" = cgi ]; then cgi POST /mcp "${vars[@]}" <<< "$body"; else fc "$where" POST /mcp "${vars[@]}" <<< "$body"; fi
	status
}
init_on() { mcp "$1" "$2" "" "$INIT" > /dev/null && header Mcp-Session-Id; }
# everywhere TOKEN SID NAME...: the session is accepted 8 times on each (spread over its
# processes) and by a CGI run.
everywhere() {
	local tok=$1 sid=$2 name
	shift 2
	[ -n "$sid" ] || return 1
	for name in "$@"; do
		for _ in 1 2 3 4 5 6 7 8; do [ "$(mcp "$name" "$tok" "$sid" "$LIST")" = 200 ] || return 1; done
	done
	[ "$(mcp cgi "$tok" "$sid" "$LIST")" = 200 ]
}
# converged STATE NAME...: every process of them maps the file now at STATE, once, and
# no other (a removed one shows as "(deleted)").
converged() {
	local state=$1 ino name p
	shift
	ino=$(stat -c %i "$state" 2>/dev/null) || return 1
	for name in "$@"; do
		for p in $(pids_of "$name"); do
			awk -v path="$state" -v ino="$ino" 'index($0, path) { n++; if ($5 != ino || $0 ~ /\(deleted\)$/) bad = 1 }
				END { exit !(n == 1 && !bad) }' "/proc/$p/maps" || return 1
		done
	done
}
# answers NAME TOKEN: ten tools/list with a good token are 200, one with a bad token 401.
answers() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ "$(mcp "$1" "$2" "" "$LIST")" = 200 ] || return 1; done
	[ "$(mcp "$1" not-a-token "" "$LIST")" = 401 ]
}
# settled TOKEN NAME...: converged on the file, and a session issued by the first is
# accepted everywhere.
settled() {
	local tok=$1 sid
	shift
	converged "$STATE" "$@" && sid=$(init_on "$1" "$tok") && everywhere "$tok" "$sid" "$@"
}

STATE=$T/state
conf "$T/gw.conf" "$STATE"
spawn a "$T/gw.conf" 2
spawn b "$T/gw.conf" 1
tok=$(mint --client machine-acme --scope mcp:tools)
[ -n "$tok" ] && [ "$tok" != null ] && pass "a token minted by oidc-provider" || fail "a token minted"
a_pids=$(pids_of a) b_pids=$(pids_of b)
is "spawn-fcgi -F 2 and -F 1: three processes" "$(echo $a_pids $b_pids | wc -w)" 3

sid=$(init_on a "$tok")
everywhere "$tok" "$sid" a b && pass "a session issued by one process is accepted by every other and CGI" \
	|| fail "a session issued by one process is accepted by every other"
ls -ls "$STATE" > "$T/ls"
[ "$(stat -c %b "$STATE")" -ge $(( $(stat -c %s "$STATE") / $(stat -c %B "$STATE") )) ] \
	&& pass "the state file is allocated in full ($(stat -c %s "$STATE") bytes)" || fail "allocated in full" "$(cat "$T/ls")"

# --- removed (a /tmp cleaner, an operator) -------------------------------------------
rm -f "$STATE"
wait_for 30 converged "$STATE" a b && pass "removed: rebuilt by a running process, every process maps it" \
	|| fail "removed: every process maps the rebuilt file" "$(grep state /proc/*/maps 2>/dev/null | grep "$T" | head)"
everywhere "$tok" "$sid" a b && pass "removed: sessions issued before still hold everywhere (keys carried over)" \
	|| fail "removed: sessions issued before still hold"
sid=$(init_on cgi "$tok")
everywhere "$tok" "$sid" a b && pass "removed: a session issued by a CGI run is accepted by every process" \
	|| fail "removed: a session issued by a CGI run is accepted by every process"
# Removed, and a CGI run builds the next file before any tick: the processes follow it.
rm -f "$STATE"
sid=$(init_on cgi "$tok")
wait_for 30 settled "$tok" a b && pass "removed and rebuilt by a CGI run: every process follows it, sessions cross" \
	|| fail "removed and rebuilt by a CGI run: every process follows it"
same && pass "removed: the same processes serve ($(echo $a_pids $b_pids))" || fail "removed: the same processes serve"

# --- another cache-entries -----------------------------------------------------------
ENTRIES=4096 conf "$T/gw-big.conf" "$STATE"
ino=$(stat -c %i "$STATE")
spawn c "$T/gw-big.conf" 1
sid=$(init_on c "$tok")
everywhere "$tok" "$sid" a b c && pass "a process with another cache-entries: its sessions are accepted everywhere" \
	|| fail "a process with another cache-entries: its sessions are accepted everywhere"
everywhere "$tok" "$(init_on a "$tok")" c && pass "and it accepts theirs" || fail "and it accepts theirs"
is "and the file was not rebuilt" "$(stat -c %i "$STATE")" "$ino"
like "it says cache-entries waits for the file to be built anew" "$(cat "$T/gw.log")" \
	'keeps its token cache of 64 entries; cache-entries = 4096 takes effect when the file is built anew'
like "mcpgate -t says so too" "$("$MCPGATE_BIN" -t -c "$T/gw-big.conf")" \
	'note: the state file keeps its token cache of 64 entries: cache-entries = 4096 takes effect'
stop c

# fresh: the processes a (2) and b (1) anew on a new file, as each fault below finds them.
fresh() {
	stop a
	stop b
	wait_for 20 gone a && wait_for 20 gone b
	rm -f "$STATE"
	spawn a "$T/gw.conf" 2
	spawn b "$T/gw.conf" 1
	a_pids=$(pids_of a) b_pids=$(pids_of b)
	wait_for 30 settled "$tok" a b
}

# --- truncated under the running processes ----------------------------------------------
fresh || fail "processes started anew on a new file"
: > "$STATE"
answers a "$tok" && answers b "$tok" && pass "truncated: every request answered (200, 401 for a bad token)" \
	|| fail "truncated: every request answered" "$(head -3 "$T/head")"
alive a b && pass "truncated: no process died (SIGBUS handled)" || fail "truncated: no process died"
wait_for 30 settled "$tok" a b && pass "truncated: rebuilt, every process maps it, sessions cross" \
	|| fail "truncated: rebuilt, every process maps it, sessions cross"
like "truncated: logged" "$(cat "$T/gw.log")" 'state: .*/state: the file shrank under the mapping \(SIGBUS\); re-opened'
same && pass "truncated: the same processes serve" || fail "truncated: the same processes serve"

# --- overwritten in place ----------------------------------------------------------------
for what in 0xff random; do
	fresh || fail "processes started anew on a new file"
	size=$(stat -c %s "$STATE")
	if [ $what = 0xff ]; then
		head -c "$size" /dev/zero | tr '\0' '\377' | dd of="$STATE" conv=notrunc status=none
	else
		head -c "$size" /dev/urandom | dd of="$STATE" conv=notrunc status=none
	fi
	answers a "$tok" && answers b "$tok" && pass "overwritten with $what: every request answered right" \
		|| fail "overwritten with $what: every request answered right" "$(head -3 "$T/head")"
	alive a b && pass "overwritten with $what: no process died" || fail "overwritten with $what: no process died"
	wait_for 30 settled "$tok" a b && pass "overwritten with $what: rebuilt, every process maps it, sessions cross" \
		|| fail "overwritten with $what: rebuilt, every process maps it, sessions cross"
	same && pass "overwritten with $what: the same processes serve" || fail "overwritten with $what: the same processes serve"
done

# --- a process SIGKILLed while it holds a cache slot ---------------------------------
# A pending introspection claim: its owner is killed mid-introspection (the AS hangs);
# the next request for that token does not wait for the claim's deadline (30.5 s).
AUTH_MS=30000 conf "$T/slow.conf" "$STATE"
spawn k "$T/slow.conf" 1
held=$(mint --client machine-acme --scope mcp:tools)
idp_reset
idp_fault hang
(mcp k "$held" "" "$LIST" > /dev/null) &
held_req=$!
introspected() { [ "$(idp_stats)" -ge 1 ]; }	# (read on every try, not once)
wait_for 30 introspected && pass "a process introspects a token (the AS hangs)" \
	|| fail "a process introspects a token" "k: $(pids_of k) $(alive k && echo alive); introspections $(idp_stats); $(tail -3 "$T/gw.log")"
stop k -KILL
wait "$held_req"	# (its answer files are ours again)
idp_fault none
start=$SECONDS
st=$(CONF=$T/slow.conf mcp cgi "$held" "" "$LIST")
took=$((SECONDS - start))
is "killed while holding the token's claim: the next request is served" "$st" 200
[ "$took" -le 10 ] && pass "at once (${took} s, not the claim's 30.5 s)" || fail "at once" "${took} s"
# A stripe lock: a CGI run dies at its first unlock of a state mutex, holding the
# stripe of its token (and its pending claim in it).
cc -shared -fPIC -o "$T/die.so" "$here/die-holding.c" 2> "$T/cc.err" || fail "build die-holding.so" "$(cat "$T/cc.err")"
locked=$(mint --client machine-acme --scope mcp:tools)
asan=$(ldd "$MCPGATE_BIN" | awk '/libasan/ { print $3 }')	# a sanitizer build wants its runtime first
(cgi POST /mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#LIST} HTTP_AUTHORIZATION="Bearer $locked" \
	LD_PRELOAD="${asan:+$asan:}$T/die.so" MCPGATE_DIE_HOLDING=1 <<< "$LIST") 2> /dev/null	# (bash: "Killed")
is "a CGI run killed holding a token-cache stripe lock" "$?" 137
start=$SECONDS
ok_n=0
for _ in 1 2 3 4 5 6; do [ "$(mcp a "$locked" "" "$LIST")" = 200 ] && ok_n=$((ok_n + 1)); done
took=$((SECONDS - start))
is "its token is then served by the other processes" "$ok_n" 6
[ "$took" -le 8 ] && pass "without waiting for the dead holder (${took} s)" || fail "without waiting" "${took} s"
alive a b && pass "the processes lived through it" || fail "the processes lived through it"

# --- its file system full, then room again ------------------------------------------------
mkdir -p "$T/full"
if mount -t tmpfs -o size=256k,mode=0700 tmpfs "$T/full"; then	# the file wants 4.5 MB (a state directory only its user may write)
	MOUNTS+=("$T/full")
	full_how="a 256 KiB tmpfs"
	conf "$T/full.conf" "$T/full/state"
	spawn f "$T/full.conf" 1
else	# no mounts here: a file size limit gives EFBIG, as a full file system gives ENOSPC
	full_how="RLIMIT_FSIZE (mount failed)"
	conf "$T/full.conf" "$T/full/state"
	(ulimit -f 512 && spawn f "$T/full.conf" 1)
	echo "# mount is not possible here: the full file system is a file size limit"
fi
fc f GET /mcp/health
is "no room ($full_how): the process serves, health 200" "$(status)" 200
is "health: degraded" "$(jf .status)" degraded
like "health: says why" "$(jf '.reasons[0]')" 'state file: .*(No space left on device|File too large).*'
is "no room: requests answered" "$(mcp f "$tok" "" "$LIST")" 200
alive f && pass "no room: the process lives (no SIGBUS)" || fail "no room: the process lives"
like "no room: logged at error level" "$(grep '"level":"error"' "$T/gw.log")" 'uses a private state'
if [ "${MOUNTS[*]}" ]; then
	mount -o remount,size=64m "$T/full"
	wait_for 30 eval 'fc f GET /mcp/health; [ "$(jf .status)" = ok ]' \
		&& pass "room again: the process takes the shared file (health ok)" || fail "room again: health ok" "$(cat "$T/body")"
	sid=$(init_on f "$tok")
	is "room again: sessions work" "$(CONF=$T/full.conf mcp cgi "$tok" "$sid" "$LIST")" 200
fi
stop f

# --- the shared state cannot be had: refuse, loudly -----------------------------------------
mkdir -p "$T/ro"
if mount -t tmpfs -o ro,size=1m,mode=0700 tmpfs "$T/ro"; then
	MOUNTS+=("$T/ro")
	conf "$T/ro.conf" "$T/ro/state"
	spawn r "$T/ro.conf" 1
	wait_for 20 gone r && pass "read-only state directory: FastCGI refuses to start" || fail "read-only: FastCGI refuses to start"
	like "read-only: the log says why" "$(cat "$T/gw.log")" "cannot open $T/ro/state.lock: Read-only file system; not serving"
	sed '/^log-file/d' "$T/ro.conf" > "$T/ro-cgi.conf"	# a CGI run's log: stderr
	CONF=$T/ro-cgi.conf cgi GET /mcp/health
	is "read-only: a CGI run answers 500" "$(status)" 500
	like "read-only: and says why" "$(cat "$T/err")" 'Read-only file system; not serving'
else
	fail "mount a read-only tmpfs"
fi
mkdir -p "$T/fl"
: > "$T/fl/state.lock"
chown 65534:65534 "$T/fl/state.lock"
conf "$T/fl.conf" "$T/fl/state"
spawn l "$T/fl.conf" 1
wait_for 20 gone l && pass "another user's state.lock: FastCGI refuses to start" || fail "another user's state.lock: FastCGI refuses"
like "another user's state.lock: the log says why" "$(cat "$T/gw.log")" "state.lock belongs to uid 65534, not to this user"
sed '/^log-file/d' "$T/fl.conf" > "$T/fl-cgi.conf"
CONF=$T/fl-cgi.conf cgi GET /mcp/health
is "another user's state.lock: a CGI run answers 500" "$(status)" 500
like "another user's state.lock: and says why" "$(cat "$T/err")" 'state.lock belongs to uid 65534, not to this user .*; not serving'
[ ! -e "$T/fl/state" ] && pass "and nothing was made of it (no private fallback)" || fail "no private fallback"

# --- the default path -----------------------------------------------------------------------
conf "$T/rt.conf" ""
CONF=$T/rt.conf cgi GET /mcp/health RUNTIME_DIRECTORY="$T/rt"
is "no state set, RUNTIME_DIRECTORY (systemd): served" "$(status)" 200
is "the directory is made 0700" "$(stat -c %a "$T/rt" 2>/dev/null)" 700
[ -f "$T/rt/state" ] && pass "the state file is in it" || fail "the state file is in \$RUNTIME_DIRECTORY"
like "mcpgate -t names it" "$(RUNTIME_DIRECTORY=$T/rt "$MCPGATE_BIN" -t -c "$T/rt.conf")" "state: $T/rt/state \\(the default\\)"
# Another user, without a runtime directory: ${TMPDIR:-/tmp}/mcpgate-<uid>.
cp "$T/secret" "$N/secret"
chgrp 65534 "$N/secret"	# root's, read by nobody's group: a secret others cannot read
chmod 640 "$N/secret"
SECRET=$N/secret LOG=$N/gw.log conf "$N/gw.conf" ""
sed -i '/^log-file/d' "$N/gw.conf"
chmod 644 "$N/gw.conf"
mkdir -m 1777 "$N/tmp" "$N/tmp2"
as_nobody() {	# as_nobody TMPDIR: a CGI health request as nobody → $T/head, $T/body, $T/err
	setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH="$PATH" TMPDIR="$1" \
		REQUEST_METHOD=GET SCRIPT_NAME=/mcp/health SERVER_PROTOCOL=HTTP/1.1 GATEWAY_INTERFACE=CGI/1.1 \
		MCPGATE_CONFIG="$N/gw.conf" "$MCPGATE_BIN" > "$T/out" 2> "$T/err"
	sed -n '1,/^\r$/p' "$T/out" | tr -d '\r' > "$T/head"
	sed '1,/^\r$/d' "$T/out" > "$T/body"
}
as_nobody "$N/tmp"
is "another user (nobody): served" "$(status)" 200
is "its directory \$TMPDIR/mcpgate-65534: its own, 0700" "$(stat -c '%u %a' "$N/tmp/mcpgate-65534" 2>/dev/null)" "65534 700"
[ -f "$N/tmp/mcpgate-65534/state" ] && pass "the state file is in it" || fail "the state file is in \$TMPDIR/mcpgate-65534"
mkdir -m 755 "$N/tmp2/mcpgate-65534"	# made first by someone else (root)
as_nobody "$N/tmp2"
is "that directory made by another user first: a CGI run answers 500" "$(status)" 500
like "and says why" "$(cat "$T/err")" "mcpgate-65534 belongs to uid 0, not to this user \\(uid 65534\\)"
[ ! -e "$N/tmp2/mcpgate-65534/state" ] && pass "and writes nothing there" || fail "writes nothing there"

alive a b && pass "the first processes are still serving" || fail "the first processes are still serving"
tap_done
