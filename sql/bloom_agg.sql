--
-- Aggregates: bloom_agg builds a filter from rows, bloom_union_agg and
-- bloom_intersect_agg merge filters.
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

-- The intersection of the per-host filters: the URLs met on every host
-- (none here), and with a filter of the whole crawl, one host's URLs
SELECT bloom_cardinality(bloom_intersect_agg(filter)) AS urls_on_every_host
FROM host_filters;
SELECT bloom_intersect_agg(filter) = (SELECT filter FROM host_filters WHERE host = 'py') AS is_py
FROM (SELECT filter FROM host_filters WHERE host = 'py'
	  UNION ALL SELECT bloom_agg(url, 1000, 0.01) FROM crawl) f;
SELECT bloom_intersect_agg(filter) @> 'https://docs.python.org/3.11/index.html'::text AS has_py_index,
	   bloom_intersect_agg(filter) @> 'https://www.postgresql.org/docs/15/sql.html'::text AS has_pg_sql
FROM (SELECT filter FROM host_filters WHERE host = 'py'
	  UNION ALL SELECT bloom_agg(url, 1000, 0.01) FROM crawl) f;

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
SELECT bloom_intersect_agg(f) IS NULL AS only_null_filters FROM (VALUES (NULL::bloom), (NULL)) v(f);
SELECT bloom_intersect_agg(f) = bloom_empty(64, 3) AS nulls_skipped
FROM (VALUES (NULL::bloom), (bloom_empty(64, 3)), (NULL)) v(f);
SELECT i, bloom_union_agg(f) OVER (ORDER BY i) IS NULL AS nothing_yet
FROM (VALUES (1, NULL::bloom), (2, NULL), (3, bloom_empty(64, 3))) v(i, f);

-- As a window aggregate, the filter grows with the frame; the final
-- function may be called for every row
SELECT pos, round(bloom_cardinality(bloom_agg(url, 1000, 0.01) OVER (ORDER BY pos))) AS urls_so_far,
	   round(bloom_cardinality(bloom_agg(url, 1000, 0.01) OVER (ORDER BY pos ROWS BETWEEN 1 PRECEDING AND CURRENT ROW))) AS urls_in_last_two
FROM crawl ORDER BY pos;

-- Every row of a running window gets exactly the filter of the rows so far,
-- although the state is one filter that grows in place; a frame that
-- starts over gets the filter of its own rows
SELECT pos,
	   running = (SELECT bloom_agg(url, 1000, 0.01) FROM crawl c WHERE c.pos <= w.pos) AS running_exact,
	   from_template = (SELECT bloom_agg(url, bloom_sized(1000, 0.01)) FROM crawl c WHERE c.pos <= w.pos) AS template_exact,
	   last_two = (SELECT bloom_agg(url, 1000, 0.01) FROM crawl c WHERE c.pos BETWEEN w.pos - 1 AND w.pos) AS last_two_exact,
	   (bloom_info(running) ->> 'bits_set')::int AS bits_set
