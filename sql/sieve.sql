--
-- The offline sieve: exact deduplication of discovered URLs against the
-- signatures of every URL ever seen, with three tables.
--

-- Z: signatures of every URL ever discovered
CREATE TABLE seen (sig bigint PRIMARY KEY);
-- A: URLs discovered since the last flush, in discovery order
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL, found_on text);
-- F: URLs to visit; seq numbers them in the order they were appended
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL,
					   seq bigint GENERATED ALWAYS AS IDENTITY);

-- A URL's signature: XXH3-64 of its bytes, seed 0
SELECT url_signature('https://www.postgresql.org/') AS sig,
	   url_signature('https://www.postgresql.org/') = url_signature('https://www.postgresql.org/') AS stable,
	   url_signature('') AS empty;

-- A first batch, with repeats inside it
INSERT INTO discovered (pos, url, found_on) VALUES
	(1, 'https://www.postgresql.org/', 'seed'),
	(2, 'https://www.postgresql.org/docs/', 'https://www.postgresql.org/'),
	(3, 'https://www.postgresql.org/download/', 'https://www.postgresql.org/'),
	(4, 'https://www.postgresql.org/', 'https://www.postgresql.org/docs/'),
	(5, 'https://www.postgresql.org/docs/15/', 'https://www.postgresql.org/docs/'),
	(6, 'https://www.postgresql.org/docs/', 'https://www.postgresql.org/docs/15/');

-- The flush appends each new URL once, at its first position, and
-- empties discovered
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;
SELECT pos, url FROM frontier ORDER BY pos;
SELECT count(*) AS discovered_left FROM discovered;
SELECT count(*) AS signatures FROM seen;

-- A second batch: URLs seen in the first are not appended again, new
-- ones are, in discovery order whatever their signatures
INSERT INTO discovered (pos, url) VALUES
	(7, 'https://www.postgresql.org/docs/15/sql.html'),
	(8, 'https://www.postgresql.org/'),
	(9, 'https://www.postgresql.org/about/'),
	(10, 'https://www.postgresql.org/docs/15/sql.html'),
	(11, 'https://www.postgresql.org/community/');
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;
SELECT pos, url FROM frontier ORDER BY pos;

-- Appended in ascending position: the order of appending is the order of
-- discovery
SELECT array_agg(pos ORDER BY seq) AS append_order FROM frontier;

-- Nothing discovered: nothing appended
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;

-- seen holds exactly the signatures of the frontier
SELECT (SELECT array_agg(sig ORDER BY sig) FROM seen) =
	   (SELECT array_agg(url_signature(url) ORDER BY url_signature(url)) FROM frontier) AS seen_is_frontier;

