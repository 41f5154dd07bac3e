-- Shared filters that grow, and the count of values added kept in the
-- metapage.  A crawl of unknown size makes its filter with growth: its
-- first sub-filter is small, and each time the last one has been given
-- its capacity's values a new one follows, twice as large (growth 2) at
-- half its rate (tightening 0.5), so that the rates sum to less than the
-- fpr asked for.  (Concurrent adders at the moment of growth:
-- specs/shared_growth_waits.spec and t/038_shared_growth.pl; a crash, a standby
-- and pg_dump: t/038_shared_growth.pl.)
CREATE EXTENSION IF NOT EXISTS sbf;
SET extra_float_digits = 0;
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

-- The crawler's loop: a batch of URLs a transaction
CREATE PROCEDURE add_batches(f regclass, prefix text, first int, last int,
							 size int DEFAULT 1000, INOUT new bigint DEFAULT 0)
LANGUAGE plpgsql AS $$
BEGIN
	new := 0;
	FOR b IN first .. last LOOP
		new := new + (SELECT count(*) FILTER (WHERE NOT seen)
		  FROM unnest(shared_test_and_add(f, ARRAY(
		         SELECT prefix || g FROM generate_series(b * size, b * size + size - 1) g))) seen);
		COMMIT;
	END LOOP;
END $$;

-- Its first sub-filter has 32 pages, whatever capacity is asked: enough for
-- a transaction's batch of a thousand URLs (a page holds 79 uncommitted adds)
SELECT shared_bloom_create('crawl_seen', 1, 0.000001, growth => 2);
SELECT info - 'size_bytes' AS info
  FROM (SELECT shared_info('crawl_seen', read_pages => false) AS info) i;

-- 200,000 URLs: it grows twice, and every URL was new once
CALL add_batches('crawl_seen', 'https://example.com/', 0, 199);
SELECT info -> 'subfilters' AS subfilters, info -> 'adds' AS adds,
	   info -> 'total_capacity' AS total_capacity, info -> 'pages' AS pages,
	   (info ->> 'expected_fpr')::float8 < (info ->> 'fpr')::float8 AS rate_under_fpr
  FROM (SELECT shared_info('crawl_seen', read_pages => false) AS info) i;
SELECT s -> 'first_page' AS first_page, s -> 'pages' AS pages, s -> 'hashes' AS hashes,
	   s -> 'capacity' AS capacity, s -> 'fpr' AS fpr, s -> 'adds' AS adds
  FROM jsonb_array_elements(shared_info('crawl_seen', read_pages => false) -> 'sub_filters') s;

-- no false negatives across the sub-filters, and (at this rate) no false
-- positives among 100,000 URLs never added
SELECT count(*) FILTER (WHERE NOT shared_contains('crawl_seen', 'https://example.com/' || g)) AS false_negatives
  FROM generate_series(0, 199999) g;
SELECT count(*) FILTER (WHERE shared_contains('crawl_seen', 'https://example.org/' || g)) AS false_positives
  FROM generate_series(0, 99999) g;
-- the crawl meets them all again: all seen, nothing added, no growth
CALL add_batches('crawl_seen', 'https://example.com/', 0, 199);
SELECT shared_info('crawl_seen', read_pages => false) -> 'adds' AS adds;
-- its pages as read agree with the count
SELECT (info ->> 'estimated_cardinality')::float8 BETWEEN 190000 AND 210000 AS cardinality_near_adds,
	   info -> 'pages_written' AS pages_written, info -> 'uncommitted_adds' AS uncommitted
  FROM (SELECT shared_info('crawl_seen', read_pages => true) AS info) i;

-- A rolled-back batch is new again, growth or not: its adds are undone,
-- though the count keeps them (it counts what was answered new)
BEGIN;
SELECT count(*) FILTER (WHERE NOT seen) AS new_in_rolled_back
  FROM unnest(shared_test_and_add('crawl_seen', ARRAY(
         SELECT 'https://example.net/' || g FROM generate_series(1, 1000) g))) seen;
ROLLBACK;
SELECT count(*) FILTER (WHERE shared_contains('crawl_seen', 'https://example.net/' || g)) AS present_after_rollback
  FROM generate_series(1, 1000) g;
SELECT shared_info('crawl_seen', read_pages => false) -> 'adds' AS adds;

-- A snapshot is one bloom value: not of a filter that has grown
SELECT pg_temp.error_of($$ SELECT shared_bloom_snapshot('crawl_seen') $$);

