#!/usr/bin/env bash
# Build a PostgreSQL major from Debian's source package, once per machine,
# for the version matrix (scripts/test-matrix.sh) and pg_upgrade's test.
#
#   bash scripts/build-postgres.sh MAJOR             prints its bin directory
#   bash scripts/build-postgres.sh --headers MAJOR   prints its server headers
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
. "$(dirname "$0")/lib.sh"

HEADERS=
if [ "${1:-}" = --headers ]; then
	HEADERS=1
	shift
fi
[ $# -eq 1 ] || die "usage: $0 [--headers] MAJOR"
MAJOR=$1
CACHE=${SBF_PG_CACHE:-/var/cache/sbf}

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