-- The same result as the plain-SQL flush in docs/sieve.md, over two
-- batches with repeats within and across them
CREATE TABLE seen_sql (sig bigint PRIMARY KEY);
CREATE TABLE discovered_sql (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier_sql (pos bigint NOT NULL, url text NOT NULL,
						   seq bigint GENERATED ALWAYS AS IDENTITY);
CREATE TABLE seen_c (LIKE seen_sql INCLUDING ALL);
CREATE TABLE discovered_c (LIKE discovered_sql);
CREATE TABLE frontier_c (LIKE frontier_sql INCLUDING IDENTITY);

CREATE PROCEDURE pg_temp.plain_sql_flush() LANGUAGE sql AS $$
	WITH batch AS (
		DELETE FROM discovered_sql RETURNING pos, url
	), firsts AS (
		SELECT DISTINCT ON (url_signature(url)) url_signature(url) AS sig, pos, url
		FROM batch ORDER BY url_signature(url), pos
	), fresh AS (
		INSERT INTO seen_sql (sig)
		SELECT sig FROM firsts f WHERE NOT EXISTS (SELECT FROM seen_sql s WHERE s.sig = f.sig)
		ORDER BY sig
		RETURNING sig
	)
	INSERT INTO frontier_sql (pos, url)
	SELECT f.pos, f.url FROM firsts f JOIN fresh USING (sig) ORDER BY f.pos;
$$;

INSERT INTO discovered_sql SELECT g, 'https://example.org/' || (g * 7919 % 13) FROM generate_series(1, 40) g;
INSERT INTO discovered_c SELECT * FROM discovered_sql;
CALL pg_temp.plain_sql_flush();
SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c') AS appended;
INSERT INTO discovered_sql SELECT g, 'https://example.org/' || (g * 31 % 29) FROM generate_series(41, 100) g;
INSERT INTO discovered_c SELECT * FROM discovered_sql;
CALL pg_temp.plain_sql_flush();
SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c') AS appended;
SELECT (SELECT array_agg(pos ORDER BY seq) FROM frontier_c) AS sieve_flush,
	   (SELECT array_agg(pos ORDER BY seq) FROM frontier_sql) AS plain_sql,
	   (SELECT array_agg(url ORDER BY pos) FROM frontier_c) =
	   (SELECT array_agg(url ORDER BY pos) FROM frontier_sql) AS same_urls;

-- Everything happens in the caller's transaction
BEGIN;
INSERT INTO discovered VALUES (100, 'https://www.postgresql.org/account/');
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;
ROLLBACK;
SELECT (SELECT count(*) FROM frontier) AS frontier_rows,
	   (SELECT count(*) FROM seen) AS seen_rows,
	   (SELECT count(*) FROM discovered) AS discovered_rows;

--
-- Errors name the problem
--
CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	hint text;
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM || coalesce(E'\n       ' || nullif(hint, ''), '');
END $$;

SELECT pg_temp.error_of($$ SELECT sieve_flush('no_such_table', 'discovered', 'frontier') $$);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'seen', 'frontier') $$);
CREATE TABLE seen_noindex (sig bigint);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_noindex', 'discovered', 'frontier') $$);
CREATE TABLE seen_nonunique (sig bigint);
CREATE INDEX ON seen_nonunique (sig);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_nonunique', 'discovered', 'frontier') $$);
CREATE TABLE seen_wide (sig bigint, host text, UNIQUE (sig, host));
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_wide', 'discovered', 'frontier') $$);
CREATE TABLE seen_nosig (signature bigint PRIMARY KEY);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_nosig', 'discovered', 'frontier') $$);
CREATE TABLE seen_int (sig integer PRIMARY KEY);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_int', 'discovered', 'frontier') $$);
CREATE TABLE discovered_nopos (position bigint, url text);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered_nopos', 'frontier') $$);
CREATE TABLE discovered_varchar (pos bigint, url varchar);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered_varchar', 'frontier') $$);
CREATE TABLE frontier_nourl (pos bigint, link text);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered', 'frontier_nourl') $$);
CREATE VIEW frontier_view AS SELECT * FROM frontier;
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered', 'frontier_view') $$);
CREATE TABLE discovered_nullable (pos bigint, url text);
INSERT INTO discovered_nullable VALUES (1, 'https://example.org/'), (2, NULL);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered_nullable', 'frontier') $$);
SELECT count(*) AS still_there FROM discovered_nullable;

-- A trigger that skips rows makes the flush fail, and nothing changes
CREATE FUNCTION skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TABLE frontier_skipping (pos bigint, url text);
CREATE TRIGGER skip BEFORE INSERT ON frontier_skipping FOR EACH ROW EXECUTE FUNCTION skip_row();
INSERT INTO discovered VALUES (200, 'https://www.postgresql.org/support/');
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered', 'frontier_skipping') $$);
SELECT count(*) AS discovered_kept FROM discovered;

-- The flush deletes exactly the rows it reads: a row that a BEFORE DELETE
-- trigger keeps is neither deleted nor flushed, and waits for a later flush
-- (row 200, left by the previous test, is flushed with them)
CREATE FUNCTION keep_held() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.url LIKE '%/held/%' THEN
		RETURN NULL;
	END IF;
	RETURN OLD;
END $$;
CREATE TRIGGER keep BEFORE DELETE ON discovered FOR EACH ROW EXECUTE FUNCTION keep_held();
INSERT INTO discovered VALUES (300, 'https://example.org/held/1'), (301, 'https://example.org/taken/1');
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;
SELECT pos, url FROM frontier WHERE pos >= 200 ORDER BY pos;
SELECT pos, url FROM discovered WHERE pos >= 300;
DROP TRIGGER keep ON discovered;
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;
SELECT pos, url FROM frontier WHERE pos >= 200 ORDER BY pos;

