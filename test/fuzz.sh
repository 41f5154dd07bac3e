#!/usr/bin/env bash
# Fuzzing the text input, the binary input and the value validation of
# bloom and stablebloom (test/fuzz/fuzz_values.c) with libFuzzer, under
# AddressSanitizer and UBSan, for a bounded time:
#
#   bash test/fuzz.sh                      # as the test command runs it
#   FUZZ_SECONDS=3600 bash test/fuzz.sh    # longer, on demand
#
# The test command's run is reproducible: seed 1 and FUZZ_RUNS inputs
# (300,000 by default, about 20 s here), capped at 4 minutes.  FUZZ_SECONDS
# runs for that long from a random seed instead.
#
# It starts from test/fuzz/corpus (valid values of each shape) and first
# replays test/fuzz/regressions (inputs that once failed).  A crash, a
# sanitizer report or a refusal with the wrong SQLSTATE fails the test and
# leaves the input in the temporary directory it prints.
. "$(dirname "$0")/lib.sh"

dpkg -s libclang-rt-14-dev >/dev/null 2>&1 && command -v clang-14 >/dev/null ||
	ensure_packages clang-14 libclang-rt-14-dev
FUZZ=$SBF_ROOT/test/fuzz
BIN=$TEST_TMP/fuzz_values
# -w: PostgreSQL's headers declare printf attributes clang does not know
clang-14 -g -O1 -w -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$("$PG_CONFIG" --includedir-server)" -I"$SBF_ROOT/src" -I"$FUZZ" \
	-ffunction-sections -fdata-sections \
	"$FUZZ/fuzz_values.c" "$FUZZ/pg_stubs.c" \
	"$SBF_ROOT/src/value_io.c" "$SBF_ROOT/src/bloom.c" "$SBF_ROOT/src/stablebloom.c" \
	"$SBF_ROOT/src/sizing.c" "$SBF_ROOT/src/hash.c" \
	-Wl,--gc-sections -lm -o "$BIN" || { fail "cannot build the fuzz target"; finish; }

mkdir -p "$TEST_TMP/corpus" "$TEST_TMP/findings"
if [ -n "${FUZZ_SECONDS:-}" ]; then
	limits=(-max_total_time="$FUZZ_SECONDS")
	cap=$((FUZZ_SECONDS + 120))
else
	limits=(-seed=1 -runs="${FUZZ_RUNS:-300000}" -max_total_time=240)
	cap=360
fi
rc=0
timeout -k 10 "$cap" "$BIN" "${limits[@]}" -timeout=10 -rss_limit_mb=2048 \
	-max_len=4096 -artifact_prefix="$TEST_TMP/findings/" -print_final_stats=1 \
	"$TEST_TMP/corpus" "$FUZZ/corpus" "$FUZZ/regressions" >"$TEST_TMP/fuzz.log" 2>&1 || rc=$?
if [ "$rc" -eq 0 ]; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TEST_TMP/fuzz.log")
	# a slow machine may reach the time cap first: say so
	[ -n "${FUZZ_SECONDS:-}" ] || [ "$runs" -ge "${FUZZ_RUNS:-300000}" ] || runs="$runs (stopped by the time cap)"
	pass "fuzzed bloom and stablebloom input and validation (${limits[*]}): $runs inputs, no finding"
else
	keep=$(mktemp -d /tmp/sbf-fuzz-findings.XXXXXX)
	cp "$TEST_TMP/findings/"* "$TEST_TMP/fuzz.log" "$keep/" 2>/dev/null || true
	{ grep -E "ERROR|SUMMARY|runtime error|deadly signal" "$TEST_TMP/fuzz.log" || true; } | head -5 || true
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail "the fuzzer did not end within $cap s: see $keep"
	else
		fail "the fuzzer found an input that fails: see $keep"
	fi
fi
finish
