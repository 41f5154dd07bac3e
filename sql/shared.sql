--
-- Shared filters: one filter in the pages of its own table, that every
-- session tests and adds to in place.
--

CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || coalesce(E'\n       ' || nullif(detail, ''), '');
END $$;

-- A shared Bloom filter for a million URLs at 1% false positives: a table
-- owned by its creator, of access method sbf_filter
SELECT shared_bloom_create('links_seen', 1000000, 0.01);
SELECT c.relname, a.amname, c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) AS owned,
       c.relpersistence
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid = 'links_seen'::regclass;
SELECT shared_info('links_seen');

-- Test and add: false the first time, true after; contains only tests
SELECT shared_test_and_add('links_seen', 'https://example.com/a');
SELECT shared_test_and_add('links_seen', 'https://example.com/a');
SELECT shared_contains('links_seen', 'https://example.com/a'),
       shared_contains('links_seen', 'https://example.com/b');
-- text and bytea of the same bytes are the same value; bigint is its own
SELECT shared_contains('links_seen', convert_to('https://example.com/a', 'UTF8'));
SELECT shared_test_and_add('links_seen', 42::bigint), shared_test_and_add('links_seen', 42::bigint);
-- NULL is never seen and never added
SELECT shared_test_and_add('links_seen', NULL::text) IS NULL AS null_answer,
       shared_contains('links_seen', NULL::text) IS NULL AS null_contains;

-- Batches: answers in input order, a repeat inside the batch is seen,
-- NULL elements are answered NULL
SELECT shared_test_and_add('links_seen', ARRAY['https://example.com/a', 'https://example.com/c',
                                         NULL, 'https://example.com/c', 'https://example.com/d']);
SELECT shared_test_and_add('links_seen', ARRAY[42, 43, 43, NULL]::bigint[]);
SELECT shared_test_and_add('links_seen', '{}'::text[]);

-- A batch answers exactly as the same values added one by one (each side
-- is one transaction: its repeats are answered by its own pending adds)
SELECT shared_bloom_create('one_by_one', 1000000, 0.01);
SELECT shared_bloom_create('batched', 1000000, 0.01);
SELECT count(*) AS values_compared,
       count(*) FILTER (WHERE one <> batch) AS differences,
       count(*) FILTER (WHERE one) AS seen
  FROM (SELECT g, shared_test_and_add('one_by_one', (g % 700)::text) AS one
          FROM generate_series(1, 1000) g) a
  JOIN (SELECT g, batch
          FROM unnest(shared_test_and_add('batched',
                        (SELECT array_agg((g % 700)::text ORDER BY g)
                           FROM generate_series(1, 1000) g)))
               WITH ORDINALITY AS u(batch, g)) b USING (g);

-- Fill a little and look: every page is read to count the bits
SELECT count(*) FILTER (WHERE NOT seen) AS added
  FROM unnest(shared_test_and_add('links_seen',
         (SELECT array_agg('https://example.com/' || g) FROM generate_series(1, 10000) g))) AS seen;
SELECT shared_info('links_seen', read_pages => true) - 'size_bytes';

