--
-- sieve_flush against careless or hostile use: long URLs, tables that
-- overlap, a role that may not lock seen, and statistics that lie.
--

-- a schema of its own, beside the tables of sql/sieve.sql
CREATE SCHEMA sieve_hardening;
SET search_path = sieve_hardening, public;

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

--
-- Memory follows work_mem, not the URLs' length: the URLs appended to the
-- frontier by one INSERT take at most a quarter of work_mem as stored
-- (compressed, if they were), unless a single URL is longer (it then goes
-- alone)
--
CREATE TABLE seen_long (sig bigint PRIMARY KEY);
CREATE TABLE discovered_long (pos bigint NOT NULL, url text NOT NULL);
-- stored uncompressed, whatever default_toast_compression says
ALTER TABLE discovered_long ALTER url SET STORAGE EXTERNAL;
CREATE TABLE frontier_long (pos bigint NOT NULL, url text NOT NULL);
-- each INSERT into the frontier, as the flush ran it
CREATE TABLE frontier_inserts (urls bigint, bytes bigint);
CREATE FUNCTION log_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO frontier_inserts SELECT count(*), sum(octet_length(url)) FROM appended;
	RETURN NULL;
END $$;
CREATE TRIGGER log_insert AFTER INSERT ON frontier_long
	REFERENCING NEW TABLE AS appended
	FOR EACH STATEMENT EXECUTE FUNCTION log_insert();

-- 300 URLs of 3,000 bytes (900 kB) and one of 100,000 bytes, at work_mem =
-- 64kB: at most 16 kB of URLs an INSERT
INSERT INTO discovered_long
	SELECT g, 'https://example.org/' || g || '/' || repeat('y', 3000 - 21 - length(g::text))
	FROM generate_series(1, 300) g;
INSERT INTO discovered_long VALUES (301, 'https://example.org/301/' || repeat('z', 100000 - 24));
SET work_mem = '64kB';
SELECT sieve_flush('seen_long', 'discovered_long', 'frontier_long') AS appended;
RESET work_mem;
SELECT count(*) AS inserts,
	   sum(urls) AS urls,
	   max(bytes) FILTER (WHERE urls > 1) AS most_bytes_of_several,
	   max(bytes) FILTER (WHERE urls = 1) AS most_bytes_alone
FROM frontier_inserts;
SELECT count(*) AS appended, min(octet_length(url)) AS shortest,
	   max(octet_length(url)) AS longest,
	   bool_and(url_signature(url) IN (SELECT sig FROM seen_long)) AS all_in_seen
FROM frontier_long;

-- Long URLs stored compressed go through compressed: each counts in a
-- batch as stored (several 100 kB URLs share an INSERT at work_mem =
-- 64kB), and reaches the frontier whole
CREATE TABLE discovered_compressed (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO discovered_compressed
	SELECT g, 'https://example.org/' || g || '/' || repeat('y', 100000) FROM generate_series(1, 20) g;
TRUNCATE frontier_inserts;
SET work_mem = '64kB';
SELECT sieve_flush('seen_long', 'discovered_compressed', 'frontier_long') AS appended;
RESET work_mem;
SELECT sum(urls) AS urls, count(*) < sum(urls) AS several_an_insert FROM frontier_inserts;
SELECT count(*) AS whole FROM frontier_long
WHERE url = 'https://example.org/' || pos || '/' || repeat('y', 100000);

-- The URLs wait in a temporary file while the rows are sorted (the sorts
-- carry their offsets): a flush that would pass temp_file_limit stops with
-- an ERROR, and loses nothing
CREATE TABLE discovered_spill (pos bigint NOT NULL, url text NOT NULL);
ALTER TABLE discovered_spill ALTER url SET STORAGE EXTERNAL;
INSERT INTO discovered_spill
	SELECT g, 'https://example.org/spill/' || g || '/' || repeat('s', 2000)
	FROM generate_series(1, 200) g;
SELECT count(*) AS seen_before FROM seen_long \gset
SET temp_file_limit = '100kB';
-- (PostgreSQL 18 quotes the setting's name in the message)
SELECT left(e, 5) AS sqlstate, e ~ 'temporary file size exceeds "?temp_file_limit"? \(100kB\)' AS temp_file_limit
FROM pg_temp.error_of($$ SELECT sieve_flush('seen_long', 'discovered_spill', 'frontier_long') $$) e;
RESET temp_file_limit;
SELECT (SELECT count(*) FROM discovered_spill) AS discovered,
	   (SELECT count(*) FROM seen_long) - :seen_before AS new_in_seen,
	   (SELECT count(*) FROM frontier_long WHERE url LIKE '%/spill/%') AS appended;
SELECT sieve_flush('seen_long', 'discovered_spill', 'frontier_long') AS appended;
SELECT count(*) AS whole FROM frontier_long
WHERE url = 'https://example.org/spill/' || pos || '/' || repeat('s', 2000);

--
-- Tables that share rows through partitioning or inheritance are refused,
-- naming both: the flush would read what it writes
--
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL) PARTITION BY LIST (url);
CREATE TABLE discovered_default PARTITION OF discovered DEFAULT;
INSERT INTO discovered VALUES (1, 'https://example.org/a'), (2, 'https://example.org/b'),
	(3, 'https://example.org/a');
-- the frontier a partition of discovered: the flush would append to what
-- it empties, and the next flush delete it
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered', 'discovered_default') $$);
-- discovered a partition of the frontier, two levels down
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL) PARTITION BY RANGE (pos);
CREATE TABLE frontier_low PARTITION OF frontier FOR VALUES FROM (0) TO (1000)
	PARTITION BY LIST (url);
