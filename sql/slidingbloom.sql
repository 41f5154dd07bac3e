--
-- slidingbloom: "have I met this URL among the last w links?"  A value
-- that arrived within the window is always found; older ones fade out;
-- memory does not grow with the stream.
--

-- Planning: the bytes for a window at a false-positive rate, beside a
-- Bloom filter for as many elements (which would not forget) and the
-- 1.3 w log10(1/fpr) bytes Shtul, Baquero & Almeida report
SELECT w, fpr, slidingbloom_bytes(w, fpr) AS bytes,
	   round(slidingbloom_bytes(w, fpr)::numeric / w, 2) AS bytes_per_element,
	   round(1.3 * log(1 / fpr)::numeric, 2) AS paper,
	   bloom_optimal_bits(w, fpr) / 8 AS bloom_bytes
FROM (VALUES (10000, 0.01), (10000, 0.001), (1000000, 0.01), (1000000, 0.0001)) v(w, fpr);

-- The structure chosen for 10,000 links at 1%: k slices per value out of
-- k + l, g links per generation; l g covers the window, and a value is
-- forgotten for good after (k + l) g links
SELECT i ->> 'hashes' AS hashes, i ->> 'slices' AS slices, i ->> 'slice_bits' AS slice_bits,
	   i ->> 'generation' AS generation, i ->> 'guaranteed_window' AS guaranteed_window,
	   i ->> 'stale_horizon' AS stale_horizon,
	   round((i ->> 'fpr_bound')::numeric, 5) AS fpr_bound,
	   i ->> 'size_bytes' AS size_bytes, i ->> 'refresh' AS refresh
FROM (SELECT slidingbloom_info(slidingbloom_sized(10000, 0.01)) AS i) s;

-- slidingbloom_sized takes the fewest bytes that meet the rate and cover
-- the window.  Against an exhaustive search: every layout of fewer words
-- (k hashes, l more slices, at most 64 slices, whole words a slice, g =
-- ceil(w / l): a larger g only fills the slices more), none of which may
-- meet the rate
WITH sized AS (
	SELECT w, fpr, (i ->> 'slices')::int * ((i ->> 'slice_bits')::bigint / 64) AS words,
		   (i ->> 'fpr_bound')::float8 <= fpr AS meets_rate,
		   (i ->> 'guaranteed_window')::bigint >= w AS covers_window
	FROM (VALUES (1), (3), (10), (50), (150), (200), (300), (400)) ws(w),
		 (VALUES (0.1::float8), (0.01), (0.001)) fs(fpr),
		 LATERAL slidingbloom_info(slidingbloom_sized(w, fpr)) i
), smaller AS (
	-- every layout of fewer words: k hashes, l more slices, g = ceil(w / l)
	SELECT s.w, s.fpr,
		   count(*) FILTER (WHERE (slidingbloom_info(slidingbloom_empty(m * 64, k, k + l, (s.w + l - 1) / l)) ->> 'fpr_bound')::float8 <= s.fpr) AS meeting
	FROM sized s, generate_series(1, 63) k, generate_series(1, 64 - k) l,
		 generate_series(1, (s.words - 1) / (k + l)) m
	GROUP BY s.w, s.fpr
)
SELECT w, fpr, words, meets_rate, covers_window, coalesce(meeting, 0) AS smaller_layouts_meeting_the_rate
FROM sized LEFT JOIN smaller USING (w, fpr) ORDER BY fpr DESC, w;

-- How likely a value last stored d links ago is still reported: certainly
-- within the window, then down to the false-positive rate
SELECT d, round(slidingbloom_stale_rate(slidingbloom_sized(10000, 0.01), d)::numeric, 4) AS reported
FROM (VALUES (1), (10000), (10017), (10100), (10500), (11000), (12000), (20000)) v(d);

-- Explicit structure: 1024 bits per slice, 2 of 5 slices per value, 3
-- arrivals per generation: a window of (5 - 2) * 3 = 9
SELECT slidingbloom_info(slidingbloom_empty(1024, 2, 5, 3, 7)) - 'slice_fill' AS info;

-- Adding (one arrival) and testing
SELECT slidingbloom_contains(f, 'https://www.postgresql.org/') AS has_pg,
	   slidingbloom_contains(f, 'https://www.rust-lang.org/') AS has_rust,
	   f @> 'https://www.postgresql.org/'::text AS op_contains,
	   'https://www.rust-lang.org/'::text <@ f AS op_contained,
	   slidingbloom_info(f) ->> 'arrivals' AS arrivals
