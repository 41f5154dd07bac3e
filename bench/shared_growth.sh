#!/usr/bin/env bash
# Benchmark: what a filter that grows costs (docs/shared.md, "Filters that
# grow").  The same 10M URLs at 1% go into a filter of fixed size made for
# them (shared_bloom_create(..., 10000000, 0.01)) and into one made for a
# crawl of unknown size (growth => 2 from its 32-page first sub-filter),
# in batches of 1,000 a transaction; the disk and WAL each took, the rate
# each shows, then the cost of a batch of 1,000 with pgbench -M prepared,
# one client: all new URLs, and all seen.  Net = over bench_noop of the
# same batch; medians of REPEAT (3) rounds of SECONDS_PER_RUN (5) seconds.
#
#   bash bench/shared_growth.sh        # throwaway cluster; ~5 minutes
#   SBF_USE_EXISTING=1 bash bench/shared_growth.sh
. "$(dirname "$0")/lib.sh"

T=${SECONDS_PER_RUN:-5}
REPEAT=${REPEAT:-3}
URLS=${URLS:-10000000}

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
	command psql -X -q -c "ALTER SYSTEM SET shared_buffers = '1GB'" \
		-c "ALTER SYSTEM SET max_wal_size = '4GB'" \
		-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" \
		-c "ALTER SYSTEM SET autovacuum = off"
	restart_cluster
fi
# (the fixed filter warns once a session when the new batches pass its capacity)
export PGOPTIONS="-c client_min_messages=error -c jit=off"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

psql >/dev/null <<SQL
CREATE EXTENSION IF NOT EXISTS sbf;
DROP TABLE IF EXISTS fixed_size, growing;
CREATE OR REPLACE FUNCTION bench_noop(filter regclass, "values" text[]) RETURNS boolean[]
	LANGUAGE sql AS 'SELECT array_fill(false, ARRAY[cardinality(\$2)])';
SELECT shared_bloom_create('fixed_size', $URLS, 0.01);
SELECT shared_bloom_create('growing', 1, 0.01, growth => 2);
SQL

echo "| filter | sub-filters | size | WAL of the load | load, s | expected rate | false positives in 100,000 |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for f in fixed_size growing; do
	lsn=$(psql -c "SELECT pg_current_wal_lsn()")
	start=$(date +%s.%N)
	psql -c "DO \$\$ BEGIN
		FOR b IN 0 .. $URLS / 1000 - 1 LOOP
			PERFORM shared_test_and_add('$f', ARRAY(
				SELECT 'https://www.example.org/seen/' || (b * 1000 + g) FROM generate_series(0, 999) g));
			COMMIT;
		END LOOP;
	END \$\$" >/dev/null
	secs=$(echo "$(date +%s.%N) - $start" | bc -l)
	psql -c "CHECKPOINT"
	printf '| %s | %s | %s | %s | %.1f | %s | %s |\n' "$f" \
		"$(psql -c "SELECT shared_info('$f', false) ->> 'subfilters'")" \
		"$(psql -c "SELECT pg_size_pretty(pg_relation_size('$f'))")" \
		"$(psql -c "SELECT pg_size_pretty(pg_current_wal_lsn() - '$lsn')")" "$secs" \
		"$(psql -c "SELECT round((shared_info('$f', false) ->> 'expected_fpr')::numeric, 4)")" \
		"$(psql -c "SELECT count(*) FILTER (WHERE shared_contains('$f', 'https://www.example.org/unseen/' || g)) FROM generate_series(1, 100000) g")"
done

NEW="array(SELECT 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' FROM generate_series(0, 999) g)"
SEEN="array(SELECT 'https://www.example.org/seen/' || (:s + g) FROM generate_series(0, 999) g)"
HEAD="\\set b random(0, 999999999) * 1000
\\set s random(0, $URLS - 1000)"

declare -A tps
run() {
	local key=$1 call=$2 out t
	printf '%s\nSELECT %s;\n' "$HEAD" "$call" >"$BENCH_TMP/script.sql"
	out=$(pgbench -n -M prepared -c 1 -T "$T" -f "$BENCH_TMP/script.sql" 2>&1) ||
		die "pgbench failed on $key: $out"
	t=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
	tps[$key]+="$t "
}

for round in $(seq "$REPEAT"); do
	say "round $round of $REPEAT"
	for batch in new seen; do
		b=$NEW
		[ "$batch" = seen ] && b=$SEEN
		run "noop:$batch" "bench_noop('fixed_size', $b)"
		for f in fixed_size growing; do
			run "$f:$batch" "shared_test_and_add('$f', $b)"
		done
	done
done

net() { echo "(1 / $(median ${tps[$1]}) - 1 / $(median ${tps[noop:$2]})) * 1000000" | bc -l; }
echo
echo "| batch of 1,000 | fixed size, ns/URL net | growing, ns/URL net | growing / fixed |"
echo "| --- | --- | --- | --- |"
for batch in new seen; do
	fx=$(net "fixed_size:$batch" "$batch")
	gr=$(net "growing:$batch" "$batch")
	printf '| %s | %.0f | %.0f | %.2fx |\n' "$([ "$batch" = new ] && echo "all new" || echo "all seen")" \
		"$fx" "$gr" "$(echo "$gr / $fx" | bc -l)"
done