-- discovered may be partitioned (by discovery time, say): the flush reads
-- and empties every partition
CREATE TABLE discovered_parts (pos bigint NOT NULL, url text NOT NULL) PARTITION BY RANGE (pos);
CREATE TABLE discovered_parts_1 PARTITION OF discovered_parts FOR VALUES FROM (0) TO (1000);
CREATE TABLE discovered_parts_2 PARTITION OF discovered_parts FOR VALUES FROM (1000) TO (2000);
INSERT INTO discovered_parts VALUES
	(500, 'https://example.org/parts/a'),
	(1500, 'https://example.org/parts/b'),
	(1600, 'https://example.org/parts/a');
SELECT sieve_flush('seen', 'discovered_parts', 'frontier') AS appended;
SELECT pos, url FROM frontier WHERE url LIKE '%/parts/%' ORDER BY pos;
SELECT count(*) AS left_in_partitions FROM discovered_parts;

-- Privileges are checked before anything is locked or read: SELECT,
-- INSERT and UPDATE (or DELETE, or TRUNCATE: what LOCK TABLE asks for the
-- SHARE ROW EXCLUSIVE lock the flush takes) on seen, SELECT and DELETE on
-- discovered, INSERT on frontier
INSERT INTO discovered VALUES (400, 'https://example.org/by-the-crawler');
CREATE ROLE regress_sbf_crawler;
GRANT SELECT ON seen, discovered, frontier TO regress_sbf_crawler;
SET ROLE regress_sbf_crawler;
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered', 'frontier') $$);
RESET ROLE;
GRANT INSERT, UPDATE ON seen TO regress_sbf_crawler;
SET ROLE regress_sbf_crawler;
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered', 'frontier') $$);
RESET ROLE;
GRANT DELETE ON discovered TO regress_sbf_crawler;
GRANT INSERT ON frontier TO regress_sbf_crawler;
SET ROLE regress_sbf_crawler;
SELECT sieve_flush('seen', 'discovered', 'frontier') AS appended;
RESET ROLE;

-- Row-level security on seen is refused: the index probes would bypass it
CREATE TABLE seen_rls (sig bigint PRIMARY KEY);
ALTER TABLE seen_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY all_rows ON seen_rls USING (true);
GRANT SELECT, INSERT, UPDATE ON seen_rls TO regress_sbf_crawler;
SET ROLE regress_sbf_crawler;
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_rls', 'discovered', 'frontier') $$);
RESET ROLE;

-- Row-level security on discovered applies as to any DELETE ... RETURNING:
-- the crawler flushes the rows its policy lets it delete, the others stay
CREATE TABLE discovered_rls (pos bigint NOT NULL, url text NOT NULL);
ALTER TABLE discovered_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_host ON discovered_rls USING (url LIKE 'https://crawler.example/%');
GRANT SELECT, DELETE ON discovered_rls TO regress_sbf_crawler;
INSERT INTO discovered_rls VALUES
	(500, 'https://crawler.example/a'), (501, 'https://other.example/b');
SET ROLE regress_sbf_crawler;
SELECT sieve_flush('seen', 'discovered_rls', 'frontier') AS appended;
RESET ROLE;
SELECT pos, url FROM discovered_rls;
SELECT pos, url FROM frontier WHERE url ~ '^https://(crawler|other)\.example/' ORDER BY pos;
DROP OWNED BY regress_sbf_crawler;
DROP ROLE regress_sbf_crawler;

-- Rules on discovered are refused: one could make the flush's DELETE read
-- another table, or nothing
CREATE TABLE discovered_ruled (pos bigint NOT NULL, url text NOT NULL);
CREATE RULE keep_all AS ON DELETE TO discovered_ruled DO INSTEAD NOTHING;
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered_ruled', 'frontier') $$);

