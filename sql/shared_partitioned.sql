--
-- A partitioned table that names sbf_filter as its access method.
--
-- A partitioned table has no storage, so it is never a filter itself.  Up
-- to PostgreSQL 16 it cannot name an access method at all, and every
-- statement below after the first fails (expected/shared_partitioned_1.out);
-- from 17 on it can, and its partitions are then made with sbf_filter
-- unless they name another (expected/shared_partitioned.out).
--
SELECT shared_bloom_create('pages_src', 1000, 0.01);
SELECT shared_test_and_add('pages_src', ARRAY['v1', 'v2', 'v3']);

CREATE TABLE parts_am (page bigint, data bytea) PARTITION BY RANGE (page) USING sbf_filter;
CREATE TABLE parts_am_all PARTITION OF parts_am FOR VALUES FROM (0) TO (10000000);
SELECT c.relname, a.amname
FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname IN ('parts_am', 'parts_am_all')
ORDER BY c.relname;

-- the partition becomes a filter when its pages are restored into it
INSERT INTO parts_am SELECT * FROM pages_src ORDER BY page;
SELECT v, shared_contains('parts_am_all', v) FROM unnest(ARRAY['v1', 'v2', 'v3', 'w1']) v;
-- the parent is not one
SELECT shared_contains('parts_am', 'v1');
SELECT shared_test_and_add('parts_am', 'v4');

DROP TABLE parts_am;
DROP TABLE pages_src;
