--
-- The three page layouts of shared bloom filters (docs/format.md).  Filters
-- made since the line layout put the k probes of a value in one 64-byte
-- line of its page (metapage version 2); filters made before it (version
-- 1, every probe anywhere in the page) keep answering exactly as they did.
-- Transactional filters (version 3, the default now) have 112 lines a
-- page and their pending adds after them.
--

-- A filter of the pages layout, as sbf made it before the line layout:
-- its metapage restored as pg_dump would (the row below is what sbf made
-- for shared_bloom_create('old_layout', 1000000, 0.01): version 1, 150
-- pages, 7 hashes), then the values of a crawl added.  The answers, the
-- bits and the snapshot's checksum are those the previous release gave
-- for the same statements.
CREATE TABLE old_layout (page bigint, data bytea) USING sbf_filter;
INSERT INTO old_layout VALUES (0, '\x53424668010001000700010100fa00009600000000000000007c9200000000000000000000000000000000000000000040420f00000000007b14ae47e17a843f');
SELECT count(*) FILTER (WHERE a) AS seen
FROM unnest(shared_test_and_add('old_layout',
	 array(SELECT 'https://example.org/' || g FROM generate_series(1, 20000) g))) a;
SELECT count(*) FILTER (WHERE a) AS seen
FROM unnest(shared_test_and_add('old_layout',
	 array(SELECT 'https://example.org/' || g FROM generate_series(10001, 30000) g))) a;
SELECT shared_info('old_layout', read_pages => true) - 'size_bytes';
SELECT md5(shared_bloom_snapshot('old_layout')::text) AS snapshot_md5;
SELECT count(*) FILTER (WHERE shared_contains('old_layout', 'https://example.org/' || g)) AS found
FROM generate_series(1, 100000) g;

-- The same statements on a filter made now without transactions: the line
-- layout (version 2), sized for it (6 hashes, 155 pages: the rate asked
-- for holds with lines)
SELECT shared_bloom_create('new_layout', 1000000, 0.01, transactional => false);
SELECT count(*) FILTER (WHERE a) AS seen
FROM unnest(shared_test_and_add('new_layout',
	 array(SELECT 'https://example.org/' || g FROM generate_series(1, 20000) g))) a;
SELECT count(*) FILTER (WHERE a) AS seen
FROM unnest(shared_test_and_add('new_layout',
	 array(SELECT 'https://example.org/' || g FROM generate_series(10001, 30000) g))) a;
SELECT shared_info('new_layout', read_pages => true) - 'size_bytes';
SELECT md5(shared_bloom_snapshot('new_layout')::text) AS snapshot_md5;
SELECT count(*) FILTER (WHERE shared_contains('new_layout', 'https://example.org/' || g)) AS found
FROM generate_series(1, 100000) g;

-- The same statements on a transactional filter (version 3), ten times
-- larger so that each statement's 20,000 uncommitted adds fit its pages;
-- its snapshot folds the committed pending adds into the bits
SELECT shared_bloom_create('pending_layout', 10000000, 0.01);
SELECT count(*) FILTER (WHERE a) AS seen
FROM unnest(shared_test_and_add('pending_layout',
	 array(SELECT 'https://example.org/' || g FROM generate_series(1, 20000) g))) a;
SELECT count(*) FILTER (WHERE a) AS seen
FROM unnest(shared_test_and_add('pending_layout',
	 array(SELECT 'https://example.org/' || g FROM generate_series(10001, 30000) g))) a;
SELECT shared_info('pending_layout', read_pages => true) - 'size_bytes';
SELECT md5(shared_bloom_snapshot('pending_layout')::text) AS snapshot_md5;
SELECT count(*) FILTER (WHERE shared_contains('pending_layout', 'https://example.org/' || g)) AS found
FROM generate_series(1, 100000) g;
-- VACUUM folds them into the pages: the same answers and snapshot
VACUUM pending_layout;
SELECT shared_info('pending_layout', read_pages => true) -> 'uncommitted_adds' AS uncommitted_adds,
	   md5(shared_bloom_snapshot('pending_layout')::text) AS snapshot_md5_after_vacuum;

-- Each snapshot answers exactly as its filter, for values added and not
WITH s AS (SELECT shared_bloom_snapshot('old_layout') AS old,
				  shared_bloom_snapshot('new_layout') AS new,
				  shared_bloom_snapshot('pending_layout') AS pending)
SELECT count(*) FILTER (WHERE shared_contains('old_layout', u) <> (old @> u)) AS old_differences,
	   count(*) FILTER (WHERE shared_contains('new_layout', u) <> (new @> u)) AS new_differences,
	   count(*) FILTER (WHERE shared_contains('pending_layout', u) <> (pending @> u)) AS pending_differences
FROM s, (SELECT 'https://example.org/' || g AS u FROM generate_series(1, 200000) g) v;

-- A snapshot of each layout has its own flags: they do not combine
SELECT bloom_info(shared_bloom_snapshot('new_layout')) ->> 'bits' AS new_bits;
SELECT bloom_info(shared_bloom_snapshot('pending_layout')) - 'estimated_fpr' AS pending_info;
SELECT shared_bloom_snapshot('old_layout') | shared_bloom_snapshot('old_layout') = shared_bloom_snapshot('old_layout') AS old_union;
SELECT shared_bloom_snapshot('old_layout') | bloom_empty(9600000, 7);

-- The line layout's value flag needs the blocked one
SELECT '\x53424662010007000500000000fa0000000000000000000000000000'::bloom;
-- and the pending one the line one
SELECT '\x53424662010007000900000000fa0000000000000000000000000000'::bloom;

DROP TABLE old_layout, new_layout, pending_layout;
