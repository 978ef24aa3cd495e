#!/usr/bin/env bash
# tests/pkg/deb.sh — the Debian package (debian/):
#   1. `dpkg-buildpackage -us -uc -b` in a copy of the tree (the files git would commit)
#      builds mcpgate_VERSION_ARCH.deb;
#   2. lintian finds no error in it (its warnings are shown);
#   3. unpacked into a scratch root (dpkg -x): the binary, both manual pages, the
#      example configuration, www/, the recipes, the systemd units and the logrotate
#      file are where the documentation says; the installed binary passes -t on the
#      installed example and reads /etc/mcpgate/mcpgate.conf by default; the units
#      name the installed paths and are hardened (a dedicated user, ProtectSystem=
#      strict, RuntimeDirectory for the state file), and systemd-analyze verify
#      (--root: the scratch root, with this machine's own units beside them) has
#      nothing to say; the package depends on the libraries it links, on libcurl (loaded
#      when a request first needs another server: dpkg-shlibdeps cannot see it) and on
#      adduser;
#   4. the build happens in debian/build: `debian/rules clean` leaves a developer's
#      src/mcpgate alone, and a tree configured in place stops the build, untouched.
# The machine's own services and packages are not touched: nothing is installed from
# the .deb. Prints TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/suite.sh"
suite_need dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian fakeroot:fakeroot \
	systemd-analyze:systemd mandoc:mandoc git:git

mg_init || exit 1
T=$MG_DIR
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
src=$T/build/mcpgate-$version