FROM (SELECT slidingbloom_add(slidingbloom_sized(1000, 0.01), 'https://www.postgresql.org/') AS f) s;

-- text, bytea and bigint; NULL is no arrival, testing NULL is NULL
SELECT slidingbloom_add(f, 'abc'::text) = slidingbloom_add(f, 'abc'::bytea) AS text_is_bytea,
	   slidingbloom_add(f, 42::bigint) @> 42::bigint AS has_42,
	   slidingbloom_add(f, NULL::text) = f AS null_is_no_arrival,
	   slidingbloom_contains(f, NULL::text) AS null_test
FROM (SELECT slidingbloom_sized(1000, 0.01) AS f) s;

-- Forgetting: window 9 (3 generations of 3), 'first' then other values;
-- it is found for at least 9 arrivals after it (here 11: it came first in
-- its generation), and for at most (2 + 3) * 3 - 1 = 14
WITH RECURSIVE steps(i, f) AS (
	SELECT 0, slidingbloom_add(slidingbloom_empty(1024, 2, 5, 3), 'first')
	UNION ALL
	SELECT i + 1, slidingbloom_add(f, 'other-' || i) FROM steps WHERE i < 15
)
SELECT i AS later_arrivals, f @> 'first'::text AS remembers_first,
	   slidingbloom_info(f) ->> 'newest' AS newest,
	   slidingbloom_info(f) ->> 'generation_fill' AS generation_fill
FROM steps ORDER BY i;

-- The text form is "\x" and the stored bytes (docs/format.md); an empty
-- filter is its header (flags 1: no slices stored; 3 with refresh)
SELECT slidingbloom_empty(64, 1, 2, 1);
SELECT slidingbloom_empty(64, 1, 2, 1, 0, true);
SELECT slidingbloom_add(slidingbloom_empty(64, 1, 2, 1), 'x');
SELECT f::text::slidingbloom = f AS text_round_trip,
	   slidingbloom_send(f) = f::text::bytea AS send_is_text
FROM (SELECT slidingbloom_add(slidingbloom_sized(500, 0.05), 'x') AS f) s;

--
-- Marking a crawl's repeats within the last 10,000 links (in a schema of
-- its own: other tests have tables of the same names)
--
CREATE SCHEMA sliding;
SET search_path = sliding, public;

-- 40,000 discovered links over 16,000 URLs, each met about 2.5 times at
-- random distances, and a news page met every 4,000 links
CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL);
INSERT INTO crawl
	SELECT pos, CASE WHEN pos % 4000 = 1 THEN 'https://example.org/news'
				ELSE 'https://example.org/page/' ||
					 (('x' || substr(md5(pos::text), 1, 8))::bit(32)::bigint % 16000) END
	FROM generate_series(1, 40000) pos;

-- refresh = true: a link is a repeat when the same URL is among the 9,999
-- links before it.  The flags miss none of those, and add about 1% of the
-- others (false positives), some of them stale (met 10,000 to 12,000 links
-- before).
CREATE TABLE marked AS
SELECT pos, url,
	   is_duplicate(url, slidingbloom_sized(10000, 0.01, 0, true)) OVER (ORDER BY pos) AS flagged,
	   pos - lag(pos) OVER (PARTITION BY url ORDER BY pos) AS distance
FROM crawl;
SELECT count(*) FILTER (WHERE distance < 10000) AS repeats_in_window,
	   count(*) FILTER (WHERE flagged) AS flagged,
	   count(*) FILTER (WHERE distance < 10000 AND NOT flagged) AS missed,
	   count(*) FILTER (WHERE flagged AND distance >= 10000) AS stale,
	   count(*) FILTER (WHERE flagged AND distance IS NULL) AS false_positives,
	   count(*) FILTER (WHERE distance IS NULL) AS first_sightings
FROM marked;

-- The news page: every sighting refreshes it, so it is never new again
SELECT pos, flagged FROM marked WHERE url = 'https://example.org/news' ORDER BY pos;

