--
-- Sliding filters whose window is a time: "was this URL seen in the last
-- N hours?", for is_duplicate(url, filter, at) OVER (ORDER BY at), the
-- aggregate, and one arrival at a time.
--
CREATE EXTENSION IF NOT EXISTS sbf;

-- A window of 10 hours cut into 64 ticks of 9 min 22.5 s; sized for 100
-- URLs a window at 1%.  Nothing found once the stale horizon has passed.
SELECT f->>'layout' AS layout, f->>'window' AS "window", f->>'tick' AS tick,
       f->>'window_ticks' AS ticks, f->>'tolerance' AS tolerance,
       f->>'stale_horizon' AS stale_horizon, f->>'refresh' AS refresh,
       (f->>'expected_fpr')::float8 <= 0.01 AS rate_met
FROM slidingbloom_info(slidingbloom_sized('10 hours', 100, 0.01)) AS f;
-- the same whatever IntervalStyle (slidingbloom_info is immutable)
SET IntervalStyle = iso_8601;
SELECT f->>'window' AS "window", f->>'tick' AS tick, f->>'tolerance' AS tolerance
FROM slidingbloom_info(slidingbloom_sized('7 days', 100, 0.01, tolerance => '1 day 00:00:01')) AS f;
RESET IntervalStyle;

-- Ten URLs in turn, one an hour.  Without refresh (the default, the
-- re-crawl rule) a URL is stored only when reported new: u0 of hour 0 is
-- found at hour 10 (at most the window before), and new again at hour 20,
-- a whole window after it was last reported new.
CREATE TABLE time_crawl AS
SELECT i, 'https://example.com/u' || (i % 10) AS url,
       timestamptz '2026-01-01 00:00+00' + i * interval '1 hour' AS at
FROM generate_series(0, 39) AS i;

SELECT string_agg(CASE WHEN dup THEN 'D' ELSE '.' END, '' ORDER BY i) AS marks
FROM (SELECT i, is_duplicate(url, slidingbloom_sized('10 hours', 100, 0.01), at)
                OVER (ORDER BY at, i) AS dup
      FROM time_crawl) AS s;

-- With refresh every sighting is stored: a URL that keeps coming back
-- every 10 hours is never new again; every 11 hours (past the stale
-- horizon of 10 h 9 min 22.5 s), always new.
SELECT string_agg(CASE WHEN dup THEN 'D' ELSE '.' END, '' ORDER BY i) AS marks
FROM (SELECT i, is_duplicate(url, slidingbloom_sized('10 hours', 100, 0.01, refresh => true), at)
                OVER (ORDER BY at, i) AS dup
      FROM time_crawl) AS s;
SELECT bool_or(dup) AS any_found
FROM (SELECT is_duplicate(url, slidingbloom_sized('10 hours', 100, 0.01, refresh => true),
                          timestamptz '2026-01-01 00:00+00' + i * interval '1.1 hours')
                OVER (ORDER BY i) AS dup
      FROM time_crawl) AS s;

-- The boundaries: a URL seen exactly 10 hours later is found; at the
-- stale horizon (10 hours and a tick) it no longer is.
WITH f AS (SELECT slidingbloom_add(slidingbloom_sized('10 hours', 100, 0.01), 'a',
                                   timestamptz '2026-01-01 00:00+00') AS f)
SELECT slidingbloom_contains(f, 'a', timestamptz '2026-01-01 10:00+00') AS at_window,
       slidingbloom_contains(f, 'a', timestamptz '2026-01-01 10:09:22.5+00') AS at_horizon,
       slidingbloom_contains(f, 'b', timestamptz '2026-01-01 05:00+00') AS other,
       slidingbloom_contains(f, 'a') AS at_newest
FROM f;

-- Out of order within the tolerance: a late arrival is tested at its own
-- time, and does not make a newer stamp look older.  The clock is at
-- 01:05 once b arrives.
WITH f0 AS (SELECT slidingbloom_sized('1 hour', 100, 0.01, tolerance => '10 minutes') AS f),
     f1 AS (SELECT slidingbloom_add(f, 'a', timestamptz '2026-01-01 00:00+00') AS f FROM f0),
     f2 AS (SELECT slidingbloom_add(f, 'b', timestamptz '2026-01-01 01:05+00') AS f FROM f1)
SELECT slidingbloom_contains(f, 'a', timestamptz '2026-01-01 00:58+00') AS a_late_in_window,
       slidingbloom_contains(f, 'a') AS a_at_clock,
       slidingbloom_contains(f, 'b', timestamptz '2026-01-01 01:00+00') AS b_later_counts,
       slidingbloom_contains(slidingbloom_add(f, 'c', timestamptz '2026-01-01 00:58+00'),
                             'c', timestamptz '2026-01-01 01:57+00') AS c_late_stored,
       slidingbloom_contains(slidingbloom_add(slidingbloom_add(f, 'b', timestamptz '2026-01-01 00:58+00'),
                                              'd', timestamptz '2026-01-01 02:04+00'),
                             'b') AS b_keeps_newer_stamp
