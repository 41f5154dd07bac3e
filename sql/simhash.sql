--
-- simhash: Charikar's 64-bit SimHash fingerprints, their Hamming distance,
-- near-duplicates within sbf.simhash_max_distance (operator %), and the
-- exact GIN index simhash_ops
--

-- Two near-identical pages and a different one.
CREATE TEMP TABLE pages (id int, body text);
INSERT INTO pages VALUES
	(1, 'PostgreSQL 15.4 Documentation. Chapter 11: Indexes. Indexes are a common way to enhance database performance. An index allows the database server to find and retrieve specific rows much faster than it could do without an index. Without an index, the server would have to scan the entire table row by row to find matching entries. Indexes also add overhead to the database system as a whole, so they should be used sensibly.'),
	(2, 'PostgreSQL 15.4 Documentation. Chapter 11: Indexes. Indexes are a common way to enhance database performance. An index allows the database server to find and retrieve specific rows much faster than it could do without an index. Without an index, the server would have to scan the entire table row by row to find matching entries. Indexes also add overhead to the database system as a whole, so they should be used judiciously.'),
	(3, 'Release notes. This release contains a variety of fixes from 15.4. For information about new features in major release 15, see the release notes of version 15.');
SELECT id, simhash(body) FROM pages ORDER BY id;
SELECT simhash('the quick brown fox');
SELECT a.id, b.id, simhash(a.body) <~> simhash(b.body) AS distance,
	   hamming_distance(simhash(a.body), simhash(b.body)) AS same,
	   simhash(a.body) % simhash(b.body) AS near
FROM pages a JOIN pages b ON a.id < b.id ORDER BY 1, 2;

-- What a user types means what it says: the type is simhash64, so
-- simhash('...') is always the function, never the type's input; a text of
-- 16 hex digits is hashed like any other; varchar and char(n) values and
-- untyped parameters reach simhash(text)
SELECT simhash('the quick brown fox') = simhash('the quick brown fox'::text) AS literal,
	   simhash('0123456789abcdef') = simhash('0123456789abcdef'::text) AS hex_hashed,
	   simhash('0123456789abcdef') <> '0123456789abcdef'::simhash64 AS not_a_cast,
	   simhash('the quick brown fox'::varchar) = simhash('the quick brown fox'::text) AS from_varchar,
	   simhash('the quick brown fox'::char(19)) = simhash('the quick brown fox'::text) AS from_char,
	   simhash('{}') = '0000000000000000'::simhash64 AS braces_no_words;
PREPARE untyped_simhash AS SELECT simhash($1) = simhash('the quick brown fox'::text);
EXECUTE untyped_simhash('the quick brown fox');
DEALLOCATE untyped_simhash;

-- Case and ASCII punctuation do not matter; words and their order do
SELECT simhash('The quick, brown fox!'::text) = simhash('the QUICK brown   fox'::text) AS same,
	   simhash('the quick brown fox'::text) = simhash('the brown quick fox'::text) AS reordered;

-- The features of a document, spelled out: words (runs of ASCII letters,
-- digits and non-ASCII bytes) lower-cased, shingles of 3 (default), 2, 1
SELECT simhash('Crème brûlée, v2.0 -- fine'::text) =
	   simhash(ARRAY['crème brûlée v2', 'brûlée v2 0', 'v2 0 fine']) AS shingle3,
	   simhash('Crème brûlée, v2.0 -- fine', 2) =
	   simhash(ARRAY['crème brûlée', 'brûlée v2', 'v2 0', '0 fine']) AS shingle2,
	   simhash('a b a b', 1) = simhash(ARRAY['a', 'b', 'a', 'b']) AS shingle1;
-- fewer words than the shingle: one feature, the words joined
SELECT simhash('Hello,  World'::text) = simhash(ARRAY['hello world']) AS short;
-- no words at all: fingerprint 0 (as for no features, or only NULLs)
SELECT simhash(''::text), simhash(' -- !? '::text), simhash('{}'::text[]),
	   simhash(ARRAY[NULL, NULL]::text[]);
SELECT simhash(ARRAY['x', NULL, 'y']) = simhash(ARRAY['x', 'y']) AS nulls_skipped;

-- One feature: its XXH3-64 (seed 0), whose published value for "abc" is
-- 78af5f94892f3950; the same hash as url_signature
SELECT simhash(ARRAY['abc']), url_signature('abc')::simhash64;
-- Charikar's vote, computed in SQL from url_signature: bit b is set iff
-- more features have it set than clear; weights are counts
WITH features(f) AS (VALUES ('red'), ('green'), ('blue'), ('blue'), ('cyan'), ('a b c')),
bits AS (
	SELECT b, sum(CASE WHEN url_signature(f) & (1::bigint << b) <> 0 THEN 1 ELSE -1 END) AS vote
	FROM features, generate_series(0, 63) AS b GROUP BY b
)
SELECT (SELECT bit_or(1::bigint << b) FROM bits WHERE vote > 0)::simhash64 AS in_sql,
	   simhash(ARRAY['red', 'green', 'blue', 'blue', 'cyan', 'a b c']) AS simhash;

