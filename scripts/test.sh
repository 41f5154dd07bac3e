#!/usr/bin/env bash
# Runs every test of sbf: builds and installs the extension, starts a
# throwaway PostgreSQL 15 server (see scripts/lib.sh), runs the pg_regress
# suite (sql/, expected/) and the scripts in test/, stops the server and
# exits non-zero on any failure.  Run it as root on a fresh machine: it
# installs what it needs.
. "$(dirname "$0")/lib.sh"

# everything the tests need, at once: gnuplot for the demo's picture,
# clang and its sanitizer runtime for the fuzzer
ensure_packages gnuplot-nox clang-14 libclang-rt-14-dev
build_and_install
start_cluster

LOG=$(mktemp /tmp/sbf-test-log.XXXXXX)
passed=0
failed=0

say "pg_regress (make installcheck)"
if ! make -C "$SBF_ROOT" -s installcheck PG_CONFIG="$PG_CONFIG" >"$LOG" 2>&1; then
	[ -f "$SBF_ROOT/regression.diffs" ] && cat "$SBF_ROOT/regression.diffs"
fi
{ grep -E '^(not )?ok|^test |\.\.\. ' "$LOG" || true; } | sed 's/^/  /'
passed=$((passed + $(grep -cE '^test .* \.\.\. ok' "$LOG" || true)))
n=$(grep -cE '^test .* \.\.\. FAILED|^test .* \.\.\. failed' "$LOG" || true)
failed=$((failed + n))
if [ "$(grep -cE '^test ' "$LOG" || true)" -eq 0 ]; then
	cat "$LOG"
	failed=$((failed + 1))
fi

for t in "$SBF_ROOT"/test/*.sh; do
	[ "$(basename "$t")" = lib.sh ] && continue
	say "$(basename "$t")"
	# a script that hangs is stopped after 30 minutes, and fails
	timeout -k 10 1800 bash "$t" >"$LOG" 2>&1 || true
	sed 's/^/  /' "$LOG"
	passed=$((passed + $(grep -c '^ok ' "$LOG" || true)))
	n=$(grep -c '^FAIL ' "$LOG" || true)
	# a script that died before its summary line counts as a failure
	grep -qE '^[a-z_]+: [0-9]+ passed, [0-9]+ failed$' "$LOG" || n=$((n + 1))
	failed=$((failed + n))
done
rm -f "$LOG"

if server_crashed; then
	say "a backend crashed during the tests:"
	grep -E "terminated by signal|was terminated|PANIC" "$SBF_CLUSTER/server.log" >&2
	failed=$((failed + 1))
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