# 1. build, in a copy of what a clone holds
mkdir -p "$src"
(cd "$top" && git ls-files -z -co --exclude-standard | xargs -0 -r sh -c '
	for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$src" -xf -
(cd "$src" && timeout -k 10 1500 dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1
rc=$?
is "dpkg-buildpackage -us -uc -b: exit 0" "$rc" 0
[ "$rc" -eq 0 ] || tail -n 25 "$T/build.log" | sed 's/^/# /'
deb=$T/build/mcpgate_${version}_$arch.deb
check "… made mcpgate_${version}_$arch.deb" test -s "$deb"
if [ ! -s "$deb" ]; then
	tap_done
	exit 1
fi

# 2. lintian
out=$(lintian --fail-on error "$T/build/mcpgate_${version}_$arch.changes" 2>&1)
rc=$?
like "lintian: no error" "rc=$rc $(grep '^E:' <<<"$out" | tr '\n' ' ')" '^rc=0 $'
grep -E '^(W|E):' <<<"$out" | sed 's/^/# lintian: /'

# 3. unpacked
root=$T/root
mkdir -p "$root"
dpkg -x "$deb" "$root"
for f in usr/bin/mcpgate usr/share/man/man8/mcpgate.8.gz usr/share/man/man5/mcpgate.conf.5.gz \
	etc/mcpgate/mcpgate.conf.example usr/share/mcpgate/www/openapi.json usr/share/mcpgate/www/llms.txt \
	usr/share/mcpgate/deploy/nginx/mcpgate.conf usr/share/mcpgate/deploy/spawn-fcgi.sh usr/share/mcpgate/deploy/publish-docs \
	lib/systemd/system/mcpgate.socket lib/systemd/system/mcpgate.service etc/logrotate.d/mcpgate \
	usr/share/doc/mcpgate/copyright usr/share/doc/mcpgate/README.md.gz usr/share/doc/mcpgate/GUIDE.md.gz; do
	check "the package holds /$f" test -s "$root/$f"
done
out=$("$root/usr/share/mcpgate/deploy/publish-docs" "$root/usr/share/mcpgate/www" "$T/docs" https://mcp.example.org/mcp 2>&1) &&
	grep -qF '(https://mcp.example.org/docs/openapi.json)' "$T/docs/llms.txt" && ! grep -rq 'gw\.example\.com' "$T/docs"
like "the installed publish-docs copies the installed www/ naming the gateway" "rc=$? $out" '^rc=0 $'
out=$("$root/usr/bin/mcpgate" -t -c "$root/etc/mcpgate/mcpgate.conf.example" 2>&1)
like "the installed mcpgate -t passes on the installed example" "rc=$? $out" '^rc=0 .*mcpgate.conf.example: ok \('
like "the installed mcpgate reads /etc/mcpgate/mcpgate.conf by default" "$("$root/usr/bin/mcpgate" -h)" \
	'else /etc/mcpgate/mcpgate\.conf\.$'
for m in man8/mcpgate.8.gz man5/mcpgate.conf.5.gz; do
	out=$(zcat "$root/usr/share/man/$m" | mandoc -T lint 2>&1 | grep -v -e 'referenced manual not found' -e 'mandoc\.db')
	is "the installed $m lints clean" "$out" ""
done
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null)
like "/etc/mcpgate/mcpgate.conf.example and /etc/logrotate.d/mcpgate are conffiles" "$(tr '\n' ' ' <<<"$conffiles")" \
	'(/etc/logrotate.d/mcpgate /etc/mcpgate/mcpgate.conf.example|/etc/mcpgate/mcpgate.conf.example /etc/logrotate.d/mcpgate)'
depends=$(dpkg-deb -f "$deb" Depends)
for lib in adduser libfcgi libjansson libsodium libcurl libhiredis libcjose0 libc6; do	# libcjose0 brings libssl3
	like "Depends: $lib" "$depends" "(^|, )$lib"
done
check "the postinst makes the system user mcpgate" sh -c \
	"dpkg-deb --ctrl-tarfile '$deb' | tar -xO ./postinst | grep -q 'adduser --system --group .* mcpgate'"

svc=$root/lib/systemd/system/mcpgate.service
sock=$root/lib/systemd/system/mcpgate.socket
for line in 'ExecStartPre=/usr/bin/mcpgate -t -c /etc/mcpgate/mcpgate.conf' \
	'ExecStart=/usr/bin/mcpgate -c /etc/mcpgate/mcpgate.conf' 'StandardInput=socket' 'User=mcpgate' \
	'ProtectSystem=strict' 'RuntimeDirectory=mcpgate' 'RuntimeDirectoryMode=0700' 'NoNewPrivileges=yes' \
	'CapabilityBoundingSet=' 'SystemCallFilter=@system-service'; do
	check "mcpgate.service: $line" grep -qxF "$line" "$svc"
done
check "mcpgate.socket: ListenStream=/run/mcpgate.sock" grep -qxF 'ListenStream=/run/mcpgate.sock' "$sock"
# systemd-analyze verify with the scratch root as /: this machine's units beside ours
# (the targets they order against), and kill(1) for ExecReload.
mkdir -p "$root/bin"
cp -a /lib/systemd/system/. "$root/lib/systemd/system/"
dpkg -x "$deb" "$root"	# ours again, should a unit of the machine bear the name
cp /bin/kill "$root/bin/kill"
out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no --root="$root" \
	/lib/systemd/system/mcpgate.socket /lib/systemd/system/mcpgate.service 2>&1)
rc=$?
like "systemd-analyze verify --root: the units are clean" "rc=$rc $out" '^rc=0 $'

# 4. a developer's build in the tree is theirs: the package is built in debian/build,
#    `debian/rules clean` removes that and leaves the tree's own src/mcpgate; in a tree
#    configured in place (config.status), dpkg-buildpackage stops before changing
#    anything and says why.
check "the package build left no build in the tree itself (src/mcpgate, config.status)" \
	test ! -e "$src/src/mcpgate" -a ! -e "$src/config.status"
printf 'a developer build\n' >"$src/src/mcpgate"
(cd "$src" && debian/rules clean) >"$T/clean.log" 2>&1
rc=$?
is "debian/rules clean: exit 0" "$rc" 0
check "… removed debian/build" test ! -e "$src/debian/build"
is "… and left the tree's own src/mcpgate as it was" "$(cat "$src/src/mcpgate" 2>&1)" "a developer build"
printf '#!/bin/sh\n' >"$src/config.status"
(cd "$src" && timeout -k 10 600 dpkg-buildpackage -us -uc -b) >"$T/inplace.log" 2>&1
rc=$?
like "dpkg-buildpackage in a tree configured in place: fails, saying so" "rc=$rc $(tr '\n' ' ' <"$T/inplace.log")" \
	'^rc=[1-9].*this tree is configured in place \(config.status\)'
is "… and src/mcpgate and config.status are still there" \
	"$(cat "$src/src/mcpgate" 2>&1) $(cat "$src/config.status" 2>&1)" "a developer build #!/bin/sh"
tap_done