FROM f2;

-- Later than the tolerance is an ERROR, not a silent miss.
SELECT slidingbloom_add(slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01, tolerance => '10 minutes'),
                                         'a', timestamptz '2026-01-01 01:00+00'),
                        'b', timestamptz '2026-01-01 00:45+00');
SELECT slidingbloom_contains(slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01),
                                              'a', timestamptz '2026-01-01 01:00+00'),
                             'a', timestamptz '2026-01-01 00:50+00');

-- A long pause: the clock jumps past the horizon and every cell is
-- cleared; the filter goes on as new.
WITH f AS (SELECT slidingbloom_add(slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01), 'a',
                                                    timestamptz '2026-01-01 00:00+00'),
                                   'b', timestamptz '2027-01-01 00:00+00') AS f)
SELECT slidingbloom_contains(f, 'a') AS a, slidingbloom_contains(f, 'b') AS b,
       (slidingbloom_info(f)->>'fill')::float8 > 0 AS some_live,
       slidingbloom_info(f)->>'arrivals' AS arrivals
FROM f;

-- Timestamps before 1970 and 2000 tick like any other.
WITH f AS (SELECT slidingbloom_add(slidingbloom_sized('1 day', 100, 0.01), 42,
                                   timestamptz '1969-12-31 23:00+00') AS f)
SELECT slidingbloom_contains(f, 42, timestamptz '1970-01-01 22:00+00') AS found,
       slidingbloom_contains(f, 42, timestamptz '1970-01-02 00:00+00') AS past_horizon
FROM f;

-- timestamp without time zone works the same, with no time zone applied.
SET TimeZone = 'America/New_York';
SELECT string_agg(CASE WHEN dup THEN 'D' ELSE '.' END, '' ORDER BY i) AS marks
FROM (SELECT i, is_duplicate(url, slidingbloom_sized('10 hours', 100, 0.01), at::timestamp)
                OVER (ORDER BY at, i) AS dup
      FROM time_crawl) AS s;
RESET TimeZone;

-- Batches: the aggregate's filter carries the window on, so two batches
-- flag exactly what one pass over both flags.
CREATE TABLE batch_state AS
SELECT slidingbloom_agg(url, slidingbloom_sized('10 hours', 100, 0.01), at ORDER BY at, i) AS f
FROM time_crawl WHERE i < 15;
SELECT (SELECT string_agg(CASE WHEN dup THEN 'D' ELSE '.' END, '' ORDER BY i)
        FROM (SELECT i, is_duplicate(url, (SELECT f FROM batch_state), at) OVER (ORDER BY at, i) AS dup
              FROM time_crawl WHERE i >= 15) AS s) =
       (SELECT string_agg(CASE WHEN dup THEN 'D' ELSE '.' END, '' ORDER BY i)
        FROM (SELECT i, is_duplicate(url, slidingbloom_sized('10 hours', 100, 0.01), at)
                        OVER (ORDER BY at, i) AS dup
              FROM time_crawl) AS s WHERE i >= 15) AS batches_match_one_pass;
-- and the aggregate equals the arrivals one by one
SELECT (SELECT f FROM batch_state) =
       slidingbloom_add(slidingbloom_add(
         (SELECT slidingbloom_agg(url, slidingbloom_sized('10 hours', 100, 0.01), at ORDER BY at, i)
          FROM time_crawl WHERE i < 13),
         'https://example.com/u3', timestamptz '2026-01-01 13:00+00'),
         'https://example.com/u4', timestamptz '2026-01-01 14:00+00') AS agg_is_arrivals;

-- No miss inside the window, against the exact answer: 3,000 arrivals of
-- 50 URLs at random gaps of up to 10 minutes, then the same arrivals
-- jittered out of order by up to 5 minutes with a tolerance of 5 minutes.
-- With refresh, a URL must be found whenever it arrived (earlier in the
-- stream) at most an hour before.
CREATE TABLE time_stream AS
SELECT i, 'https://example.com/' || (abs(hashint4(i)) % 50) AS url,
       timestamptz '2026-01-01 00:00+00' +
         sum(abs(hashint4(i + 1000000)) % 600) OVER (ORDER BY i) * interval '1 second' AS at
FROM generate_series(1, 3000) AS i;
UPDATE time_stream SET at = at + (abs(hashint4(i + 2000000)) % 300 - 150) * interval '1 second';
ALTER TABLE time_stream ADD COLUMN in_order timestamptz;
UPDATE time_stream SET in_order = (SELECT max(at) FROM time_stream AS s WHERE s.i <= time_stream.i);
WITH marked AS (
    SELECT i, url, at, in_order,
           is_duplicate(url, slidingbloom_sized('1 hour', 100, 0.01, refresh => true), in_order)
               OVER (ORDER BY i) AS dup_in_order,
           is_duplicate(url, slidingbloom_sized('1 hour', 100, 0.01, tolerance => '5 minutes',
                                                refresh => true), at)
               OVER (ORDER BY i) AS dup_jittered
    FROM time_stream)
