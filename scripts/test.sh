#!/usr/bin/env bash
# Runs every test of sbf, on PostgreSQL's own harness, through
# `make installcheck`'s three parts:
#
#   pg_regress   sql/ and expected/: what users type, with its answers
#   isolation    specs/ and expected/: concurrent sessions, interleaved
#   TAP          t/*.pl: tests that need clusters of their own (a crash, a
#                restart, a standby, a second server), accuracy at scale,
#                the fuzzer and the main job
#
# and, first, scripts/check-layout.sh on the objects just built: no circle
# between files, and each folder of src/ calling only the ones below it.
#
# It installs what is missing (as root, on a fresh Debian 12 machine),
# builds sbf with warnings as errors and installs it, starts a throwaway
# server for pg_regress and isolation (see scripts/lib.sh), and runs the
# suite as the postgres OS user in a copy of the tree (PostgreSQL's TAP
# modules refuse to run as root, and the clone stays as it was).  It lists
# what was skipped, with the reason, and says how many ("N skipped"; never
# counted as passed: see SBF_ALLOW_SKIP in t/SbfTest.pm), then ends with one
# line, "N passed, N failed", and exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"

ensure_packages "${SBF_TEST_PACKAGES[@]}"
build_and_install WERROR=1
start_cluster

WORK=$(mktemp -d /tmp/sbf-test.XXXXXX)
cleanup() {
	stop_cluster
	rm -rf "$WORK"
}
trap cleanup EXIT
cp -a "$SBF_ROOT/." "$WORK/sbf"
chown -R postgres: "$WORK"

passed=0
failed=0
LOG=$WORK/stage.log

# the layout of the objects build_and_install made: one test
say "layout (scripts/check-layout.sh)"
if "$SBF_ROOT/scripts/check-layout.sh"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

# stage NAME MINUTES make-arguments...: run one part as postgres, at most
# MINUTES long, its output in $LOG and on the terminal
stage() {
	local name=$1 minutes=$2
	shift 2
	say "$name"
	local rc=0
	timeout -k 10 $((minutes * 60)) runuser -u postgres -- \
		env PATH="$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
		make -C "$WORK/sbf" -s PG_CONFIG="$PG_CONFIG" "$@" >"$LOG" 2>&1 || rc=$?
	[ "$rc" -eq 124 ] && echo "timed out after $minutes minutes" >>"$LOG"
	return "$rc"
}

# count_regress RC DIR: the result lines of pg_regress or
# pg_isolation_regress, "test x ... ok" up to PostgreSQL 15 and TAP's
# "ok 1 - x" / "not ok 1 - x" from 16 on; diffs shown on failure
count_regress() {
	local rc=$1 dir=$2 ok bad
	grep -E '^(test| +) ?[a-z_0-9]+ +\.\.\. |^(not )?ok [0-9]+ +[-+] ' "$LOG" | sed 's/^/  /' || true
	ok=$(grep -cE '\.\.\. ok|^ok [0-9]+ +[-+] ' "$LOG" || true)
	bad=$(grep -cE '\.\.\. FAILED|\.\.\. failed|^not ok [0-9]+ +[-+] ' "$LOG" || true)
	if [ "$rc" -ne 0 ]; then
		[ -f "$WORK/sbf/$dir/regression.diffs" ] && cat "$WORK/sbf/$dir/regression.diffs"
		[ "$bad" -gt 0 ] || { cat "$LOG"; bad=1; }
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
}

rc=0
stage "pg_regress (sql/)" 15 installcheck ISOLATION= TAP_TESTS= || rc=$?
count_regress "$rc" .

rc=0
stage "isolation (specs/)" 15 installcheck REGRESS= TAP_TESTS= || rc=$?
count_regress "$rc" output_iso

# skipped, never counted as passed, one line each: "skipped: FILE: REASON"
skips=$WORK/skips
: >"$skips"

# a spec whose alternative output says the server refused what it tests
# passed without testing it: the prepared transactions of shared_prepared
# on a server with max_prepared_transactions = 0 (default settings)
if cmp -s "$WORK/sbf/output_iso/results/shared_prepared.out" "$WORK/sbf/expected/shared_prepared_1.out"; then
	echo "skipped: specs/shared_prepared.spec: the server refuses prepared transactions (max_prepared_transactions = 0)" >>"$skips"
	passed=$((passed - 1))
fi

# prove's summary: "Files=N, Tests=M"; on failure one line per failed file,
# "t/x.pl (Wstat: W ... Tests: T Failed: F)" (a script that died has
# Wstat non-zero and may have F = 0: it counts as one failure)
rc=0
stage "TAP (t/)" 75 prove_installcheck PROVE_FLAGS=--timer || rc=$?
grep -E '^t/|^\[' "$LOG" | sed 's/^/  /' || true
tests=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$LOG")
bad=$(awk '/\(Wstat: / {
		f = 0
		if (match($0, /Failed: [0-9]+/)) f = substr($0, RSTART + 8, RLENGTH - 8) + 0
		if (f == 0 && $0 !~ /Wstat: 0 /) f = 1
		n += f
	} END { print n + 0 }' "$LOG")
if [ -z "$tests" ] || { [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; }; then
	cat "$LOG"
	bad=$((bad + 1))
fi
if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
	sed -n '/^Test Summary Report/,$p' "$LOG"
	for f in "$WORK"/sbf/tmp_check/log/regress_log_*; do
		[ -f "$f" ] && grep -qE '(^|\) )not ok [0-9]' "$f" && { echo "--- $f"; grep -B2 -A12 -E '(^|\) )not ok [0-9]' "$f" | head -80; }
	done
fi
# TAP's skips: a file skipped whole (prove's "t/x.pl
# .. skipped: REASON") and a test skipped ("ok N # skip REASON" in the
# file's log: t/SbfTest.pm's end_unless_programs skips the rest of a file
# that way; the log may put a time before it), one line each,
# "skipped: t/x.pl: REASON"
sed -n -E 's/^(\[[0-9:]+\] )?(t\/[^ ]+\.pl) \.+ skipped: (.*)$/skipped: \2: \3/p' "$LOG" >>"$skips"
skipped_tests=0
for f in "$WORK"/sbf/tmp_check/log/regress_log_*; do
	[ -f "$f" ] || continue
	name=${f##*/regress_log_}
	n=$(grep -cE '^(\[[0-9:.]+\]\([0-9.]+s\) )?ok [0-9]+ # skip' "$f" || true)
	[ "$n" -gt 0 ] || continue
	skipped_tests=$((skipped_tests + n))
	sed -n -E "s|^(\[[0-9:.]+\]\([0-9.]+s\) )?ok [0-9]+ # skip (.*)\$|skipped: t/$name.pl: \2|p" "$f" >>"$skips"
done
if [ -s "$skips" ]; then
	sort -o "$skips" "$skips"
	say "skipped (not counted as passed):"
	# the same reason for several tests of a file once, with their number
	uniq -c "$skips" | sed -E 's/^ *1 (.*)$/  \1/; s/^ *([0-9]+) (.*)$/  \2 (\1 tests)/'
fi
passed=$((passed + ${tests:-0} - bad - skipped_tests))
[ "$passed" -ge 0 ] || passed=0
failed=$((failed + bad))

if server_crashed; then
	say "a backend crashed during the tests:"
	grep -E "terminated by signal|was terminated|PANIC" "$SBF_CLUSTER/server.log" >&2
	failed=$((failed + 1))
fi

echo
echo "$(wc -l <"$skips") skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