--
-- frontier.sig: when the frontier has a column sig, the flush writes each
-- URL's signature into it (on Citus, where the frontier is distributed by
-- it, Citus routes the rows by it); a sig of another type is an error
--
CREATE TABLE seen_s (sig bigint PRIMARY KEY);
CREATE TABLE discovered_s (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier_s (pos bigint NOT NULL, url text NOT NULL, sig bigint);
INSERT INTO discovered_s VALUES
	(1, 'https://www.postgresql.org/'), (2, 'https://www.postgresql.org/docs/'),
	(3, 'https://www.postgresql.org/'), (4, 'https://www.postgresql.org/download/');
SELECT sieve_flush('seen_s', 'discovered_s', 'frontier_s') AS appended;
SELECT pos, url, sig, sig = url_signature(url) AS is_signature
FROM frontier_s ORDER BY pos;
-- the frontier's signatures are exactly seen's
SELECT (SELECT array_agg(sig ORDER BY sig) FROM frontier_s) =
	   (SELECT array_agg(sig ORDER BY sig) FROM seen_s) AS same_signatures;
-- also through batches of the ephemeral relation larger than one
INSERT INTO discovered_s
SELECT 100 + g, 'https://example.org/page/' || g FROM generate_series(1, 25000) g;
SELECT sieve_flush('seen_s', 'discovered_s', 'frontier_s') AS appended;
SELECT count(*) AS frontier_rows, count(*) FILTER (WHERE sig = url_signature(url)) AS with_signature
FROM frontier_s;

CREATE TABLE frontier_int_sig (pos bigint NOT NULL, url text NOT NULL, sig integer);
INSERT INTO discovered_s VALUES (30000, 'https://example.org/int');
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_s', 'discovered_s', 'frontier_int_sig') $$);
SELECT count(*) AS still_there FROM discovered_s;

-- a sig that computes its own values is left to them: generated ...
CREATE TABLE frontier_generated (pos bigint NOT NULL, url text NOT NULL,
	sig bigint GENERATED ALWAYS AS (url_signature(url)) STORED);
SELECT sieve_flush('seen_s', 'discovered_s', 'frontier_generated') AS appended;
SELECT pos, sig = url_signature(url) AS is_signature FROM frontier_generated;
-- ... or an identity column
CREATE TABLE frontier_identity (pos bigint NOT NULL, url text NOT NULL,
	sig bigint GENERATED ALWAYS AS IDENTITY);
INSERT INTO discovered_s VALUES (30001, 'https://example.org/identity');
SELECT sieve_flush('seen_s', 'discovered_s', 'frontier_identity') AS appended;
SELECT pos, url, sig FROM frontier_identity;

-- discovered.sig: when discovered has a bigint column sig (on Citus, the
-- column that places the row in its shard group), each row's sig must be
-- its URL's signature, or NULL; a row whose sig is another value is an
-- error, and the flush changes nothing
CREATE TABLE discovered_sig (pos bigint NOT NULL, url text NOT NULL, sig bigint);
INSERT INTO discovered_sig VALUES
	(40001, 'https://example.org/right', url_signature('https://example.org/right')),
	(40002, 'https://example.org/unsigned', NULL),
	(40003, 'https://example.org/wrong', 42);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_s', 'discovered_sig', 'frontier_s') $$);
SELECT count(*) AS still_there FROM discovered_sig;
DELETE FROM discovered_sig WHERE pos = 40003;
SELECT sieve_flush('seen_s', 'discovered_sig', 'frontier_s') AS appended;
-- a sig of another type is some other column, and is left alone
CREATE TABLE discovered_text_sig (pos bigint NOT NULL, url text NOT NULL, sig text);
INSERT INTO discovered_text_sig VALUES (40004, 'https://example.org/text-sig', 'not a signature');
SELECT sieve_flush('seen_s', 'discovered_text_sig', 'frontier_s') AS appended;

-- sieve_flush_shards is for Citus tables (t/061_citus_sieve.pl): without
-- Citus it is an error, with a hint to sieve_flush
SELECT pg_temp.error_of($$ SELECT sieve_flush_shards('seen_s', 'discovered_s', 'frontier_s') $$);
