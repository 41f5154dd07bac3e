--
-- Cancellation.  Every loop over a filter's cells or words, or over a
-- value's bytes, checks for interrupts every few milliseconds, so that
-- statement_timeout, pg_cancel_backend and pg_terminate_backend stop it at
-- once rather than when it ends.  Each statement below runs for seconds
-- without those checks.
--

-- Run QUERY under the statement's timeout: the error it ends with, and
-- whether it ended within half a second of the timeout.  Without the checks
-- the timeout is only noticed when the loop ends, seconds late.
CREATE FUNCTION pg_temp.cancelled(query text, OUT error text, OUT prompt boolean)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	error := 'not cancelled';
EXCEPTION WHEN query_canceled THEN
	error := SQLSTATE || ': ' || SQLERRM;
	prompt := clock_timestamp() - statement_timestamp()
		< current_setting('statement_timeout')::interval + interval '0.5 s';
END
$$;

-- The sizes come from subqueries, so that the planner does not fold the
-- calls into constants: it would copy each large result, and a copy of
-- PostgreSQL's own is not interruptible.

-- Counting the zero cells of 4.3 billion cells (a 512 MB filter) takes 5 s;
-- the timeout stops it after 2 s, when the filter is built and being counted
SET statement_timeout = '2s';
SELECT * FROM pg_temp.cancelled($$
	SELECT stablebloom_info(stablebloom_add(stablebloom_empty((SELECT 4300000000), 3, 1, 1), 'x'))
$$);
SELECT * FROM pg_temp.cancelled($$
	SELECT stablebloom_fpr(stablebloom_add(stablebloom_empty((SELECT 4300000000), 3, 1, 1), 'x'))
$$);

-- Text input parses the hexadecimal and then checks every cell of a filter
-- whose max is not 2^n - 1: the text form of a billion cells of max 2
-- (250 MB) is written, parsed and checked in 3 s.  (The output and input
-- functions are called directly, as f::text::stablebloom would without
-- copying the text in between.)
SET statement_timeout = '1s';
SELECT * FROM pg_temp.cancelled($$
	SELECT stablebloom_in(stablebloom_out(
		stablebloom_add(stablebloom_empty((SELECT 1000000000), 3, 2, 1), 'x')))
$$);

-- Building a 1 GB filter zeroes 1 GB (a second), and counting its bits
-- reads it all, here three times
SET statement_timeout = '100ms';
SELECT * FROM pg_temp.cancelled($$
	SELECT bloom_fpr(f), bloom_cardinality(f), bloom_info(f)
	FROM (SELECT bloom_add(bloom_empty((SELECT 8589934272), 3), 'x') AS f OFFSET 0) s
$$);
RESET statement_timeout;

-- A batch of 10M values into a shared filter: hashing, sorting and adding
-- it takes about a second (bigint) or two (text), checked for interrupts
-- every 65,536 values and sorted 524,288 at a time.  The batches are made
-- first, so that the timeout runs while the filter works on them, and
-- stored uncompressed, so that reading them takes a fraction of a second.
-- (A bulk load: adds that are not transactional, whose 10M uncommitted
-- adds a transactional filter of this size would refuse.)
SELECT shared_bloom_create('cancel_seen', 20000000, 0.01, unlogged => true,
						   transactional => false);
CREATE TEMP TABLE batches (urls text[], ids bigint[]);
ALTER TABLE batches ALTER COLUMN urls SET STORAGE EXTERNAL,
					ALTER COLUMN ids SET STORAGE EXTERNAL;
INSERT INTO batches
SELECT (SELECT array_agg('https://example.org/' || g) FROM generate_series(1, 10000000) g),
	   (SELECT array_agg(g::bigint * 7919) FROM generate_series(1, 10000000) g);
SET statement_timeout = '300ms';
SELECT * FROM pg_temp.cancelled($$ SELECT shared_test_and_add('cancel_seen', urls) FROM batches $$);
SELECT * FROM pg_temp.cancelled($$ SELECT shared_test_and_add('cancel_seen', ids) FROM batches $$);
RESET statement_timeout;
DROP TABLE batches, cancel_seen;

-- url_canonical matches every parameter of the query against every name of
-- strip_params: 500,000 parameters (a 1 MB URL) against 40,000 names are
-- 2e10 comparisons, half a minute.  Cancelled at the timeout; the bound on
-- the time is loose, so that a loaded machine does not fail it, and far
-- below the half minute.
SET statement_timeout = '1s';
SELECT error, clock_timestamp() - statement_timestamp() < interval '10 s' AS within_10s
FROM pg_temp.cancelled($$
	SELECT url_canonical((SELECT 'http://example.com/?' || repeat('a&', 499999) || 'a'),
		strip_params => (SELECT array_agg('utm_' || g) FROM generate_series(1, 40000) g))
$$);

-- A strip_params name is converted to UTF-8 and percent-encoded before the
-- matching: a name of 100 MB (50 million 'ß') took 2 s, uninterrupted, and
-- 300 MB.  No parameter name of a canonical query is longer than 3 MB (a
-- 1 MB URL, each byte percent-encoded), so a longer name, which can never
-- match, is skipped unread; the conversion and the escape of a shorter one
-- check for interrupts.  The matching that follows runs on, and the
-- timeout stops it: within half a second (without the skip, not before
-- the name is escaped, two seconds in).
SELECT * FROM pg_temp.cancelled($$
	SELECT url_canonical((SELECT 'http://example.com/?' || repeat('a&', 499999) || 'a'),
		strip_params => (SELECT repeat('ß', 50000000))
			|| (SELECT array_agg('utm_' || g) FROM generate_series(1, 40000) g))
$$);
RESET statement_timeout;

--
-- is_duplicate copies its filter argument once per partition, and checks the
-- copy's header, not every cell of it again: the cells were checked when the
-- value was input.  Input still rejects a cell above max, however the value
-- is used afterwards.
--
SELECT is_duplicate(g::text, overlay(stablebloom_add(stablebloom_empty(16, 2, 5, 1), 'x')::text
		placing '07' from 107 for 2)::stablebloom) OVER (PARTITION BY g % 20)
FROM generate_series(1, 100) g;

-- Each of 20 partitions starts from the same filter of max 2
SELECT count(*) FILTER (WHERE dup) AS duplicates, count(*) AS total
FROM (SELECT is_duplicate((g % 5)::text, stablebloom_empty(400000, 3, 2, 10))
			 OVER (PARTITION BY g % 20 ORDER BY g) AS dup
	  FROM generate_series(1, 100) g) s;
