#!/usr/bin/env bash
# bloom_agg and bloom_union_agg under a forced parallel plan give exactly
# the serial result; stablebloom_agg is never run as partial aggregates.
. "$(dirname "$0")/lib.sh"
fresh_db

q <<'SQL'
CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL);
INSERT INTO crawl
	SELECT i, 'https://example.org/' || (i % 300000) FROM generate_series(1, 1000000) i;
CREATE TABLE host_filters AS
	SELECT pos % 50 AS host, bloom_agg(url, 300000, 0.01) AS filter FROM crawl GROUP BY 1;
ANALYZE crawl;
ANALYZE host_filters;
SQL

PARALLEL="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;"
SERIAL="SET max_parallel_workers_per_gather = 0;"

for agg in "bloom_agg(url, 300000, 0.01) FROM crawl" \
		   "bloom_agg(url, bloom_sized(300000, 0.01)) FROM crawl" \
		   "bloom_agg(pos, 1000000, 0.01) FROM crawl" \
		   "bloom_union_agg(filter) FROM host_filters"; do
	plan=$(q -c "$PARALLEL" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT $agg")
	check "parallel plan for $agg has a Partial Aggregate" grep -q "Partial Aggregate" <<<"$plan"
	launched=$(sed -n 's/.*Workers Launched: \([0-9]*\).*/\1/p' <<<"$plan")
	check "parallel workers launched for $agg (${launched:-0})" [ "${launched:-0}" -ge 1 ]
	q -c "$SERIAL" -c "CREATE TABLE serial_result AS SELECT ${agg/ FROM/ AS f FROM}"
	q -c "$PARALLEL" -c "CREATE TABLE parallel_result AS SELECT ${agg/ FROM/ AS f FROM}"
	check_sql "parallel $agg equals the serial result" \
		"SELECT s.f = p.f AND (bloom_info(s.f)->>'bits_set')::bigint > 0
		 FROM serial_result s, parallel_result p"
	q -c "DROP TABLE serial_result, parallel_result"
done

# stablebloom_agg has no combine function: never a Partial Aggregate, and
# with ORDER BY the same result whatever the plan below it
agg="stablebloom_agg(url, stablebloom_sized(100000, 0.05, 4) ORDER BY pos) FROM crawl"
plan=$(q -c "$PARALLEL" -c "EXPLAIN (COSTS OFF) SELECT $agg")
check "stablebloom_agg is never split into partial aggregates" bash -c "! grep -q 'Partial Aggregate' <<<'$plan'"
q -c "$SERIAL" -c "CREATE TABLE serial_result AS SELECT ${agg/ FROM/ AS f FROM}"
q -c "$PARALLEL" -c "CREATE TABLE parallel_result AS SELECT ${agg/ FROM/ AS f FROM}"
check_sql "stablebloom_agg ... ORDER BY pos gives the same filter under a parallel-enabled plan" \
	"SELECT s.f = p.f AND (stablebloom_info(s.f)->>'insertions')::bigint = 1000000
	 FROM serial_result s, parallel_result p"

finish
