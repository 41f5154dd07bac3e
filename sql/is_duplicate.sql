--
-- is_duplicate(value, filter) OVER (...): mark repeats in a links stream.
-- For each row in window order: was this URL (probably) seen before?
-- Then remember it.
--

CREATE TABLE links (pos bigint PRIMARY KEY, host text, url text);
INSERT INTO links VALUES
	(1, 'pg', 'https://www.postgresql.org/docs/15/index.html'),
	(2, 'pg', 'https://www.postgresql.org/docs/15/sql.html'),
	(3, 'py', 'https://docs.python.org/3.11/index.html'),
	(4, 'pg', 'https://www.postgresql.org/docs/15/index.html'),
	(5, 'py', 'https://docs.python.org/3.11/library/index.html'),
	(6, 'py', NULL),
	(7, 'py', 'https://docs.python.org/3.11/index.html'),
	(8, 'pg', 'https://www.postgresql.org/docs/15/sql.html');

-- The whole links, in discovery order
SELECT pos, url, is_duplicate(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos)
FROM links ORDER BY pos;

-- The URLs to fetch are the rows that are not duplicates
SELECT pos, url FROM (
	SELECT pos, url, is_duplicate(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos) AS dup
	FROM links) s
WHERE NOT dup AND url IS NOT NULL ORDER BY pos;

-- One stream per host: each partition has its own filter
SELECT host, pos, is_duplicate(url, bloom_sized(1000, 0.01)) OVER (PARTITION BY host ORDER BY pos)
FROM links ORDER BY host, pos;

-- Starting from a filter of URLs already fetched: they count as seen
SELECT pos, is_duplicate(url, bloom_add(bloom_sized(1000, 0.01),
		'https://docs.python.org/3.11/library/index.html')) OVER (ORDER BY pos)
FROM links ORDER BY pos;

-- The frame clause does not matter
SELECT count(*) FILTER (WHERE a <> b) AS differences FROM (
	SELECT is_duplicate(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos) AS a,
		   is_duplicate(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) AS b
	FROM links) s;

-- Batch continuation: mark batch 1, store its filter, mark batch 2 from it;
-- the flags are those of one pass over both batches
CREATE TABLE crawl_state (filter bloom);
INSERT INTO crawl_state SELECT bloom_agg(url, bloom_sized(1000, 0.01)) FROM links WHERE pos <= 4;
SELECT pos, is_duplicate(url, (SELECT filter FROM crawl_state)) OVER (ORDER BY pos) AS batch2,
	   one_pass
FROM (SELECT pos, url, is_duplicate(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos) AS one_pass
	  FROM links) s
WHERE pos > 4 ORDER BY pos;

-- bigint and bytea values
SELECT v, is_duplicate(v, bloom_sized(100, 0.01)) OVER (ORDER BY ord)
FROM (VALUES (1, 10::bigint), (2, 20), (3, 10)) t(ord, v);
SELECT is_duplicate('\x00ff'::bytea, bloom_sized(100, 0.01)) OVER (ORDER BY g)
FROM generate_series(1, 2) g;

-- An empty partition yields no rows; a NULL filter is an error
SELECT is_duplicate(url, bloom_sized(100, 0.01)) OVER (ORDER BY pos) FROM links WHERE false;
SELECT is_duplicate(url, NULL::bloom) OVER (ORDER BY pos) FROM links;
