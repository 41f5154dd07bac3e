--
-- Shared filters under hostile or careless use: every SQL command a user
-- may aim at an sbf_filter table, and every function with bad arguments.
-- Each is either done right or refused with a clear ERROR (SQLSTATE,
-- message and detail shown), never a crash or a wrong answer.
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

-- The values 'v1' .. 'v1000' are in every filter made from this one; the
-- queries below count, for a filter f, how many of them it misses (false
-- negatives: must be 0) and how many of 'w1' .. 'w1000', never added, it
-- finds (false positives: a few at most)
SELECT shared_bloom_create('visited', 1000000, 0.01);
SELECT count(*) FILTER (WHERE seen) AS seen_before
  FROM unnest(shared_test_and_add('visited', ARRAY(SELECT 'v' || g FROM generate_series(1, 1000) g))) seen;
CREATE FUNCTION pg_temp.misses(f regclass) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM generate_series(1, 1000) g WHERE NOT shared_contains(f, 'v' || g) $$;
CREATE FUNCTION pg_temp.false_hits(f regclass) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM generate_series(1, 1000) g WHERE shared_contains(f, 'w' || g) $$;
SELECT pg_temp.misses('visited'), pg_temp.false_hits('visited') < 30 AS few_false_hits;
-- its rows: page 0 (the parameters, 64 bytes), then each data page written
SELECT count(*) AS rows, min(page), max(page), min(length(data)) FILTER (WHERE page > 0) AS data_length
  FROM visited;

--
-- Reading the table
--

-- WHERE, ORDER BY, LIMIT, aggregates: rows in page order
SELECT page, length(data) FROM visited WHERE page IN (0, 1, 2) ORDER BY page DESC;
SELECT page FROM visited ORDER BY page LIMIT 2 OFFSET 1;
SELECT count(*) = count(DISTINCT page) AS pages_once, bool_and(page >= 0) AS pages_valid FROM visited;
-- a cursor reads backwards as well as forwards (a SCROLL cursor over a
-- sequential scan asks the table for rows in both directions)
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT page, length(data) FROM visited WHERE page < 4 OR page = 0;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH PRIOR FROM c;
FETCH ABSOLUTE 1 FROM c;
MOVE FORWARD ALL IN c;
FETCH BACKWARD 1 FROM c;
FETCH RELATIVE 0 FROM c;
FETCH FIRST FROM c;
FETCH BACKWARD 1 FROM c;
FETCH NEXT FROM c;
CLOSE c;
-- without SCROLL, a cursor still goes back when its plan can, as for heap
DECLARE d CURSOR FOR SELECT page FROM visited;
FETCH 2 FROM d;
FETCH BACKWARD 1 FROM d;
ROLLBACK;
-- the ctid of page n's row is (n,1): a Tid Scan fetches it, and finds
-- nothing at any other ctid
SELECT ctid, tableoid::regclass, page FROM visited WHERE page < 2;
EXPLAIN (COSTS OFF) SELECT page FROM visited WHERE ctid = '(1,1)';
SELECT page, length(data) FROM visited WHERE ctid = '(1,1)';
SELECT page FROM visited WHERE ctid = ANY (ARRAY['(0,1)', '(2,1)', '(2,1)', '(1,2)', '(1,0)', '(4294967294,1)']::tid[]);
SET enable_tidscan = off;
SELECT page FROM visited WHERE ctid = ANY (ARRAY['(0,1)', '(2,1)', '(2,1)', '(1,2)', '(1,0)', '(4294967294,1)']::tid[]);
RESET enable_tidscan;
SELECT page FROM visited WHERE ctid > '(148,1)';
SELECT pg_temp.error_of($$ SELECT xmin FROM visited $$);
SELECT pg_temp.error_of($$ SELECT * FROM visited TABLESAMPLE BERNOULLI (50) $$);
SELECT pg_temp.error_of($$ SELECT * FROM visited TABLESAMPLE SYSTEM (50) REPEATABLE (1) $$);
-- rows are pages: they cannot be locked
SELECT pg_temp.error_of($$ SELECT page FROM visited FOR UPDATE $$);
SELECT pg_temp.error_of($$ SELECT page FROM visited FOR SHARE $$);
SELECT pg_temp.error_of($$ SELECT page FROM visited FOR KEY SHARE SKIP LOCKED $$);
SELECT pg_temp.error_of($$ SELECT page FROM visited FOR NO KEY UPDATE NOWAIT $$);
-- a whole-row value and a view
SELECT (s).page, length((s).data) FROM (SELECT s FROM visited s WHERE page = 0) x;
CREATE VIEW seen_pages AS SELECT page, length(data) AS bytes FROM visited;
SELECT * FROM seen_pages WHERE page = 0;
SELECT pg_temp.error_of($$ INSERT INTO seen_pages VALUES (5, 5) $$);
DROP VIEW seen_pages;
-- a parallel scan returns every row once (and leaves no snapshot behind:
-- a warning would show here)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT page FROM visited ORDER BY page DESC LIMIT 3;
SELECT page FROM visited ORDER BY page DESC LIMIT 3;
SELECT count(*) = (SELECT count(*) FROM visited) AS every_row_once
  FROM (SELECT DISTINCT page FROM visited) p;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- COPY TO, text and binary, then back into an empty table (through a file
-- of the server, named after the backend so that runs do not meet)
SELECT '/tmp/sbf_shared_errors_' || pg_backend_pid() || '.copy' AS copy_file \gset
CREATE TABLE copied (page bigint, data bytea) USING sbf_filter;
COPY visited TO :'copy_file';
COPY copied FROM :'copy_file';
SELECT pg_temp.misses('copied'), pg_temp.false_hits('copied') = pg_temp.false_hits('visited') AS same_false_hits;
TRUNCATE copied;
COPY visited TO :'copy_file' (FORMAT binary);
COPY copied FROM :'copy_file' (FORMAT binary);
SELECT pg_temp.misses('copied');
-- COPY FROM a second time: the filter has its page 0 already
COPY copied FROM :'copy_file' (FORMAT binary);
-- COPY FROM with bad rows: COPY's own checks, then the filter's
TRUNCATE copied;
COPY copied FROM STDIN;
0	\\x00
\.
COPY copied FROM STDIN;
0
\.
COPY copied FROM STDIN;
0	\\xZZ
\.
COPY copied FROM STDIN;
zero	\\x00
\.
COPY copied FROM STDIN;
1	\\x00
\.
SELECT count(*) AS nothing_restored FROM copied;
-- COPY FREEZE into a filter truncated in the same transaction
BEGIN;
TRUNCATE copied;
COPY copied FROM :'copy_file' (FORMAT binary, FREEZE);
COMMIT;
SELECT pg_temp.misses('copied');
-- COPY (query) TO, a column list in the other order
COPY (SELECT page, length(data) FROM visited WHERE page = 0) TO STDOUT;
COPY visited (data, page) TO :'copy_file';
TRUNCATE copied;
COPY copied (data, page) FROM :'copy_file';
\set remove_copy_file 'rm -f ' :copy_file
COPY (SELECT) TO PROGRAM :'remove_copy_file';
SELECT pg_temp.misses('copied');
DROP TABLE copied;