SELECT count(*) FILTER (WHERE EXISTS (SELECT FROM time_stream AS e WHERE e.url = m.url AND e.i < m.i
                                      AND e.in_order >= m.in_order - interval '1 hour')) AS in_window,
       count(*) FILTER (WHERE NOT dup_in_order AND EXISTS (
           SELECT FROM time_stream AS e WHERE e.url = m.url AND e.i < m.i
           AND e.in_order >= m.in_order - interval '1 hour')) AS misses_in_order,
       count(*) FILTER (WHERE NOT dup_jittered AND EXISTS (
           SELECT FROM time_stream AS e WHERE e.url = m.url AND e.i < m.i
           AND e.at >= m.at - interval '1 hour')) AS misses_jittered,
       count(*) FILTER (WHERE dup_in_order AND NOT EXISTS (
           SELECT FROM time_stream AS e WHERE e.url = m.url AND e.i < m.i
           AND e.in_order >= m.in_order - interval '1 hour 2 minutes')) <= 30 AS few_found_past_horizon
FROM marked AS m;

-- The text form keeps the clock (binary COPY: t/021_binary_copy.pl).
SELECT f = f::text::slidingbloom AS text_round_trip,
       slidingbloom_info(f)->>'newest_tick' AS newest_tick
FROM batch_state;

-- The rate at capacity: 1,000 new URLs a window, for 20 windows, all
-- distinct, every one found is a false positive.  Sized for 1%.
SELECT round(avg(dup::int), 4) AS measured_fpr,
       avg(dup::int) BETWEEN 0.005 AND 0.011 AS within_10_percent
FROM (SELECT is_duplicate(i, slidingbloom_sized('1 hour', 1000, 0.01),
                          timestamptz '2026-01-01 00:00+00' + i * interval '3.6 seconds')
                OVER (ORDER BY i) AS dup
      FROM generate_series(1, 20000) AS i) AS s;

-- A budget: slidingbloom_fit(interval, max_bytes, capacity) fills it.
SELECT (f->>'size_bytes')::int AS empty_bytes,
       pg_column_size(slidingbloom_add(slidingbloom_fit(interval '7 days', 4096, 1000), 'x', now())) AS bytes,
       f->>'window' AS "window", f->>'capacity' AS capacity
FROM slidingbloom_info(slidingbloom_fit(interval '7 days', 4096, 1000)) AS f;

-- Mixing up the two kinds of window, and bad arguments: clear ERRORs.
SELECT slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01), 'a');
SELECT is_duplicate(url, slidingbloom_sized('1 hour', 100, 0.01)) OVER (ORDER BY i) FROM time_crawl LIMIT 1;
SELECT is_duplicate(url, slidingbloom_sized(100, 0.01), at) OVER (ORDER BY i) FROM time_crawl LIMIT 1;
SELECT slidingbloom_add(slidingbloom_sized(100, 0.01), 'a', now());
SELECT is_duplicate(url, slidingbloom_sized('1 hour', 100, 0.01), NULL::timestamptz) OVER (ORDER BY i) FROM time_crawl LIMIT 1;
SELECT slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01), 'a', NULL::timestamptz);
SELECT slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01), NULL::text, now()) IS NOT NULL AS null_is_no_arrival;
SELECT slidingbloom_add(slidingbloom_sized('1 hour', 100, 0.01), 'a', 'infinity'::timestamptz);
SELECT slidingbloom_sized('0 hours', 100, 0.01);
SELECT slidingbloom_sized('-1 hour', 100, 0.01);
SELECT slidingbloom_sized('1 hour', 100, 0.01, tolerance => '-1 second');
SELECT slidingbloom_info(slidingbloom_sized('280000 years', 100, 0.01))->>'stale_horizon' AS longest;
SELECT slidingbloom_sized('300000 years', 100, 0.01);
SELECT slidingbloom_sized('106000000 days', 100, 0.01);
SELECT slidingbloom_sized('2147483647 months', 100, 0.01);
SELECT slidingbloom_sized('1 hour', 100, 0.01, tolerance => '100000000 hours');
SELECT slidingbloom_sized('1 hour', 0, 0.01);
SELECT slidingbloom_sized('1 hour', 100, 1.5);
SELECT slidingbloom_fit(interval '1 hour', 100, 100);
SELECT slidingbloom_stale_rate(slidingbloom_sized('1 hour', 100, 0.01), 10);

DROP TABLE time_crawl, time_stream, batch_state;
