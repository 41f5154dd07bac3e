/* sbf--1.0--1.1.sql: what version 1.1 adds to 1.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sbf UPDATE TO '1.1'" to load this file. \quit

--
-- bloom_intersect_agg: the intersection of many filters, beside
-- bloom_union_agg.  AND-ing bits is associative and commutative, so partial
-- intersections combine under parallel query like partial unions do.
--

CREATE FUNCTION bloom_intersect_agg_trans(internal, bloom)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_intersect_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE bloom_intersect_agg(filter bloom) (
	SFUNC = bloom_intersect_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_intersect_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_intersect_agg(bloom) IS
	'intersection of the filters (same bits, hashes and seed required)';

--
-- Shared filters: one filter in the pages of its own relation, that many
-- sessions test and add to at once, durable and replicated through WAL
--

CREATE FUNCTION sbf_filter_handler(internal) RETURNS table_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION sbf_filter_handler(internal) IS
	'handler of the sbf_filter table access method';

CREATE ACCESS METHOD sbf_filter TYPE TABLE HANDLER sbf_filter_handler;
COMMENT ON ACCESS METHOD sbf_filter IS
	'shared filter: a table whose pages are a Bloom or Stable Bloom filter, one row (page, data) per page for COPY and pg_dump';

CREATE FUNCTION shared_bloom_create(name text, capacity bigint,
		fpr double precision, seed bigint DEFAULT 0, unlogged boolean DEFAULT false)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_bloom_create(text, bigint, double precision, bigint, boolean) IS
	'create a shared Bloom filter, a table owned by the caller, for capacity values at the given false-positive rate';

CREATE FUNCTION shared_stablebloom_create(name text, cells bigint,
		fpr double precision, hashes integer, max integer DEFAULT 1,
		seed bigint DEFAULT 0, unlogged boolean DEFAULT false)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_stablebloom_create(text, bigint, double precision, integer, integer, bigint, boolean) IS
	'create a shared Stable Bloom filter, a table owned by the caller, of about cells cells whose stable false-positive rate is fpr';

CREATE FUNCTION shared_test_and_add(filter regclass, value text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_test_and_add'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, text) IS
	'true when the value was probably added to the shared filter before; adds it, atomically';

CREATE FUNCTION shared_test_and_add(filter regclass, value bytea) RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_test_and_add'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bytea) IS
	'true when the value was probably added to the shared filter before; adds it, atomically';

CREATE FUNCTION shared_test_and_add(filter regclass, value bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_test_and_add_int8'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bigint) IS
	'true when the value was probably added to the shared filter before; adds it, atomically';

CREATE FUNCTION shared_test_and_add(filter regclass, "values" text[]) RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'shared_test_and_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, text[]) IS
	'shared_test_and_add of each value in order, one page lock per page of the batch; NULL for a NULL value';

CREATE FUNCTION shared_test_and_add(filter regclass, "values" bigint[]) RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'shared_test_and_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bigint[]) IS
	'shared_test_and_add of each value in order, one page lock per page of the batch; NULL for a NULL value';

CREATE FUNCTION shared_contains(filter regclass, value text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_contains'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_contains(regclass, text) IS
	'true when the value was probably added to the shared filter';

CREATE FUNCTION shared_contains(filter regclass, value bytea) RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_contains'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_contains(regclass, bytea) IS
	'true when the value was probably added to the shared filter';

CREATE FUNCTION shared_contains(filter regclass, value bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_contains_int8'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_contains(regclass, bigint) IS
	'true when the value was probably added to the shared filter';

CREATE FUNCTION shared_info(filter regclass) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_info(regclass) IS
	'parameters of a shared filter and, from reading all its pages, its fill and current false-positive rate, as jsonb';

CREATE FUNCTION shared_bloom_snapshot(filter regclass) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_bloom_snapshot(regclass) IS
	'a shared Bloom filter as a bloom value (blocked layout) answering as the shared filter does; at most 1 GB';

CREATE FUNCTION shared_stablebloom_snapshot(filter regclass) RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_stablebloom_snapshot(regclass) IS
	'a shared Stable Bloom filter as a stablebloom value (blocked layout) answering as the shared filter does; at most 1 GB';