--
-- Inserting rows: only into pages never written, each row checked
--
CREATE TABLE restored (page bigint, data bytea) USING sbf_filter;
CREATE TABLE meta AS SELECT data FROM visited WHERE page = 0;
-- page 0 with one field changed at byte offset "at"
CREATE FUNCTION pg_temp.bad_meta(at int, bytes bytea) RETURNS bytea LANGUAGE sql AS $$
	SELECT overlay((SELECT data FROM meta) PLACING bytes FROM at + 1) $$;
-- a data row must come after page 0
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT * FROM visited WHERE page > 0 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT * FROM visited ORDER BY page DESC $$);
-- wrong lengths
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, '') $$);
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, (SELECT data FROM meta) || '\x00') $$);
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, substr((SELECT data FROM meta), 1, 63)) $$);
-- every field of the metapage is checked
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(0, '\x00000000')) $$) AS magic;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(4, '\x0500')) $$) AS version;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(6, '\x0400')) $$) AS kind;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(6, '\x0200')) $$) AS stable_in_lines;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(8, '\x0000')) $$) AS hashes_0;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(8, '\x0101')) $$) AS hashes_257;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(10, '\x02')) $$) AS max;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(11, '\x08')) $$) AS cell_bits;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(12, '\x00fb0000')) $$) AS block_bits;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(16, '\x0000000000000000')) $$) AS pages_0;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(16, '\xfeffffff00000000')) $$) AS pages_2_32;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(16, '\xffffffffffffffff')) $$) AS pages_huge;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(24, '\x0100000000000000')) $$) AS cells;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(32, '\x0100000000000000')) $$) AS decrements;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(48, '\x0000000000000000')) $$) AS capacity;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(56, '\x000000000000f87f')) $$) AS fpr_nan;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(56, '\x000000000000f03f')) $$) AS fpr_1;
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (0, pg_temp.bad_meta(56, '\x000000000000f0ff')) $$) AS fpr_minus_inf;
SELECT count(*) AS nothing_written FROM restored;
-- NULLs and missing columns
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (NULL, NULL) $$);
SELECT pg_temp.error_of($$ INSERT INTO restored (page) VALUES (0) $$);
SELECT pg_temp.error_of($$ INSERT INTO restored DEFAULT VALUES $$);
-- ON CONFLICT: there is no index to conflict on
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT * FROM visited ON CONFLICT (page) DO NOTHING $$);
-- the right page 0, RETURNING; then page 0 again
INSERT INTO restored SELECT * FROM visited WHERE page = 0 RETURNING page, length(data);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT * FROM visited WHERE page = 0 $$);
SELECT pg_temp.misses('restored') AS misses_before_data;
-- data rows: page numbers out of range, wrong lengths, duplicates
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT -1, data FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT 0, data FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT (SELECT max(page) + 1 FROM visited), data FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT 4294967297, data FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT 9223372036854775807, data FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT -9223372036854775808, data FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored VALUES (1, '\x00') $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT 1, data || '\x00' FROM visited WHERE page = 1 $$);
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT page, data FROM visited WHERE page = 1 UNION ALL SELECT page, data FROM visited WHERE page = 1 $$);
-- pages are not versioned: the page the failed statement wrote stays, so
-- a restore that failed half-way goes on from where it stopped
SELECT pg_temp.misses('restored') BETWEEN 1 AND 999 AS some_values_restored;
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT * FROM visited WHERE page > 0 $$);
INSERT INTO restored SELECT * FROM visited WHERE page > 1;
SELECT pg_temp.misses('restored'), pg_temp.false_hits('restored') = pg_temp.false_hits('visited') AS same_false_hits;
-- a page written by shared_test_and_add, or restored, is never overwritten:
-- INSERT cannot take values out of a filter
SELECT pg_temp.error_of($$ INSERT INTO restored SELECT page, convert_to(repeat('0', 8008), 'UTF8') FROM visited WHERE page = 1 $$);
SELECT pg_temp.misses('restored');

-- A stable filter's restored cells are checked against its max
SELECT shared_stablebloom_create('recent_pages', 64000, 0.05, 3, max => 5);
SELECT shared_test_and_add('recent_pages', 'x');
CREATE TABLE recent_copy (page bigint, data bytea) USING sbf_filter;
INSERT INTO recent_copy SELECT * FROM recent_pages WHERE page = 0;
SELECT pg_temp.error_of($$ INSERT INTO recent_copy SELECT 1, '\x0000000000000000'::bytea || decode(repeat('ff', 8000), 'hex') $$);
-- 4-bit cells of 5 are within it
SELECT pg_temp.error_of($$ INSERT INTO recent_copy SELECT 1, '\x0000000000000000'::bytea || decode(repeat('55', 8000), 'hex') $$);
DROP TABLE recent_copy;