-- COPY carries the sub-filters: page 0 holds the state with the
-- parameters, and the copy answers as the original
CREATE TABLE crawl_copy (page bigint, data bytea) USING sbf_filter;
INSERT INTO crawl_copy SELECT * FROM crawl_seen ORDER BY page;
SELECT (shared_info('crawl_copy', false) - 'size_bytes') = (shared_info('crawl_seen', false) - 'size_bytes') AS same_state;
SELECT count(*) FILTER (WHERE NOT shared_contains('crawl_copy', 'https://example.com/' || g)) AS false_negatives
  FROM generate_series(0, 199999) g;
-- VACUUM FULL too
VACUUM FULL crawl_copy;
SELECT count(*) FILTER (WHERE NOT shared_contains('crawl_copy', 'https://example.com/' || g)) AS false_negatives
  FROM generate_series(0, 199999) g;
-- and the copy grows on from where the original was
CALL add_batches('crawl_copy', 'https://example.com/', 200, 259);
SELECT shared_info('crawl_copy', false) -> 'subfilters' AS subfilters;
SELECT count(*) FILTER (WHERE NOT shared_contains('crawl_copy', 'https://example.com/' || g)) AS false_negatives
  FROM generate_series(0, 259999) g;

-- A reset goes back to the first sub-filter and a count of zero
SELECT shared_reset('crawl_copy');
SELECT info -> 'subfilters' AS subfilters, info -> 'adds' AS adds, info -> 'pages' AS pages
  FROM (SELECT shared_info('crawl_copy', false) AS info) i;
SELECT shared_contains('crawl_copy', 'https://example.com/1') AS after_reset;

-- A filter of fixed size counts too, and warns once per session when it
-- passes its capacity (batches of 50: its one page holds 79 uncommitted adds)
SELECT shared_bloom_create('small_crawl', 1000, 0.01);
CALL add_batches('small_crawl', 'https://example.com/', 0, 19, 50);
SELECT info -> 'adds' AS adds, info -> 'load' AS load
  FROM (SELECT shared_info('small_crawl', false) AS info) i;
CALL add_batches('small_crawl', 'https://example.com/', 20, 23, 50);
CALL add_batches('small_crawl', 'https://example.com/', 24, 25, 50);
SELECT info -> 'adds' AS adds, info -> 'load' AS load,
	   (info ->> 'expected_fpr')::float8 > (info ->> 'fpr')::float8 AS over_its_rate
  FROM (SELECT shared_info('small_crawl', false) AS info) i;

-- growth and tightening are checked, and growth needs transactional adds
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0.01, growth => 0.5) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0.01, growth => 17) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0.01, growth => 'NaN') $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0.01, growth => 2, tightening => 0) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0.01, growth => 2, tightening => 1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('bad', 1000, 0.01, growth => 2, transactional => false) $$);
-- if_not_exists compares growth and tightening
SELECT shared_bloom_create('crawl_seen', 1, 0.000001, growth => 2, if_not_exists => true);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl_seen', 1, 0.000001, growth => 4, if_not_exists => true) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl_seen', 1, 0.000001, growth => 2, tightening => 0.8, if_not_exists => true) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('small_crawl', 1000, 0.01, growth => 2, if_not_exists => true) $$);

-- A restored page 0 has its state checked, field by field
CREATE FUNCTION pg_temp.bad_state(at int, bytes bytea) RETURNS bytea LANGUAGE sql AS $$
	SELECT overlay((SELECT data FROM crawl_seen WHERE page = 0) PLACING bytes FROM 64 + at + 1) $$;
CREATE TABLE crawl_bad (page bigint, data bytea) USING sbf_filter;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(0, '\x00000000')) $$) AS no_subfilters;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(0, '\x41000000')) $$) AS too_many;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(0, '\x02000000')) $$) AS fewer_than_made;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(8, '\x0000000000000000')) $$) AS growth_0_with_three;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(24, '\x0100000000000000')) $$) AS adds;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(32 + 40, '\x01000000')) $$) AS second_not_after_first;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(32 + 4, '\x00000000')) $$) AS no_pages;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, pg_temp.bad_state(32 + 4, '\x21000000')) $$) AS first_not_as_made;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad VALUES (0, substr((SELECT data FROM crawl_seen WHERE page = 0), 1, 64)) $$) AS no_state;
-- the intact one restores, and a data page past its sub-filters is refused
INSERT INTO crawl_bad SELECT * FROM crawl_seen WHERE page = 0;
SELECT pg_temp.error_of($$ INSERT INTO crawl_bad SELECT 253, data FROM crawl_seen WHERE page = 1 $$);
