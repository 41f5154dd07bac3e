/* sbf--1.1--1.2.sql: what version 1.2 adds to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sbf UPDATE TO '1.2'" to load this file. \quit

--
-- 1.1 is released: sbf--1.0.sql and sbf--1.0--1.1.sql never change again
-- (sql/upgrade.sql checks the objects each gives against a fingerprint).
-- What 1.2 adds to the SQL interface goes here, and a new install of 1.2
-- runs the three scripts in turn, as an install of 1.1 updated does.
--

--
-- The sieve's readers
--

CREATE FUNCTION sieve_contains(seen regclass, urls text[])
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'sieve_contains_array' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION sieve_contains(regclass, text[]) IS
	'is url_signature(url) in seen, for each URL? in input order, NULL for a NULL element; each chunk of a compressed seen is decoded at most once a batch';

CREATE FUNCTION sieve_contains(seen regclass, signatures bigint[])
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'sieve_contains_array' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION sieve_contains(regclass, bigint[]) IS
	'is each signature (url_signature values) in seen? in input order, NULL for a NULL element; each chunk of a compressed seen is decoded at most once a batch';

--
-- The exact online store: a compressed seen takes online adds
-- (docs/sieve.md, "The exact online store")
--

COMMENT ON FUNCTION sieve_seen_create(text, boolean) IS
	'creates a compressed seen: a table (head bigint PRIMARY KEY, chunk sieve_chunk) of Rice-coded sorted signatures, about 5.3 bytes a URL, that takes online adds (seen_test_and_add)';

CREATE FUNCTION sieve_seen_online(seen regclass)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION sieve_seen_online(regclass) IS
	'makes a compressed seen made before 1.2 take online adds: its chunk may be NULL, and a unique index on (head) WHERE chunk IS NOT NULL finds its chunks';

CREATE FUNCTION sieve_seen_compact(seen regclass)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION sieve_seen_compact(regclass) IS
	'folds the online adds of a compressed seen into its chunks (a new table replaces it, as a flush does); returns how many were folded';

CREATE FUNCTION seen_test_and_add(seen regclass, url text)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'seen_test_and_add' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION seen_test_and_add(regclass, text) IS
	'exact: true when url_signature(url) is in the compressed seen, else adds it (transactional: of sessions adding it at once exactly one is answered false)';

CREATE FUNCTION seen_test_and_add(seen regclass, url bytea)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'seen_test_and_add' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION seen_test_and_add(regclass, bytea) IS
	'exact: true when the signature of the bytes is in the compressed seen, else adds it (transactional)';

CREATE FUNCTION seen_test_and_add(seen regclass, signature bigint)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'seen_test_and_add_int8' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION seen_test_and_add(regclass, bigint) IS
	'exact: true when the signature (a url_signature value) is in the compressed seen, else adds it (transactional)';

CREATE FUNCTION seen_test_and_add(seen regclass, urls text[])
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'seen_test_and_add_array' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION seen_test_and_add(regclass, text[]) IS
	'seen_test_and_add for each URL, in input order: a repeat inside the batch is true, a NULL element NULL and not added';

CREATE FUNCTION seen_test_and_add(seen regclass, urls bytea[])
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'seen_test_and_add_array' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION seen_test_and_add(regclass, bytea[]) IS
	'seen_test_and_add for each value, in input order: a repeat inside the batch is true, a NULL element NULL and not added';

CREATE FUNCTION seen_test_and_add(seen regclass, signatures bigint[])
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'seen_test_and_add_array' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION seen_test_and_add(regclass, bigint[]) IS
	'seen_test_and_add for each signature (url_signature values), in input order: a repeat inside the batch is true, a NULL element NULL and not added';

--
-- simhash_ops: a new default layout (docs/simhash.md, "Choosing the
-- layout").  An index keeps the layout it was built with: every index of
-- simhash_ops built without the option "blocks" was built with 1.1's
-- default, 4, and gets blocks=4 written into its options (where
-- pg_get_indexdef, pg_dump and pg_upgrade read them) before the options
-- function changes its default.  Opclass options cannot be set by ALTER
-- INDEX, hence the catalog update; the update of pg_attribute invalidates
-- the indexes' cached options in every session.
--
UPDATE pg_catalog.pg_attribute a
SET attoptions = pg_catalog.array_append(a.attoptions, 'blocks=4')
FROM pg_catalog.pg_index i, pg_catalog.pg_depend d, pg_catalog.pg_opclass c
WHERE a.attrelid = i.indexrelid
  AND a.attnum > 0 AND a.attnum <= i.indnatts
  AND i.indclass[a.attnum - 1] = c.oid
  AND c.opcname = 'simhash_ops'
  AND d.classid = 'pg_catalog.pg_opclass'::pg_catalog.regclass AND d.objid = c.oid
  AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
  AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'sbf')
  AND d.deptype = 'e'
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(a.attoptions) o
				  WHERE o LIKE 'blocks=%');

CREATE OR REPLACE FUNCTION simhash_gin_options(internal) RETURNS void
	AS 'MODULE_PATHNAME', 'simhash_gin_options_1_2' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_gin_options(internal) IS
	'GIN support: the opclass option blocks (1..64, default 2; an index made at 1.1 without it has blocks=4)';
COMMENT ON OPERATOR CLASS simhash_ops USING gin IS
	'exact search for near-duplicates (%) by blocks of the fingerprint; option blocks (default 2: 66 lookups of 32-bit keys for d = 3, the fastest layout measured)';