--
-- Changing rows: UPDATE, DELETE, MERGE, WHERE CURRENT OF
--
SELECT pg_temp.error_of($$ UPDATE visited SET page = page $$);
SELECT pg_temp.error_of($$ UPDATE visited SET data = data WHERE page = 0 $$);
SELECT pg_temp.error_of($$ DELETE FROM visited $$);
SELECT pg_temp.error_of($$ DELETE FROM visited WHERE page = 1 RETURNING page $$);
-- nothing to change: no error, as for any table
UPDATE visited SET page = 7 WHERE false;
DELETE FROM visited WHERE page < 0;
SELECT pg_temp.error_of($$ MERGE INTO visited USING (SELECT 1 AS p) s ON visited.page = s.p WHEN MATCHED THEN DELETE $$);
SELECT pg_temp.error_of($$ MERGE INTO visited USING (SELECT 1 AS p) s ON visited.page = s.p WHEN MATCHED THEN UPDATE SET page = 2 $$);
SELECT pg_temp.error_of($$ MERGE INTO visited USING (SELECT 99999 AS p) s ON visited.page = s.p WHEN NOT MATCHED THEN INSERT VALUES (s.p, '\x00') $$);
BEGIN;
DECLARE c CURSOR FOR SELECT page FROM visited;
FETCH 1 FROM c;
SELECT pg_temp.error_of($$ UPDATE visited SET page = 5 WHERE CURRENT OF c $$);
SELECT pg_temp.error_of($$ DELETE FROM visited WHERE CURRENT OF c $$);
ROLLBACK;
SELECT pg_temp.misses('visited');

--
-- Maintenance and DDL
--
VACUUM visited;
VACUUM (ANALYZE, VERBOSE OFF) visited;
ANALYZE visited;
SELECT count(*) AS column_statistics FROM pg_stats WHERE tablename = 'visited';
SELECT pg_temp.error_of($$ CLUSTER visited $$);
SELECT pg_temp.error_of($$ CREATE INDEX ON visited (page) $$);
SELECT pg_temp.error_of($$ CREATE INDEX ON visited USING brin (page) $$);
SELECT pg_temp.error_of($$ CREATE UNIQUE INDEX ON visited (page) WHERE page > 5 $$);
SELECT pg_temp.error_of($$ ALTER TABLE visited ADD PRIMARY KEY (page) $$);
SELECT pg_temp.error_of($$ ALTER TABLE visited ADD UNIQUE (page) $$);
-- CREATE INDEX CONCURRENTLY leaves an invalid index behind, as when any
-- build fails; dropping it gives the table back
CREATE INDEX CONCURRENTLY seen_page ON visited (page);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'seen_page'::regclass;
DROP INDEX seen_page;
-- constraints are checked over the rows, as for any table
ALTER TABLE visited ADD CONSTRAINT page_not_negative CHECK (page >= 0);
ALTER TABLE visited ALTER COLUMN page SET NOT NULL;
SELECT pg_temp.error_of($$ ALTER TABLE visited ADD CONSTRAINT only_page_0 CHECK (page = 0) $$);
ALTER TABLE visited DROP CONSTRAINT page_not_negative;
ALTER TABLE visited ALTER COLUMN page DROP NOT NULL;
-- VACUUM FULL copies the filter
VACUUM FULL visited;
SELECT pg_temp.misses('visited');

-- A column added by mistake makes the rows unreadable (so no dump) until
-- it is dropped; the functions go on working throughout
ALTER TABLE visited ADD COLUMN note text;
SELECT pg_temp.error_of($$ SELECT count(*) FROM visited $$);
COPY visited TO STDOUT;
VACUUM FULL visited;
-- ANALYZE, which takes no row, goes on working
ANALYZE visited;
SELECT shared_test_and_add('visited', 'v1') AS seen_v1, pg_temp.misses('visited');
ALTER TABLE visited DROP COLUMN note;
SELECT count(*) > 1 AS readable_again FROM visited;
VACUUM FULL visited;
SELECT pg_temp.misses('visited');
-- a dropped column anywhere is no obstacle: data dropped and added back
-- (it is then the third attribute) is still the filter's second column
ALTER TABLE visited RENAME COLUMN page TO block;
CREATE TABLE seen_rows AS SELECT * FROM visited;
ALTER TABLE visited DROP COLUMN data;
ALTER TABLE visited ADD COLUMN data bytea;
SELECT attnum, attname, attisdropped FROM pg_attribute
 WHERE attrelid = 'visited'::regclass AND attnum > 0 ORDER BY attnum;
SELECT block, length(data) FROM visited WHERE block < 2;
SELECT (SELECT count(*) FROM visited) = (SELECT count(*) FROM seen_rows) AS same_rows,
       (SELECT count(*) FROM visited s JOIN seen_rows r USING (block) WHERE s.data <> r.data) AS rows_differing;
