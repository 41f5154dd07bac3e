--
-- The exact online store: seen_test_and_add on a compressed seen
-- (docs/sieve.md, "The exact online store").  A crawler asks "seen?" of
-- each batch of links and remembers the new ones at once, exactly (64-bit
-- signatures), transactionally; sieve_flush and sieve_seen_compact fold
-- the online adds into the Rice-coded chunks.
--
CREATE EXTENSION IF NOT EXISTS sbf;
SET client_min_messages = warning;

SELECT sieve_seen_create('online_seen');
-- an online seen: its chunk may be NULL (an online add), its chunks have
-- their own index
SELECT attname, attnotnull FROM pg_attribute
WHERE attrelid = 'online_seen'::regclass AND attnum > 0 ORDER BY attnum;
SELECT pg_get_indexdef(indexrelid) FROM pg_index
WHERE indrelid = 'online_seen'::regclass ORDER BY indexrelid;

-- A batch: answers in input order; a repeat inside the batch is seen; a
-- NULL is answered NULL and not added
SELECT seen_test_and_add('online_seen',
	ARRAY['https://a.example/', 'https://b.example/', NULL, 'https://a.example/']);
SELECT seen_test_and_add('online_seen',
	ARRAY['https://b.example/', 'https://c.example/']);
-- one value at a time, and as bytea or as a signature: the same signature
SELECT seen_test_and_add('online_seen', 'https://c.example/'::text) AS c_again,
	   seen_test_and_add('online_seen', convert_to('https://d.example/', 'UTF8')) AS d_bytes,
	   seen_test_and_add('online_seen', 'https://d.example/'::text) AS d_text,
	   seen_test_and_add('online_seen', url_signature('https://e.example/')) AS e_sig,
	   seen_test_and_add('online_seen', ARRAY['https://e.example/']) AS e_text;
-- the adds are rows of their own until folded
SELECT count(*) AS online_adds FROM online_seen WHERE chunk IS NULL;
SELECT sieve_contains('online_seen',
	ARRAY['https://a.example/', 'https://d.example/', 'https://z.example/']);
SELECT sieve_contains('online_seen', 'https://e.example/') AS e,
	   sieve_contains('online_seen', 'https://z.example/') AS z;

-- A rolled-back add is forgotten
BEGIN;
SELECT seen_test_and_add('online_seen', ARRAY['https://f.example/']);
ROLLBACK;
SELECT seen_test_and_add('online_seen', ARRAY['https://f.example/', 'https://f.example/']);
-- Under REPEATABLE READ our own adds are no conflict, even those of the
-- same command, which the snapshot does not see yet
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT seen_test_and_add('online_seen', 'https://rr.example/'::text) FROM generate_series(1, 2);
SELECT seen_test_and_add('online_seen', ARRAY['https://rr.example/', 'https://f.example/']);
ROLLBACK;

-- Folded into chunks: the same answers, no online add left
SELECT sieve_seen_compact('online_seen') AS folded;
SELECT count(*) FILTER (WHERE chunk IS NULL) AS online_adds,
	   sum(sieve_chunk_count(chunk)) AS in_chunks FROM online_seen;
SELECT seen_test_and_add('online_seen',
	ARRAY['https://a.example/', 'https://f.example/', 'https://g.example/']);
SELECT sieve_contains('online_seen', ARRAY['https://g.example/', 'https://h.example/']);
SELECT count(*) FROM sieve_signatures('online_seen');

-- Many adds among chunks: every signature read back once, in order, by
-- sieve_signatures (the chunks and the adds merged), then folded
CREATE TABLE online_source AS
	SELECT url_signature('https://seed.example/' || i) AS sig FROM generate_series(1, 5000) i;
SELECT sieve_seen_import('online_seen', 'online_source');
SELECT count(*) AS new FROM unnest(seen_test_and_add('online_seen',
	ARRAY(SELECT 'https://seed.example/' || i FROM generate_series(4001, 7000) i))) a
