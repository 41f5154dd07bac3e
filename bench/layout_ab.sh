#!/usr/bin/env bash
# Benchmark: the layout of src/ (a folder per subsystem, functions moved
# between files so that no two files call each other: issue 42) against a
# base commit before it, 533cadd by default, on what the moves could slow
# down: calls that crossed into another file, where the compiler no longer
# inlines them.  One run, one cluster, the same tables: the two builds'
# sbf.so are installed in turn (the SQL is the same), each query run in a
# fresh session, alternating, REPEAT times.
#
#   bash bench/layout_ab.sh [BASE]
#
# It always starts a throwaway cluster of its own (no SBF_USE_EXISTING):
# it replaces the installed library under it.
#
# Measured, as the backend's CPU time (not the wall time: the machine is
# shared), the best of REPEAT (7) runs each way and the medians:
#  - marking ROWS (3M) synthetic crawl rows with is_duplicate over a bloom,
#    a stable and a sliding filter (bench/marking.sh's queries), and the
#    same window reading every url (lag(url) OVER (ORDER BY pos)) for
#    scale: most of a marking's time is the window's own;
#  - shared_test_and_add of 200 batches of 1,000 URLs into a logged
#    transactional filter for 10M, a transaction each, all new (a fresh
#    filter each run) and all seen (the same batches again), and the same
#    arrays built alone (bench/shared.sh's batches of 1,000, without
#    pgbench).
# Prints each case's CPU seconds for both builds (the best of the runs)
# and the ratios layout/base of the best and of the medians.
# Leaves the current tree's build installed.
. "$(dirname "$0")/lib.sh"

case "${1:-}" in -h | --help) sed -n '2,25p' "$0" >&2; exit 2 ;; esac
BASE=${1:-533cadd}
ROWS=${ROWS:-3000000}
REPEAT=${REPEAT:-7}
builds_beside "$BASE" layout
export PGOPTIONS="-c client_min_messages=warning -c jit=off"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "$ROWS crawl rows"
psql -c "CREATE EXTENSION sbf"
synthetic_crawl crawl "$ROWS" | psql

TICKS=$(getconf CLK_TCK)
cpu="(SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s)"
# cpu_of SQL...: the backend's CPU seconds for the statements
cpu_of() {
	psql <<SQL
SELECT $cpu AS t0 \gset
$*
SELECT round(($cpu - :t0)::numeric / $TICKS, 2);
SQL
}
batches="FOR b IN 0 .. 199 LOOP PERFORM %sARRAY(SELECT 'https://www.example.org/page/' || (b * 1000 + g) FROM generate_series(1, 1000) g)); END LOOP;"
declare -A q
q[floor]="SELECT count(*) FILTER (WHERE d) FROM (SELECT lag(url) OVER (ORDER BY pos) = url AS d FROM crawl) s \\g /dev/null"
q[bloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, bloom_sized(340000, 0.01)) OVER (ORDER BY pos) AS d FROM crawl) s \\g /dev/null"
q[stablebloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, stablebloom_sized(4000000, 0.05, 8, 1)) OVER (ORDER BY pos) AS d FROM crawl) s \\g /dev/null"
q[slidingbloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, slidingbloom_sized(100000, 0.01)) OVER (ORDER BY pos) AS d FROM crawl) s \\g /dev/null"
q[arrays]="DO \$\$ BEGIN $(printf "$batches" "cardinality(") END \$\$;"
q[new]="DROP TABLE IF EXISTS f; SELECT shared_bloom_create('f', 10000000, 0.01) \\g /dev/null
DO \$\$ BEGIN $(printf "$batches" "shared_test_and_add('f', ") END \$\$;"
q[seen]="DO \$\$ BEGIN $(printf "$batches" "shared_test_and_add('f', ") END \$\$;"
cases=(floor bloom stablebloom slidingbloom arrays new seen)
declare -A times
for i in $(seq "$REPEAT"); do
	for build in base layout; do
		use_build "$build"
		line="$build ($i):"
		for c in "${cases[@]}"; do
			s=$(cpu_of "${q[$c]}")
			times[$build.$c]+=" $s"
			line+=" $c $s"
		done
		echo "$line"
	done
done
least() { printf '%s\n' "$@" | sort -n | head -1; }
# ratio LAYOUT BASE
ratio() { echo "$1 / $2" | bc -l; }
printf '\n%-40s %10s %10s %8s %8s\n' "CPU s" "$BASE" "layout" "best" "median"
for c in floor bloom stablebloom slidingbloom arrays new seen; do
	# shellcheck disable=SC2086
	b=$(least ${times[base.$c]})
	# shellcheck disable=SC2086
	l=$(least ${times[layout.$c]})
	# shellcheck disable=SC2086
	bm=$(median ${times[base.$c]})
	# shellcheck disable=SC2086
	lm=$(median ${times[layout.$c]})
	printf '%-40s %10.2f %10.2f %7.2fx %7.2fx\n' "$c" "$b" "$l" \
		"$(ratio "$l" "$b")" "$(ratio "$lm" "$bm")"
done