SELECT left(s::text, 150) AS row_start FROM visited s WHERE block = 0;
CREATE TABLE reloaded (page bigint, data bytea) USING sbf_filter;
INSERT INTO reloaded SELECT * FROM visited ORDER BY block;
SELECT pg_temp.misses('reloaded');
TRUNCATE reloaded;
-- a table with a dropped column is restored by column name
ALTER TABLE reloaded ADD COLUMN extra int;
ALTER TABLE reloaded DROP COLUMN extra;
INSERT INTO reloaded (page, data) SELECT block, data FROM visited ORDER BY block;
SELECT pg_temp.misses('reloaded');
DROP TABLE reloaded, seen_rows;
ALTER TABLE visited RENAME COLUMN block TO page;
-- a column of another type, whether by ALTER TABLE or by hand
SELECT pg_temp.error_of($$ ALTER TABLE visited ALTER COLUMN page TYPE int $$);
SELECT pg_temp.error_of($$ ALTER TABLE visited ADD COLUMN r float8 DEFAULT random() $$);
SELECT pg_temp.error_of($$ CREATE TABLE odd (page int, data bytea) USING sbf_filter $$);
SELECT pg_temp.error_of($$ CREATE TABLE odd (data bytea, page bigint) USING sbf_filter $$);
SELECT pg_temp.error_of($$ CREATE TABLE odd (page bigint, data bytea, x int) USING sbf_filter $$);
SELECT pg_temp.error_of($$ CREATE TABLE odd () USING sbf_filter $$);
SELECT pg_temp.error_of($$ CREATE TABLE odd USING sbf_filter AS SELECT 1 AS page $$);
-- right columns by hand, under any names: an empty table, not yet a filter
CREATE TABLE by_hand (block_number int8, contents bytea NOT NULL) USING sbf_filter;
SELECT pg_temp.error_of($$ SELECT shared_contains('by_hand', 'v1') $$);
INSERT INTO by_hand SELECT * FROM visited ORDER BY page;
SELECT pg_temp.misses('by_hand');
DROP TABLE by_hand;
-- CREATE TABLE AS, in page order, copies a filter; out of order it cannot
CREATE TABLE made_as USING sbf_filter AS SELECT * FROM visited ORDER BY page;
SELECT pg_temp.misses('made_as');
SELECT pg_temp.error_of($$ CREATE TABLE odd USING sbf_filter AS SELECT * FROM visited ORDER BY page DESC $$);
DROP TABLE made_as;

-- ALTER TABLE: rename, schema, logged/unlogged, tablespace, access method
ALTER TABLE visited RENAME TO seen_renamed;
SELECT pg_temp.misses('seen_renamed');
CREATE SCHEMA moved;
ALTER TABLE seen_renamed SET SCHEMA moved;
SELECT pg_temp.misses('moved.seen_renamed');
ALTER TABLE moved.seen_renamed SET UNLOGGED;
SELECT shared_info('moved.seen_renamed') -> 'logged' AS logged, pg_temp.misses('moved.seen_renamed');
ALTER TABLE moved.seen_renamed SET LOGGED;
SELECT shared_info('moved.seen_renamed') -> 'logged' AS logged, pg_temp.misses('moved.seen_renamed');
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE sbf_shared_errors_space LOCATION '';
RESET allow_in_place_tablespaces;
ALTER TABLE moved.seen_renamed SET TABLESPACE sbf_shared_errors_space;
SELECT pg_temp.misses('moved.seen_renamed'), pg_temp.false_hits('moved.seen_renamed') < 30 AS few_false_hits;
SELECT shared_test_and_add('moved.seen_renamed', 'in the new tablespace'),
       shared_contains('moved.seen_renamed', 'in the new tablespace');
ALTER TABLE moved.seen_renamed SET TABLESPACE pg_default;
DROP TABLESPACE sbf_shared_errors_space;
-- to a heap, the rows stay rows; back to sbf_filter, they are a filter again
ALTER TABLE moved.seen_renamed SET ACCESS METHOD heap;
SELECT pg_temp.error_of($$ SELECT shared_contains('moved.seen_renamed', 'v1') $$);
SELECT count(*) > 1 AS rows_kept FROM moved.seen_renamed;
ALTER TABLE moved.seen_renamed SET ACCESS METHOD sbf_filter;
SELECT pg_temp.misses('moved.seen_renamed');
ALTER TABLE moved.seen_renamed SET SCHEMA public;
ALTER TABLE seen_renamed RENAME TO visited;
DROP SCHEMA moved;

-- TRUNCATE leaves no metapage: an ERROR to use, until page 0 is restored
CREATE TABLE kept AS SELECT * FROM visited;
TRUNCATE visited;
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('visited', 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_contains('visited', 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_info('visited') $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_snapshot('visited') $$);
SELECT count(*) FROM visited;
VACUUM FULL visited;
INSERT INTO visited SELECT * FROM kept ORDER BY page;
SELECT pg_temp.misses('visited');
-- TRUNCATE in the transaction that made the filter, and a savepoint
-- rolled back after restoring other parameters: each answer is from the
-- parameters the filter has at that moment
BEGIN;
SELECT shared_bloom_create('short_lived', 10, 0.5);
SELECT shared_test_and_add('short_lived', 'x');
TRUNCATE short_lived;
INSERT INTO short_lived SELECT * FROM kept ORDER BY page;
SELECT pg_temp.misses('short_lived'), shared_info('short_lived') -> 'pages' AS pages;
SAVEPOINT s;
TRUNCATE short_lived;
INSERT INTO short_lived SELECT * FROM recent_pages ORDER BY page;
SELECT shared_info('short_lived') ->> 'kind' AS kind, shared_contains('short_lived', 'x') AS x;
ROLLBACK TO s;
SELECT shared_info('short_lived') ->> 'kind' AS kind, pg_temp.misses('short_lived');
COMMIT;
SELECT pg_temp.misses('short_lived');
DROP TABLE short_lived;
-- Rows inserted by a transaction that rolls back stay: pages are not
-- versioned (only a table made or truncated in that transaction goes)
CREATE TABLE restore_rolled_back (page bigint, data bytea) USING sbf_filter;
BEGIN;
INSERT INTO restore_rolled_back SELECT * FROM kept ORDER BY page;
ROLLBACK;
SELECT count(*) > 0 AS rows_stayed, pg_temp.misses('restore_rolled_back') FROM restore_rolled_back;
DROP TABLE restore_rolled_back, kept;

-- Temporary and unlogged filters
SELECT shared_bloom_create('pg_temp.scratch', 1000, 0.01);
SELECT relpersistence FROM pg_class WHERE oid = 'pg_temp.scratch'::regclass;
SELECT shared_test_and_add('pg_temp.scratch', 'x'), shared_test_and_add('pg_temp.scratch', 'x');
CREATE TEMP TABLE scratch_copy (page bigint, data bytea) USING sbf_filter;
INSERT INTO scratch_copy SELECT * FROM visited ORDER BY page;
SELECT pg_temp.misses('scratch_copy');
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('pg_temp.scratch_unlogged', 1000, 0.01, unlogged => true) $$);
DROP TABLE pg_temp.scratch, scratch_copy;
CREATE UNLOGGED TABLE unlogged_copy (page bigint, data bytea) USING sbf_filter;
INSERT INTO unlogged_copy SELECT * FROM visited ORDER BY page;
SELECT pg_temp.misses('unlogged_copy'), shared_info('unlogged_copy') -> 'logged' AS logged;
DROP TABLE unlogged_copy;

