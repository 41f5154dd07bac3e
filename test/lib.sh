# Sourced by the test scripts.  scripts/test.sh has started the server and
# set PGHOST, PGPORT and PGUSER; each script works in a database of its own.
#
# A check prints "ok   <what>" or "FAIL <what>" with the figures it
# compared; scripts/test.sh counts those lines.

set -euo pipefail

# stream_to_copy, shared with the scripts
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

TEST_NAME=$(basename "$0" .sh)
TEST_DB=sbf_$TEST_NAME
TEST_TMP=$(mktemp -d "/tmp/sbf-$TEST_NAME.XXXXXX")
SBF_DATA=$(cd "$(dirname "$0")/../data" && pwd)
SBF_STREAMS=${SBF_STREAMS_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
FAILED=0
PASSED=0

cleanup_test() { rm -rf "$TEST_TMP"; }
trap cleanup_test EXIT

# q SQL...: run in the test database, unaligned, tuples only, stop on error
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$TEST_DB" "$@"; }

pass() { PASSED=$((PASSED + 1)); printf 'ok   %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL %s\n' "$*"; }

# check "description" test-expression...: pass when the command succeeds
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

# check_sql "description" "SQL returning one boolean" [details]
check_sql() {
	local result
	result=$(q -c "$2" 2>&1) || true
	if [ "$result" = "t" ]; then pass "$1${3:+ ($3)}"; else fail "$1${3:+ ($3)}: got '$result'"; fi
}

fresh_db() {
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $TEST_DB" -c "CREATE DATABASE $TEST_DB" >/dev/null
	q -c "CREATE EXTENSION sbf"
}

finish() {
	printf '%s: %d passed, %d failed\n' "$TEST_NAME" "$PASSED" "$FAILED"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $TEST_DB" >/dev/null 2>&1 || true
	[ "$FAILED" -eq 0 ]
}
