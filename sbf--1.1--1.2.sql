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