-- Partitions and inheritance: a filter can be a child; the parent is not
-- a filter, and its rows are the children's
CREATE TABLE parts (page bigint, data bytea) PARTITION BY RANGE (page);
CREATE TABLE parts_all PARTITION OF parts FOR VALUES FROM (0) TO (10000000) USING sbf_filter;
INSERT INTO parts SELECT * FROM visited ORDER BY page;
SELECT pg_temp.misses('parts_all');
SELECT pg_temp.error_of($$ SELECT shared_contains('parts', 'v1') $$);
SELECT pg_temp.error_of($$ UPDATE parts SET page = page + 1 WHERE page = 1 $$);
-- (a partitioned table that names sbf_filter: sql/shared_partitioned.sql)
DROP TABLE parts;
CREATE TABLE heap_parent (page bigint, data bytea);
CREATE TABLE filter_child () INHERITS (heap_parent) USING sbf_filter;
INSERT INTO filter_child SELECT * FROM visited ORDER BY page;
SELECT count(*) > 1 AS parent_sees_child_rows FROM heap_parent;
SELECT pg_temp.error_of($$ DELETE FROM heap_parent $$);
SELECT pg_temp.misses('filter_child');
SELECT pg_temp.error_of($$ CREATE TABLE odd_child (x int) INHERITS (heap_parent) USING sbf_filter $$);
DROP TABLE heap_parent CASCADE;
-- LIKE copies the columns, not the access method nor the pages
CREATE TABLE like_seen (LIKE visited INCLUDING ALL);
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'like_seen'::regclass;
DROP TABLE like_seen;
CREATE TABLE like_seen (LIKE visited INCLUDING ALL) USING sbf_filter;
SELECT pg_temp.error_of($$ SELECT shared_contains('like_seen', 'v1') $$);
DROP TABLE like_seen;
-- a materialized view may use the access method, but is not a filter
CREATE MATERIALIZED VIEW seen_view USING sbf_filter AS SELECT * FROM visited ORDER BY page;
SELECT pg_temp.error_of($$ SELECT shared_contains('seen_view', 'v1') $$);
DROP MATERIALIZED VIEW seen_view;

-- Triggers and foreign keys on the rows, as on any table's
CREATE TABLE trigger_target (page bigint, data bytea) USING sbf_filter;
CREATE FUNCTION pg_temp.note_page() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE NOTICE '% % row of page %', TG_WHEN, TG_OP, NEW.page;
	RETURN NEW;
END $$;
CREATE TRIGGER before_row BEFORE INSERT ON trigger_target
	FOR EACH ROW EXECUTE FUNCTION pg_temp.note_page();
INSERT INTO trigger_target SELECT * FROM visited WHERE page IN (0, 1) ORDER BY page;
CREATE TRIGGER after_row AFTER INSERT ON trigger_target
	FOR EACH ROW EXECUTE FUNCTION pg_temp.note_page();
INSERT INTO trigger_target SELECT * FROM visited WHERE page = 2;
DROP TRIGGER after_row ON trigger_target;
CREATE TABLE page_numbers (n bigint PRIMARY KEY);
INSERT INTO page_numbers SELECT generate_series(0, 10);
ALTER TABLE trigger_target ADD FOREIGN KEY (page) REFERENCES page_numbers (n);
INSERT INTO trigger_target SELECT * FROM visited WHERE page = 3;
SELECT pg_temp.error_of($$ INSERT INTO trigger_target SELECT * FROM visited WHERE page = 12 $$);
-- the check runs after the row is in: the page, not versioned, stays
SELECT page FROM trigger_target WHERE page > 10;
SELECT pg_temp.error_of($$ CREATE TABLE refers (p bigint REFERENCES visited (page)) $$);
DROP TABLE trigger_target, page_numbers;

--
-- The functions
--

-- NULL anywhere: strict functions answer NULL and add nothing
SELECT shared_test_and_add(NULL, 'x') IS NULL AS a, shared_test_and_add('visited', NULL::text) IS NULL AS b,
       shared_test_and_add('visited', NULL::bytea) IS NULL AS c, shared_test_and_add('visited', NULL::bigint) IS NULL AS d,
       shared_test_and_add('visited', NULL::text[]) IS NULL AS e, shared_test_and_add(NULL, ARRAY['x']) IS NULL AS f,
       shared_contains(NULL, 'x') IS NULL AS g, shared_contains('visited', NULL::bigint) IS NULL AS h,
       shared_info(NULL) IS NULL AS i, shared_bloom_snapshot(NULL) IS NULL AS j,
       shared_stablebloom_snapshot(NULL) IS NULL AS k;
SELECT shared_bloom_create(NULL, 10, 0.1) IS NULL AS a, shared_bloom_create('n', NULL, 0.1) IS NULL AS b,
       shared_bloom_create('n', 10, 0.1, NULL) IS NULL AS c, shared_bloom_create('n', 10, 0.1, 0, NULL) IS NULL AS d,
       shared_stablebloom_create('n', 10, 0.1, NULL) IS NULL AS e;