WHERE NOT a;
SELECT count(*) AS online_adds FROM online_seen WHERE chunk IS NULL;
SELECT count(*) AS signatures, count(DISTINCT s) AS distinct_signatures,
	   bool_and(s > prev) AS ascending
FROM (SELECT s, lag(s, 1, '-9223372036854775808'::bigint) OVER () AS prev
	  FROM sieve_signatures('online_seen') s) x;
SELECT count(*) AS seen_all FROM unnest(sieve_contains('online_seen',
	ARRAY(SELECT 'https://seed.example/' || i FROM generate_series(1, 7000) i))) a
WHERE a;
SELECT sieve_seen_compact('online_seen') AS folded;
SELECT count(*) AS seen_all FROM unnest(sieve_contains('online_seen',
	ARRAY(SELECT 'https://seed.example/' || i FROM generate_series(1, 7000) i))) a
WHERE a;

-- More adds than a read holds at once (65,536) within the range of one
-- chunk, which spans them all, as after a first flush of a few URLs: read
-- in segments, every signature once and in order, a row a user inserted
-- equal to a signature of the chunk kept once; then folded
SELECT sieve_seen_create('online_wide');
SELECT seen_test_and_add('online_wide',
	ARRAY[-9000000000000000000, -1, 0, 5, 70001, 9000000000000000000]::bigint[]);
SELECT sieve_seen_compact('online_wide') AS folded;
SELECT count(*) FILTER (WHERE NOT a) AS new, count(*) FILTER (WHERE a) AS seen
FROM unnest(seen_test_and_add('online_wide',
	ARRAY(SELECT i * 2 - 1 FROM generate_series(-70000, 70000) i))) a;
INSERT INTO online_wide VALUES (5, NULL);
SELECT count(*) AS signatures, count(DISTINCT s) AS distinct_signatures,
	   bool_and(s > prev) AS ascending, sum(s) AS total
FROM (SELECT s, lag(s, 1, '-9223372036854775808'::bigint) OVER () AS prev
	  FROM sieve_signatures('online_wide') s) x;
SELECT sieve_seen_compact('online_wide') AS folded;
SELECT count(*) AS signatures, count(DISTINCT s) AS distinct_signatures,
	   bool_and(s > prev) AS ascending, sum(s) AS total,
	   (SELECT count(*) FROM online_wide WHERE chunk IS NULL) AS online_adds
FROM (SELECT s, lag(s, 1, '-9223372036854775808'::bigint) OVER () AS prev
	  FROM sieve_signatures('online_wide') s) x;
SELECT bool_and(a) AS all_seen FROM unnest(sieve_contains('online_wide',
	ARRAY(SELECT i * 2 - 1 FROM generate_series(-70000, 70000) i))) a;
DROP TABLE online_wide;

-- An online seen whose index of chunks was dropped: sieve_contains says
-- so (rather than calling its adds corrupted chunks), sieve_seen_online
-- makes the index again
SELECT sieve_seen_create('online_noindex');
SELECT seen_test_and_add('online_noindex', ARRAY['https://a.example/']);
DROP INDEX online_noindex_head_idx;
SELECT sieve_contains('online_noindex', ARRAY['https://a.example/']);
SELECT sieve_seen_online('online_noindex');
SELECT sieve_contains('online_noindex', ARRAY['https://a.example/', 'https://b.example/']);
DROP TABLE online_noindex;

-- sieve_flush and the online adds on one seen: a URL reaches the frontier
-- once, by whichever path saw it first
CREATE TABLE online_discovered (pos bigserial, url text);
CREATE TABLE online_frontier (pos bigint, url text);
SELECT seen_test_and_add('online_seen', ARRAY['https://online.example/']);
INSERT INTO online_discovered (url) VALUES
	('https://online.example/'), ('https://flushed.example/'), ('https://a.example/');
