#!/usr/bin/env bash
# On demand: the pg_regress and isolation suites (make installcheck without
# the TAP tests, which start servers of their own) with every backend
# running under valgrind's memcheck; fails if valgrind reports an error with
# sbf.so in its stack.
#
#   bash scripts/valgrind.sh          (~10 minutes)
#
# PostgreSQL itself, built without valgrind support, makes memcheck report
# things of its own (uninitialised padding written to disk, its allocator's
# pools); those are counted and shown but do not fail the run.  (An
# AddressSanitizer build of the extension cannot be used here: the ASan
# runtime preloaded into postgres hangs at start on this kernel; the fuzz
# target, t/013_fuzz.pl, runs sbf's input and validation code under ASan
# and UBSan instead.)
. "$(dirname "$0")/lib.sh"

ensure_packages valgrind
build_and_install

VG=$(mktemp -d /tmp/sbf-valgrind.XXXXXX)
chmod 777 "$VG"
cat >"$VG/postgres" <<SH
#!/bin/sh
exec valgrind --quiet --tool=memcheck --error-limit=no --num-callers=30 \\
	--trace-children=no --read-var-info=no --log-file=$VG/memcheck.%p \\
	$PG_BINDIR/postgres "\$@"
SH
chmod 755 "$VG/postgres"

SBF_CLUSTER=$(mktemp -d /tmp/sbf-cluster.XXXXXX)
PGPORT=$((20000 + RANDOM % 10000))
init_server "$SBF_CLUSTER"
say "starting PostgreSQL under valgrind (slow)"
run_server "$SBF_CLUSTER" "$PGPORT" -p "$VG/postgres"
export PGHOST=$SBF_CLUSTER PGPORT PGUSER=postgres PGDATABASE=postgres SBF_CLUSTER
trap 'stop_cluster; rm -rf "$VG"' EXIT

failed=0
say "pg_regress and isolation under valgrind"
make -C "$SBF_ROOT" -s installcheck TAP_TESTS= PG_CONFIG="$PG_CONFIG" || failed=1
stop_server "$SBF_CLUSTER"

# An error report is a block of lines starting with ==PID==; keep those
# with a frame in sbf: its library, or one of its source files (the
# extension is built with -g, so valgrind names them)
sources=$(cd "$SBF_ROOT/src" && ls -- *.[ch] | sed 's/\.[ch]$//' | sort -u | paste -sd '|')
ours=$(cat "$VG"/memcheck.* | awk -v sources="$sources" '
	function ours(b) { return b ~ "sbf\\.so" || b ~ ("[( ](" sources ")\\.[ch]:[0-9]") }
	/^==[0-9]+== [A-Z]/ { if (ours(block)) print block; block = $0; next }
	/^==[0-9]+== *$/ { if (ours(block)) print block; block = ""; next }
	{ block = block "\n" $0 }
	END { if (ours(block)) print block }')
total=$(cat "$VG"/memcheck.* | grep -cE '^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|Source and destination)' || true)
echo
if [ -n "$ours" ]; then
	echo "$ours" | head -80
	echo "valgrind: errors in sbf.so"
	failed=1
else
	echo "valgrind: no error in sbf.so ($total reports from PostgreSQL itself, not sbf)"
fi
exit "$failed"
