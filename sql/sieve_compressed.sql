--
-- The compressed seen: Z as Rice-coded chunks of sorted signatures
--

-- sieve_seen_create makes the table; sieve_flush takes it as its seen
SELECT sieve_seen_create('zseen');
\d zseen
CREATE TABLE zdiscovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE zfrontier (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO zdiscovered VALUES (1, 'https://www.postgresql.org/'),
                              (2, 'https://www.postgresql.org/docs/'),
                              (3, 'https://www.postgresql.org/');
SELECT sieve_flush('zseen', 'zdiscovered', 'zfrontier');
TABLE zfrontier;
-- one chunk, whose head is its first signature
SELECT head = (SELECT min(s) FROM sieve_signatures('zseen') s) AS head_is_first,
       sieve_chunk_count(chunk) FROM zseen;
SELECT * FROM sieve_signatures('zseen') s
  ORDER BY s;
SELECT url_signature('https://www.postgresql.org/'), url_signature('https://www.postgresql.org/docs/');
SELECT sieve_contains('zseen', 'https://www.postgresql.org/') AS seen,
       sieve_contains('zseen', 'https://www.postgresql.org/about/') AS not_seen;

-- The same zfrontier, row for row, as with a plain seen: 20,000 rows over
-- 7,000 URLs in one flush, then 20,000 more over 9,000 (2,000 new) in a
-- second
CREATE TABLE pseen (sig bigint PRIMARY KEY);
CREATE TABLE pdiscovered (LIKE zdiscovered);
CREATE TABLE pfrontier (LIKE zfrontier);
TRUNCATE zfrontier;
SELECT sieve_seen_create('z2');
INSERT INTO zdiscovered SELECT g, 'https://example.org/' || (g * 7919 % 7000) FROM generate_series(1, 20000) g;
INSERT INTO pdiscovered TABLE zdiscovered;
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier') AS compressed,
       sieve_flush('pseen', 'pdiscovered', 'pfrontier') AS plain;
INSERT INTO zdiscovered SELECT g, 'https://example.org/' || (g * 7919 % 9000) FROM generate_series(20001, 40000) g;
INSERT INTO pdiscovered TABLE zdiscovered;
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier') AS compressed,
       sieve_flush('pseen', 'pdiscovered', 'pfrontier') AS plain;
SELECT (SELECT array_agg(pos ORDER BY pos) FROM zfrontier) = (SELECT array_agg(pos ORDER BY pos) FROM pfrontier) AS same_positions,
       NOT EXISTS (SELECT pos, url FROM zfrontier EXCEPT SELECT pos, url FROM pfrontier) AS same_rows,
       (SELECT array_agg(s) FROM sieve_signatures('z2') s) = (SELECT array_agg(sig ORDER BY sig) FROM pseen) AS same_signatures;
-- sieve_contains answers alike on both kinds of seen
SELECT count(*) FILTER (WHERE sieve_contains('z2', u)) AS compressed,
       count(*) FILTER (WHERE sieve_contains('pseen', u)) AS plain
FROM (SELECT 'https://example.org/' || g AS u FROM generate_series(0, 9999) g) s;

-- Chunks stay under the TOAST threshold, four to a page
SELECT count(*) AS chunks, sum(sieve_chunk_count(chunk)) AS signatures,
       max(pg_column_size(chunk)) <= 2000 AS small,
       pg_relation_size('z2') / current_setting('block_size')::int = ceil(count(*) / 4.0) AS four_a_page
FROM z2;

-- A flush that finds nothing new leaves the table as it was; one that
-- finds something replaces it whole (a new file, no dead rows)
SELECT pg_relation_filenode('z2') AS filenode \gset
INSERT INTO zdiscovered VALUES (40001, 'https://example.org/1');
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier');
SELECT pg_relation_filenode('z2') = :filenode AS same_file;
INSERT INTO zdiscovered VALUES (40002, 'https://example.org/new');
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier');
SELECT pg_relation_filenode('z2') = :filenode AS same_file,
       (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'z2') IS NOT DISTINCT FROM 0 AS no_dead_rows;

-- An ERROR or a ROLLBACK leaves the old Z
SELECT pg_relation_filenode('z2') AS filenode \gset
BEGIN;
INSERT INTO zdiscovered VALUES (40003, 'https://example.org/rolled-back');
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier');
SELECT sieve_contains('z2', 'https://example.org/rolled-back');
ROLLBACK;
SELECT sieve_contains('z2', 'https://example.org/rolled-back'),
       pg_relation_filenode('z2') = :filenode AS same_file,
       (SELECT count(*) FROM sieve_signatures('z2')) AS signatures;
BEGIN;
SAVEPOINT before_flush;
INSERT INTO zdiscovered VALUES (40004, 'https://example.org/savepoint');
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier');
ROLLBACK TO SAVEPOINT before_flush;
SELECT sieve_contains('z2', 'https://example.org/savepoint');
COMMIT;
SELECT sieve_contains('z2', 'https://example.org/savepoint'),
       (SELECT count(*) FROM sieve_signatures('z2')) AS signatures;

-- Signatures anywhere in the bigint range, runs of consecutive ones
-- (gaps of 0: a Rice parameter of 0) and huge gaps (the escape code)
CREATE TABLE edges (sig bigint);
INSERT INTO edges VALUES (-9223372036854775808), (-9223372036854775807), (9223372036854775807),
                         (0), (1), (2), (-1), (4611686018427387904);
INSERT INTO edges SELECT g FROM generate_series(1000, 30000) g;
INSERT INTO edges SELECT g * 1000003000000 FROM generate_series(-5000, 5000) g;
INSERT INTO edges SELECT 100 FROM generate_series(1, 3);  -- repeats count once
SELECT sieve_seen_create('zedges');
SELECT sieve_seen_import('zedges', 'edges');
SELECT (SELECT array_agg(s) FROM sieve_signatures('zedges') s) =
       (SELECT array_agg(DISTINCT sig ORDER BY sig) FROM edges) AS same,
       (SELECT count(*) FROM zedges) AS chunks;
-- importing again adds nothing, and keeps the table
SELECT sieve_seen_import('zedges', 'edges');

-- Moving a plain seen into a compressed one
SELECT sieve_seen_create('zmoved');
SELECT sieve_seen_import('zmoved', 'pseen');
SELECT (SELECT array_agg(s) FROM sieve_signatures('zmoved') s) = (SELECT array_agg(sig ORDER BY sig) FROM pseen) AS same;

-- A chunk's text form is lossless, and checked when read
SELECT chunk::text::sieve_chunk::text = chunk::text AS round_trip FROM zedges ORDER BY head LIMIT 3;
SELECT '\x5342467a010000000100000000000000000000000100000000000000'::sieve_chunk;  -- one signature, but first and last differ
SELECT '\x5342467a010000000200000000000000000000000200000000000000'::sieve_chunk;  -- a second signature with no code
SELECT '\x5342467a0100000002000000000000000000000002000000000000000200'::sieve_chunk;  -- a byte too many
SELECT '\x5342467b010000000100000000000000000000000000000000000000'::sieve_chunk;  -- not the magic number
SELECT '\x5342467a020000000100000000000000000000000000000000000000'::sieve_chunk;  -- a later version
SELECT '\x5342467a010039000100000000000000000000000000000000000000'::sieve_chunk;  -- Rice parameter 57
SELECT '\x5342467a'::sieve_chunk;
-- two signatures, 0 and 2: b = 0, gap 2 - 0 - 1 = 1, code "01": byte 0x02
SELECT '\x5342467a01000000020000000000000000000000020000000000000002'::sieve_chunk;

-- A stored chunk that does not match its row, or overlaps the previous
-- chunk, is an ERROR when read, never a wrong answer
SELECT sieve_seen_create('zbad');
INSERT INTO zbad VALUES (5, '\x5342467a010000000100000000000000000000000000000000000000'::sieve_chunk);
SELECT sieve_contains('zbad', 'https://www.postgresql.org/');  -- signature > 5: the chunk at head 5
SELECT * FROM sieve_signatures('zbad');
TRUNCATE zbad;
INSERT INTO zbad VALUES (0, '\x5342467a01000000020000000000000000000000020000000000000002'::sieve_chunk),
                        (1, '\x5342467a010000000100000001000000000000000100000000000000'::sieve_chunk);
SELECT * FROM sieve_signatures('zbad');
INSERT INTO zdiscovered VALUES (50000, 'https://example.org/zbad');
SELECT sieve_flush('zbad', 'zdiscovered', 'zfrontier');
SELECT count(*) FROM zdiscovered;  -- the ERROR kept the row

-- What is not a compressed seen
SELECT * FROM sieve_signatures('pseen');
SELECT sieve_contains('zdiscovered', 'https://example.org/');
ALTER TABLE zbad ADD COLUMN note text;
SELECT sieve_contains('zbad', 'x');
SELECT sieve_flush('zbad', 'zdiscovered', 'zfrontier');
SELECT sieve_seen_import('zedges', 'zdiscovered');
SELECT sieve_seen_import('zedges', 'zedges');
SELECT sieve_seen_create('zseen');
SELECT sieve_seen_create('nope.a.b.c');

-- An unlogged compressed seen stays unlogged through its flushes
SELECT sieve_seen_create('zunlogged', unlogged => true);
INSERT INTO zdiscovered VALUES (50001, 'https://example.org/unlogged');
DELETE FROM zdiscovered WHERE pos = 50000;
SELECT sieve_flush('zunlogged', 'zdiscovered', 'zfrontier');
SELECT relpersistence FROM pg_class WHERE oid = 'zunlogged'::regclass;
-- and a schema-qualified name is made in that schema
CREATE SCHEMA crawl;
SELECT sieve_seen_create('crawl.seen');
SELECT 'crawl.seen'::regclass;

-- Only the owner flushes into a compressed seen (the flush replaces the
-- table, as REFRESH MATERIALIZED VIEW does); reading needs SELECT
CREATE ROLE sieve_reader;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON z2, zdiscovered, zfrontier TO sieve_reader;
SET ROLE sieve_reader;
SELECT sieve_contains('z2', 'https://example.org/1');
INSERT INTO zdiscovered VALUES (60000, 'https://example.org/by-reader');
SELECT sieve_flush('z2', 'zdiscovered', 'zfrontier');
SELECT sieve_contains('zedges', 'https://example.org/1');
RESET ROLE;
DELETE FROM zdiscovered WHERE pos = 60000;

DROP TABLE zseen, z2, pseen, zdiscovered, zfrontier, pdiscovered, pfrontier, edges,
	zedges, zmoved, zbad, zunlogged;
DROP SCHEMA crawl CASCADE;
DROP ROLE sieve_reader;