FROM (SELECT pos,
			 bloom_agg(url, 1000, 0.01) OVER (ORDER BY pos) AS running,
			 bloom_agg(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos) AS from_template,
			 bloom_agg(url, 1000, 0.01) OVER (ORDER BY pos ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS last_two
	  FROM crawl) w
ORDER BY pos;
SELECT host, u = (SELECT bloom_union_agg(filter) FROM host_filters h WHERE h.host <= w.host) AS union_exact,
	   x = (SELECT bloom_intersect_agg(filter) FROM host_filters h WHERE h.host <= w.host) AS intersection_exact
FROM (SELECT host, bloom_union_agg(filter) OVER (ORDER BY host) AS u,
			 bloom_intersect_agg(filter) OVER (ORDER BY host) AS x
	  FROM host_filters) w
ORDER BY host;

-- With DISTINCT or ORDER BY (the executor sorts the input first): the same
-- filter, since a filter is a set
SELECT bloom_agg(DISTINCT url, 1000, 0.01) = bloom_agg(url, 1000, 0.01) AS distinct_same,
	   bloom_agg(url, 1000, 0.01 ORDER BY url DESC) = bloom_agg(url, 1000, 0.01) AS ordered_same,
	   bloom_agg(DISTINCT url, 1000, 0.01) @> 'https://docs.python.org/3.11/index.html'::text AS has_py_index
FROM crawl;

-- Many groups: hashed, also spilling to disk, and sorted, the same filters
CREATE TABLE grouped_crawl AS
	SELECT i % 500 AS grp, 'https://example.org/' || i AS url FROM generate_series(1, 20000) i;
ANALYZE grouped_crawl;
SET enable_sort = off;
SET work_mem = '64kB';
EXPLAIN (COSTS OFF) SELECT grp, bloom_agg(url, 100, 0.01) FROM grouped_crawl GROUP BY grp;
CREATE TABLE hashed AS SELECT grp, bloom_agg(url, 100, 0.01) AS f FROM grouped_crawl GROUP BY grp;
RESET work_mem;
RESET enable_sort;
SET enable_hashagg = off;
CREATE TABLE sorted AS SELECT grp, bloom_agg(url, 100, 0.01) AS f FROM grouped_crawl GROUP BY grp;
RESET enable_hashagg;
SELECT count(*) AS groups, count(*) FILTER (WHERE h.f = s.f) AS same,
	   count(*) FILTER (WHERE h.f @> ('https://example.org/' || (500 + h.grp))::text) AS have_a_member
FROM hashed h JOIN sorted s USING (grp);
DROP TABLE grouped_crawl, hashed, sorted;

-- The support functions called directly, outside an aggregate, return a
-- new filter and never write into their argument: the stored filter is
-- the same in the same row and after
CREATE TABLE stored AS
	SELECT bloom_agg(url, 1000, 0.01) AS f, bloom_agg(url, 1000, 0.01) AS g FROM crawl WHERE pos <= 3;
SELECT bloom_agg_trans(f, 'new'::text, NULL, NULL) @> 'new'::text AS result_has_new,
	   f @> 'new'::text AS stored_has_new,
	   bloom_agg_trans(f, 'https://example.org/'::text, f) @> 'https://example.org/'::text AS template_result_has_it,
	   bloom_agg_trans(NULL, 'new'::text, 1000, 0.01) = bloom_add(bloom_sized(1000, 0.01), 'new') AS from_nothing,
	   bloom_agg_combine(f, bloom_add(bloom_sized(1000, 0.01), 'other')) @> 'other'::text AS union_has_other,
	   bloom_agg_combine(NULL, f) = f AS union_with_nothing,
	   bloom_intersect_agg_combine(f, bloom_sized(1000, 0.01)) = bloom_sized(1000, 0.01) AS intersection_is_empty,
	   f @> 'new'::text OR f @> 'other'::text OR bloom_cardinality(f) < 2 AS stored_changed
FROM stored;
SELECT f = g AS stored_unchanged FROM stored;
DROP TABLE stored;

-- Filters with different parameters do not merge
SELECT bloom_union_agg(f) FROM (VALUES (bloom_empty(64, 3)), (bloom_empty(128, 3))) v(f);
SELECT bloom_intersect_agg(f) FROM (VALUES (bloom_empty(64, 3)), (bloom_empty(64, 4))) v(f);

-- Under parallel query the partial unions and intersections combine to the
-- serial result, also when some workers see only NULL filters
CREATE TABLE many_filters AS
	SELECT i, CASE WHEN i % 3 = 0 THEN NULL
				   ELSE bloom_add(bloom_add(bloom_empty(1024, 3), 'every'), 'f' || i) END AS f
	FROM generate_series(1, 30000) i;
ALTER TABLE many_filters SET (parallel_workers = 2);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_intersect_agg(f) FROM many_filters;
CREATE TABLE parallel_result AS
	SELECT bloom_union_agg(f) AS u, bloom_intersect_agg(f) AS x FROM many_filters;
CREATE TABLE parallel_nulls AS
	SELECT bloom_union_agg(f) AS u, bloom_intersect_agg(f) AS x FROM many_filters WHERE f IS NULL;
RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;
SELECT p.u = s.u AS same_union, p.x = s.x AS same_intersection,
	   p.x @> 'every'::text AS x_has_every, bloom_cardinality(p.x) < 2 AS x_has_little
FROM parallel_result p,
	 (SELECT bloom_union_agg(f) AS u, bloom_intersect_agg(f) AS x FROM many_filters) s;
SELECT u IS NULL AS union_of_nulls, x IS NULL AS intersection_of_nulls FROM parallel_nulls;
RESET ALL;
