--
-- Shared sliding filters: "was this value seen within the window?", the
-- window a number of arrivals or a time (docs/shared.md, "Sliding filters")
--
SET client_min_messages = warning;

-- a window of 10 arrivals: a value is seen when it arrived among the 9 before
SELECT shared_slidingbloom_create('last10', 10, 0.0001);
SELECT info->>'kind' AS kind, info->>'window_of' AS window_of, info->'window' AS "window",
       info->'tolerance' AS tolerance, info->'capacity' AS capacity, info->'cell_bits' AS cell_bits,
       info->'pages' AS pages, info->'hashes' AS hashes, info->'clock' AS clock,
       info->'transactional' AS transactional, info->'logged' AS logged
  FROM shared_info('last10') AS info;

-- 'a' at arrival 1 is seen at arrival 10 (distance 9), new again at 11
SELECT shared_test_and_add('last10', 'a');
SELECT shared_test_and_add('last10', ARRAY['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
SELECT shared_contains('last10', 'a');
SELECT shared_test_and_add('last10', 'a');
SELECT shared_test_and_add('last10', 'a');
-- it was stored at 11 (answered new): seen up to arrival 20
SELECT shared_test_and_add('last10', ARRAY['j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'a', 'a']);
SELECT (shared_info('last10')->>'clock')::bigint AS clock;

-- a repeat inside a batch is answered seen; NULLs are answered NULL and not counted
SELECT shared_test_and_add('last10', ARRAY['x', NULL, 'y', 'x', NULL, 'y']);
SELECT (shared_info('last10')->>'clock')::bigint AS clock;
SELECT shared_test_and_add('last10', ARRAY[]::text[]);
SELECT shared_test_and_add('last10', ARRAY[[1, 2], [2, 1]]::bigint[]);
SELECT shared_test_and_add('last10', '\x01'::bytea), shared_test_and_add('last10', '\x01'::bytea);

-- refresh: every arrival restarts its window, so a value met every 9
-- arrivals is never new again; without it, it is new every 10th time
SELECT shared_slidingbloom_create('refreshed', 10, 0.0001, refresh => true);
SELECT shared_slidingbloom_create('plain', 10, 0.0001);
WITH stream AS (
	SELECT array_agg(CASE WHEN n % 9 = 0 THEN 'v' ELSE 'w' || n END ORDER BY n) AS s
	  FROM generate_series(0, 90) AS n)
SELECT (SELECT count(*) FILTER (WHERE NOT seen) FROM unnest(shared_test_and_add('refreshed', s)) WITH ORDINALITY AS a(seen, i) WHERE s[i] = 'v') AS refreshed_new,
       (SELECT count(*) FILTER (WHERE NOT seen) FROM unnest(shared_test_and_add('plain', s)) WITH ORDINALITY AS a(seen, i) WHERE s[i] = 'v') AS plain_new
  FROM stream;

-- against the exact answer, over 30,000 arrivals of 3,000 values, one by
-- one and in batches: no repeat within the window is missed, and the
-- false positives stay near the rate asked (refresh: every arrival stored)
SELECT shared_slidingbloom_create('exact', 1000, 0.01, refresh => true);
CREATE TEMP TABLE stream AS
SELECT n, abs(hashint8(n)) % 3000 AS v FROM generate_series(1, 30000) AS n;
CREATE TEMP TABLE answers AS
SELECT s.n, s.v, a.seen,
       coalesce(s.n - lag(s.n) OVER (PARTITION BY s.v ORDER BY s.n) <= 999, false) AS exact
  FROM stream s
  JOIN (SELECT b * 500 + i AS n, seen
          FROM generate_series(0, 59) AS b,
               LATERAL unnest(shared_test_and_add('exact',
                   (SELECT array_agg(v ORDER BY n) FROM stream WHERE n > b * 500 AND n <= b * 500 + 500)))
                   WITH ORDINALITY AS x(seen, i)) a USING (n);
SELECT count(*) AS arrivals,
       count(*) FILTER (WHERE exact) AS repeats,
       count(*) FILTER (WHERE exact AND NOT seen) AS missed,
       count(*) FILTER (WHERE seen AND NOT exact) < 0.02 * count(*) FILTER (WHERE NOT exact) AS few_false_positives
  FROM answers;
SELECT (shared_info('exact')->>'clock')::bigint AS clock,
       (shared_info('exact', read_pages => true)->>'fill')::float8 < 0.5 AS aged;

-- a long idle: a clock far beyond the window finds every page empty,
-- and ages each page only when it is next written
SELECT shared_slidingbloom_create('idle', 100, 0.001);
SELECT shared_test_and_add('idle', 'kept');
SELECT count(*) FILTER (WHERE seen) AS seen
  FROM unnest(shared_test_and_add('idle', ARRAY(SELECT 'filler' || n FROM generate_series(1, 5000) AS n))) AS seen;
SELECT shared_contains('idle', 'kept'), shared_test_and_add('idle', 'kept');

-- a window of time: 64 ticks of 56.25 s for an hour
SELECT shared_slidingbloom_create('hourly', interval '1 hour', 0.001, capacity => 1000);
SELECT info->>'window_of' AS window_of, info->>'window' AS "window", info->'tick_us' AS tick_us,
       info->'ticks' AS ticks, info->>'tolerance' AS tolerance, info->'tolerance_ticks' AS tolerance_ticks,
       info->'clock' AS clock, info->'cell_bits' AS cell_bits, info->'pages' AS pages
  FROM shared_info('hourly') AS info;
SELECT shared_test_and_add('hourly', 'https://example.com/', '2026-01-01 00:00:00+00');
SELECT shared_test_and_add('hourly', 'https://example.com/', '2026-01-01 00:59:59+00');
SELECT shared_contains('hourly', 'https://example.com/', '2026-01-01 00:59:59+00');
SELECT shared_contains('hourly', 'https://example.com/', '2026-01-01 01:02:00+00');
SELECT shared_test_and_add('hourly', 'https://example.com/', '2026-01-01 01:02:00+00');
SELECT shared_test_and_add('hourly', ARRAY['https://example.com/', 'https://example.com/a', 'https://example.com/a'], '2026-01-01 01:30:00+00');
-- out of order within the tolerance (7.5 minutes): taken, at its own time
SELECT shared_test_and_add('hourly', 'https://example.com/b', '2026-01-01 01:25:00+00');
SELECT shared_test_and_add('hourly', 'https://example.com/b', '2026-01-01 02:24:00+00');
-- beyond it: an ERROR, the clock never goes back
SELECT shared_test_and_add('hourly', 'https://example.com/c', '2026-01-01 02:10:00+00');
SELECT (shared_info('hourly')->>'clock')::bigint * 56250000 AS clock_us;
-- a jump of months: every page is empty, and aged when written
SELECT shared_test_and_add('hourly', 'https://example.com/b', '2026-06-01 00:00:00+00');
SELECT shared_test_and_add('hourly', 'https://example.com/a', '2026-06-01 00:00:00+00');
-- bigint values, and the current time when none is given
SELECT shared_test_and_add('hourly', 42), shared_test_and_add('hourly', 42),
       shared_contains('hourly', 42), shared_contains('hourly', 42, now() + interval '2 hours');

-- a tolerance of its own, and months as 30 days
SELECT shared_slidingbloom_create('monthly', interval '1 month', 0.01, 100000, tolerance => interval '2 days');
SELECT info->>'window' AS "window", info->'tick_us' AS tick_us, info->'ticks' AS ticks,
       info->'tolerance_ticks' AS tolerance_ticks, info->'cell_bits' AS cell_bits
  FROM shared_info('monthly') AS info;

-- the kinds that take no time, and no snapshot
SELECT shared_test_and_add('last10', 'a', now());
SELECT shared_contains('last10', 'a', now());
SELECT shared_bloom_create('plain_bloom', 100, 0.01);
SELECT shared_test_and_add('plain_bloom', 'a', now());
SELECT shared_test_and_add('plain_bloom', ARRAY['a'], now());
SELECT shared_contains('plain_bloom', 'a', now());
SELECT shared_bloom_snapshot('last10');
SELECT shared_test_and_add('hourly', 'a', 'infinity');

-- every bad argument is an ERROR
SELECT shared_slidingbloom_create('bad', 0, 0.01);
SELECT shared_slidingbloom_create('bad', -5, 0.01);
SELECT shared_slidingbloom_create('bad', 10, 0);
SELECT shared_slidingbloom_create('bad', 10, 1);
SELECT shared_slidingbloom_create('bad', 10, 0.01, capacity => 0);
SELECT shared_slidingbloom_create('bad', 10, 0.01, tolerance => -1);
SELECT shared_slidingbloom_create('bad', 3000000000, 0.01);
SELECT shared_slidingbloom_create('bad', 1000000000, 0.01);
SELECT shared_slidingbloom_create('bad', NULL::bigint, 0.01);
SELECT shared_slidingbloom_create(NULL, 10, 0.01);
SELECT shared_slidingbloom_create('bad', interval '1 hour', 0.01, NULL);
SELECT shared_slidingbloom_create('bad', interval '0', 0.01, 10);
SELECT shared_slidingbloom_create('bad', interval '-1 hour', 0.01, 10);
SELECT shared_slidingbloom_create('bad', interval '1 hour', 0.01, 10, tolerance => interval '-1 second');
SELECT shared_slidingbloom_create('bad', interval '1 hour', 0.01, 10, tolerance => interval '10000 years');
SELECT shared_slidingbloom_create('bad', '1 hour', 0.01, 10);
-- if_not_exists: the same parameters give the filter back, others are refused
SELECT shared_slidingbloom_create('last10', 10, 0.0001, if_not_exists => true);
SELECT shared_slidingbloom_create('last10', 11, 0.0001, if_not_exists => true);

-- privileges: testing needs SELECT, adding UPDATE, as for the other kinds
CREATE ROLE regress_sliding_reader;
GRANT SELECT ON last10 TO regress_sliding_reader;
SET ROLE regress_sliding_reader;
SELECT shared_contains('last10', 'a');
SELECT shared_test_and_add('last10', 'a');
SELECT shared_contains('hourly', 'a');
RESET ROLE;
DROP OWNED BY regress_sliding_reader;
DROP ROLE regress_sliding_reader;

-- the rows of the table restore it (pg_dump, COPY): same answers
CREATE TABLE copied (page bigint, data bytea) USING sbf_filter;
INSERT INTO copied SELECT * FROM last10 ORDER BY page;
SELECT shared_info('copied') - 'size_bytes' = shared_info('last10') - 'size_bytes' AS same_info;
SELECT shared_test_and_add('copied', ARRAY['p', 'q', 'z', 'a']) = shared_test_and_add('last10', ARRAY['p', 'q', 'z', 'a']) AS same_answers;
-- a page 0 is checked before it is restored: its length, and a clock
-- whose fields could not decode the pages
CREATE TABLE damaged (page bigint, data bytea) USING sbf_filter;
INSERT INTO damaged SELECT 0, substr(data, 1, 2656) FROM last10 WHERE page = 0;
INSERT INTO damaged SELECT 0, overlay(data PLACING '\xffff000000000000'::bytea FROM 2705) FROM last10 WHERE page = 0;
INSERT INTO damaged SELECT 0, overlay(data PLACING '\x04000000'::bytea FROM 2713) FROM last10 WHERE page = 0;
INSERT INTO damaged SELECT 0, overlay(data PLACING '\x0300'::bytea FROM 7) FROM plain_bloom WHERE page = 0;
DROP TABLE damaged;

-- shared_reset empties it, keeps its parameters and starts its clock again:
-- the way back from a time far in the future, which the clock keeps
SELECT shared_reset('last10');
SELECT shared_contains('last10', 'a'), (shared_info('last10')->>'clock')::bigint AS clock;
SELECT shared_test_and_add('hourly', 'x', '2126-01-01 00:00:00+00');
\set VERBOSITY terse
SELECT shared_test_and_add('hourly', 'x');
\set VERBOSITY default
SELECT shared_reset('hourly');
SELECT shared_info('hourly')->'clock' AS clock, shared_test_and_add('hourly', 'x'), shared_test_and_add('hourly', 'x');

DROP TABLE last10, refreshed, plain, exact, idle, hourly, monthly, plain_bloom, copied;
