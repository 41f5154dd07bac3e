#!/usr/bin/env bash
# Benchmark: bench/layout_ab.sh's comparison counted in instructions, which
# the other jobs of a shared machine do not change: the layout of src/
# (issue 42) against a base commit before it, 533cadd by default.  Each
# query runs in a backend of its own (postgres --single on the throwaway
# cluster's data, stopped) under valgrind's callgrind, once a build: the
# same binary, data and query give the same count (docs/benchmarks.md).
#
#   bash bench/layout_instructions.sh [BASE]    # ~10 minutes
#
# Queries: marking ROWS (200,000) synthetic crawl rows with is_duplicate
# over a bloom, a stable and a sliding filter, and the same window reading
# every url (lag) for scale; 50 batches of 1,000 new URLs, then the same
# 50 again, into a logged transactional shared filter, a transaction each.
# Prints each query's instructions (millions) for both builds and the
# ratio layout/base.  Leaves the current tree's build installed.
. "$(dirname "$0")/lib.sh"

case "${1:-}" in -h | --help) sed -n '2,17p' "$0" >&2; exit 2 ;; esac
BASE=${1:-533cadd}
ROWS=${ROWS:-200000}
command -v valgrind >/dev/null || ensure_packages valgrind
builds_beside "$BASE" layout
export PGOPTIONS="-c client_min_messages=warning"
command psql -X -q -c "CREATE EXTENSION sbf" >/dev/null
synthetic_crawl crawl "$ROWS" | command psql -X -q >/dev/null
command psql -X -q -c "CHECKPOINT"
stop_server "$SBF_CLUSTER"

batches="DO \$\$ BEGIN FOR b IN 0 .. 49 LOOP PERFORM shared_test_and_add('f', ARRAY(SELECT 'https://www.example.org/page/' || (b * 1000 + g) FROM generate_series(1, 1000) g)); COMMIT; END LOOP; END \$\$;"
declare -A q
q[floor]="SELECT count(*) FILTER (WHERE d) FROM (SELECT lag(url) OVER (ORDER BY pos) = url AS d FROM crawl) s;"
q[bloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, bloom_sized(68000, 0.01)) OVER (ORDER BY pos) AS d FROM crawl) s;"
q[stablebloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, stablebloom_sized(800000, 0.05, 8, 1)) OVER (ORDER BY pos) AS d FROM crawl) s;"
q[slidingbloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, slidingbloom_sized(20000, 0.01)) OVER (ORDER BY pos) AS d FROM crawl) s;"
q[batches]="DROP TABLE IF EXISTS f; SELECT shared_bloom_create('f', 10000000, 0.01);
$batches
$batches"
cases=(floor bloom stablebloom slidingbloom batches)

# instructions CASE BUILD: the millions of instructions of a backend that
# runs the case's SQL and exits
instructions() {
	local out=$SBF_CLUSTER/callgrind.$1.$2
	use_build "$2"
	printf '%s\n' "${q[$1]}" | runuser -u postgres -- valgrind --tool=callgrind \
		--callgrind-out-file="$out" "$PG_BINDIR/postgres" --single \
		-D "$SBF_CLUSTER/data" -c jit=off postgres >/dev/null 2>&1 ||
		die "callgrind of $1 with $2 failed"
	awk '/^(summary|totals):/ { print int($2 / 1000000); exit }' "$out"
}

printf '%-16s %12s %12s %8s\n' "Minstructions" "$BASE" "layout" "ratio"
for c in "${cases[@]}"; do
	b=$(instructions "$c" base)
	l=$(instructions "$c" layout)
	printf '%-16s %12d %12d %7.3fx\n' "$c" "$b" "$l" "$(echo "$l / $b" | bc -l)"
done