-- "How full is my filter?" is answered from page 0 alone, at once whatever
-- the filter's size: here one for 50 billion URLs (57 GB, a sparse file
-- almost all of which is never written).  Only read_pages => true reads
-- every page.  The buffers each call touches, as EXPLAIN counts them:
CREATE FUNCTION pg_temp.buffers_touched(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query
		INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint +
		   (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END $$;
SELECT shared_bloom_create('huge', 50000000000, 0.01);
SELECT info -> 'pages' AS pages, info -> 'load' AS load, info ? 'fill' AS has_fill
  FROM shared_info('huge') AS info;
SELECT pg_temp.buffers_touched($$ SELECT shared_info('huge') $$) AS default_reads,
	   pg_temp.buffers_touched($$ SELECT shared_info('links_seen') $$) AS default_reads_small,
	   pg_temp.buffers_touched($$ SELECT shared_info('links_seen', read_pages => true) $$) AS all_pages_reads;
DROP TABLE huge;

-- The snapshot is a bloom value that answers exactly as the shared filter
SELECT bloom_info(shared_bloom_snapshot('links_seen')) ->> 'bits' AS snapshot_bits;
SELECT count(*) AS tested,
       count(*) FILTER (WHERE bloom_contains(s, v) <> shared_contains('links_seen', v)) AS differences,
       count(*) FILTER (WHERE shared_contains('links_seen', v)) AS present
  FROM (SELECT shared_bloom_snapshot('links_seen') AS s) x,
       LATERAL (SELECT 'https://example.com/' || g AS v FROM generate_series(1, 20000) g) vals;

-- A shared Stable Bloom filter: cells of 0..max, P decrements per insertion
SELECT shared_stablebloom_create('recent', 100000, 0.01, 3, max => 3);
SELECT shared_info('recent');
SELECT shared_test_and_add('recent', 'x'), shared_test_and_add('recent', 'x'),
       shared_contains('recent', 'x');
SELECT count(*) FILTER (WHERE seen) AS seen_again
  FROM unnest(shared_test_and_add('recent',
         (SELECT array_agg('u' || (g % 5000)) FROM generate_series(1, 20000) g))) AS seen;
SELECT count(*) AS tested,
       count(*) FILTER (WHERE stablebloom_contains(s, v) <> shared_contains('recent', v)) AS differences
  FROM (SELECT shared_stablebloom_snapshot('recent') AS s) x,
       LATERAL (SELECT 'u' || g AS v FROM generate_series(1, 20000) g) vals;

-- A snapshot is an ordinary bloom value in the blocked layout: it
-- round-trips through text, unions with snapshots of the same parameters
-- (not with a classic filter of as many bits), and can be added to
SELECT shared_bloom_snapshot('links_seen')::text::bloom = shared_bloom_snapshot('links_seen') AS round_trip;
SELECT bloom_union(shared_bloom_snapshot('links_seen'), shared_bloom_snapshot('links_seen'))
       = shared_bloom_snapshot('links_seen') AS union_with_itself;
SELECT pg_temp.error_of($$ SELECT bloom_union(shared_bloom_snapshot('links_seen'), bloom_empty(9600000, 7)) $$);
SELECT bloom_contains(bloom_add(shared_bloom_snapshot('links_seen'), 'https://example.com/new'),
                      'https://example.com/new') AS added_to_snapshot,
       shared_contains('links_seen', 'https://example.com/new') AS not_to_the_filter;

-- Testing is parallel safe: a parallel worker answers as the leader
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE candidates AS SELECT 'https://example.com/' || g AS url FROM generate_series(1, 20000) g;
ANALYZE candidates;
EXPLAIN (COSTS OFF) SELECT count(*) FROM candidates WHERE shared_contains('links_seen', url);
SELECT count(*) FROM candidates WHERE shared_contains('links_seen', url);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE candidates;

-- A blocked value's bits are whole blocks of 64000 bits
SELECT pg_temp.error_of($$ SELECT '\x534246620100030002000000400000000000000000000000000000000000000000000000'::bloom $$);

-- The snapshot function must match the kind
SELECT pg_temp.error_of($$ SELECT shared_bloom_snapshot('recent') $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_snapshot('links_seen') $$);

-- Privileges: SELECT to test, UPDATE to add
CREATE ROLE sbf_shared_reader;
GRANT SELECT ON links_seen TO sbf_shared_reader;
SET ROLE sbf_shared_reader;
SELECT shared_contains('links_seen', 'https://example.com/a');
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('links_seen', 'https://example.com/z') $$);
SELECT pg_temp.error_of($$ SELECT shared_contains('recent', 'x') $$);
RESET ROLE;
SELECT shared_contains('links_seen', 'https://example.com/z');

-- A read-only transaction may test but not add, as with nextval()
BEGIN READ ONLY;
SELECT shared_contains('links_seen', 'https://example.com/a');
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('links_seen', 'https://example.com/z') $$);
ROLLBACK;

-- Adds are transactional: what a rolled-back transaction (or savepoint)
-- added is new again; the transaction itself sees its own adds
BEGIN;
SELECT shared_test_and_add('links_seen', 'https://example.com/rolled-back');
SELECT shared_contains('links_seen', 'https://example.com/rolled-back') AS own_add_seen;
ROLLBACK;
SELECT shared_contains('links_seen', 'https://example.com/rolled-back');
BEGIN;
SELECT shared_test_and_add('links_seen', 'https://example.com/kept');
SAVEPOINT s;
SELECT shared_test_and_add('links_seen', ARRAY['https://example.com/undone', 'https://example.com/kept']);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT shared_contains('links_seen', 'https://example.com/kept') AS kept,
	   shared_contains('links_seen', 'https://example.com/undone') AS undone;
SELECT shared_info('links_seen', read_pages => true) -> 'uncommitted_adds' AS uncommitted_adds;

