--
-- A flush into a compressed seen replaces it by a new table written below
-- SQL (sieve_store.c): what would skip or miss that rewrite is refused
--

SELECT sieve_seen_create('rw_seen');
-- (discovered has a primary key: a publication of all tables publishes
-- the flush's deletes from it, which need a replica identity)
CREATE TABLE rw_discovered (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE rw_frontier (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE rw_plain (sig bigint PRIMARY KEY);
INSERT INTO rw_discovered VALUES (1, 'https://example.org/1'), (2, 'https://example.org/2');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');

-- The publications hide a WARNING when wal_level is not logical
SET client_min_messages = error;

-- Logical replication does not carry the rewrite: a compressed seen in a
-- publication is refused at the flush (and at the import), naming the
-- publication, and the discovered rows stay
CREATE PUBLICATION rw_by_name FOR TABLE rw_seen;
INSERT INTO rw_discovered VALUES (3, 'https://example.org/3');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
\echo :LAST_ERROR_SQLSTATE
SELECT sieve_seen_import('rw_seen', 'rw_plain');
SELECT count(*) AS discovered FROM rw_discovered;
-- so is a flush that would find nothing new: the refusal does not depend
-- on the batch
DELETE FROM rw_discovered;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
DROP PUBLICATION rw_by_name;
INSERT INTO rw_discovered VALUES (3, 'https://example.org/3');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');

-- A publication of a schema: refused at the flush; a compressed seen made
-- in that schema is refused by sieve_seen_create; an unlogged one, which no
-- publication carries, is not
CREATE SCHEMA rw;
SELECT sieve_seen_create('rw.seen');
CREATE PUBLICATION rw_by_schema FOR TABLES IN SCHEMA rw;
INSERT INTO rw_discovered VALUES (4, 'https://example.org/4');
SELECT sieve_flush('rw.seen', 'rw_discovered', 'rw_frontier');
SELECT sieve_seen_create('rw.later');
SELECT to_regclass('rw.later');
SELECT sieve_seen_create('rw.unlogged', unlogged => true);
SELECT sieve_flush('rw.unlogged', 'rw_discovered', 'rw_frontier');
DROP PUBLICATION rw_by_schema;

-- A publication of all tables: the same, and a temporary compressed seen
-- is not published either; nor is a plain seen refused, whose flushes are
-- INSERTs, which logical replication carries
CREATE PUBLICATION rw_all FOR ALL TABLES;
INSERT INTO rw_discovered VALUES (5, 'https://example.org/5');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
SELECT sieve_seen_create('rw_later');
SELECT sieve_seen_create('pg_temp.rw_temp');
SELECT sieve_flush('pg_temp.rw_temp', 'rw_discovered', 'rw_frontier');
INSERT INTO rw_discovered VALUES (55, 'https://example.org/55');
SELECT sieve_flush('rw_plain', 'rw_discovered', 'rw_frontier');
-- with two publications, the message names the first by name
CREATE PUBLICATION rw_also FOR TABLE rw.seen;
SELECT sieve_flush('rw.seen', 'rw_discovered', 'rw_frontier');
DROP PUBLICATION rw_all, rw_also;

-- A compressed seen that is a partition of a published table
CREATE TABLE rw_parent (head bigint NOT NULL, chunk sieve_chunk) PARTITION BY RANGE (head);
ALTER TABLE rw_parent ATTACH PARTITION rw_seen FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
CREATE PUBLICATION rw_by_parent FOR TABLE rw_parent;
INSERT INTO rw_discovered VALUES (6, 'https://example.org/6');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
DROP PUBLICATION rw_by_parent;
ALTER TABLE rw_parent DETACH PARTITION rw_seen;
DROP TABLE rw_parent;
RESET client_min_messages;

-- Triggers would not fire: refused, unless disabled; rules and CHECK
-- constraints would not apply: refused; the flush and the import alike
CREATE FUNCTION rw_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE NOTICE 'rw_note: % %', TG_OP, TG_LEVEL;
	RETURN NEW;
END $$;
CREATE TRIGGER rw_before BEFORE INSERT ON rw_seen FOR EACH ROW EXECUTE FUNCTION rw_note();
INSERT INTO rw_discovered VALUES (7, 'https://example.org/7');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
\echo :LAST_ERROR_SQLSTATE
SELECT sieve_seen_import('rw_seen', 'rw_plain');
ALTER TABLE rw_seen DISABLE TRIGGER rw_before;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
DROP TRIGGER rw_before ON rw_seen;
CREATE TRIGGER rw_truncate AFTER TRUNCATE ON rw_seen FOR EACH STATEMENT EXECUTE FUNCTION rw_note();
INSERT INTO rw_discovered VALUES (8, 'https://example.org/8');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
DROP TRIGGER rw_truncate ON rw_seen;
-- a foreign key that references the seen: its triggers are on the seen
CREATE TABLE rw_refers (head bigint REFERENCES rw_seen (head));
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
DROP TABLE rw_refers;
CREATE RULE rw_rule AS ON INSERT TO rw_seen DO ALSO NOTIFY rw_seen;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
DROP RULE rw_rule ON rw_seen;
ALTER TABLE rw_seen ADD CONSTRAINT rw_positive CHECK (head IS NOT NULL);
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
SELECT sieve_seen_import('rw_seen', 'rw_plain');
ALTER TABLE rw_seen DROP CONSTRAINT rw_positive;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');

-- A cursor open on the seen would read the old heap, then the new one:
-- refused, as CLUSTER and VACUUM FULL refuse it
INSERT INTO rw_discovered SELECT g, 'https://example.org/' || g FROM generate_series(100, 3000) g;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
SELECT count(*) AS chunks FROM rw_seen;
BEGIN;
DECLARE rw_cursor CURSOR FOR SELECT head FROM rw_seen;
FETCH 1 FROM rw_cursor \gset
INSERT INTO rw_discovered SELECT g, 'https://example.org/' || g FROM generate_series(3001, 4000) g;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
DECLARE rw_cursor CURSOR FOR SELECT head FROM rw_seen;
SELECT sieve_seen_import('rw_seen', 'rw_plain');
ROLLBACK;
-- so is a flush called from a query that reads the seen
INSERT INTO rw_discovered SELECT g, 'https://example.org/' || g FROM generate_series(3001, 4000) g;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier') FROM rw_seen LIMIT 1;
-- and a cursor that the user's code opens during the flush (a trigger on
-- discovered, one on the frontier), caught at the swap
CREATE FUNCTION rw_open_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	c refcursor := 'rw_inner';
BEGIN
	OPEN c FOR SELECT head FROM rw_seen;
	RETURN NULL;
END $$;
CREATE TRIGGER rw_open_cursor AFTER DELETE ON rw_discovered FOR EACH STATEMENT EXECUTE FUNCTION rw_open_cursor();
BEGIN;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
ROLLBACK;
DROP TRIGGER rw_open_cursor ON rw_discovered;
CREATE TRIGGER rw_open_cursor AFTER INSERT ON rw_frontier FOR EACH STATEMENT EXECUTE FUNCTION rw_open_cursor();
BEGIN;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
\echo :SQLSTATE
ROLLBACK;
DROP TRIGGER rw_open_cursor ON rw_frontier;
-- a closed cursor, and one on the other tables, which the flush only
-- deletes from and appends to, are no matter: the latter reads as of its
-- snapshot
BEGIN;
DECLARE rw_cursor CURSOR FOR SELECT head FROM rw_seen;
FETCH 1 FROM rw_cursor \gset
CLOSE rw_cursor;
DECLARE rw_discovered_cursor CURSOR FOR SELECT pos FROM rw_discovered ORDER BY pos;
DECLARE rw_frontier_cursor CURSOR FOR SELECT count(*) FROM rw_frontier;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
FETCH 2 FROM rw_discovered_cursor;
FETCH 1 FROM rw_frontier_cursor;
SELECT count(*) FROM rw_frontier;
COMMIT;
SELECT count(*) FILTER (WHERE sieve_contains('rw_seen', 'https://example.org/' || g)) AS seen
FROM generate_series(100, 4000) g;


-- The swap replaces the seen by the signatures the merge read and added,
-- last (readers wait only from there to the commit): a change the flush's
-- transaction made to the seen would be discarded, so it is refused.  Here
-- a trigger on the frontier reads the seen (the old Z: the URLs being
-- appended are not in it yet) and deletes its first chunk: the flush is
-- refused, and leaves the seen, discovered and the frontier as they were
CREATE TABLE rw_noted (contained bigint, appended bigint);
CREATE FUNCTION rw_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO rw_noted
	SELECT (SELECT count(*) FILTER (WHERE sieve_contains('rw_seen', url)) FROM appended),
		   (SELECT count(*) FROM appended);
	RAISE NOTICE 'rw_forget: % of the % URLs appended are in the seen',
		(SELECT contained FROM rw_noted), (SELECT appended FROM rw_noted);
	DELETE FROM rw_seen WHERE head = (SELECT min(head) FROM rw_seen);
	RETURN NULL;
END $$;
CREATE TRIGGER rw_forget AFTER INSERT ON rw_frontier REFERENCING NEW TABLE AS appended
	FOR EACH STATEMENT EXECUTE FUNCTION rw_forget();
INSERT INTO rw_discovered SELECT g, 'https://example.org/' || g FROM generate_series(4001, 5000) g;
CREATE TABLE rw_seen_before AS SELECT s FROM sieve_signatures('rw_seen') s;
SELECT count(*) AS frontier_before FROM rw_frontier \gset
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
\echo :SQLSTATE
SELECT (SELECT count(*) FROM sieve_signatures('rw_seen') s) AS seen,
	   (SELECT count(*) FROM rw_seen_before b
		WHERE b.s NOT IN (SELECT s FROM sieve_signatures('rw_seen') s)) AS forgotten,
	   (SELECT count(*) FROM rw_discovered) AS discovered,
	   (SELECT count(*) FROM rw_frontier) - :frontier_before AS appended,
	   (SELECT count(*) FROM rw_noted) AS noted;
DROP TRIGGER rw_forget ON rw_frontier;
-- the same change from a trigger on discovered, before the merge reads the
-- seen, is refused there
CREATE FUNCTION rw_forget_first_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM rw_seen WHERE head = (SELECT min(head) FROM rw_seen);
	RETURN NULL;
END $$;
CREATE TRIGGER rw_forget_first_chunk AFTER DELETE ON rw_discovered
	FOR EACH STATEMENT EXECUTE FUNCTION rw_forget_first_chunk();
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
\echo :SQLSTATE
DROP TRIGGER rw_forget_first_chunk ON rw_discovered;
-- and so is one made earlier in the transaction (COPY too); rolled back to
-- a savepoint, it is gone, and the flush goes ahead
BEGIN;
SAVEPOINT before_change;
DELETE FROM rw_seen WHERE head = (SELECT min(head) FROM rw_seen);
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
ROLLBACK TO SAVEPOINT before_change;
COPY rw_seen FROM stdin;
\.
SELECT sieve_seen_import('rw_seen', 'rw_plain');
ROLLBACK TO SAVEPOINT before_change;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
-- the flush itself never takes ROW EXCLUSIVE on the seen, so a second
-- flush in the same transaction is no write of the transaction's
SELECT bool_or(mode = 'RowExclusiveLock') AS row_exclusive,
	   bool_or(mode = 'AccessExclusiveLock') AS access_exclusive
FROM pg_locks
WHERE locktype = 'relation' AND relation = 'rw_seen'::regclass AND pid = pg_backend_pid();
INSERT INTO rw_discovered VALUES (5001, 'https://example.org/5001');
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
COMMIT;
SELECT (SELECT count(*) FROM sieve_signatures('rw_seen') s) -
	   (SELECT count(*) FROM rw_seen_before) AS added,
	   (SELECT count(*) FROM rw_discovered) AS discovered;

-- an ERROR in the flush (here a trigger on the frontier, before the swap)
-- leaves the old Z, when rolled back to a savepoint too
CREATE FUNCTION rw_fail() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'rw_fail';
END $$;
CREATE TRIGGER rw_fail AFTER INSERT ON rw_frontier FOR EACH STATEMENT EXECUTE FUNCTION rw_fail();
SELECT pg_relation_filenode('rw_seen') AS filenode \gset
INSERT INTO rw_discovered VALUES (6001, 'https://example.org/6001');
BEGIN;
SAVEPOINT before_flush;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
ROLLBACK TO SAVEPOINT before_flush;
SELECT sieve_contains('rw_seen', 'https://example.org/6001') AS seen,
	   pg_relation_filenode('rw_seen') = :filenode AS same_file,
	   (SELECT count(*) FROM rw_discovered) AS discovered;
COMMIT;
DROP TRIGGER rw_fail ON rw_frontier;

-- sieve_seen_import reads its source whole before it reads the seen: what a
-- view it reads does to the seen is refused before the merge
CREATE TABLE rw_forgotten (head bigint);
CREATE FUNCTION rw_forget_first() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	forgotten bigint;
BEGIN
	DELETE FROM rw_seen WHERE head = (SELECT min(head) FROM rw_seen)
	RETURNING head INTO STRICT forgotten;
	INSERT INTO rw_forgotten VALUES (forgotten);
	RETURN forgotten;
END $$;
CREATE TABLE rw_new (sig bigint);
INSERT INTO rw_new VALUES (url_signature('https://example.org/imported'));
CREATE VIEW rw_source AS SELECT sig FROM rw_new WHERE rw_forget_first() IS NOT NULL;
SELECT count(*) AS chunks_before FROM rw_seen \gset
SELECT sieve_seen_import('rw_seen', 'rw_source') AS imported;
\echo :SQLSTATE
SELECT count(*) AS forgotten, (SELECT count(*) FROM rw_seen) = :chunks_before AS same_chunks,
	   sieve_contains('rw_seen', 'https://example.org/imported') AS imported
FROM rw_forgotten;

DROP VIEW rw_source;
DROP TABLE rw_seen, rw_discovered, rw_frontier, rw_plain, rw_noted, rw_seen_before, rw_forgotten, rw_new;
DROP FUNCTION rw_note(), rw_open_cursor(), rw_forget(), rw_forget_first_chunk(), rw_fail(), rw_forget_first();
DROP SCHEMA rw CASCADE;

-- A compressed seen that is a partition: the rewrite would not check its
-- bound (rows outside it, a dump that does not restore).  Refused at the
-- flush and the import, since a table is attached after it is made
CREATE TABLE rw_zparent (head bigint NOT NULL, chunk sieve_chunk) PARTITION BY RANGE (head);
SELECT sieve_seen_create('rw_zpos');
ALTER TABLE rw_zparent ATTACH PARTITION rw_zpos FOR VALUES FROM (0) TO (MAXVALUE);
CREATE TABLE rw_d2 (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE rw_f2 (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE rw_p2 (sig bigint PRIMARY KEY);
INSERT INTO rw_d2 SELECT g, 'https://e.org/' || g FROM generate_series(1, 3000) g;
INSERT INTO rw_p2 SELECT url_signature(url) FROM rw_d2;
SELECT sieve_flush('rw_zpos', 'rw_d2', 'rw_f2');
\echo :LAST_ERROR_SQLSTATE
SELECT sieve_seen_import('rw_zpos', 'rw_p2');
SELECT count(*) AS chunks FROM rw_zpos;
SELECT count(*) AS discovered FROM rw_d2;
-- attached by the user's code in the flush (a trigger on discovered, before
-- the merge): caught at the swap
ALTER TABLE rw_zparent DETACH PARTITION rw_zpos;
CREATE FUNCTION rw_attach() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	ALTER TABLE rw_zparent ATTACH PARTITION rw_zpos FOR VALUES FROM (0) TO (MAXVALUE);
	RETURN NULL;
END $$;
CREATE TRIGGER rw_attach AFTER DELETE ON rw_d2 FOR EACH STATEMENT EXECUTE FUNCTION rw_attach();
SELECT sieve_flush('rw_zpos', 'rw_d2', 'rw_f2');
SELECT count(*) AS chunks FROM rw_zpos;
DROP TRIGGER rw_attach ON rw_d2;
SELECT sieve_flush('rw_zpos', 'rw_d2', 'rw_f2');
DROP TABLE rw_zparent, rw_zpos, rw_d2, rw_f2, rw_p2;
DROP FUNCTION rw_attach();

-- sieve_seen_create makes the table in the schema CREATE TABLE chooses,
-- and checks and returns that one, not another of the same name earlier
-- on the search path (a temporary table, a catalog)
CREATE TEMP TABLE rw_shadow (a int);
SELECT sieve_seen_create('rw_shadow')::oid AS made \gset
SELECT :made = 'public.rw_shadow'::regclass::oid AS the_table_made;
SELECT sieve_seen_create('pg_class')::oid AS made \gset
SELECT :made = 'public.pg_class'::regclass::oid AS the_table_made;
SET client_min_messages = error;
CREATE PUBLICATION rw_all FOR ALL TABLES;
RESET client_min_messages;
CREATE TEMP TABLE rw_shadow_published (a int);
SELECT sieve_seen_create('rw_shadow_published');
SELECT to_regclass('public.rw_shadow_published');
DROP PUBLICATION rw_all;
DROP TABLE public.rw_shadow, public.pg_class, pg_temp.rw_shadow, pg_temp.rw_shadow_published;