SELECT to_regclass('n') IS NULL AS nothing_made;
-- what is not a shared filter: each kind of relation, OID 0, a dropped
-- filter (also dropped in the same transaction)
CREATE SEQUENCE a_sequence;
CREATE VIEW a_view AS SELECT 1 AS x;
CREATE TABLE a_table (page bigint, data bytea);
CREATE INDEX an_index ON a_table (page);
CREATE TYPE a_type AS (page bigint, data bytea);
SELECT r, pg_temp.error_of(format($$ SELECT shared_contains(%L, 'x') $$, r))
  FROM unnest(ARRAY['a_sequence', 'a_view', 'a_table', 'an_index', 'a_type', 'pg_class',
                    'pg_class_oid_index', 'pg_toast.pg_toast_2618']) r;
SELECT pg_temp.error_of($$ SELECT shared_test_and_add(0, 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add(4294967295::oid::regclass, 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('no_such_table', 'x') $$);
DROP SEQUENCE a_sequence;
DROP VIEW a_view;
DROP TABLE a_table;
DROP TYPE a_type;
SELECT shared_bloom_create('dropped', 10, 0.1);
SELECT 'dropped'::regclass::oid AS dropped_oid \gset
BEGIN;
DROP TABLE dropped;
SELECT regexp_replace(pg_temp.error_of(format($$ SELECT shared_test_and_add(%s, 'x') $$, :dropped_oid)),
                      'OID \d+', 'OID n');
ROLLBACK;
DROP TABLE dropped;
SELECT regexp_replace(pg_temp.error_of(format($$ SELECT shared_info(%s) $$, :dropped_oid)),
                      'OID \d+', 'OID n');
SELECT regexp_replace(pg_temp.error_of(format($$ SELECT shared_stablebloom_snapshot(%s) $$, :dropped_oid)),
                      'OID \d+', 'OID n');
-- the overloads: text and bytea of the same bytes are one value; bigint
-- is its 8 bytes; other types are cast as usual
SELECT shared_test_and_add('visited', 'abc'::text), shared_contains('visited', '\x616263'::bytea),
       shared_contains('visited', 'abc'::varchar), shared_contains('visited', 'abc'::name),
       shared_contains('visited', 'abc  '::char(5));
SELECT shared_test_and_add('visited', 12345678901), shared_contains('visited', 12345678901::numeric::bigint),
       shared_contains('visited', 12345678901::text);
SELECT shared_test_and_add('visited', 77::int), shared_contains('visited', 77::smallint);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('visited', 1.5) $$);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('visited', ARRAY[1.5]) $$);
SELECT pg_temp.error_of($$ SELECT shared_contains('visited', ARRAY['v1']) $$);
-- arrays: NULL elements, empty, multi-dimensional, other lower bounds,
-- arrays of other types and of domains
SELECT shared_test_and_add('visited', ARRAY[NULL, 'v1', NULL, 'array new', 'array new']);
SELECT shared_test_and_add('visited', ARRAY[NULL, NULL]::text[]);
SELECT shared_test_and_add('visited', '{}'::text[]), shared_test_and_add('visited', '{}'::bigint[]);
SELECT shared_test_and_add('visited', ARRAY[['v1', 'v2'], ['2d new', NULL]]);
SELECT shared_test_and_add('visited', '[-3:-1]={v1,lb new,v3}'::text[]);
SELECT array_dims(shared_test_and_add('visited', array_fill('v5'::text, ARRAY[2, 3, 4], ARRAY[-5, 0, 7])));
SELECT shared_test_and_add('visited', ARRAY[1, 2, 12345678901]::bigint[]), shared_test_and_add('visited', ARRAY[77]::int[]);
SELECT shared_test_and_add('visited', ARRAY['v1', 'varchar new']::varchar[]);
CREATE DOMAIN url AS text CHECK (VALUE LIKE 'http%');
CREATE DOMAIN urls AS text[];
SELECT shared_test_and_add('visited', 'http://domain/'::url), shared_contains('visited', 'http://domain/');
SELECT shared_test_and_add('visited', ARRAY['http://domain/', 'http://domain/2']::url[]),
       shared_test_and_add('visited', ARRAY['http://domain/2', 'v1']::urls);
DROP DOMAIN url;
DROP DOMAIN urls;
-- a million values in one call: one answer each, none lost (a bulk load,
-- here into a filter whose adds are not transactional: shared.sql and
-- shared_big_transactions.sql load transactional ones)
SELECT shared_bloom_create('million', 2000000, 0.01, transactional => false);
SELECT count(*) AS answers, count(*) FILTER (WHERE NOT seen) AS new,
       count(*) FILTER (WHERE seen IS NULL) AS nulls
  FROM unnest(shared_test_and_add('million',
         ARRAY(SELECT CASE WHEN g % 1000 = 0 THEN NULL ELSE g END FROM generate_series(1, 1000000) g))) seen;
SELECT count(*) FILTER (WHERE NOT seen) AS missing
  FROM unnest(shared_test_and_add('million',
         ARRAY(SELECT g FROM generate_series(1, 1000000) g WHERE g % 1000 <> 0))) seen;
DROP TABLE million;