CREATE TABLE frontier_low_rest PARTITION OF frontier_low DEFAULT;
INSERT INTO frontier_low_rest VALUES (4, 'https://example.org/c');
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'frontier_low_rest', 'frontier') $$);
-- discovered an inheritance child of seen, with columns of its own
CREATE TABLE seen_with_urls (pos bigint NOT NULL, url text NOT NULL) INHERITS (seen);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'seen_with_urls', 'frontier_low') $$);
DROP TABLE seen_with_urls;
-- nothing was flushed or appended
SELECT (SELECT count(*) FROM discovered) AS discovered, (SELECT count(*) FROM seen) AS seen,
	   (SELECT count(*) FROM frontier_low_rest) AS frontier_low_rest;
-- tables beside each other, siblings under one parent, are flushed as usual
CREATE TABLE frontier_high PARTITION OF frontier FOR VALUES FROM (1000) TO (2000);
DELETE FROM frontier;
CREATE TABLE discovered_siblings (pos bigint NOT NULL, url text NOT NULL) PARTITION BY RANGE (pos);
CREATE TABLE discovered_siblings_all PARTITION OF discovered_siblings FOR VALUES FROM (0) TO (2000);
INSERT INTO discovered_siblings SELECT * FROM discovered;
SELECT sieve_flush('seen', 'discovered_siblings', 'frontier_low') AS appended;

-- seen with inheritance children is refused: SELECT ... FROM seen reads
-- the children's signatures too, which the flush would not look up
CREATE TABLE seen_archive () INHERITS (seen);
INSERT INTO seen_archive VALUES (url_signature('https://example.org/archived'));
CREATE TABLE discovered_plain (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO discovered_plain VALUES (1010, 'https://example.org/archived');
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen', 'discovered_plain', 'frontier_high') $$);
SELECT count(*) AS still_discovered FROM discovered_plain;
DROP TABLE seen_archive;
SELECT sieve_flush('seen', 'discovered_plain', 'frontier_high') AS appended;

--
-- A flush needs on each table what LOCK TABLE asks for the lock it takes
-- there, as well as what its statements need: SHARE ROW EXCLUSIVE on seen
-- takes UPDATE, DELETE or TRUNCATE.  It is checked before any lock.
--
CREATE ROLE regress_sbf_inserter;
CREATE TABLE seen_shared (sig bigint PRIMARY KEY);
GRANT USAGE ON SCHEMA sieve_hardening TO regress_sbf_inserter;
GRANT SELECT, INSERT ON seen_shared TO regress_sbf_inserter;
SET ROLE regress_sbf_inserter;
CREATE TEMP TABLE my_discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TEMP TABLE my_frontier (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO my_discovered VALUES (1, 'https://example.org/mine');
BEGIN;
SELECT pg_temp.error_of($$ LOCK TABLE seen_shared IN SHARE ROW EXCLUSIVE MODE $$);
SELECT pg_temp.error_of($$ SELECT sieve_flush('seen_shared', 'my_discovered', 'my_frontier') $$);
-- no lock on seen_shared is held
SELECT relation::regclass, mode FROM pg_locks
WHERE locktype = 'relation' AND pid = pg_backend_pid()
  AND relation = 'seen_shared'::regclass;
COMMIT;
RESET ROLE;
GRANT UPDATE ON seen_shared TO regress_sbf_inserter;
SET ROLE regress_sbf_inserter;
SELECT sieve_flush('seen_shared', 'my_discovered', 'my_frontier') AS appended;
DROP TABLE my_discovered, my_frontier;
RESET ROLE;
DROP OWNED BY regress_sbf_inserter;
DROP ROLE regress_sbf_inserter;

--
-- Merge or probe: the flush merges with seen read in full when seen is
-- small beside the batch, and probes its index otherwise, judging seen by
-- its size on disk, not by ANALYZE's estimate: after a bulk load into a
-- seen analysed while empty (reltuples 0), a one-URL flush probes
--
CREATE TABLE seen_loaded (sig bigint PRIMARY KEY) WITH (autovacuum_enabled = off);
ANALYZE seen_loaded;
INSERT INTO seen_loaded SELECT g FROM generate_series(1, 10000) g;
SELECT reltuples AS stale_reltuples FROM pg_class WHERE oid = 'seen_loaded'::regclass;
CREATE TABLE discovered_few (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier_few (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO discovered_few VALUES (1, 'https://example.org/one');
BEGIN;
SET LOCAL client_min_messages = debug1;
SELECT sieve_flush('seen_loaded', 'discovered_few', 'frontier_few') AS appended;
RESET client_min_messages;
-- the rows of seen it read (statistics of the current transaction)
SELECT seq_tup_read + idx_tup_fetch AS seen_rows_read
FROM pg_stat_xact_user_tables WHERE relid = 'seen_loaded'::regclass;
COMMIT;
SET client_min_messages = debug1;
-- a batch of 20,000 rows against 10,000 signatures merges
INSERT INTO discovered_few SELECT g, 'https://example.org/many/' || g FROM generate_series(1, 20000) g;
SELECT sieve_flush('seen_loaded', 'discovered_few', 'frontier_few') AS appended;
RESET client_min_messages;