-- A page has room for 79 adds of transactions that have not committed;
-- past it they go to the page's overflow pages (after the data pages), so
-- a transaction adds any number of values: here 3,000 to a filter of one
-- page, sized for 1,000.  Its repeats are seen, its adds visible to it.
SELECT shared_bloom_create('small', 1000, 0.01);
BEGIN;
SELECT shared_info('small') -> 'pages' AS pages,
	   count(*) FILTER (WHERE NOT a) AS new
FROM unnest(shared_test_and_add('small', ARRAY(SELECT g::text FROM generate_series(1, 3000) g))) a;
SELECT bool_and(a) AS repeats_seen
FROM unnest(shared_test_and_add('small', ARRAY(SELECT g::text FROM generate_series(1, 3000) g))) a;
SELECT pg_relation_size('small') / 8192 AS blocks,
	   shared_info('small', read_pages => true) -> 'uncommitted_adds' AS uncommitted_adds;
COMMIT;
SELECT count(*) FILTER (WHERE shared_contains('small', g::text)) AS present
FROM generate_series(1, 3000) g;

-- One batch folds the pending adds of many transactions, committed and
-- rolled back, on the pages it touches: its answers are the commits'.  The
-- batch is asked in two calls, each meeting every transaction's adds on
-- other pages: the second answers from the statuses the session keeps
-- from the first
SELECT shared_bloom_create('folds', 1000000, 0.0001);
DO $$
BEGIN
	FOR t IN 1..20 LOOP
		PERFORM shared_test_and_add('folds', ARRAY(SELECT 'https://example.com/' || t || '/' || g
												   FROM generate_series(1, 20) g));
		IF t % 2 = 0 THEN COMMIT; ELSE ROLLBACK; END IF;
	END LOOP;
END $$;
WITH batch AS (
	SELECT g > 10 AS second, array_agg('https://example.com/' || t || '/' || g ORDER BY t, g) AS urls
	FROM generate_series(1, 20) t, generate_series(1, 20) g
	GROUP BY g > 10
), answered AS (
	SELECT second, urls, shared_test_and_add('folds', urls) AS answers FROM batch
)
SELECT second, count(*) FILTER (WHERE a) AS seen,
	   bool_and(a = (split_part(u, '/', 4)::int % 2 = 0)) AS seen_iff_committed
FROM answered, unnest(urls, answers) AS x(u, a)
GROUP BY second ORDER BY second;
DROP TABLE folds;

-- A filter made with transactional => false adds at once, and keeps what a
-- rolled-back transaction added: only more false positives
SELECT shared_bloom_create('immediate', 1000, 0.01, transactional => false);
BEGIN;
SELECT shared_test_and_add('immediate', 'https://example.com/rolled-back');
ROLLBACK;
SELECT shared_contains('immediate', 'https://example.com/rolled-back');
SELECT shared_info('immediate') -> 'transactional' AS transactional,
	   shared_info('immediate') -> 'format_version' AS format_version;
DROP TABLE small, immediate;

-- Bad parameters
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 0, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', -5, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 'NaN') $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 9000000000000000000, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('bad', 0, 0.01, 3) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('bad', 1000, 0.01, 0) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('bad', 1000, 0.01, 3, max => 256) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('bad', 1000, 1.5, 3) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('links_seen', 1000, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('no_such_schema.f', 1000, 0.01) $$);
SELECT to_regclass('bad') IS NULL AS nothing_left_behind;