-- Privileges: SELECT tests, UPDATE adds, nothing else does either
CREATE ROLE regress_sbf_select;
CREATE ROLE regress_sbf_update;
CREATE ROLE regress_sbf_insert;
CREATE ROLE regress_sbf_nothing;
GRANT SELECT ON visited TO regress_sbf_select;
GRANT UPDATE ON visited TO regress_sbf_update;
GRANT INSERT ON visited TO regress_sbf_insert;
GRANT SELECT (page), UPDATE (page, data) ON visited TO regress_sbf_nothing;
CREATE FUNCTION pg_temp.try_all(who text) RETURNS TABLE (call text, result text) LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('SET ROLE %I', who);
	RETURN QUERY SELECT c, pg_temp.error_of('SELECT ' || c)
	  FROM unnest(ARRAY[$q$shared_contains('visited', 'v1')$q$,
	                    $q$shared_test_and_add('visited', 'v1')$q$,
	                    $q$shared_test_and_add('visited', ARRAY['v1'])$q$,
	                    $q$shared_info('visited')$q$,
	                    $q$shared_bloom_snapshot('visited')$q$,
	                    $q$count(*) FROM visited$q$]) c;
	RESET ROLE;
END $$;
SELECT * FROM pg_temp.try_all('regress_sbf_select');
SELECT * FROM pg_temp.try_all('regress_sbf_update');
SELECT * FROM pg_temp.try_all('regress_sbf_insert');
SELECT * FROM pg_temp.try_all('regress_sbf_nothing');
-- row-level security filters the rows a role reads, not the filter: the
-- functions check the table privilege alone
ALTER TABLE visited ENABLE ROW LEVEL SECURITY;
SET ROLE regress_sbf_select;
SELECT count(*) AS rows_visible, shared_contains('visited', 'v1') AS v1 FROM visited;
RESET ROLE;
ALTER TABLE visited DISABLE ROW LEVEL SECURITY;
-- Restoring pages (INSERT, COPY FROM) needs UPDATE as well as INSERT: a
-- restored page can set any cell, and so make chosen values look seen
SET ROLE regress_sbf_insert;
SELECT pg_temp.error_of($$ INSERT INTO visited VALUES (1, '\x00') $$);
SELECT pg_temp.error_of($$ INSERT INTO visited VALUES (2, decode(repeat('ff', 8008), 'hex')) $$);
RESET ROLE;
GRANT UPDATE ON visited TO regress_sbf_insert;
SET ROLE regress_sbf_insert;
-- (with both, the row reaches the checks of a page)
SELECT pg_temp.error_of($$ INSERT INTO visited VALUES (1, '\x00') $$);
RESET ROLE;
REVOKE UPDATE ON visited FROM regress_sbf_insert;
-- a SECURITY DEFINER function lends its owner's privilege, as for any table
CREATE FUNCTION add_to_seen(v text) RETURNS boolean SECURITY DEFINER
	SET search_path = pg_catalog LANGUAGE sql AS $$ SELECT public.shared_test_and_add('public.visited', v) $$;
REVOKE ALL ON FUNCTION add_to_seen(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION add_to_seen(text) TO regress_sbf_nothing;
SET ROLE regress_sbf_nothing;
SELECT add_to_seen('through a definer');
RESET ROLE;
SELECT shared_contains('visited', 'through a definer');
DROP FUNCTION add_to_seen(text);
-- creating needs CREATE on the schema; the creator owns the filter
CREATE SCHEMA crawl;
SET ROLE regress_sbf_nothing;
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl.mine', 10, 0.1) $$);
RESET ROLE;
GRANT CREATE, USAGE ON SCHEMA crawl TO regress_sbf_nothing;
SET ROLE regress_sbf_nothing;
SELECT shared_bloom_create('crawl.mine', 10, 0.1);
SELECT shared_test_and_add('crawl.mine', 'x');
RESET ROLE;
SELECT relowner::regrole FROM pg_class WHERE oid = 'crawl.mine'::regclass;
-- without USAGE on the schema a filter cannot be named; by its OID it is
-- reached with the table's privileges alone, as with any function taking
-- a regclass
SELECT 'crawl.mine'::regclass::oid AS mine_oid \gset
REVOKE USAGE ON SCHEMA crawl FROM regress_sbf_nothing;
GRANT SELECT, UPDATE ON crawl.mine TO regress_sbf_select;
SET ROLE regress_sbf_select;
SELECT pg_temp.error_of($$ SELECT shared_contains('crawl.mine', 'x') $$);
SELECT pg_temp.error_of(format($$ SELECT shared_contains(%s, 'x') $$, :mine_oid));
RESET ROLE;
DROP TABLE crawl.mine;

-- Names: quoted, dotted, overlong, in a schema that does not exist, taken
SELECT shared_bloom_create('crawl."Mixed ""Case"". dotted"', 10, 0.1);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl.x; DROP TABLE visited; --', 10, 0.1) $$);
SELECT shared_bloom_create('crawl."x; DROP TABLE visited; --"', 10, 0.1);
SELECT shared_bloom_create('crawl.' || repeat('long', 20), 10, 0.1);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl.', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('"unterminated', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('a.b.c.d', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('other_database.crawl.x', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('no_such_schema.x', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl."x; DROP TABLE visited; --"', 10, 0.1) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('visited', 1000, 0.1, 3) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('pg_catalog.mine', 10, 0.1) $$);
SELECT relname FROM pg_class WHERE relnamespace = 'crawl'::regnamespace ORDER BY relname;
SELECT to_regclass('visited') IS NOT NULL AS seen_still_there;
-- search_path: the first schema gets the filter; a hostile schema's types
-- and functions do not change the table made
CREATE SCHEMA hostile;
CREATE DOMAIN hostile.int8 AS integer;
CREATE DOMAIN hostile.bytea AS text;
CREATE FUNCTION hostile.quote_ident(text) RETURNS text LANGUAGE sql AS $$ SELECT 'hijacked' $$;
SET search_path = hostile, public;
SELECT shared_bloom_create('in_first_schema', 10, 0.1);
SELECT shared_test_and_add('in_first_schema', 'x');
RESET search_path;
SELECT a.attname, a.atttypid::regtype FROM pg_attribute a
 WHERE a.attrelid = 'hostile.in_first_schema'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SET search_path = '';
SELECT pg_temp.error_of($$ SELECT public.shared_bloom_create('nowhere', 10, 0.1) $$);
SELECT public.shared_bloom_create('hostile.qualified', 10, 0.1);
RESET search_path;
DROP SCHEMA hostile CASCADE;

-- Parameters at and beyond their limits
SELECT shared_bloom_create('crawl.capacity_1', 1, 0.5);
SELECT shared_info('crawl.capacity_1', read_pages => true) - 'size_bytes';
SELECT shared_test_and_add('crawl.capacity_1', 'only'), shared_test_and_add('crawl.capacity_1', 'only');
SELECT shared_bloom_create('crawl.tiny_fpr', 1000, 1e-300);
SELECT (shared_info('crawl.tiny_fpr') ->> 'hashes')::int AS hashes, shared_info('crawl.tiny_fpr') -> 'pages' AS pages;
SELECT shared_bloom_create('crawl.high_fpr', 1000, 0.999999);
SELECT shared_info('crawl.high_fpr') -> 'hashes' AS hashes, shared_info('crawl.high_fpr') -> 'pages' AS pages;
SELECT shared_bloom_create('crawl.denormal_fpr', 1000, 5e-324);
SELECT shared_info('crawl.denormal_fpr') -> 'hashes' AS hashes, shared_info('crawl.denormal_fpr') -> 'pages' AS pages;
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl.bad', 9223372036854775807, 0.5) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl.bad', 1000, 'infinity') $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('crawl.bad', 1000, -0.0) $$);
-- one page more than the largest filter, 2^32 - 3 data pages (32 TB; made
-- in t/033_shared_hostile.pl, as it writes a block per 1 GB segment)
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 64000 * 4294967293::bigint + 1, 0.5, 3) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1, 0.01, 1) $$);
SELECT shared_stablebloom_create('crawl.two_cells', 2, 0.5, 1);
SELECT shared_info('crawl.two_cells') -> 'cells' AS cells, shared_info('crawl.two_cells') -> 'decrements' AS decrements;
SELECT shared_stablebloom_create('crawl.max_255', 1000, 0.9, 20, 255);
SELECT shared_info('crawl.max_255') -> 'cell_bits' AS cell_bits;
SELECT shared_test_and_add('crawl.max_255', 'x'), shared_test_and_add('crawl.max_255', 'x');
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 0.01, 256, 255) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 0.01, 0) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 0.01, 257) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 0.01, 3, 0) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 0.01, 3, 256) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 0.01, 3, -1) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', 1000, 1e-300, 1) $$);
SELECT pg_temp.error_of($$ SELECT shared_stablebloom_create('crawl.bad', -1, 0.01, 3) $$);
-- seeds: any bigint, kept as given
SELECT shared_bloom_create('crawl.seed_min', 1000, 0.01, -9223372036854775808),
       shared_bloom_create('crawl.seed_max', 1000, 0.01, 9223372036854775807);