-- % and the GUC sbf.simhash_max_distance (default 3)
SHOW sbf.simhash_max_distance;
SELECT 'ffffffffffffffff'::simhash64 % 'fffffffffffffff8' AS d3,
	   'ffffffffffffffff'::simhash64 % 'fffffffffffffff0' AS d4;
SET sbf.simhash_max_distance = 4;
SELECT 'ffffffffffffffff'::simhash64 % 'fffffffffffffff0' AS d4;
SET sbf.simhash_max_distance = 0;
SELECT 'ffffffffffffffff'::simhash64 % 'ffffffffffffffff' AS d0,
	   'ffffffffffffffff'::simhash64 % 'fffffffffffffffe' AS d1;
SET sbf.simhash_max_distance = 64;
SELECT '0000000000000000'::simhash64 % 'ffffffffffffffff' AS d64,
	   '0000000000000000'::simhash64 <~> 'ffffffffffffffff' AS distance;
-- outside 0..64
SET sbf.simhash_max_distance = 65;
SET sbf.simhash_max_distance = -1;
RESET sbf.simhash_max_distance;

-- Text form: 16 hex digits, any case in, lower case out
SELECT '0123456789ABCDEF'::simhash64, 'ffffffffffffffff'::simhash64;
-- bad text forms
SELECT 'abc'::simhash64;
SELECT '0123456789abcdef0'::simhash64;
SELECT '0123456789abcdeg'::simhash64;
SELECT ' 0123456789abcdef'::simhash64;
SELECT '0x23456789abcdef'::simhash64;
SELECT ''::simhash64;

-- Casts keep the 64 bits: bigint is signed, simhash orders unsigned
SELECT 'ffffffffffffffff'::simhash64::bigint, (-2)::bigint::simhash64,
	   9223372036854775807::bigint::simhash64, '8000000000000000'::simhash64::bigint;
SELECT v FROM (VALUES ('8000000000000000'::simhash64), ('0000000000000001'),
						('ffffffffffffffff'), ('7fffffffffffffff')) AS t(v)
ORDER BY v;
SELECT '8000000000000000'::simhash64 > '7fffffffffffffff' AS gt,
	   '8000000000000000'::simhash64 >= '8000000000000000' AS ge,
	   '0000000000000001'::simhash64 < 'ffffffffffffffff' AS lt,
	   '0000000000000001'::simhash64 <= '0000000000000000' AS le,
	   '0000000000000001'::simhash64 = '0000000000000001' AS eq,
	   '0000000000000001'::simhash64 <> '0000000000000001' AS ne;
-- hashing (hash joins, DISTINCT by hashing) agrees with equality
SET enable_sort = off;
SELECT count(DISTINCT v) FROM (SELECT (g % 7)::bigint::simhash64 AS v FROM generate_series(1, 100) g) s;
SELECT count(*) FROM (SELECT v FROM (SELECT (g % 7)::bigint::simhash64 AS v FROM generate_series(1, 100) g) s GROUP BY v) t;
RESET enable_sort;
-- binary form: the 64 bits little-endian
SELECT simhash_send('0123456789abcdef');

-- Bad shingle sizes
SELECT simhash('a b c', 0);
SELECT simhash('a b c', -3);
SELECT simhash('a b c', 65);
SELECT simhash('a b c', 64) = simhash(ARRAY['a b c']) AS shingle64;