SELECT sieve_flush('online_seen', 'online_discovered', 'online_frontier');
SELECT url FROM online_frontier;
SELECT seen_test_and_add('online_seen',
	ARRAY['https://flushed.example/', 'https://online.example/', 'https://new.example/']);

-- A second unique index on head is an arbiter too, as for ON CONFLICT DO
-- NOTHING with no target: the adds go on, answered as before
CREATE UNIQUE INDEX online_seen_head_again ON online_seen (head);
SELECT seen_test_and_add('online_seen',
	ARRAY['https://again.example/', 'https://a.example/', 'https://again.example/']);
DROP INDEX online_seen_head_again;

-- The crawler loop of docs/sieve.md: a page's links to the frontier, the
-- new ones only, once each
CREATE TABLE online_crawl_frontier (url text);
WITH page(links) AS (SELECT ARRAY['https://a.example/', 'https://loop.example/', 'https://loop.example/'])
INSERT INTO online_crawl_frontier (url)
SELECT url FROM page, unnest(links, seen_test_and_add('online_seen', links)) AS l(url, seen)
WHERE NOT seen;
SELECT url FROM online_crawl_frontier;

-- Bad input gets a clear ERROR
SELECT seen_test_and_add('online_seen', '{https://a.example/,https://b.example/}');
SELECT seen_test_and_add('online_seen', ARRAY['\x6162']);
CREATE TABLE online_plain (sig bigint PRIMARY KEY);
SELECT seen_test_and_add('online_plain', ARRAY['https://a.example/']);
-- a compressed seen made before 1.2 takes online adds once made online
CREATE TABLE online_old (head bigint PRIMARY KEY, chunk sieve_chunk NOT NULL);
SELECT seen_test_and_add('online_old', ARRAY['https://a.example/']);
SELECT sieve_seen_online('online_old');
SELECT sieve_seen_online('online_old');
SELECT seen_test_and_add('online_old', ARRAY['https://a.example/', 'https://a.example/']);
-- not in a read-only transaction
BEGIN READ ONLY;
SELECT seen_test_and_add('online_seen', ARRAY['https://ro.example/']);
ROLLBACK;
-- SELECT and INSERT on the seen are needed
CREATE ROLE online_reader;
GRANT SELECT ON online_seen TO online_reader;
SET ROLE online_reader;
SELECT sieve_contains('online_seen', ARRAY['https://a.example/']);
SELECT seen_test_and_add('online_seen', ARRAY['https://a.example/']);
RESET ROLE;
-- the adds below SQL would not fire a trigger
CREATE FUNCTION online_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER online_trigger BEFORE INSERT ON online_old FOR EACH ROW EXECUTE FUNCTION online_trigger();
SELECT seen_test_and_add('online_old', ARRAY['https://b.example/']);

DROP TRIGGER online_trigger ON online_old;
-- nor check a constraint
ALTER TABLE online_old ADD CHECK (head <> 0);
SELECT seen_test_and_add('online_old', ARRAY['https://b.example/']);
ALTER TABLE online_old DROP CONSTRAINT online_old_head_check;
SELECT sieve_seen_create('online_fresh');
ALTER TABLE online_fresh ALTER COLUMN chunk SET NOT NULL;
SELECT seen_test_and_add('online_fresh', ARRAY['https://b.example/']);
ALTER TABLE online_fresh ALTER COLUMN chunk DROP NOT NULL;
CREATE TABLE online_parent (head bigint NOT NULL, chunk sieve_chunk) PARTITION BY RANGE (head);
ALTER TABLE online_parent ATTACH PARTITION online_fresh FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
SELECT seen_test_and_add('online_fresh', ARRAY['https://b.example/']);
DROP TABLE online_parent;

DROP TABLE online_crawl_frontier, online_seen, online_source, online_discovered, online_frontier, online_plain, online_old;
DROP FUNCTION online_trigger();
REVOKE ALL ON SCHEMA public FROM online_reader;
DROP ROLE online_reader;