SELECT shared_info('crawl.seed_min') -> 'seed' AS seed_min, shared_info('crawl.seed_max') -> 'seed' AS seed_max;
SELECT to_regclass('crawl.bad') IS NULL AS nothing_left_behind;
DROP SCHEMA crawl CASCADE;

-- Transactions: read-only ones test but do not add (nor create); a
-- rolled-back subtransaction's values stay, its filter goes
SET default_transaction_read_only = on;
SELECT shared_contains('visited', 'v1');
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('visited', 'x') $$);
SELECT pg_temp.error_of($$ SELECT shared_test_and_add('visited', ARRAY['x']) $$);
SELECT pg_temp.error_of($$ SELECT shared_bloom_create('read_only', 10, 0.1) $$);
SELECT pg_temp.error_of($$ INSERT INTO visited VALUES (0, '\x00') $$);
RESET default_transaction_read_only;
BEGIN;
SAVEPOINT s;
SELECT shared_test_and_add('visited', 'from a rolled-back subtransaction');
SELECT shared_bloom_create('from_subtransaction', 10, 0.1);
ROLLBACK TO s;
SELECT shared_contains('visited', 'from a rolled-back subtransaction') AS value_kept,
       to_regclass('from_subtransaction') IS NULL AS filter_gone;
COMMIT;
-- an exception block in PL/pgSQL is a subtransaction too
DO $$
BEGIN
	PERFORM shared_test_and_add('visited', 'before the error');
	PERFORM 1 / 0;
EXCEPTION WHEN division_by_zero THEN
	RAISE NOTICE 'caught: present after the rollback = %', shared_contains('visited', 'before the error');
END $$;
-- adding is refused in parallel mode (a function wrongly labelled
-- PARALLEL SAFE), testing is allowed
CREATE FUNCTION pg_temp.add_claiming_parallel_safe(f regclass, v text) RETURNS boolean
	PARALLEL SAFE LANGUAGE plpgsql AS $$ BEGIN RETURN shared_test_and_add(f, v); END $$;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE candidates AS SELECT 'v' || g AS url FROM generate_series(1, 3000) g;
ANALYZE candidates;
SELECT count(*) AS found FROM candidates WHERE shared_contains('visited', url);
EXPLAIN (COSTS OFF) SELECT count(*) FROM candidates WHERE pg_temp.add_claiming_parallel_safe('visited', url);
SELECT pg_temp.error_of($$ SELECT count(*) FROM candidates WHERE pg_temp.add_claiming_parallel_safe('visited', url) $$);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE candidates;

-- The extension cannot be dropped from under its filters
DO $$
BEGIN
	DROP EXTENSION sbf;
EXCEPTION WHEN dependent_objects_still_exist THEN
	RAISE NOTICE '%', SQLERRM;
END $$;

-- After all of the above, nothing added was lost
SELECT pg_temp.misses('visited'), pg_temp.false_hits('visited') < 30 AS few_false_hits;
DROP TABLE visited, recent_pages, meta;
DROP ROLE regress_sbf_select, regress_sbf_update, regress_sbf_insert, regress_sbf_nothing;