-- Not a shared filter, a dropped one
CREATE TABLE plain (page bigint, data bytea);
SELECT pg_temp.error_of($$ SELECT shared_contains('plain', 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('pg_class', 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_info(2147483647::oid::regclass) $$);
DROP TABLE plain;
-- A table of the access method without a metapage, or with other columns
CREATE TABLE empty_filter (page bigint, data bytea) USING sbf_filter;
SELECT pg_temp.error_of($$ SELECT shared_contains('empty_filter', 'x') $$);
SELECT count(*) FROM empty_filter;
SELECT pg_temp.error_of($$ CREATE TABLE odd (a int) USING sbf_filter $$);

-- The table's rows are its pages (for COPY and pg_dump); it changes only
-- through shared_test_and_add
SELECT page, length(data) FROM links_seen ORDER BY page LIMIT 3;
SELECT pg_temp.error_of($$ UPDATE links_seen SET page = 1 $$);
SELECT pg_temp.error_of($$ DELETE FROM links_seen $$);
SELECT pg_temp.error_of($$ CREATE INDEX ON links_seen (page) $$);
SELECT pg_temp.error_of($$ SELECT * FROM links_seen TABLESAMPLE SYSTEM (10) $$);
SELECT pg_temp.error_of($$ INSERT INTO links_seen VALUES (1, '\x00') $$);
SELECT pg_temp.error_of($$ INSERT INTO links_seen SELECT page, data FROM links_seen WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO links_seen VALUES (0, '\x00') $$);
SELECT pg_temp.error_of($$ INSERT INTO empty_filter VALUES (1, '\x00') $$);
VACUUM links_seen;
ANALYZE links_seen;
-- VACUUM FULL rewrites the filter as it is; TRUNCATE empties it of its metapage too
VACUUM FULL batched;
SELECT shared_contains('batched', '5') AS added_before, shared_contains('batched', 'never added');
TRUNCATE one_by_one;
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('one_by_one', 'x') $$);
VACUUM FULL one_by_one;
SELECT count(*) FROM one_by_one;

-- Copying a filter's rows into an empty one restores it exactly
INSERT INTO empty_filter SELECT * FROM links_seen ORDER BY page;
SELECT count(*) FILTER (WHERE shared_contains('links_seen', v) <> shared_contains('empty_filter', v)) AS differences
  FROM (SELECT 'https://example.com/' || g AS v FROM generate_series(1, 20000) g) vals;

-- An unlogged filter, and a filter in a schema
SELECT shared_bloom_create('fast', 1000, 0.01, unlogged => true);
SELECT relpersistence FROM pg_class WHERE oid = 'fast'::regclass;
SELECT shared_info('fast') -> 'logged' AS logged;
CREATE SCHEMA crawl;
SELECT shared_bloom_create('crawl."Frontier seen"', 1000, 0.01, 7);
SELECT shared_test_and_add('crawl."Frontier seen"', 'x'), shared_contains('crawl."Frontier seen"', 'x');

-- Create if absent: the filter of that name made with the same parameters
-- is returned (a NOTICE says so); other parameters, another kind or another
-- persistence are an ERROR naming the filter's own.  (Concurrent creators:
-- specs/shared_create.spec.)
SELECT shared_bloom_create('links_seen', 1000000, 0.01, if_not_exists => true);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('links_seen', 1000000, 0.02, if_not_exists => true) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('links_seen', 1000000, 0.01, unlogged => true, if_not_exists => true) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('links_seen', 1000000, 0.01, 3, if_not_exists => true) $$);
SELECT shared_stablebloom_create('recent', 100000, 0.01, 3, max => 3, if_not_exists => true);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('recent', 100000, 0.01, 4, max => 3, if_not_exists => true) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('links_seen', 1000000, 0.01) $$);

-- Reset: empty a filter and keep its parameters (yesterday's crawl's filter
-- for today's crawl).  It is a TRUNCATE: it needs the TRUNCATE privilege
-- and a rollback keeps what the filter held.
SELECT shared_bloom_create('daily', 10000, 0.01, unlogged => true);
SELECT shared_test_and_add('daily', ARRAY['https://example.com/1', 'https://example.com/2']);
BEGIN;
SELECT shared_reset('daily');
SELECT shared_contains('daily', 'https://example.com/1') AS after_reset;
ROLLBACK;
SELECT shared_contains('daily', 'https://example.com/1') AS after_rollback;
SELECT shared_info('daily', read_pages => true) AS before \gset
SELECT shared_reset('daily');
SELECT shared_test_and_add('daily', 'https://example.com/1') AS seen_after_reset,
	   shared_contains('daily', 'https://example.com/2') AS other_after_reset;
SELECT (shared_info('daily', read_pages => true) - 'pages_written' - 'bits_set' - 'fill' - 'estimated_fpr' - 'estimated_cardinality' - 'size_bytes' - 'adds' - 'load' - 'expected_fpr')
	 = (:'before'::jsonb - 'pages_written' - 'bits_set' - 'fill' - 'estimated_fpr' - 'estimated_cardinality' - 'size_bytes' - 'adds' - 'load' - 'expected_fpr') AS same_parameters,
	   shared_info('daily', read_pages => true) -> 'pages_written' AS pages_written;
-- in the transaction that made it, too
BEGIN;
SELECT shared_stablebloom_create('pg_temp.scratch', 100000, 0.01, 3);
SELECT shared_test_and_add('pg_temp.scratch', 'a');
SELECT shared_reset('pg_temp.scratch');
SELECT shared_test_and_add('pg_temp.scratch', 'a') AS seen_after_reset;
ROLLBACK;
SET ROLE sbf_shared_reader;
SELECT pg_temp.error_of($$ SELECT shared_reset('daily') $$);
RESET ROLE;
SELECT pg_temp.error_of($$ SELECT shared_reset('pg_class') $$);
DROP TABLE daily;

-- What a driver sends.  A list sent as an untyped parameter (psycopg 3's
-- Python list, or a '{...}' string) would reach the one-value function and
-- be added as one value: the one-value functions refuse a text that
-- begins with "{" and ends with "}"; cast to an array to add each element.
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('links_seen', '{https://example.com/x,https://example.com/y}') $$);
PREPARE untyped_add AS SELECT shared_test_and_add('links_seen', $1);
PREPARE untyped_contains AS SELECT shared_contains('links_seen', $1);
SELECT pg_temp.error_of($$ EXECUTE untyped_add('{https://example.com/x,https://example.com/y}') $$);
SELECT pg_temp.error_of($$ EXECUTE untyped_contains('{https://example.com/x}') $$);
EXECUTE untyped_add('https://example.com/{not-a-list}');
PREPARE typed_add AS SELECT shared_test_and_add('links_seen', $1::text[]);
EXECUTE typed_add('{https://example.com/x,https://example.com/y,https://example.com/x}');
-- bytea[] batches, such as Scrapy's request fingerprints: in a UTF8
-- database a text and the bytea of its bytes are the same value
SELECT shared_test_and_add('links_seen', ARRAY['https://example.com/x'::bytea, '\x00ff'::bytea, NULL]);
-- a value that really has the form of a list goes as bytea
SELECT shared_test_and_add('links_seen', convert_to('{odd}', 'UTF8')) AS first,
	   shared_contains('links_seen', convert_to('{odd}', 'UTF8')) AS after;
