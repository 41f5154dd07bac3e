--
-- stablebloom: a Stable Bloom filter for endless streams.  Old elements
-- fade out, so the false-positive rate stays bounded however long the
-- stream, at the price of some false negatives.
--

-- Choosing P, the decrements per insertion, from a target false-positive
-- rate: the configuration that reached F1 = 0.748 on a Common Crawl stream
-- (fpr 0.05, 40M cells, 8 hashes, Max 1) needs P = 3.63, rounded to 4.
SELECT round(stablebloom_p(0.05, 8, 40000000, 1)::numeric, 4) AS p;
SELECT stablebloom_info(stablebloom_sized(40000000, 0.05, 8, 1)) ->> 'decrements' AS sized_p;

-- At the stable point a third of the cells are zero, and the
-- false-positive rate is 3.9% with P = 4 (5% with the exact P)
SELECT round(stablebloom_stable_zeros(40000000, 8, 4, 1)::numeric, 4) AS stable_zeros,
	   round(stablebloom_fpr(40000000, 8, 4, 1)::numeric, 4) AS stable_fpr,
	   round(stablebloom_fpr(40000000, 8, stablebloom_p(0.05, 8, 40000000, 1), 1)::numeric, 4) AS exact_p_fpr;

-- More decrements forget faster: fewer false positives, more false negatives
SELECT p, round(stablebloom_fpr(100000, 4, p, 1)::numeric, 4) AS stable_fpr
FROM (VALUES (1), (4), (16), (64)) v(p);

-- P = 0 never forgets: it saturates like a Bloom filter
SELECT stablebloom_stable_zeros(100000, 4, 0, 1) AS zeros, stablebloom_fpr(100000, 4, 0, 1) AS fpr;

-- A filter: cells, hashes, Max, P, seed.  Max = 3 packs cells in 2 bits.
SELECT stablebloom_info(stablebloom_empty(1000, 4, 3, 10, 7)) AS info;

-- Adding and testing
SELECT stablebloom_contains(f, 'https://www.postgresql.org/') AS has_pg,
	   stablebloom_contains(f, 'https://www.rust-lang.org/') AS has_rust,
	   f @> 'https://www.postgresql.org/'::text AS op_contains,
	   'https://www.rust-lang.org/'::text <@ f AS op_contained,
	   stablebloom_info(f) ->> 'insertions' AS insertions
FROM (SELECT stablebloom_add(stablebloom_sized(10000, 0.01, 4), 'https://www.postgresql.org/') AS f) s;

-- text, bytea and bigint; adding NULL changes nothing, testing NULL is NULL
SELECT stablebloom_add(f, 'abc'::text) = stablebloom_add(f, 'abc'::bytea) AS text_is_bytea,
	   stablebloom_add(f, 42::bigint) @> 42::bigint AS has_42,
	   stablebloom_add(f, NULL::text) = f AS null_adds_nothing,
	   stablebloom_contains(f, NULL::text) AS null_test
FROM (SELECT stablebloom_sized(10000, 0.01, 4) AS f) s;

-- Forgetting: 20 cells, P = 10, so each insertion decrements half the
-- filter; the first URL is soon forgotten (a false negative to come)
WITH RECURSIVE steps(i, f) AS (
	SELECT 0, stablebloom_add(stablebloom_empty(20, 2, 1, 10), 'first')
	UNION ALL
	SELECT i + 1, stablebloom_add(f, 'other-' || i) FROM steps WHERE i < 5
)
SELECT i AS later_insertions, f @> 'first'::text AS remembers_first,
	   stablebloom_info(f) ->> 'zero_cells' AS zero_cells
FROM steps;

-- The same inputs in the same order give the same filter (the PRNG state
-- is part of the value), and another seed another one
SELECT stablebloom_add(stablebloom_add(stablebloom_sized(1000, 0.05, 4), 'a'), 'b') =
	   stablebloom_add(stablebloom_add(stablebloom_sized(1000, 0.05, 4), 'a'), 'b') AS reproducible,
	   stablebloom_add(stablebloom_sized(1000, 0.05, 4), 'a') =
	   stablebloom_add(stablebloom_sized(1000, 0.05, 4, 1, 99), 'a') AS same_with_other_seed;

-- The text form is "\x" and the stored bytes (docs/format.md); an empty
-- filter is its header (flags 1: no cells stored), a used one has its cells
SELECT stablebloom_empty(16, 2, 3, 1);
SELECT stablebloom_add(stablebloom_empty(16, 2, 3, 1), 'x');
SELECT f::text::stablebloom = f AS text_round_trip
FROM (SELECT stablebloom_add(stablebloom_empty(1000, 3, 5, 7), 'x') AS f) s;

--
-- Marking a stream: is_duplicate and stablebloom_agg
--

CREATE TABLE stream (pos bigint PRIMARY KEY, url text);
INSERT INTO stream
	SELECT g, 'https://example.org/' || (g % 7) FROM generate_series(1, 20) g;
INSERT INTO stream VALUES (21, NULL);

-- Every URL repeats every 7 rows; a big enough filter flags them all
SELECT pos, url, is_duplicate(url, stablebloom_sized(10000, 0.01, 4)) OVER (ORDER BY pos)
FROM stream WHERE pos <= 10 ORDER BY pos;