-- refresh = false (the seed's definition, "re-crawl at most once per
-- window"): only a link reported new is stored, so the news page is new
-- again once its last *reported* sighting is out of the window
SELECT pos, is_dup
FROM (SELECT pos, url, is_duplicate(url, slidingbloom_sized(10000, 0.01)) OVER (ORDER BY pos) AS is_dup
	  FROM crawl) s
WHERE url = 'https://example.org/news' ORDER BY pos;

-- No false negative: every link whose URL was reported new within the
-- 9,999 links before it is flagged
SELECT count(*) AS links, count(*) FILTER (WHERE flagged) AS flagged,
	   count(*) FILTER (WHERE NOT flagged AND pos - last_reported_new < 10000) AS missed
FROM (SELECT pos, flagged,
			 max(pos) FILTER (WHERE NOT flagged)
				 OVER (PARTITION BY url ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
				 AS last_reported_new
	  FROM (SELECT pos, url,
				   is_duplicate(url, slidingbloom_sized(10000, 0.01)) OVER (ORDER BY pos) AS flagged
			FROM crawl) s) t;

--
-- Batches: slidingbloom_agg carries the window from one batch to the next
--

-- the filter after batch 1 (links 1..25,000), marking batch 2 from it,
-- gives the flags of one pass over both
CREATE TABLE crawl_state (filter slidingbloom);
INSERT INTO crawl_state
	SELECT slidingbloom_agg(url, slidingbloom_sized(10000, 0.01) ORDER BY pos)
	FROM crawl WHERE pos <= 25000;
SELECT slidingbloom_info(filter) ->> 'arrivals' AS arrivals,
	   slidingbloom_info(filter) ->> 'generation_fill' AS generation_fill,
	   slidingbloom_info(filter) ->> 'newest' AS newest
FROM crawl_state;
SELECT count(*) AS batch2_rows, count(*) FILTER (WHERE batch2 <> one_pass) AS differences,
	   count(*) FILTER (WHERE batch2) AS flagged
FROM (SELECT pos, is_duplicate(url, (SELECT filter FROM crawl_state)) OVER (ORDER BY pos) AS batch2,
			 one_pass
	  FROM (SELECT pos, url,
				   is_duplicate(url, slidingbloom_sized(10000, 0.01)) OVER (ORDER BY pos) AS one_pass
			FROM crawl) s
	  WHERE pos > 25000) t;

-- ... and the filter after both batches is the filter of one pass, stored
-- and read back in its text form
SELECT (SELECT slidingbloom_agg(url, (SELECT filter::text::slidingbloom FROM crawl_state) ORDER BY pos)
		FROM crawl WHERE pos > 25000) =
	   (SELECT slidingbloom_agg(url, slidingbloom_sized(10000, 0.01) ORDER BY pos)
		FROM crawl) AS continued_is_one_pass;

-- NULLs are no arrivals; no rows give NULL
SELECT slidingbloom_info(slidingbloom_agg(v, slidingbloom_sized(100, 0.01) ORDER BY g)) ->> 'arrivals' AS arrivals
FROM (SELECT g, CASE WHEN g % 3 = 0 THEN NULL ELSE g END AS v FROM generate_series(1, 30) g) s;
SELECT slidingbloom_agg(url, slidingbloom_sized(100, 0.01)) IS NULL AS no_rows FROM crawl WHERE false;
SELECT count(*) FILTER (WHERE d) AS flagged, count(*) FILTER (WHERE v IS NULL AND d) AS null_flagged
FROM (SELECT v, is_duplicate(v, slidingbloom_sized(100, 0.01)) OVER (ORDER BY g) AS d
	  FROM (SELECT g, CASE WHEN g % 3 = 0 THEN NULL ELSE g % 5 END AS v
			FROM generate_series(1, 30) g) s) t;

--
-- slidingbloom_fit: the filter for a window within a budget of bytes (the
-- whole value), expected to make the fewest false duplicates: false
-- positives, and stale positives (a value that returns just past the
-- window, still found in the slices of its last generations).  Told how
-- many distinct values a window holds, it cuts the window into finer
-- generations when values recur often; not told, it assumes every value is
-- new and minimises false positives alone.
--
-- (the stamped layout: below)
SELECT d AS distinct_values, i ->> 'layout' AS layout, i ->> 'hashes' AS hashes,
	   i ->> 'slices' AS slices, i ->> 'generation' AS generation, i ->> 'cells' AS cells,
	   (i ->> 'guaranteed_window')::int >= 499 AS covers_window,
	   slidingbloom_info(slidingbloom_add(f, 'x')) ->> 'size_bytes' AS bytes
FROM (VALUES (NULL::bigint), (25), (243), (500)) v(d),
	 LATERAL slidingbloom_fit(500, 1032, 0, true, d) f,
	 LATERAL slidingbloom_info(f) i;

-- 10,000 arrivals among 300 values (about 243 distinct in a window of
-- 500), every sighting restarting a value's window (refresh): no repeat
-- within the window is missed, and the filter told the distinct values
-- makes far fewer false duplicates than the one that assumes all are new
SELECT setseed(0.25);
CREATE TABLE fit_stream AS
	SELECT g AS i, floor(random() * 300)::bigint AS v FROM generate_series(1, 10000) g;
WITH marked AS (
	SELECT coalesce(i - lag(i) OVER (PARTITION BY v ORDER BY i) <= 499, false) AS exact_dup,
		   is_duplicate(v, slidingbloom_fit(500, 1032, 0, true, 243)) OVER (ORDER BY i) AS told,
		   is_duplicate(v, slidingbloom_fit(500, 1032, 0, true)) OVER (ORDER BY i) AS not_told
	FROM fit_stream
)
SELECT count(*) FILTER (WHERE exact_dup AND NOT told) AS told_missed,
	   count(*) FILTER (WHERE exact_dup AND NOT not_told) AS not_told_missed,
	   round(count(*) FILTER (WHERE told AND NOT exact_dup)::numeric
			 / count(*) FILTER (WHERE NOT exact_dup), 3) AS told_false_duplicates,
	   round(count(*) FILTER (WHERE not_told AND NOT exact_dup)::numeric
			 / count(*) FILTER (WHERE NOT exact_dup), 3) AS not_told_false_duplicates
FROM marked;

--
-- The stamped layout: when few values recur often, slidingbloom_fit may
-- choose cells stamped with the arrival that set them, for exact expiry: a
-- value is found for exactly the w - 1 arrivals after it was stored, and
-- not one more (no stale positive).  A sweep of a few cells an arrival
-- keeps the stamps from wrapping around.
--
SELECT i ->> 'layout' AS layout, i ->> 'cells' AS cells, i ->> 'cell_bits' AS cell_bits,
	   i ->> 'hashes' AS hashes, i ->> 'sweep_step' AS sweep_step,
	   i ->> 'guaranteed_window' AS guaranteed_window, i ->> 'stale_horizon' AS stale_horizon
FROM slidingbloom_info(slidingbloom_fit(500, 1032, 0, false, 25)) i;

-- 200,000 arrivals among 30 values, a window of 40 (the stamps wrap around
-- thousands of times), with refresh: the flags are exactly the exact
-- answer, "the same value among the 39 arrivals before"; the stamped
-- layout has room to spare here, so no false positive either
SELECT setseed(0.75);
CREATE TABLE stamped_stream AS
	SELECT g AS i, floor(random() * 30)::bigint AS v FROM generate_series(1, 200000) g;
SELECT slidingbloom_info(slidingbloom_fit(40, 1024, 0, true, 20)) ->> 'layout' AS layout;
SELECT count(*) FILTER (WHERE exact AND NOT flagged) AS missed,
	   count(*) FILTER (WHERE flagged AND NOT exact) AS false_duplicates,
	   count(*) FILTER (WHERE exact) AS duplicates
FROM (SELECT coalesce(i - lag(i) OVER (PARTITION BY v ORDER BY i) <= 39, false) AS exact,
			 is_duplicate(v, slidingbloom_fit(40, 1024, 0, true, 20)) OVER (ORDER BY i) AS flagged
	  FROM stamped_stream) m;

-- without refresh, a value is reported new again exactly w arrivals after
-- it was last reported new: every 40th sighting of a value seen at every
-- arrival
SELECT count(*) FILTER (WHERE NOT flagged) AS reported_new,
	   bool_and((i - 1) % 40 = 0) FILTER (WHERE NOT flagged) AS every_40th
FROM (SELECT i, is_duplicate('same'::text, slidingbloom_fit(40, 1024, 0, false, 1)) OVER (ORDER BY i) AS flagged
	  FROM generate_series(1, 400) i) m;

-- batches continue exactly, through the text form
SELECT (SELECT slidingbloom_agg(v, (SELECT slidingbloom_agg(v, slidingbloom_fit(40, 1024, 0, true, 20) ORDER BY i)
									FROM stamped_stream WHERE i <= 100000)::text::slidingbloom ORDER BY i)
		FROM stamped_stream WHERE i > 100000) =
	   (SELECT slidingbloom_agg(v, slidingbloom_fit(40, 1024, 0, true, 20) ORDER BY i)
		FROM stamped_stream) AS continued_is_one_pass;

-- its statistics: a value stored d arrivals ago is found for d <= w - 1,
-- then only by false positives
SELECT d, round(slidingbloom_stale_rate(slidingbloom_fit(40, 1024, 0, true, 20), d)::numeric, 6) AS reported
FROM (VALUES (1), (39), (40), (1000)) v(d);

DROP SCHEMA sliding CASCADE;
RESET search_path;
