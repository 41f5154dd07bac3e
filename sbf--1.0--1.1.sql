/* sbf--1.0--1.1.sql: what version 1.1 adds to 1.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sbf UPDATE TO '1.1'" to load this file. \quit

--
-- The bloom aggregates with the filter itself as their state
--
-- 1.0 kept the state of bloom_agg and bloom_union_agg as internal, with
-- serial and deserial functions for parallel query.  A bloom state is an
-- ordinary value, which Citus can also ship from its workers to the
-- coordinator and so push the aggregates down (it refuses pseudo-type
-- states); each group still mutates one filter in place (src/filters/bloom_agg.c).
-- CREATE OR REPLACE AGGREGATE keeps the aggregates' OIDs, so views and
-- functions that use them survive the update; the support functions of the
-- internal state go afterwards.  There is no final function: the result is
-- the state.  A filter row of bloom_union_agg and a partial state are both
-- bloom values, so its transition is its combine function.
--

CREATE FUNCTION bloom_agg_trans(bloom, text, bigint, double precision)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_sized_text' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(bloom, bytea, bigint, double precision)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_sized_bytea' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(bloom, bigint, bigint, double precision)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_sized_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(bloom, text, bloom)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_template_text' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(bloom, bytea, bloom)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_template_bytea' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(bloom, bigint, bloom)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_template_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_combine(bloom, bloom) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_combine_union' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_intersect_agg_combine(bloom, bloom) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_agg_combine_intersect' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE AGGREGATE bloom_agg(value text, capacity bigint, fpr double precision) (
	SFUNC = bloom_agg_trans, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bloom_agg(value bytea, capacity bigint, fpr double precision) (
	SFUNC = bloom_agg_trans, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bloom_agg(value bigint, capacity bigint, fpr double precision) (
	SFUNC = bloom_agg_trans, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bloom_agg(value text, template bloom) (
	SFUNC = bloom_agg_trans, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bloom_agg(value bytea, template bloom) (
	SFUNC = bloom_agg_trans, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bloom_agg(value bigint, template bloom) (
	SFUNC = bloom_agg_trans, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bloom_union_agg(filter bloom) (
	SFUNC = bloom_agg_combine, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);

DROP FUNCTION bloom_agg_trans(internal, text, bigint, double precision);
DROP FUNCTION bloom_agg_trans(internal, bytea, bigint, double precision);
DROP FUNCTION bloom_agg_trans(internal, bigint, bigint, double precision);
DROP FUNCTION bloom_agg_trans(internal, text, bloom);
DROP FUNCTION bloom_agg_trans(internal, bytea, bloom);
DROP FUNCTION bloom_agg_trans(internal, bigint, bloom);
DROP FUNCTION bloom_union_agg_trans(internal, bloom);
DROP FUNCTION bloom_agg_final(internal);
DROP FUNCTION bloom_agg_combine(internal, internal);
DROP FUNCTION bloom_agg_serial(internal);
DROP FUNCTION bloom_agg_deserial(bytea, internal);

--
-- bloom_intersect_agg: the intersection of many filters, beside
-- bloom_union_agg.  AND-ing bits is associative and commutative, so partial
-- intersections combine like partial unions do, under parallel query and
-- on Citus.
--

CREATE AGGREGATE bloom_intersect_agg(filter bloom) (
	SFUNC = bloom_intersect_agg_combine, STYPE = bloom, SSPACE = 4194304,
	COMBINEFUNC = bloom_intersect_agg_combine,
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
		fpr double precision, seed bigint DEFAULT 0, unlogged boolean DEFAULT false,
		if_not_exists boolean DEFAULT false, transactional boolean DEFAULT true,
		growth double precision DEFAULT 0, tightening double precision DEFAULT 0.5)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_bloom_create(text, bigint, double precision, bigint, boolean, boolean, boolean, double precision, double precision) IS
	'create a shared Bloom filter, a table owned by the caller, for capacity values at the given false-positive rate, whose adds a rollback undoes unless transactional is false; with growth, one that grows by sub-filters (capacity being its first one''s) and keeps its rate under fpr; with if_not_exists, return the filter of that name made with the same parameters';

CREATE FUNCTION shared_stablebloom_create(name text, cells bigint,
		fpr double precision, hashes integer, max integer DEFAULT 1,
		seed bigint DEFAULT 0, unlogged boolean DEFAULT false,
		if_not_exists boolean DEFAULT false)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_stablebloom_create(text, bigint, double precision, integer, integer, bigint, boolean, boolean) IS
	'create a shared Stable Bloom filter, a table owned by the caller, of about cells cells whose stable false-positive rate is fpr; with if_not_exists, return the filter of that name made with the same parameters';

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

CREATE FUNCTION shared_test_and_add(filter regclass, "values" bytea[]) RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'shared_test_and_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bytea[]) IS
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

CREATE FUNCTION shared_reset(filter regclass) RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_reset(regclass) IS
	'empty a shared filter, keeping its parameters (TRUNCATE and its metapage written again)';

CREATE FUNCTION shared_info(filter regclass, read_pages boolean DEFAULT false)
	RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_info(regclass, boolean) IS
	'parameters of a shared filter, its count of values added and sub-filters from its metapage alone (at once, whatever its size) and, with read_pages => true, from reading all its pages its fill and current false-positive rate, as jsonb';

CREATE FUNCTION shared_bloom_snapshot(filter regclass) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_bloom_snapshot(regclass) IS
	'a shared Bloom filter as a bloom value (blocked layout) answering as the shared filter does; at most 1 GB';

CREATE FUNCTION shared_stablebloom_snapshot(filter regclass) RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_stablebloom_snapshot(regclass) IS
	'a shared Stable Bloom filter as a stablebloom value (blocked layout) answering as the shared filter does; at most 1 GB';

--
-- Shared sliding filters: the stamped slidingbloom layout in pages, a window
-- of arrivals or of time, aged lazily page by page (src/shared/shared_sliding.c)
--

CREATE FUNCTION shared_slidingbloom_create(name text, "window" bigint,
		fpr double precision, capacity bigint DEFAULT NULL,
		tolerance bigint DEFAULT NULL, seed bigint DEFAULT 0,
		refresh boolean DEFAULT false, unlogged boolean DEFAULT false,
		if_not_exists boolean DEFAULT false)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_slidingbloom_create(text, bigint, double precision, bigint, bigint, bigint, boolean, boolean, boolean) IS
	'create a shared sliding filter, a table owned by the caller, that reports a value seen when it arrived among the window - 1 arrivals before, sized for capacity values in a window (window - 1 by default) at the given false-positive rate; with refresh, every arrival restarts its window, not only those reported new';

CREATE FUNCTION shared_slidingbloom_create(name text, "window" interval,
		fpr double precision, capacity bigint,
		tolerance interval DEFAULT NULL, seed bigint DEFAULT 0,
		refresh boolean DEFAULT false, unlogged boolean DEFAULT false,
		if_not_exists boolean DEFAULT false)
	RETURNS regclass
	AS 'MODULE_PATHNAME', 'shared_slidingbloom_create_time'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_slidingbloom_create(text, interval, double precision, bigint, interval, bigint, boolean, boolean, boolean) IS
	'create a shared sliding filter, a table owned by the caller, that reports a value seen when it arrived less than the window before (in 64 ticks of the window: up to a tick more), sized for capacity values in a window at the given false-positive rate, taking arrivals up to tolerance late (a window / 8 by default)';

CREATE FUNCTION shared_test_and_add(filter regclass, value text, at timestamptz)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_test_and_add'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, text, timestamptz) IS
	'shared_test_and_add into a sliding filter with a window of time, of a value that arrived at the given time';

CREATE FUNCTION shared_test_and_add(filter regclass, value bytea, at timestamptz)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_test_and_add'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bytea, timestamptz) IS
	'shared_test_and_add into a sliding filter with a window of time, of a value that arrived at the given time';

CREATE FUNCTION shared_test_and_add(filter regclass, value bigint, at timestamptz)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_test_and_add_int8'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bigint, timestamptz) IS
	'shared_test_and_add into a sliding filter with a window of time, of a value that arrived at the given time';

CREATE FUNCTION shared_test_and_add(filter regclass, "values" text[], at timestamptz)
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'shared_test_and_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, text[], timestamptz) IS
	'shared_test_and_add of each value in order, all arrived at the given time, into a sliding filter with a window of time; NULL for a NULL value';

CREATE FUNCTION shared_test_and_add(filter regclass, "values" bytea[], at timestamptz)
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'shared_test_and_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bytea[], timestamptz) IS
	'shared_test_and_add of each value in order, all arrived at the given time, into a sliding filter with a window of time; NULL for a NULL value';

CREATE FUNCTION shared_test_and_add(filter regclass, "values" bigint[], at timestamptz)
	RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'shared_test_and_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shared_test_and_add(regclass, bigint[], timestamptz) IS
	'shared_test_and_add of each value in order, all arrived at the given time, into a sliding filter with a window of time; NULL for a NULL value';

CREATE FUNCTION shared_contains(filter regclass, value text, at timestamptz)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_contains'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_contains(regclass, text, timestamptz) IS
	'true when the value was probably added to the sliding filter within the window before the given time';

CREATE FUNCTION shared_contains(filter regclass, value bytea, at timestamptz)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_contains'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_contains(regclass, bytea, timestamptz) IS
	'true when the value was probably added to the sliding filter within the window before the given time';

CREATE FUNCTION shared_contains(filter regclass, value bigint, at timestamptz)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'shared_contains_int8'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shared_contains(regclass, bigint, timestamptz) IS
	'true when the value was probably added to the sliding filter within the window before the given time';

--
-- The slidingbloom type: duplicates among the last w arrivals, never a
-- false negative inside the window (an age-partitioned Bloom filter,
-- Shtul, Baquero & Almeida 2020: k + l slices of m bits, g arrivals per
-- generation)
--

CREATE TYPE slidingbloom;

CREATE FUNCTION slidingbloom_in(cstring) RETURNS slidingbloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_out(slidingbloom) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_recv(internal) RETURNS slidingbloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_send(slidingbloom) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE slidingbloom (
	INPUT = slidingbloom_in,
	OUTPUT = slidingbloom_out,
	RECEIVE = slidingbloom_recv,
	SEND = slidingbloom_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = double,
	STORAGE = external
);
COMMENT ON TYPE slidingbloom IS
	'Sliding Bloom filter: duplicates among the last window arrivals, no false negative inside the window';

-- Planning

CREATE FUNCTION slidingbloom_bytes("window" bigint, fpr double precision) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_bytes(bigint, double precision) IS
	'bytes of slidingbloom_sized(window, fpr) once values arrive';

-- Constructors

CREATE FUNCTION slidingbloom_empty(slice_bits bigint, hashes integer, slices integer,
								   generation bigint, seed bigint DEFAULT 0,
								   refresh boolean DEFAULT false)
	RETURNS slidingbloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_empty(bigint, integer, integer, bigint, bigint, boolean) IS
	'empty sliding bloom filter of slices slices of slice_bits bits, hashes of them per value, generation arrivals per generation; window (slices - hashes) * generation';

CREATE FUNCTION slidingbloom_sized("window" bigint, fpr double precision,
								   seed bigint DEFAULT 0, refresh boolean DEFAULT false)
	RETURNS slidingbloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_sized(bigint, double precision, bigint, boolean) IS
	'empty sliding bloom filter of the fewest bytes for the window and false-positive rate; refresh: every sighting is stored, not only the values reported new';

-- Arrivals and tests

CREATE FUNCTION slidingbloom_add(filter slidingbloom, value text) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value bytea) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value bigint) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, text) IS 'filter after one arrival of value (NULL is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, bytea) IS 'filter after one arrival of value (NULL is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, bigint) IS 'filter after one arrival of value (NULL is no arrival)';

CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value bytea) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, text) IS 'true if value was probably stored within the window (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, bytea) IS 'true if value was probably stored within the window (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, bigint) IS 'true if value was probably stored within the window (always, if it was)';

CREATE FUNCTION slidingbloom_contained_by(value text, filter slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contained_by(value bytea, filter slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contained_by(value bigint, filter slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contained_by_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_contained_by(text, slidingbloom) IS 'slidingbloom_contains with the arguments swapped';
COMMENT ON FUNCTION slidingbloom_contained_by(bytea, slidingbloom) IS 'slidingbloom_contains with the arguments swapped';
COMMENT ON FUNCTION slidingbloom_contained_by(bigint, slidingbloom) IS 'slidingbloom_contains with the arguments swapped';

CREATE FUNCTION slidingbloom_eq(slidingbloom, slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_eq(slidingbloom, slidingbloom) IS
	'same parameters, arrivals, position and bits';
CREATE FUNCTION slidingbloom_ne(slidingbloom, slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_ne(slidingbloom, slidingbloom) IS 'not slidingbloom_eq';

-- Statistics

CREATE FUNCTION slidingbloom_stale_rate(filter slidingbloom, distance bigint)
	RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_stale_rate(slidingbloom, bigint) IS
	'probability that a value last stored distance arrivals ago is reported: 1 within the guaranteed window, then down to the false-positive rate';

CREATE FUNCTION slidingbloom_info(slidingbloom) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_info(slidingbloom) IS
	'parameters, arrivals, guaranteed window, false-positive rate bound and fill of each slice as jsonb';

-- Operators

CREATE OPERATOR @> (
	LEFTARG = slidingbloom, RIGHTARG = text, PROCEDURE = slidingbloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR @> (
	LEFTARG = slidingbloom, RIGHTARG = bytea, PROCEDURE = slidingbloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR @> (
	LEFTARG = slidingbloom, RIGHTARG = bigint, PROCEDURE = slidingbloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = text, RIGHTARG = slidingbloom, PROCEDURE = slidingbloom_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR <@ (
	LEFTARG = bytea, RIGHTARG = slidingbloom, PROCEDURE = slidingbloom_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR <@ (
	LEFTARG = bigint, RIGHTARG = slidingbloom, PROCEDURE = slidingbloom_contained_by,
	COMMUTATOR = @>
);
COMMENT ON OPERATOR @> (slidingbloom, text) IS 'filter probably contains value';
COMMENT ON OPERATOR @> (slidingbloom, bytea) IS 'filter probably contains value';
COMMENT ON OPERATOR @> (slidingbloom, bigint) IS 'filter probably contains value';
COMMENT ON OPERATOR <@ (text, slidingbloom) IS 'value is probably contained in filter';
COMMENT ON OPERATOR <@ (bytea, slidingbloom) IS 'value is probably contained in filter';
COMMENT ON OPERATOR <@ (bigint, slidingbloom) IS 'value is probably contained in filter';

CREATE OPERATOR = (
	LEFTARG = slidingbloom, RIGHTARG = slidingbloom, PROCEDURE = slidingbloom_eq,
	COMMUTATOR = =, NEGATOR = <>
);
COMMENT ON OPERATOR = (slidingbloom, slidingbloom) IS 'same parameters, bits and state';
CREATE OPERATOR <> (
	LEFTARG = slidingbloom, RIGHTARG = slidingbloom, PROCEDURE = slidingbloom_ne,
	COMMUTATOR = <>, NEGATOR = =
);
COMMENT ON OPERATOR <> (slidingbloom, slidingbloom) IS 'different parameters, bits or state';

-- The aggregate: arrivals in input order, from a starting filter.  No
-- combine function (two windows do not merge), so it is not parallel
-- safe; it runs in the leader, above any parallel scan.

CREATE FUNCTION slidingbloom_agg_trans(internal, text, slidingbloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, bytea, slidingbloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, bigint, slidingbloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_int8' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_final(internal) RETURNS slidingbloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE;

CREATE AGGREGATE slidingbloom_agg(value text, filter slidingbloom) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value bytea, filter slidingbloom) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value bigint, filter slidingbloom) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
COMMENT ON AGGREGATE slidingbloom_agg(text, slidingbloom) IS
	'filter after the values arrived in input order: use ORDER BY a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(bytea, slidingbloom) IS
	'filter after the values arrived in input order: use ORDER BY a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(bigint, slidingbloom) IS
	'filter after the values arrived in input order: use ORDER BY a unique key';

-- Marking duplicates within a window (the same C function as for the
-- other types: the filter's magic number picks the arrival)

CREATE FUNCTION is_duplicate(value text, filter slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bytea, filter slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bigint, filter slidingbloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate_int8' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION is_duplicate(text, slidingbloom) IS
	'window function: value probably among the last window arrivals of the partition or filter; then it arrives';
COMMENT ON FUNCTION is_duplicate(bytea, slidingbloom) IS
	'window function: value probably among the last window arrivals of the partition or filter; then it arrives';
COMMENT ON FUNCTION is_duplicate(bigint, slidingbloom) IS
	'window function: value probably among the last window arrivals of the partition or filter; then it arrives';

--
-- Near-duplicate pages: simhash64, Charikar's 64-bit SimHash fingerprint,
-- and simhash_ops, a GIN operator class that makes a % b (within
-- sbf.simhash_max_distance bits) an exact indexed search
--

CREATE TYPE simhash64;

CREATE FUNCTION simhash_in(cstring) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_out(simhash64) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_recv(internal) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_send(simhash64) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash64 (
	INPUT = simhash_in,
	OUTPUT = simhash_out,
	RECEIVE = simhash_recv,
	SEND = simhash_send,
	INTERNALLENGTH = 8,
	PASSEDBYVALUE,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash64 IS
	'64-bit SimHash fingerprint (Charikar): near-duplicate documents differ in few bits';

-- The same 64 bits as a bigint, both ways
CREATE CAST (simhash64 AS bigint) WITHOUT FUNCTION;
CREATE CAST (bigint AS simhash64) WITHOUT FUNCTION;
COMMENT ON CAST (simhash64 AS bigint) IS 'the same 64 bits';
COMMENT ON CAST (bigint AS simhash64) IS 'the same 64 bits';

-- Fingerprints

CREATE FUNCTION simhash(document text, shingle integer DEFAULT 3) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_document' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, integer) IS
	'SimHash of the word shingles of a document (ASCII-lower-cased words of letters, digits and non-ASCII bytes), XXH3-64 per shingle';
CREATE FUNCTION simhash(features text[]) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_features' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[]) IS
	'SimHash of the given features, XXH3-64 each, one vote per element; NULL elements are skipped';

-- Distance

CREATE FUNCTION hamming_distance(simhash64, simhash64) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_distance(simhash64, simhash64) IS
	'number of bits in which two fingerprints differ, 0..64';
CREATE FUNCTION simhash_near(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_near(simhash64, simhash64) IS
	'fingerprints within sbf.simhash_max_distance bits';

CREATE OPERATOR <~> (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = hamming_distance,
	COMMUTATOR = <~>
);
COMMENT ON OPERATOR <~> (simhash64, simhash64) IS 'Hamming distance';
CREATE OPERATOR % (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_near,
	COMMUTATOR = %, RESTRICT = matchingsel, JOIN = matchingjoinsel
);
COMMENT ON OPERATOR % (simhash64, simhash64) IS
	'near-duplicates: within sbf.simhash_max_distance bits';

-- Ordering: as unsigned 64-bit integers, the order of the text form (not
-- the order of the bigint casts, which is signed)

CREATE FUNCTION simhash_eq(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ne(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_lt(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_le(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gt(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ge(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_cmp(simhash64, simhash64) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_hash(simhash64) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_hash_extended(simhash64, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_eq(simhash64, simhash64) IS 'equal';
COMMENT ON FUNCTION simhash_ne(simhash64, simhash64) IS 'not equal';
COMMENT ON FUNCTION simhash_lt(simhash64, simhash64) IS 'less than, unsigned';
COMMENT ON FUNCTION simhash_le(simhash64, simhash64) IS 'less than or equal, unsigned';
COMMENT ON FUNCTION simhash_gt(simhash64, simhash64) IS 'greater than, unsigned';
COMMENT ON FUNCTION simhash_ge(simhash64, simhash64) IS 'greater than or equal, unsigned';
COMMENT ON FUNCTION simhash_cmp(simhash64, simhash64) IS 'btree comparison, unsigned';
COMMENT ON FUNCTION simhash_hash(simhash64) IS 'hash (that of the same bigint)';
COMMENT ON FUNCTION simhash_hash_extended(simhash64, bigint) IS
	'seeded hash (that of the same bigint)';

CREATE OPERATOR = (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = simhash64, RIGHTARG = simhash64, PROCEDURE = simhash_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
COMMENT ON OPERATOR = (simhash64, simhash64) IS 'equal';
COMMENT ON OPERATOR <> (simhash64, simhash64) IS 'not equal';
COMMENT ON OPERATOR < (simhash64, simhash64) IS 'less than, unsigned';
COMMENT ON OPERATOR <= (simhash64, simhash64) IS 'less than or equal, unsigned';
COMMENT ON OPERATOR > (simhash64, simhash64) IS 'greater than, unsigned';
COMMENT ON OPERATOR >= (simhash64, simhash64) IS 'greater than or equal, unsigned';

CREATE OPERATOR CLASS simhash_btree_ops
	DEFAULT FOR TYPE simhash64 USING btree AS
		OPERATOR 1 <,
		OPERATOR 2 <=,
		OPERATOR 3 =,
		OPERATOR 4 >=,
		OPERATOR 5 >,
		FUNCTION 1 simhash_cmp(simhash64, simhash64);
COMMENT ON OPERATOR CLASS simhash_btree_ops USING btree IS
	'unsigned order of simhash64';
COMMENT ON OPERATOR FAMILY simhash_btree_ops USING btree IS
	'unsigned order of simhash64';

CREATE OPERATOR CLASS simhash_hash_ops
	DEFAULT FOR TYPE simhash64 USING hash AS
		OPERATOR 1 =,
		FUNCTION 1 simhash_hash(simhash64),
		FUNCTION 2 simhash_hash_extended(simhash64, bigint);
COMMENT ON OPERATOR CLASS simhash_hash_ops USING hash IS
	'hashing of simhash64, for hash joins and hash indexes';
COMMENT ON OPERATOR FAMILY simhash_hash_ops USING hash IS
	'hashing of simhash64, for hash joins and hash indexes';

-- The exact GIN index for %: the 64 bits split into "blocks" blocks, one
-- key each; a search within d bits looks up every block of the query with
-- up to floor(d / blocks) bits flipped (one key per block when
-- blocks >= d + 1) and rechecks each candidate

CREATE FUNCTION simhash_gin_extract_value(simhash64, internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_extract_query(simhash64, internal, int2, internal, internal, internal, internal)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_consistent(internal, int2, simhash64, int4, internal, internal, internal, internal)
	RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_triconsistent(internal, int2, simhash64, int4, internal, internal, internal)
	RETURNS "char"
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_options(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_gin_extract_value(simhash64, internal, internal) IS
	'GIN support: one key per block of a fingerprint';
COMMENT ON FUNCTION simhash_gin_extract_query(simhash64, internal, int2, internal, internal, internal, internal) IS
	'GIN support: the blocks of the query with up to floor(d / blocks) bits flipped';
COMMENT ON FUNCTION simhash_gin_consistent(internal, int2, simhash64, int4, internal, internal, internal, internal) IS
	'GIN support: whether the matched blocks allow distance d (always rechecked)';
COMMENT ON FUNCTION simhash_gin_triconsistent(internal, int2, simhash64, int4, internal, internal, internal) IS
	'GIN support: whether the matched blocks allow distance d (always rechecked)';
COMMENT ON FUNCTION simhash_gin_options(internal) IS
	'GIN support: the opclass option blocks (1..64, default 4)';

CREATE OPERATOR CLASS simhash_ops
	DEFAULT FOR TYPE simhash64 USING gin AS
		OPERATOR 1 % (simhash64, simhash64),
		FUNCTION 1 btint8cmp(bigint, bigint),
		FUNCTION 2 simhash_gin_extract_value(simhash64, internal, internal),
		FUNCTION 3 simhash_gin_extract_query(simhash64, internal, int2, internal, internal, internal, internal),
		FUNCTION 4 simhash_gin_consistent(internal, int2, simhash64, int4, internal, internal, internal, internal),
		FUNCTION 6 simhash_gin_triconsistent(internal, int2, simhash64, int4, internal, internal, internal),
		FUNCTION 7 simhash_gin_options(internal),
		STORAGE bigint;
COMMENT ON OPERATOR CLASS simhash_ops USING gin IS
	'exact search for near-duplicates (%) by blocks of the fingerprint; option blocks (default 4, enough for d <= 3 with one lookup per block)';
COMMENT ON OPERATOR FAMILY simhash_ops USING gin IS
	'exact search for near-duplicates (%) by blocks of the fingerprint';

-- Join keys for finding every near-duplicate pair of a table at once:
-- fingerprints within distance d share at least one of their
-- C(blocks, distance) keys (one per combination of blocks - d blocks)
CREATE FUNCTION simhash_keys(fp simhash64, distance integer DEFAULT 3, blocks integer DEFAULT 5)
	RETURNS SETOF bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION simhash_keys(simhash64, integer, integer) IS
	'equi-join keys: fingerprints within distance bits share at least one of these C(blocks, distance) keys (one per combination of blocks - distance blocks)';

--
-- The offline sieve on Citus: sieve_flush writes the signature into
-- frontier.sig when the frontier has that column (Citus routes the rows of a
-- frontier distributed by it), and sieve_flush_shards flushes every
-- colocated shard group of seen, discovered and frontier on its worker
--

COMMENT ON FUNCTION sieve_flush(regclass, regclass, regclass) IS
	'move the discovered URLs whose signature is not in seen (a table of sig bigint with a unique index, or a compressed seen) to the frontier (with their signature in frontier.sig, if it exists), in discovery order; returns how many';

CREATE FUNCTION sieve_flush_shards(seen regclass, discovered regclass, frontier regclass)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION sieve_flush_shards(regclass, regclass, regclass) IS
	'Citus: sieve_flush on every colocated shard group of seen, discovered and frontier, on its worker, all workers at once; returns how many URLs were appended';

--
-- URLs as crawlers meet them: one spelling per URL (RFC 3986 section 6,
-- with uriparser and libidn2), so that every client asks about one key
--

CREATE FUNCTION url_canonical(url text, query text DEFAULT 'keep',
		strip_params text[] DEFAULT '{}', strict boolean DEFAULT true)
	RETURNS text
	AS 'MODULE_PATHNAME', 'sbf_url_canonical' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION url_canonical(text, text, text[], boolean) IS
	'the URL in RFC 3986 normal form (scheme and host in lower case, IDN host in ASCII, default port, dot segments and fragment removed, percent-encoding normalised); query ''keep'', ''sort'' or ''drop''; strip_params names query parameters to remove (utm_* strips a prefix); an invalid or relative URL is an ERROR, or NULL when strict is false';

CREATE FUNCTION url_host(url text, strict boolean DEFAULT true)
	RETURNS text
	AS 'MODULE_PATHNAME', 'sbf_url_host' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION url_host(text, boolean) IS
	'the host of url_canonical(url): lower case, IDN in ASCII, an IPv6 address in brackets; NULL for a URL without a host; an invalid URL is an ERROR, or NULL when strict is false';

--
-- The offline sieve's Z compressed: Rice-coded chunks of sorted signatures
-- in a table (head bigint PRIMARY KEY, chunk sieve_chunk), about 5.3 bytes
-- a URL, which sieve_flush merges into and sieve_contains probes
--

CREATE TYPE sieve_chunk;

CREATE FUNCTION sieve_chunk_in(cstring) RETURNS sieve_chunk
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sieve_chunk_out(sieve_chunk) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sieve_chunk_recv(internal) RETURNS sieve_chunk
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sieve_chunk_send(sieve_chunk) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE sieve_chunk (
	INPUT = sieve_chunk_in,
	OUTPUT = sieve_chunk_out,
	RECEIVE = sieve_chunk_recv,
	SEND = sieve_chunk_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE sieve_chunk IS
	'a run of sorted URL signatures, Rice-coded gaps: a row of a compressed seen';

CREATE FUNCTION sieve_chunk_count(sieve_chunk) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION sieve_chunk_count(sieve_chunk) IS
	'the number of signatures in the chunk';

CREATE FUNCTION sieve_seen_create(name text, unlogged boolean DEFAULT false)
	RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION sieve_seen_create(text, boolean) IS
	'creates a compressed seen for sieve_flush: a table (head bigint PRIMARY KEY, chunk sieve_chunk) of Rice-coded sorted signatures, about 5.3 bytes a URL';

CREATE FUNCTION sieve_contains(seen regclass, url text)
	RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION sieve_contains(regclass, text) IS
	'is url_signature(url) in seen (a compressed seen or a plain one)? exact but for 64-bit collisions';

CREATE FUNCTION sieve_signatures(seen regclass)
	RETURNS SETOF bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION sieve_signatures(regclass) IS
	'the signatures of a compressed seen, in ascending order';

CREATE FUNCTION sieve_seen_import(seen regclass, source regclass)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION sieve_seen_import(regclass, regclass) IS
	'merges the signatures of source.sig (a plain seen, say) into the compressed seen; returns how many were new';

-- A sliding filter for a memory budget (1.1)

CREATE FUNCTION slidingbloom_fit("window" bigint, max_bytes integer, seed bigint DEFAULT 0,
								 refresh boolean DEFAULT true,
								 distinct_values bigint DEFAULT NULL)
	RETURNS slidingbloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_fit(bigint, integer, bigint, boolean, bigint) IS
	'empty sliding bloom filter for the window, of at most max_bytes, expected to make the fewest false duplicates (false positives and stale positives past the window) when distinct_values distinct values arrive in a window (NULL: all distinct)';

-- Sliding windows of time (1.1): "not seen in the last 7 days".  The
-- stamped layout with a clock of ticks of time (format.h); every arrival
-- brings its timestamp, of either type (a filter keeps to one of them:
-- the same instant in the two types is a different time).

CREATE FUNCTION slidingbloom_sized("window" interval, capacity bigint, fpr double precision,
								   tolerance interval DEFAULT '0', seed bigint DEFAULT 0,
								   refresh boolean DEFAULT false)
	RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_sized_time' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_sized(interval, bigint, double precision, interval, bigint, boolean) IS
	'empty sliding bloom filter whose window is a time: fewest bytes for capacity values a window at rate fpr; arrivals may be late by tolerance';

CREATE FUNCTION slidingbloom_fit("window" interval, max_bytes integer, capacity bigint,
								 tolerance interval DEFAULT '0', seed bigint DEFAULT 0,
								 refresh boolean DEFAULT false)
	RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_fit_time' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_fit(interval, integer, bigint, interval, bigint, boolean) IS
	'empty sliding bloom filter whose window is a time, of at most max_bytes, of least rate with capacity values a window';

CREATE FUNCTION slidingbloom_add(filter slidingbloom, value text, at timestamptz) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_at' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value bytea, at timestamptz) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_at' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value bigint, at timestamptz) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_at_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value text, at timestamp) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_at' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value bytea, at timestamp) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_at' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION slidingbloom_add(filter slidingbloom, value bigint, at timestamp) RETURNS slidingbloom
	AS 'MODULE_PATHNAME', 'slidingbloom_add_at_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, text, timestamptz) IS 'filter after one arrival of value at time at (NULL value is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, bytea, timestamptz) IS 'filter after one arrival of value at time at (NULL value is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, bigint, timestamptz) IS 'filter after one arrival of value at time at (NULL value is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, text, timestamp) IS 'filter after one arrival of value at time at (NULL value is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, bytea, timestamp) IS 'filter after one arrival of value at time at (NULL value is no arrival)';
COMMENT ON FUNCTION slidingbloom_add(slidingbloom, bigint, timestamp) IS 'filter after one arrival of value at time at (NULL value is no arrival)';

CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value text, at timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value bytea, at timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value bigint, at timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_at_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value text, at timestamp) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value bytea, at timestamp) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION slidingbloom_contains(filter slidingbloom, value bigint, at timestamp) RETURNS boolean
	AS 'MODULE_PATHNAME', 'slidingbloom_contains_at_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, text, timestamptz) IS 'true if value was probably stored less than the window before at (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, bytea, timestamptz) IS 'true if value was probably stored less than the window before at (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, bigint, timestamptz) IS 'true if value was probably stored less than the window before at (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, text, timestamp) IS 'true if value was probably stored less than the window before at (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, bytea, timestamp) IS 'true if value was probably stored less than the window before at (always, if it was)';
COMMENT ON FUNCTION slidingbloom_contains(slidingbloom, bigint, timestamp) IS 'true if value was probably stored less than the window before at (always, if it was)';

CREATE FUNCTION slidingbloom_agg_trans(internal, text, slidingbloom, timestamptz) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_at' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, bytea, slidingbloom, timestamptz) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_at' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, bigint, slidingbloom, timestamptz) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_at_int8' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, text, slidingbloom, timestamp) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_at' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, bytea, slidingbloom, timestamp) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_at' LANGUAGE C IMMUTABLE;
CREATE FUNCTION slidingbloom_agg_trans(internal, bigint, slidingbloom, timestamp) RETURNS internal
	AS 'MODULE_PATHNAME', 'slidingbloom_agg_trans_at_int8' LANGUAGE C IMMUTABLE;

CREATE AGGREGATE slidingbloom_agg(value text, filter slidingbloom, at timestamptz) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value bytea, filter slidingbloom, at timestamptz) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value bigint, filter slidingbloom, at timestamptz) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value text, filter slidingbloom, at timestamp) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value bytea, filter slidingbloom, at timestamp) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE slidingbloom_agg(value bigint, filter slidingbloom, at timestamp) (
	SFUNC = slidingbloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = slidingbloom_agg_final,
	PARALLEL = RESTRICTED
);
COMMENT ON AGGREGATE slidingbloom_agg(text, slidingbloom, timestamptz) IS
	'filter after the values arrived at their times in input order: use ORDER BY at, then a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(bytea, slidingbloom, timestamptz) IS
	'filter after the values arrived at their times in input order: use ORDER BY at, then a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(bigint, slidingbloom, timestamptz) IS
	'filter after the values arrived at their times in input order: use ORDER BY at, then a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(text, slidingbloom, timestamp) IS
	'filter after the values arrived at their times in input order: use ORDER BY at, then a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(bytea, slidingbloom, timestamp) IS
	'filter after the values arrived at their times in input order: use ORDER BY at, then a unique key';
COMMENT ON AGGREGATE slidingbloom_agg(bigint, slidingbloom, timestamp) IS
	'filter after the values arrived at their times in input order: use ORDER BY at, then a unique key';

CREATE FUNCTION is_duplicate(value text, filter slidingbloom, at timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bytea, filter slidingbloom, at timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bigint, filter slidingbloom, at timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate_int8' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value text, filter slidingbloom, at timestamp) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bytea, filter slidingbloom, at timestamp) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bigint, filter slidingbloom, at timestamp) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate_int8' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION is_duplicate(text, slidingbloom, timestamptz) IS
	'window function: value probably arrived less than the window before at, in the partition or filter; then it arrives at at';
COMMENT ON FUNCTION is_duplicate(bytea, slidingbloom, timestamptz) IS
	'window function: value probably arrived less than the window before at, in the partition or filter; then it arrives at at';
COMMENT ON FUNCTION is_duplicate(bigint, slidingbloom, timestamptz) IS
	'window function: value probably arrived less than the window before at, in the partition or filter; then it arrives at at';
COMMENT ON FUNCTION is_duplicate(text, slidingbloom, timestamp) IS
	'window function: value probably arrived less than the window before at, in the partition or filter; then it arrives at at';
COMMENT ON FUNCTION is_duplicate(bytea, slidingbloom, timestamp) IS
	'window function: value probably arrived less than the window before at, in the partition or filter; then it arrives at at';
COMMENT ON FUNCTION is_duplicate(bigint, slidingbloom, timestamp) IS
	'window function: value probably arrived less than the window before at, in the partition or filter; then it arrives at at';
