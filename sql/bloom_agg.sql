--
-- Aggregates: bloom_agg builds a filter from rows, bloom_union_agg merges
-- filters.
--

CREATE TABLE crawl (pos bigint PRIMARY KEY, host text, url text);
INSERT INTO crawl VALUES
	(1, 'pg', 'https://www.postgresql.org/docs/15/index.html'),
	(2, 'pg', 'https://www.postgresql.org/docs/15/sql.html'),
	(3, 'py', 'https://docs.python.org/3.11/index.html'),
	(4, 'pg', 'https://www.postgresql.org/docs/15/index.html'),
	(5, 'py', 'https://docs.python.org/3.11/library/index.html'),
	(6, 'py', NULL),
	(7, 'py', 'https://docs.python.org/3.11/index.html');

-- One filter for the whole crawl, sized for 1000 URLs at 1%
SELECT bloom_info(bloom_agg(url, 1000, 0.01)) ->> 'bits' AS bits,
	   bloom_contains(bloom_agg(url, 1000, 0.01), 'https://www.postgresql.org/docs/15/sql.html') AS has_sql,
	   bloom_contains(bloom_agg(url, 1000, 0.01), 'https://www.postgresql.org/') AS has_root
FROM crawl;

-- One filter per host
CREATE TABLE host_filters AS
	SELECT host, bloom_agg(url, 1000, 0.01) AS filter FROM crawl GROUP BY host;
SELECT host, round(bloom_cardinality(filter)) AS urls,
	   filter @> 'https://docs.python.org/3.11/index.html'::text AS has_py_index
FROM host_filters ORDER BY host;

-- Merging the per-host filters gives exactly the filter of the whole crawl
SELECT (SELECT bloom_union_agg(filter) FROM host_filters) =
	   (SELECT bloom_agg(url, 1000, 0.01) FROM crawl) AS union_is_whole;

-- The template form starts from an existing filter: its parameters and
-- contents.  Adding the second half of a crawl to the filter of the first
-- half gives the filter of the whole.
SELECT (SELECT bloom_agg(url, (SELECT bloom_agg(url, 1000, 0.01) FROM crawl WHERE pos <= 3))
		FROM crawl WHERE pos > 3) =
	   (SELECT bloom_agg(url, 1000, 0.01) FROM crawl) AS continued_is_whole;

-- bigint and bytea elements
SELECT bloom_agg(pos, 100, 0.01) @> 4::bigint AS has_4,
	   bloom_agg(convert_to(url, 'UTF8'), 100, 0.01) @> convert_to('https://docs.python.org/3.11/index.html', 'UTF8') AS has_bytes
FROM crawl;

-- No rows: no filter.  All-NULL rows: an empty filter.
SELECT bloom_agg(url, 1000, 0.01) IS NULL AS no_rows FROM crawl WHERE false;
SELECT bloom_info(bloom_agg(url, 1000, 0.01)) ->> 'bits_set' AS bits_set FROM crawl WHERE url IS NULL;
SELECT bloom_union_agg(filter) IS NULL AS no_filters FROM host_filters WHERE false;
SELECT bloom_union_agg(f) IS NULL AS only_null_filters FROM (VALUES (NULL::bloom), (NULL)) v(f);
SELECT g, bloom_union_agg(f) IS NULL AS only_nulls
FROM (VALUES (1, NULL::bloom), (2, bloom_empty(64, 3)), (2, NULL)) v(g, f)
GROUP BY g ORDER BY g;
SELECT i, bloom_union_agg(f) OVER (ORDER BY i) IS NULL AS nothing_yet
FROM (VALUES (1, NULL::bloom), (2, NULL), (3, bloom_empty(64, 3))) v(i, f);

-- As a window aggregate, the filter grows with the frame; the final
-- function may be called for every row
SELECT pos, round(bloom_cardinality(bloom_agg(url, 1000, 0.01) OVER (ORDER BY pos))) AS urls_so_far,
	   round(bloom_cardinality(bloom_agg(url, 1000, 0.01) OVER (ORDER BY pos ROWS BETWEEN 1 PRECEDING AND CURRENT ROW))) AS urls_in_last_two
FROM crawl ORDER BY pos;

-- Filters with different parameters do not merge
SELECT bloom_union_agg(f) FROM (VALUES (bloom_empty(64, 3)), (bloom_empty(128, 3))) v(f);