-- With Max = 1 and P = 0 it is a Bloom filter: the same flags, false
-- positives included (300 distinct values in 256 cells)
SELECT count(*) FILTER (WHERE a <> b) AS differences, count(*) FILTER (WHERE a) AS flagged
FROM (SELECT is_duplicate(g, stablebloom_empty(256, 2, 1, 0)) OVER (ORDER BY g) AS a,
			 is_duplicate(g, bloom_empty(256, 2)) OVER (ORDER BY g) AS b
	  FROM generate_series(1, 300) g) s;

-- stablebloom_agg inserts in the aggregate's ORDER BY; marking batch 2
-- from the filter of batch 1 gives the flags of one pass over both
CREATE TABLE stream_state (filter stablebloom);
INSERT INTO stream_state
	SELECT stablebloom_agg(url, stablebloom_empty(40, 2, 1, 3) ORDER BY pos)
	FROM stream WHERE pos <= 12;
SELECT count(*) AS batch2_rows, count(*) FILTER (WHERE batch2 <> one_pass) AS differences,
	   count(*) FILTER (WHERE batch2) AS flagged
FROM (SELECT pos, is_duplicate(url, (SELECT filter FROM stream_state)) OVER (ORDER BY pos) AS batch2,
			 one_pass
	  FROM (SELECT pos, url,
				   is_duplicate(url, stablebloom_empty(40, 2, 1, 3)) OVER (ORDER BY pos) AS one_pass
			FROM stream) s
	  WHERE pos > 12) t;

-- ... and the filter after both batches is the filter of one pass
SELECT (SELECT stablebloom_agg(url, (SELECT filter FROM stream_state) ORDER BY pos)
		FROM stream WHERE pos > 12) =
	   (SELECT stablebloom_agg(url, stablebloom_empty(40, 2, 1, 3) ORDER BY pos)
		FROM stream) AS continued_is_one_pass;

-- NULL urls are not inserted; no rows give NULL
SELECT stablebloom_info(stablebloom_agg(url, stablebloom_empty(40, 2, 1, 3) ORDER BY pos)) ->> 'insertions' AS insertions
FROM stream;
SELECT stablebloom_agg(url, stablebloom_empty(40, 2, 1, 3)) IS NULL AS no_rows FROM stream WHERE false;

--
-- The crawler's batch pattern (docs/stablebloom.md): mark each new batch
-- from the stored filter, then store the filter after the batch.  (In a
-- schema of its own: other tests have tables of the same names.)
--
CREATE SCHEMA crawler;
SET search_path = crawler, public;
CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE crawl_state (id int PRIMARY KEY, filter stablebloom NOT NULL,
						  marked_up_to bigint NOT NULL);
INSERT INTO crawl_state VALUES (1, stablebloom_empty(40, 2, 1, 3), 0);
CREATE TABLE fetched (pos bigint, url text);

CREATE PROCEDURE pg_temp.mark_batch() LANGUAGE sql AS $$
	INSERT INTO fetched
	SELECT pos, url
	FROM (SELECT pos, url,
				 is_duplicate(url, (SELECT filter FROM crawl_state WHERE id = 1))
					 OVER (ORDER BY pos) AS seen
		  FROM crawl
		  WHERE pos > (SELECT marked_up_to FROM crawl_state WHERE id = 1)) s
	WHERE NOT seen;

	UPDATE crawl_state
	SET filter = (SELECT stablebloom_agg(url, crawl_state.filter ORDER BY pos)
				  FROM crawl WHERE pos > crawl_state.marked_up_to),
		marked_up_to = (SELECT max(pos) FROM crawl)
	WHERE id = 1 AND EXISTS (SELECT FROM crawl WHERE pos > crawl_state.marked_up_to);
$$;

-- two batches of discovered links
INSERT INTO crawl SELECT pos, url FROM stream WHERE pos <= 10;
CALL pg_temp.mark_batch();
INSERT INTO crawl SELECT pos, url FROM stream WHERE pos > 10 AND url IS NOT NULL;
CALL pg_temp.mark_batch();
CALL pg_temp.mark_batch();	-- nothing new: nothing changes

-- what was fetched is what one pass over everything would fetch
CREATE TABLE one_pass AS
	SELECT pos, url FROM (
		SELECT pos, url, is_duplicate(url, stablebloom_empty(40, 2, 1, 3)) OVER (ORDER BY pos) AS seen
		FROM crawl) s
	WHERE NOT seen;
SELECT (SELECT count(*) FROM fetched) AS fetched, (SELECT count(*) FROM one_pass) AS one_pass,
	   (SELECT count(*) FROM (TABLE fetched EXCEPT TABLE one_pass) d) AS only_in_batches,
	   (SELECT count(*) FROM (TABLE one_pass EXCEPT TABLE fetched) d) AS only_in_one_pass;
SELECT marked_up_to,
	   filter = (SELECT stablebloom_agg(url, stablebloom_empty(40, 2, 1, 3) ORDER BY pos) FROM crawl)
		   AS filter_is_one_pass
FROM crawl_state;
RESET search_path;
