--
-- The sieve's readers, sieve_contains and sieve_signatures, against seen
-- tables a user may hand them: the privileges and row-level security they
-- obey, every type a column sig may have, every shape of index on it, and
-- a compressed seen whose index or chunks are not what a flush writes.
-- Each answers right or refuses with an ERROR, never crashes.
--

CREATE SCHEMA sieve_readers;
SET search_path = sieve_readers, public;

CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	answer text;
BEGIN
	EXECUTE query INTO answer;
	RETURN coalesce(answer, 'no error');
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- A plain seen and a compressed seen of the same two URLs
CREATE TABLE pseen (sig bigint PRIMARY KEY);
INSERT INTO pseen VALUES (url_signature('https://example.org/a')),
                         (url_signature('https://example.org/b'));
SELECT sieve_seen_create('zseen');
SELECT sieve_seen_import('zseen', 'pseen');

--
-- Privileges: SELECT on the table, checked before any lock is taken (a
-- grant on the columns alone is not enough)
--
CREATE ROLE sieve_readers_role;
GRANT USAGE ON SCHEMA sieve_readers TO sieve_readers_role;
SET ROLE sieve_readers_role;
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('zseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT count(*) FROM sieve_signatures('zseen') $$);
RESET ROLE;
GRANT SELECT (sig) ON pseen TO sieve_readers_role;
GRANT SELECT (head, chunk) ON zseen TO sieve_readers_role;
SET ROLE sieve_readers_role;
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('zseen', 'https://example.org/a') $$);
RESET ROLE;
GRANT SELECT ON pseen, zseen TO sieve_readers_role;
SET ROLE sieve_readers_role;
SELECT sieve_contains('pseen', 'https://example.org/a') AS plain,
       sieve_contains('zseen', 'https://example.org/a') AS compressed,
       (SELECT count(*) FROM sieve_signatures('zseen')) AS signatures;
-- (a role without SELECT is refused before it queues for the lock:
-- specs/sieve_reader_privileges.spec)
RESET ROLE;