-- The index: % becomes an indexed search with exactly the rows of a scan
CREATE TEMP TABLE fps AS
SELECT g AS id, (hashint8extended(g, 0))::simhash64 AS fp FROM generate_series(1, 2000) g;
-- near-duplicates of row 1: 1, 2 and 3 bits flipped
INSERT INTO fps VALUES
	(-1, ((SELECT fp FROM fps WHERE id = 1)::bigint # 1)::simhash64),
	(-2, ((SELECT fp FROM fps WHERE id = 1)::bigint # (1::bigint << 40 | 1::bigint << 63))::simhash64),
	(-3, ((SELECT fp FROM fps WHERE id = 1)::bigint # (7::bigint << 20))::simhash64);
CREATE INDEX fps_fp ON fps USING gin (fp simhash_ops);
ANALYZE fps;
SET enable_seqscan = off;
-- (a constant, so that the plan reads the same on every major)
SELECT fp AS fp1 FROM fps WHERE id = 1 \gset
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE fp % :'fp1';
SELECT id FROM fps WHERE fp % (SELECT fp FROM fps WHERE id = 1) ORDER BY id;
SET sbf.simhash_max_distance = 2;
SELECT id FROM fps WHERE fp % (SELECT fp FROM fps WHERE id = 1) ORDER BY id;
-- the default layout, 2 blocks, looks up each block with up to
-- floor(d / 2) bits flipped (d = 2 and 3: 66 keys, d = 4 and 5: 1,058);
-- beyond 2,048 keys (d = 7 here) it reads the whole index and rechecks
-- every row: still exact
SET sbf.simhash_max_distance = 5;
SELECT id FROM fps WHERE fp % (SELECT fp FROM fps WHERE id = 1) ORDER BY id;
SET sbf.simhash_max_distance = 7;
SELECT id FROM fps WHERE fp % (SELECT fp FROM fps WHERE id = 1) ORDER BY id;
RESET enable_seqscan;
SELECT id FROM fps WHERE fp <~> (SELECT fp FROM fps WHERE id = 1) <= 7 ORDER BY id;
RESET sbf.simhash_max_distance;
-- the option blocks: 1..64
CREATE INDEX ON fps USING gin (fp simhash_ops (blocks = 0));
CREATE INDEX ON fps USING gin (fp simhash_ops (blocks = 65));

-- Every near-duplicate pair of a table at once: an equi-join on
-- simhash_keys(fp, d, blocks).  Pairs within d agree on at least blocks - d
-- of the blocks, so they share the key of some combination of blocks - d
-- blocks: C(blocks, d) keys a fingerprint
SELECT count(*) AS keys, count(DISTINCT k) AS different FROM simhash_keys('0123456789abcdef') k;
SELECT d, b, (SELECT count(*) FROM simhash_keys('0123456789abcdef', d, b)) AS keys
FROM (VALUES (0, 1), (0, 4), (3, 4), (3, 5), (3, 6), (3, 8), (2, 64)) AS t(d, b);
-- fingerprints equal on bits 0..25 only (blocks 0 and 1 of 5) share the
-- first key, of the combination (0, 1), and no other
SELECT string_agg(CASE WHEN k1.k = k2.k THEN 'shared' ELSE '-' END, ' ' ORDER BY n) AS keys
FROM simhash_keys('ffffffffffffffff'::simhash64, 3, 5) WITH ORDINALITY AS k1(k, n)
JOIN simhash_keys('0000000003ffffff'::simhash64, 3, 5) WITH ORDINALITY AS k2(k, n) USING (n);
-- 200 clusters of 10 fingerprints, each a base with 0 to 6 random bits
-- flipped: pairs at every distance from 0 to 12 within a cluster
CREATE TEMP TABLE near AS
SELECT g AS id,
	   (hashint8extended(g / 10, 0) #
		coalesce((SELECT bit_or(1::bigint << (abs(hashint8extended(g * 8 + j, 1)) % 64)::int)
				  FROM generate_series(1, g % 7) j), 0))::simhash64 AS fp
FROM generate_series(0, 1999) g;
-- the truth, by brute force over all 1,999,000 pairs
CREATE TEMP TABLE near_pairs AS
SELECT a.id AS x, b.id AS y, a.fp <~> b.fp AS distance
FROM near a JOIN near b ON a.id < b.id WHERE a.fp <~> b.fp <= 6;
SELECT distance, count(*) AS pairs FROM near_pairs GROUP BY distance ORDER BY distance;
-- the join on the keys finds exactly those pairs, for every layout
WITH configs(d, blocks) AS (
	VALUES (0, 1), (0, 4), (1, 2), (2, 3), (3, 4), (3, 5), (3, 6), (4, 6), (6, 8), (2, 16)
), keyed AS (
	SELECT c.d, c.blocks, n.id, n.fp, k
	FROM configs c, near n, simhash_keys(n.fp, c.d, c.blocks) k
), joined AS (
	SELECT DISTINCT a.d, a.blocks, a.id AS x, b.id AS y
	FROM keyed a JOIN keyed b ON a.d = b.d AND a.blocks = b.blocks AND a.k = b.k AND a.id < b.id
	WHERE a.fp <~> b.fp <= a.d
), truth AS (
	SELECT c.d, c.blocks, p.x, p.y FROM configs c JOIN near_pairs p ON p.distance <= c.d
)
SELECT c.d, c.blocks,
	   (SELECT count(*) FROM truth t WHERE (t.d, t.blocks) = (c.d, c.blocks)) AS brute_force,
	   (SELECT count(*) FROM joined j WHERE (j.d, j.blocks) = (c.d, c.blocks)) AS joined,
	   (SELECT count(*) FROM (SELECT x, y FROM truth t WHERE (t.d, t.blocks) = (c.d, c.blocks)
							  EXCEPT SELECT x, y FROM joined j WHERE (j.d, j.blocks) = (c.d, c.blocks)) s) AS missed
FROM configs c ORDER BY c.d, c.blocks;
-- NULL: no keys; bad layouts
SELECT count(*) FROM simhash_keys(NULL, 3, 5);
SELECT simhash_keys('0123456789abcdef', 3, 3);
SELECT simhash_keys('0123456789abcdef', -1, 4);
SELECT simhash_keys('0123456789abcdef', 0, 0);
SELECT simhash_keys('0123456789abcdef', 3, 65);
SELECT simhash_keys('0123456789abcdef', 6, 64);
