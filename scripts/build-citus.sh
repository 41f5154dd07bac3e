#!/bin/bash
# Build and install Citus from its source, for t/060_citus.pl,
# t/061_citus_sieve.pl and the Citus recipes of docs/distributed.md.
#
#   bash scripts/build-citus.sh SOURCE [VERSION]
#
# SOURCE is a checkout of citusdata/citus, or a git repository of it (a
# bare one too); with VERSION (a release tag: v13.2.2, or 13.2.2) that
# release is exported from SOURCE with git archive into a temporary
# directory and built there, without VERSION the tree SOURCE as it is.
# Tested: v13.2.2 on PostgreSQL 15, v14.0.1 on PostgreSQL 18 (Citus 14
# supports 16 to 18 and dropped 15).  Citus is not in Debian's packages and
# is never shipped here.  The script installs the build packages it lacks
# (as root: libpq-dev for the client headers Citus includes, liblz4-dev,
# libzstd-dev, libkrb5-dev), configures without libcurl (Citus uses it
# only to report statistics home), builds and installs into the PostgreSQL
# that PG_CONFIG names (default: the Debian PostgreSQL 15).
#
# PostgreSQL 15.20 exports have_createdb_privilege(), which Citus 13.2's
# pg_version_compat.h defines again for PostgreSQL 15 as a static inline
# function; the two declarations conflict.  When the server headers declare
# it, the script removes Citus's copy (the tree is edited in place).

. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 SOURCE [VERSION]"
src=$(cd "$1" && pwd) || die "no such directory: $1"
if [ $# -eq 2 ]; then
	tag=v${2#v}
	export_dir=$(mktemp -d /tmp/sbf-citus.XXXXXX)
	trap 'rm -rf "$export_dir"' EXIT
	git --git-dir="$(git -C "$src" rev-parse --absolute-git-dir 2>/dev/null || echo "$src")" \
		archive --format=tar "$tag" | tar -x -C "$export_dir" ||
		die "$src has no release $tag"
	say "building Citus $tag, exported into $export_dir"
	src=$export_dir
fi
[ -f "$src/configure" ] && [ -f "$src/src/include/pg_version_compat.h" ] ||
	die "$src does not look like a Citus source tree"

ensure_packages libpq-dev liblz4-dev libzstd-dev libkrb5-dev

compat=$src/src/include/pg_version_compat.h
server_include=$("$PG_CONFIG" --includedir-server)
if grep -q 'have_createdb_privilege' "$server_include/commands/dbcommands.h" &&
	grep -q '^have_createdb_privilege(void)' "$compat"; then
	say "removing Citus's copy of have_createdb_privilege() (the server exports it)"
	# drop "static inline bool" + "have_createdb_privilege(void)" + its body
	perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n//s' "$compat"
	grep -q '^have_createdb_privilege(void)' "$compat" &&
		die "could not remove have_createdb_privilege() from $compat"
	grep -q '^#include "commands/dbcommands.h"' "$compat" ||
		sed -i '0,/^#include "catalog\/pg_authid.h"/s//#include "catalog\/pg_authid.h"\n#include "commands\/dbcommands.h"/' "$compat"
fi

cd "$src"
say "configuring Citus in $src"
./configure --without-libcurl PG_CONFIG="$PG_CONFIG" >configure.out 2>&1 ||
	{ tail -30 configure.out >&2; die "configure failed (see $src/configure.out)"; }
say "building Citus"
make -s -j"$(nproc)" >make.out 2>&1 ||
	{ tail -30 make.out >&2; die "build failed (see $src/make.out)"; }
make -s install >>make.out 2>&1 || die "install failed (see $src/make.out)"
say "installed $("$PG_CONFIG" --pkglibdir)/citus.so"