--
-- Row-level security: the readers go to the index and the rows directly,
-- past any policy, so they refuse it, as sieve_flush does
--
ALTER TABLE pseen ENABLE ROW LEVEL SECURITY;
ALTER TABLE zseen ENABLE ROW LEVEL SECURITY;
CREATE POLICY nothing ON pseen USING (false);
CREATE POLICY nothing ON zseen USING (false);
SET ROLE sieve_readers_role;
SELECT (SELECT count(*) FROM pseen) AS plain_rows, (SELECT count(*) FROM zseen) AS compressed_rows;
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('zseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT count(*) FROM sieve_signatures('zseen') $$);
-- with row_security off, PostgreSQL's own refusal
SET row_security = off;
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen', 'https://example.org/a') $$);
RESET row_security;
RESET ROLE;
-- the owner, whom the policies do not bind, reads as before
SELECT sieve_contains('pseen', 'https://example.org/a') AS plain,
       sieve_contains('zseen', 'https://example.org/a') AS compressed,
       (SELECT count(*) FROM sieve_signatures('zseen')) AS signatures;
-- unless they are forced on the owner too
ALTER TABLE pseen FORCE ROW LEVEL SECURITY;
ALTER TABLE zseen FORCE ROW LEVEL SECURITY;
ALTER TABLE pseen OWNER TO sieve_readers_role;
ALTER TABLE zseen OWNER TO sieve_readers_role;
SET ROLE sieve_readers_role;
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('zseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT count(*) FROM sieve_signatures('zseen') $$);
SELECT pg_temp.error_of($$ SELECT sieve_seen_import('zseen', 'pseen') $$);
RESET ROLE;
ALTER TABLE pseen OWNER TO CURRENT_USER;
ALTER TABLE zseen OWNER TO CURRENT_USER;
ALTER TABLE pseen DISABLE ROW LEVEL SECURITY;
ALTER TABLE zseen DISABLE ROW LEVEL SECURITY;

-- Inheritance children, whose rows SELECT would read: refused, as by
-- sieve_flush
CREATE TABLE pseen_child () INHERITS (pseen);
CREATE TABLE zseen_child () INHERITS (zseen);
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('zseen', 'https://example.org/a') $$);
SELECT pg_temp.error_of($$ SELECT count(*) FROM sieve_signatures('zseen') $$);
DROP TABLE pseen_child, zseen_child;

--
-- sig of every type: only bigint is read (a domain over bigint is refused,
-- as sieve_flush refuses it); the others are an ERROR, whatever index
-- they have
--
CREATE DOMAIN sig_domain AS bigint;
CREATE DOMAIN text_domain AS text;
CREATE TYPE sig_enum AS ENUM ('a', 'b');
CREATE TYPE sig_pair AS (a bigint, b bigint);
CREATE TABLE types (name text, literal text);
INSERT INTO types VALUES
	('bigint', '1'), ('sig_domain', '1'), ('integer', '1'), ('smallint', '1'),
	('numeric', '1'), ('real', '1'), ('double precision', '1'), ('oid', '1'),
	('money', '1'), ('text', 'a'), ('text_domain', 'a'), ('varchar(20)', 'a'),
	('character(8)', 'a'), ('"char"', 'a'), ('name', 'a'), ('bytea', '\x01'),
	('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), ('boolean', 'true'),
	('date', '2026-01-01'), ('timestamptz', '2026-01-01'), ('interval', '1 day'),
	('inet', '10.0.0.1'), ('macaddr8', '08:00:2b:01:02:03:04:05'), ('bit(64)', repeat('1', 64)),
	('jsonb', '{"a": 1}'), ('bigint[]', '{1,2}'), ('int8range', '[1,2)'),
	('sig_enum', 'a'), ('sig_pair', '(1,2)'), ('tsvector', 'a'), ('pg_lsn', '0/1');
CREATE FUNCTION pg_temp.try_type(type text, literal text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	answer text;
BEGIN
	EXECUTE format('CREATE TEMP TABLE typed (sig %s PRIMARY KEY)', type);
	EXECUTE format('INSERT INTO typed VALUES (%L)', literal);
	answer := pg_temp.error_of($q$ SELECT sieve_contains('typed', 'https://example.org/a') $q$);
	DROP TABLE typed;
	RETURN answer;
END $$;
SELECT name, pg_temp.try_type(name, literal) FROM types ORDER BY name;
-- and every type of the catalog that a primary key takes, each holding a
-- value when one of a few literals converts to it: only bigint answers
CREATE FUNCTION pg_temp.try_every_type(OUT tried int, OUT with_a_row int,
									   OUT answered text[], OUT refusals text[])
LANGUAGE plpgsql AS $$
DECLARE
	t regtype;
	answer text;
	literal text;
BEGIN
	tried := 0; with_a_row := 0; answered := '{}'; refusals := '{}';
	FOR t IN SELECT oid::regtype FROM pg_type
			 WHERE typtype IN ('b', 'c', 'd', 'e', 'm', 'r') AND typisdefined
			   AND typnamespace <> 'pg_toast'::regnamespace
			 ORDER BY oid LOOP
		BEGIN
			EXECUTE format('CREATE TEMP TABLE typed (sig %s PRIMARY KEY)', t);
		EXCEPTION WHEN OTHERS THEN
			CONTINUE;
		END;
		tried := tried + 1;
		FOREACH literal IN ARRAY ARRAY['1', 'a', '{1}', '(1,1)', '[1,2)', '1 day', '2026-01-01',
									   '10.0.0.1', '0/1', '\x01', '{"a": 1}', 'true', '08:00:2b:01:02:03'] LOOP
			BEGIN
				EXECUTE format('INSERT INTO typed VALUES (%L)', literal);
				with_a_row := with_a_row + 1;
				EXIT;
			EXCEPTION WHEN OTHERS THEN
				NULL;
			END;
		END LOOP;
		answer := pg_temp.error_of($q$ SELECT sieve_contains('typed', 'https://example.org/a') $q$);
		IF answer IN ('true', 'false') THEN
			answered := answered || t::text;
		ELSIF NOT left(answer, 5) = ANY (refusals) THEN
			refusals := refusals || left(answer, 5);
		END IF;
		DROP TABLE typed;
	END LOOP;
END $$;
SELECT tried > 100 AS many_types, with_a_row > 80 AS most_with_a_row, answered, refusals
FROM pg_temp.try_every_type();

--
-- A bigint sig with every shape of index: a unique btree index on sig
-- alone, valid, immediate, not partial, with bigint's own operator class,
-- in either order, is read; anything else is an ERROR
--
CREATE FUNCTION int8_reverse_cmp(bigint, bigint) RETURNS integer
	LANGUAGE sql IMMUTABLE STRICT AS 'SELECT btint8cmp($2, $1)';
CREATE OPERATOR CLASS int8_reverse_ops FOR TYPE bigint USING btree AS
	OPERATOR 1 >, OPERATOR 2 >=, OPERATOR 3 =, OPERATOR 4 <=, OPERATOR 5 <,
	FUNCTION 1 int8_reverse_cmp(bigint, bigint);
CREATE TABLE shapes (shape text, ddl text);
INSERT INTO shapes VALUES
	('primary key', 'ALTER TABLE shaped ADD PRIMARY KEY (sig)'),
	('unique, descending', 'CREATE UNIQUE INDEX ON shaped (sig DESC)'),
	('unique, nulls first', 'CREATE UNIQUE INDEX ON shaped (sig NULLS FIRST)'),
	('unique, with INCLUDE', 'CREATE UNIQUE INDEX ON shaped (sig) INCLUDE (other)'),
	('unique, nulls not distinct', 'CREATE UNIQUE INDEX ON shaped (sig) NULLS NOT DISTINCT'),
	('no index', 'SELECT'),
	('not unique', 'CREATE INDEX ON shaped (sig)'),
	('hash', 'CREATE INDEX ON shaped USING hash (sig)'),
	('unique on (sig, other)', 'CREATE UNIQUE INDEX ON shaped (sig, other)'),
	('unique on (other)', 'CREATE UNIQUE INDEX ON shaped (other)'),
	('unique on an expression', 'CREATE UNIQUE INDEX ON shaped ((sig + 0))'),
	('unique on a text expression', 'CREATE UNIQUE INDEX ON shaped ((sig::text))'),
	('unique, partial', 'CREATE UNIQUE INDEX ON shaped (sig) WHERE sig > 0'),
	('unique, deferrable', 'ALTER TABLE shaped ADD UNIQUE (sig) DEFERRABLE'),
	('unique, reversed operator class', 'CREATE UNIQUE INDEX ON shaped (sig int8_reverse_ops)'),
	('exclusion', 'ALTER TABLE shaped ADD EXCLUDE USING btree (sig WITH =)');
CREATE FUNCTION pg_temp.try_shape(ddl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	answer text;
BEGIN
	CREATE TEMP TABLE shaped (sig bigint, other text);
	EXECUTE ddl;
	INSERT INTO shaped SELECT url_signature('https://example.org/' || g), g::text
		FROM generate_series(1, 100) g;
	answer := pg_temp.error_of($q$ SELECT string_agg(sieve_contains('shaped', 'https://example.org/' || g)::text, '' ORDER BY g) FROM generate_series(99, 102) g $q$);
	DROP TABLE shaped;
	RETURN answer;
END $$;
SELECT shape, pg_temp.try_shape(ddl) FROM shapes;
-- and a table with no column sig, whose only unique index is an expression
CREATE TABLE nosig (url text);
CREATE UNIQUE INDEX ON nosig ((url || ''));
SELECT pg_temp.error_of($$ SELECT sieve_contains('nosig', 'https://example.org/a') $$);
-- what is not a table
CREATE VIEW pseen_view AS SELECT sig FROM pseen;
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen_view', 'https://example.org/a') $$);
CREATE TABLE pseen_parted (sig bigint PRIMARY KEY) PARTITION BY HASH (sig);
SELECT pg_temp.error_of($$ SELECT sieve_contains('pseen_parted', 'https://example.org/a') $$);

--
-- A compressed seen's index: the lookup scans it backwards from a
-- signature, so it must be the ascending unique btree on head (the primary
-- key sieve_seen_create makes, or its like); any other is an ERROR
--
INSERT INTO pseen SELECT url_signature('https://example.org/' || g) FROM generate_series(1, 2000) g;
SELECT sieve_seen_import('zseen', 'pseen');
CREATE FUNCTION pg_temp.try_head_index(ddl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	answer text;
BEGIN
	ALTER TABLE zseen DROP CONSTRAINT zseen_pkey;
	IF ddl IS NOT NULL THEN
		EXECUTE ddl;
	END IF;
	answer := pg_temp.error_of($q$ SELECT count(*) FILTER (WHERE sieve_contains('zseen', 'https://example.org/' || g)) FROM generate_series(1, 2000) g $q$)
		|| ' / ' || pg_temp.error_of($q$ SELECT count(*) FROM sieve_signatures('zseen') $q$);
	RAISE EXCEPTION USING MESSAGE = answer, ERRCODE = 'P0002';
EXCEPTION WHEN no_data_found THEN
	RETURN SQLERRM;
END $$;
SELECT ddl, pg_temp.try_head_index(ddl) FROM (VALUES
	('ALTER TABLE zseen ADD UNIQUE (head)'),
	('CREATE UNIQUE INDEX ON zseen (head DESC)'),
	('CREATE UNIQUE INDEX ON zseen (head int8_reverse_ops)'),
	('CREATE UNIQUE INDEX ON zseen (head) WHERE head > 0'),
	('CREATE INDEX ON zseen (head)'),
	(NULL)) AS ddls (ddl);
SELECT pg_temp.error_of($$ SELECT count(*) FROM sieve_signatures('zseen') $$);

--
-- Chunks that overlap: a valid chunk of one signature inserted inside the
-- range of another chunk.  Each lookup answers right or is an ERROR
-- (data_corrupted): a stored URL is never answered f
--
CREATE FUNCTION pg_temp.le8(v bigint) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(lpad(to_hex((v >> (8 * i)) & 255), 2, '0'), '' ORDER BY i)
	FROM generate_series(0, 7) i
$$;
CREATE TABLE inside AS
	SELECT head + 1 AS sig FROM zseen ORDER BY sieve_chunk_count(chunk) DESC, head LIMIT 1;
SELECT NOT EXISTS (SELECT FROM pseen WHERE sig = inside.sig) AS not_stored FROM inside;
INSERT INTO zseen SELECT sig, ('\x5342467a0100000001000000' || pg_temp.le8(sig) || pg_temp.le8(sig))::sieve_chunk FROM inside;
CREATE TABLE answers AS
	SELECT g, pg_temp.error_of(format('SELECT sieve_contains(%L, %L)', 'zseen', 'https://example.org/' || g)) AS answer
	FROM generate_series(1, 2000) g;
SELECT count(*) FILTER (WHERE answer = 'true') > 0 AS some_found,
       count(*) FILTER (WHERE answer = 'false') AS stored_answered_f,
       count(*) FILTER (WHERE answer LIKE 'XX001: compressed seen relation "zseen" has a corrupted chunk at head %') > 0 AS some_errors,
       count(*) FILTER (WHERE answer NOT IN ('true', 'false') AND answer NOT LIKE 'XX001: %') AS other
FROM answers;
SELECT pg_temp.error_of($$ SELECT count(*) FROM sieve_signatures('zseen') $$);
DELETE FROM zseen WHERE head = (SELECT sig FROM inside);
SELECT count(*) FILTER (WHERE sieve_contains('zseen', 'https://example.org/' || g)) FROM generate_series(1, 2000) g;

--
-- A call site that outlives a statement (a plpgsql simple expression keeps
-- its own for the whole transaction): the checks hold for each call.  A
-- SECURITY DEFINER function whose owner may read a seen lends its caller
-- nothing once it returns: SELECT and row-level security are checked for
-- the current user on every call
--
CREATE ROLE sieve_readers_owner;
GRANT USAGE ON SCHEMA sieve_readers TO sieve_readers_owner;
CREATE TABLE secret_pseen (sig bigint PRIMARY KEY);
INSERT INTO secret_pseen SELECT sig FROM pseen;
SELECT sieve_seen_create('secret_zseen') IS NOT NULL AS created;
SELECT sieve_seen_import('secret_zseen', 'secret_pseen');
ALTER TABLE secret_pseen OWNER TO sieve_readers_owner;
ALTER TABLE secret_zseen OWNER TO sieve_readers_owner;
CREATE FUNCTION probe(seen regclass, url text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	RETURN sieve_contains(seen, url);
END $$;
CREATE FUNCTION owner_probe(seen regclass) RETURNS boolean LANGUAGE sql SECURITY DEFINER
	AS $$ SELECT probe(seen, 'https://example.org/1') $$;
ALTER FUNCTION owner_probe(regclass) OWNER TO sieve_readers_owner;
SET ROLE sieve_readers_role;
SELECT probe('secret_pseen', 'https://example.org/2');
BEGIN;
SELECT owner_probe('secret_pseen');
SELECT probe('secret_pseen', 'https://example.org/2'), probe('secret_pseen', 'https://example.org/nope');
ROLLBACK;
BEGIN;
SELECT owner_probe('secret_zseen');
SELECT probe('secret_zseen', 'https://example.org/2'), probe('secret_zseen', 'https://example.org/nope');
ROLLBACK;
RESET ROLE;
-- the same with SELECT granted and a policy that hides every row
GRANT SELECT ON secret_pseen, secret_zseen TO sieve_readers_role;
ALTER TABLE secret_pseen ENABLE ROW LEVEL SECURITY;
ALTER TABLE secret_zseen ENABLE ROW LEVEL SECURITY;
CREATE POLICY nothing ON secret_pseen USING (false);
CREATE POLICY nothing ON secret_zseen USING (false);
SET ROLE sieve_readers_role;
BEGIN;
SELECT owner_probe('secret_pseen');
SELECT probe('secret_pseen', 'https://example.org/2'), probe('secret_pseen', 'https://example.org/nope');
ROLLBACK;
BEGIN;
SELECT owner_probe('secret_zseen');
SELECT probe('secret_zseen', 'https://example.org/2'), probe('secret_zseen', 'https://example.org/nope');
ROLLBACK;
-- and with row_security off, PostgreSQL's own refusal
BEGIN;
SELECT owner_probe('secret_pseen');
SET LOCAL row_security = off;
SELECT probe('secret_pseen', 'https://example.org/2');
ROLLBACK;
RESET ROLE;
-- and a privilege, a membership, a policy taken away after a call, in the
-- same transaction
ALTER TABLE secret_pseen DISABLE ROW LEVEL SECURITY;
ALTER TABLE secret_zseen DISABLE ROW LEVEL SECURITY;
BEGIN;
SET LOCAL ROLE sieve_readers_role;
SELECT probe('secret_pseen', 'https://example.org/2');
RESET ROLE;
REVOKE SELECT ON secret_pseen FROM sieve_readers_role;
SET LOCAL ROLE sieve_readers_role;
SELECT probe('secret_pseen', 'https://example.org/2');
ROLLBACK;
REVOKE SELECT ON secret_pseen, secret_zseen FROM sieve_readers_role;
GRANT sieve_readers_owner TO sieve_readers_role;
BEGIN;
SET LOCAL ROLE sieve_readers_role;
SELECT probe('secret_zseen', 'https://example.org/2');
RESET ROLE;
REVOKE sieve_readers_owner FROM sieve_readers_role;
SET LOCAL ROLE sieve_readers_role;
SELECT probe('secret_zseen', 'https://example.org/2');
ROLLBACK;
REVOKE sieve_readers_owner FROM sieve_readers_role;
GRANT SELECT ON secret_pseen, secret_zseen TO sieve_readers_role;
BEGIN;
SET LOCAL ROLE sieve_readers_role;
SELECT probe('secret_zseen', 'https://example.org/2');
RESET ROLE;
ALTER TABLE secret_zseen ENABLE ROW LEVEL SECURITY;
SET LOCAL ROLE sieve_readers_role;
SELECT probe('secret_zseen', 'https://example.org/2');
ROLLBACK;
DROP TABLE secret_pseen, secret_zseen;
DROP FUNCTION owner_probe(regclass);

-- A seen changed under the call site earlier in the same transaction: the
-- type of sig, the index on sig, the index on head are checked again, and
-- a change is refused clearly (or read, if what is left is readable)
BEGIN;
SELECT probe('pseen', 'https://example.org/a');
DROP VIEW pseen_view;
ALTER TABLE pseen ALTER sig TYPE text;
SELECT probe('pseen', 'https://example.org/a');
ROLLBACK;
BEGIN;
SELECT probe('pseen', 'https://example.org/a');
ALTER TABLE pseen DROP CONSTRAINT pseen_pkey;
SELECT probe('pseen', 'https://example.org/a');
ROLLBACK;
BEGIN;
SELECT probe('pseen', 'https://example.org/a');
ALTER TABLE pseen DROP CONSTRAINT pseen_pkey;
CREATE UNIQUE INDEX pseen_sig ON pseen (sig);
SELECT probe('pseen', 'https://example.org/a'), probe('pseen', 'https://example.org/nope');
ROLLBACK;
BEGIN;
SELECT probe('zseen', 'https://example.org/a');
ALTER TABLE zseen DROP CONSTRAINT zseen_pkey;
SELECT probe('zseen', 'https://example.org/a');
ROLLBACK;
BEGIN;
SELECT probe('zseen', 'https://example.org/a');
ALTER TABLE zseen ALTER head TYPE numeric;
SELECT probe('zseen', 'https://example.org/a');
ROLLBACK;
BEGIN;
SELECT probe('zseen', 'https://example.org/a');
ALTER TABLE zseen DROP CONSTRAINT zseen_pkey;
CREATE UNIQUE INDEX zseen_head ON zseen (head);
SELECT probe('zseen', 'https://example.org/a'), probe('zseen', 'https://example.org/nope');
ROLLBACK;

DROP SCHEMA sieve_readers CASCADE;
DROP ROLE sieve_readers_role;
DROP ROLE sieve_readers_owner;
