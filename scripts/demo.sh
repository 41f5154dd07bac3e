#!/usr/bin/env bash
# The main job: build and install sbf, start a throwaway PostgreSQL 15
# cluster, load a real crawl stream from data/ and show which URLs
# is_duplicate marks as already seen, against the exact answer.
#
#   bash scripts/demo.sh [STREAM.tsv.gz]
#
# STREAM defaults to data/doccrawl-pg-python.tsv.gz (pos<TAB>url, a
# breadth-first crawl of the PostgreSQL 15 and Python 3.11 manuals).
# SBF_KEEP_CLUSTER=1 keeps the cluster (its path is printed) for a look.
. "$(dirname "$0")/lib.sh"

STREAM=${1:-$SBF_ROOT/data/doccrawl-pg-python.tsv.gz}
[ -r "$STREAM" ] || die "cannot read $STREAM"

ensure_packages
build_and_install
start_cluster

psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION sbf"
psql -c "CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL)"

say "loading $(basename "$STREAM")"
gzip -dc "$STREAM" | psql -c "\\copy crawl FROM STDIN" || die "loading $STREAM failed"
psql -c "ANALYZE crawl"

say "marking duplicates: exact (row_number over url) and is_duplicate with bloom filters"
psql <<'SQL'
\pset footer off
SELECT count(*) AS rows, count(DISTINCT url) AS distinct_urls,
	   count(*) - count(DISTINCT url) AS true_duplicates
FROM crawl;

CREATE TEMP TABLE exact AS
	SELECT pos, row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS dup FROM crawl;

CREATE TEMP TABLE runs (method text, memory text, parameters text,
						tp bigint, fp bigint, fn bigint, seconds numeric);

CREATE FUNCTION pg_temp.mark(method text, filter bloom) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	started timestamptz := clock_timestamp();
BEGIN
	CREATE TEMP TABLE marked ON COMMIT DROP AS
		SELECT pos, is_duplicate(url, filter) OVER (ORDER BY pos) AS flagged FROM crawl;
	INSERT INTO runs
		SELECT method, pg_size_pretty((bloom_info(filter)->>'size_bytes')::bigint),
			   format('bits=%s hashes=%s', bloom_info(filter)->>'bits', bloom_info(filter)->>'hashes'),
			   count(*) FILTER (WHERE m.flagged AND e.dup),
			   count(*) FILTER (WHERE m.flagged AND NOT e.dup),
			   count(*) FILTER (WHERE NOT m.flagged AND e.dup),
			   round(extract(epoch FROM clock_timestamp() - started)::numeric, 2)
		FROM marked m JOIN exact e USING (pos);
	DROP TABLE marked;
END $$;

\o /dev/null
SELECT pg_temp.mark('bloom 1%', bloom_sized((SELECT count(DISTINCT url) FROM crawl), 0.01));
SELECT pg_temp.mark('bloom 10%', bloom_sized((SELECT count(DISTINCT url) FROM crawl), 0.10));
SELECT pg_temp.mark('bloom 1 KB', bloom_empty(8192, 1));
\o

SELECT method, memory, parameters, tp, fp, fn,
	   round(tp::numeric / nullif(tp + fp, 0), 4) AS precision,
	   round(tp::numeric / nullif(tp + fn, 0), 4) AS recall,
	   round(2 * tp::numeric / nullif(2 * tp + fp + fn, 0), 4) AS f1,
	   seconds
FROM runs;
SQL

cat <<'TXT'

How to read this: tp = repeats flagged, fp = first visits wrongly flagged
(a URL the crawler would skip), fn = repeats missed (a URL fetched twice).
A Bloom filter never misses a repeat (fn = 0); when it is too small for the
stream (1 KB above), it flags more and more first visits as it fills up.
TXT