-- (1.2) So are what 1.1 took for one value: a record literal (psycopg 3
-- sends a Python tuple so), an array or record literal with whitespace
-- around it (array_in's: space, tab, newline, CR, VT, FF), and bytea's hex
-- output ("\x" and an even number of hex digits: bytes cast to text)
SELECT pg_temp.error_of($$ EXECUTE untyped_add('(https://example.com/x,https://example.com/y)') $$);
SELECT pg_temp.error_of($$ EXECUTE untyped_contains('(https://example.com/x)') $$);
SELECT pg_temp.error_of($$ EXECUTE untyped_add(' {https://example.com/x,https://example.com/y}') $$);
SELECT pg_temp.error_of($$ EXECUTE untyped_add(E'{https://example.com/x}\n') $$);
SELECT pg_temp.error_of(format($$ EXECUTE untyped_add(%L) $$, E'\t\r\f' || chr(11) || '(a)' || chr(11)));
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('links_seen', 'https://example.com/x'::bytea::text) $$);
SELECT pg_temp.error_of($$ SELECT shared_contains('links_seen', '\x00ff'::bytea::text) $$);
-- in a text[] batch, an element of bytea's hex output refuses the batch,
-- named by its position, before any element is added (here on a filter
-- whose adds a rollback does not undo, past the first chunk of 524,288)
SELECT shared_bloom_create('pg_temp.at_once', 1000000, 0.01, transactional => false) IS NOT NULL AS created;
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('links_seen', ARRAY['https://example.com/z', NULL, 'https://example.com/z'::bytea::text]) $$);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('pg_temp.at_once', array_append(ARRAY(SELECT 'https://example.com/' || i FROM generate_series(1, 600000) i), '\x00')) $$);
SELECT count(*) FILTER (WHERE shared_contains('pg_temp.at_once', 'https://example.com/' || i)) AS added
FROM generate_series(1, 600000, 997) i;
-- the rules are exact: what only comes close is one value
SELECT v, shared_test_and_add('links_seen', v) AS seen
FROM (VALUES ('https://example.com/(x)'), ('(x'), ('x)'), ('{x'), (' x} '), ('\x'), ('\x7'),
			 ('\x7g'), ('\X7a'), ('\x7A'), ('\\x7a'), (' \x7a')) v(v);
SELECT shared_test_and_add('links_seen', ARRAY['(x,y)', ' {x} ', '\x', '\x7A']) AS elements_are_values;
DEALLOCATE untyped_add;
DEALLOCATE untyped_contains;
DEALLOCATE typed_add;

-- DROP, then the filter is gone
SELECT 'links_seen'::regclass::oid AS seen_oid \gset
DROP TABLE links_seen;
SELECT regexp_replace(pg_temp.error_of(format($$ SELECT shared_contains(%s::oid::regclass, 'x') $$, :seen_oid)),
                      'OID \d+', 'OID n');
DROP TABLE one_by_one, batched, recent, empty_filter, fast;
DROP SCHEMA crawl CASCADE;
DROP ROLE sbf_shared_reader;
