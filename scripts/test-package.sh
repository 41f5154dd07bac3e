#!/usr/bin/env bash
# Builds sbf's Debian package as PostgreSQL extensions are shipped to
# Debian and Ubuntu users (debian/, with pg_buildext), installs it, and
# tries it: a throwaway cluster runs CREATE EXTENSION sbf and one query of
# each kind (test/package/smoke.sql, answers in smoke.out).
#
#   bash scripts/test-package.sh
#
# As root: it installs what building needs (debhelper,
# postgresql-server-dev-all), and the package replaces the sbf that
# `make install` put into the machine's PostgreSQL; at the end the package
# is removed and sbf installed again from the tree, as before.  Ends with
# "N passed, N failed".
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || die "run as root: it installs a package"
ensure_packages debhelper postgresql-server-dev-all dpkg-dev
MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
PACKAGE=postgresql-$MAJOR-sbf

WORK=$(mktemp -d /tmp/sbf-package.XXXXXX)
passed=0
failed=0
finish() {
	stop_cluster
	if package_installed "$PACKAGE"; then
		dpkg -r "$PACKAGE" >/dev/null 2>&1 || true
	fi
	# the tree's own build, back in the machine's PostgreSQL
	build_and_install >/dev/null 2>&1 || say "could not install sbf from the tree again"
	rm -rf "$WORK"
}
trap finish EXIT

# a copy of the tree without what a build left (dpkg-buildpackage writes the
# .deb beside its source directory)
say "building the Debian package"
mkdir -p "$WORK/src"
git -C "$SBF_ROOT" ls-files -z --cached --others --exclude-standard 2>/dev/null | (cd "$SBF_ROOT" && xargs -0 cp --parents -t "$WORK/src") ||
	cp -a "$SBF_ROOT/." "$WORK/src"
make -C "$WORK/src" -s clean >/dev/null 2>&1 || true
rc=0
(cd "$WORK/src" && pg_buildext updatecontrol && dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || tail -30 "$WORK/build.log"
deb=$(ls "$WORK"/"$PACKAGE"_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || rc=1
result "$rc" "dpkg-buildpackage -us -uc -b builds $PACKAGE"

if [ -n "$deb" ]; then
	rc=0
	dpkg -i "$deb" >"$WORK/install.log" 2>&1 || { rc=$?; cat "$WORK/install.log"; }
	[ "$(dpkg-query -S "$("$PG_CONFIG" --pkglibdir)/sbf.so" 2>/dev/null | cut -d: -f1)" = "$PACKAGE" ] || rc=1
	result "$rc" "dpkg -i installs $PACKAGE, which owns sbf.so"

	start_cluster
	trap finish EXIT	# (start_cluster sets its own)
	rc=0
	# (a copy the postgres user can read, wherever the clone is)
	cp "$SBF_ROOT/test/package/smoke.sql" "$WORK/smoke.sql"
	chmod 755 "$WORK"
	chmod 644 "$WORK/smoke.sql"
	(cd "$WORK" && runuser -u postgres -- "$PG_BINDIR/psql" -X -a -q -v ON_ERROR_STOP=1 \
		-f smoke.sql) >"$WORK/smoke.out" 2>&1 || rc=$?
	diff -u "$SBF_ROOT/test/package/smoke.out" "$WORK/smoke.out" || rc=1
	result "$rc" "CREATE EXTENSION sbf and one query of each kind, from the package"
	stop_cluster
else
	result 1 "dpkg -i $PACKAGE (no package was built)"
	result 1 "one query of each kind (no package was built)"
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
