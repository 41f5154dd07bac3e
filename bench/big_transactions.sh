#!/usr/bin/env bash
# Benchmark: what many calls in one big transaction cost on a transactional
# shared filter (docs/shared.md, "Big transactions"), against the same
# calls on a filter made with transactional => false, measured in the same
# run.  Each call reads the pending adds its page holds (its overflow
# pages' too), so calls to a page get dearer as one transaction fills it:
#
#  - one value a call (a trigger, a loop): N values into a filter for
#    100,000 (18 pages), N = 20,000, 40,000 and 80,000 by default;
#  - batches of 1,000 a call: B batches into a filter for 1,000,000 (173
#    pages), B = 250, 500 and 1,000;
#  - and, for scale, the same values in one array (one call).
#
# Each case in one transaction, a fresh filter each time, the backend's CPU
# time (not the wall time: the machine is shared), the best of REPEAT (3).
# Prints seconds for both kinds of filter and their ratio.
#
#   bash bench/big_transactions.sh          # throwaway cluster; ~3 minutes
#   SBF_USE_EXISTING=1 bash bench/big_transactions.sh
. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
SINGLES=${SINGLES:-"20000 40000 80000"}
BATCHES=${BATCHES:-"250 500 1000"}

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning -c jit=off"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION IF NOT EXISTS sbf"

TICKS=$(getconf CLK_TCK)
cpu="(SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s)"
# run CAPACITY TRANSACTIONAL SQL: the backend's CPU seconds for SQL, in one
# transaction, on a new filter f
run() {
	psql <<SQL
DROP TABLE IF EXISTS f;
SELECT shared_bloom_create('f', $1, 0.01, transactional => $2) \g /dev/null
SELECT $cpu AS t0 \gset
BEGIN;
$3
COMMIT;
SELECT round(($cpu - :t0)::numeric / $TICKS, 2);
SQL
}
least() { printf '%s\n' "$@" | sort -n | head -1; }
# case NAME CAPACITY SQL
case_() {
	local t=() f=() i
	for i in $(seq "$REPEAT"); do
		t+=("$(run "$2" true "$3")")
		f+=("$(run "$2" false "$3")")
	done
	local bt bf
	bt=$(least "${t[@]}")
	bf=$(least "${f[@]}")
	printf '%-48s %8.2f %8.2f %7.1fx\n' "$1" "$bt" "$bf" "$(echo "$bt / ($bf + 0.005)" | bc -l)"
}

printf '%-48s %8s %8s %8s\n' "one transaction, CPU s" "tx" "non-tx" "tx/non"
for n in $SINGLES; do
	case_ "$n one-value calls, filter for 100,000" 100000 \
		"SELECT count(*) FILTER (WHERE shared_test_and_add('f', 'https://example.org/' || g)) FROM generate_series(1, $n) g \\g /dev/null"
done
for b in $BATCHES; do
	case_ "$b batches of 1,000, filter for 1,000,000" 1000000 \
		"DO \$\$ BEGIN FOR b IN 1 .. $b LOOP PERFORM shared_test_and_add('f', ARRAY(SELECT 'https://example.org/' || (b * 1000 + g) FROM generate_series(1, 1000) g)); END LOOP; END \$\$;"
done
b=${BATCHES##* }
case_ "$((b * 1000)) values in one array, filter for 1,000,000" 1000000 \
	"SELECT count(*) FROM unnest(shared_test_and_add('f', ARRAY(SELECT 'https://example.org/' || g FROM generate_series(1, $((b * 1000))) g))) \\g /dev/null"
