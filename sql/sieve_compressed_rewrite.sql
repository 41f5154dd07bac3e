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
CREATE TABLE rw_parent (head bigint NOT NULL, chunk sieve_chunk NOT NULL) PARTITION BY RANGE (head);
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
-- and a cursor that the user's code opens during the flush (here a trigger
-- on the frontier), caught at the swap
CREATE FUNCTION rw_open_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	c refcursor := 'rw_inner';
BEGIN
	OPEN c FOR SELECT head FROM rw_seen;
	RETURN NULL;
END $$;
CREATE TRIGGER rw_open_cursor AFTER INSERT ON rw_frontier FOR EACH STATEMENT EXECUTE FUNCTION rw_open_cursor();
BEGIN;
SELECT sieve_flush('rw_seen', 'rw_discovered', 'rw_frontier');
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

DROP TABLE rw_seen, rw_discovered, rw_frontier, rw_plain;
DROP FUNCTION rw_note(), rw_open_cursor();
DROP SCHEMA rw CASCADE;
