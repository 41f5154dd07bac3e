/* sbf--1.0.sql: Bloom filters, Stable Bloom filters and an offline sieve */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION sbf" to load this file. \quit

--
-- The bloom type: a classic Bloom filter of m bits probed k times
--

CREATE TYPE bloom;

CREATE FUNCTION bloom_in(cstring) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_out(bloom) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_recv(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_send(bloom) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external: the bits are random, compressing them only costs time
CREATE TYPE bloom (
	INPUT = bloom_in,
	OUTPUT = bloom_out,
	RECEIVE = bloom_recv,
	SEND = bloom_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = double,
	STORAGE = external
);
COMMENT ON TYPE bloom IS 'Bloom filter: m bits, k probes, no false negatives';

-- Constructors and sizing

CREATE FUNCTION bloom_empty(bits bigint, hashes integer, seed bigint DEFAULT 0)
	RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty(bigint, integer, bigint) IS
	'empty bloom filter of the given number of bits and hashes';

CREATE FUNCTION bloom_sized(capacity bigint, fpr double precision, seed bigint DEFAULT 0)
	RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_sized(bigint, double precision, bigint) IS
	'empty bloom filter sized for capacity elements at the given false-positive rate';

CREATE FUNCTION bloom_optimal_bits(capacity bigint, fpr double precision)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_optimal_bits(bigint, double precision) IS
	'bits a bloom filter needs for capacity elements at the given false-positive rate';

CREATE FUNCTION bloom_optimal_hashes(bits bigint, capacity bigint)
	RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_optimal_hashes(bigint, bigint) IS
	'number of hashes that minimises the false-positive rate of bits bits at capacity elements';

CREATE FUNCTION bloom_expected_fpr(bits bigint, hashes integer, n bigint)
	RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_expected_fpr(bigint, integer, bigint) IS
	'false-positive rate of a bloom filter after n distinct insertions: (1 - e^(-kn/m))^k';

-- Adding and testing elements

CREATE FUNCTION bloom_add(filter bloom, value text) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_add(filter bloom, value bytea) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_add(filter bloom, value bigint) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bloom_add_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add(bloom, text) IS 'filter with value added (NULL adds nothing)';
COMMENT ON FUNCTION bloom_add(bloom, bytea) IS 'filter with value added (NULL adds nothing)';
COMMENT ON FUNCTION bloom_add(bloom, bigint) IS 'filter with value added (NULL adds nothing)';

CREATE FUNCTION bloom_contains(filter bloom, value text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_contains(filter bloom, value bytea) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_contains(filter bloom, value bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloom, text) IS 'true if value was probably added, false if it certainly was not';
COMMENT ON FUNCTION bloom_contains(bloom, bytea) IS 'true if value was probably added, false if it certainly was not';
COMMENT ON FUNCTION bloom_contains(bloom, bigint) IS 'true if value was probably added, false if it certainly was not';

CREATE FUNCTION bloom_contained_by(value text, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_contained_by(value bytea, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_contained_by(value bigint, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contained_by_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contained_by(text, bloom) IS 'bloom_contains with the arguments swapped';
COMMENT ON FUNCTION bloom_contained_by(bytea, bloom) IS 'bloom_contains with the arguments swapped';
COMMENT ON FUNCTION bloom_contained_by(bigint, bloom) IS 'bloom_contains with the arguments swapped';

-- Combining filters

CREATE FUNCTION bloom_union(bloom, bloom) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_union(bloom, bloom) IS
	'filter of the elements of both (same bits, hashes and seed required)';

CREATE FUNCTION bloom_intersect(bloom, bloom) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_intersect(bloom, bloom) IS
	'bitwise AND: contains every element of both (same bits, hashes and seed required)';

CREATE FUNCTION bloom_eq(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_eq(bloom, bloom) IS 'same parameters and same bits';

CREATE FUNCTION bloom_ne(bloom, bloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_ne(bloom, bloom) IS 'different parameters or bits';

-- Statistics

CREATE FUNCTION bloom_cardinality(bloom) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_cardinality(bloom) IS
	'estimated number of distinct elements added (Swamidass & Baldi 2007); Infinity when full';

CREATE FUNCTION bloom_fpr(bloom) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_fpr(bloom) IS
	'current false-positive probability: (bits set / bits)^hashes';

CREATE FUNCTION bloom_info(bloom) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_info(bloom) IS
	'parameters and fill of a bloom filter as jsonb';

-- Operators

CREATE OPERATOR @> (
	LEFTARG = bloom, RIGHTARG = text, PROCEDURE = bloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR @> (
	LEFTARG = bloom, RIGHTARG = bytea, PROCEDURE = bloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR @> (
	LEFTARG = bloom, RIGHTARG = bigint, PROCEDURE = bloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = text, RIGHTARG = bloom, PROCEDURE = bloom_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR <@ (
	LEFTARG = bytea, RIGHTARG = bloom, PROCEDURE = bloom_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR <@ (
	LEFTARG = bigint, RIGHTARG = bloom, PROCEDURE = bloom_contained_by,
	COMMUTATOR = @>
);
COMMENT ON OPERATOR @> (bloom, text) IS 'filter probably contains value';
COMMENT ON OPERATOR @> (bloom, bytea) IS 'filter probably contains value';
COMMENT ON OPERATOR @> (bloom, bigint) IS 'filter probably contains value';
COMMENT ON OPERATOR <@ (text, bloom) IS 'value is probably contained in filter';
COMMENT ON OPERATOR <@ (bytea, bloom) IS 'value is probably contained in filter';
COMMENT ON OPERATOR <@ (bigint, bloom) IS 'value is probably contained in filter';

CREATE OPERATOR | (
	LEFTARG = bloom, RIGHTARG = bloom, PROCEDURE = bloom_union,
	COMMUTATOR = |
);
COMMENT ON OPERATOR | (bloom, bloom) IS 'union of two bloom filters';

CREATE OPERATOR & (
	LEFTARG = bloom, RIGHTARG = bloom, PROCEDURE = bloom_intersect,
	COMMUTATOR = &
);
COMMENT ON OPERATOR & (bloom, bloom) IS 'intersection of two bloom filters';

CREATE OPERATOR = (
	LEFTARG = bloom, RIGHTARG = bloom, PROCEDURE = bloom_eq,
	COMMUTATOR = =, NEGATOR = <>
);
COMMENT ON OPERATOR = (bloom, bloom) IS 'equal parameters and bits';

CREATE OPERATOR <> (
	LEFTARG = bloom, RIGHTARG = bloom, PROCEDURE = bloom_ne,
	COMMUTATOR = <>, NEGATOR = =
);
COMMENT ON OPERATOR <> (bloom, bloom) IS 'different parameters or bits';

--
-- Aggregates over bloom
--
-- The state is the filter itself, allocated once per group and mutated in
-- place.  PostgreSQL 15 takes one constant transition-space estimate per
-- aggregate, whatever its arguments; SSPACE is set to 4 MB, the size of a
-- filter for 3.4M URLs at 1%, so that the planner does not take a hash
-- aggregate over many groups of filters for cheap.
--

CREATE FUNCTION bloom_agg_trans(internal, text, bigint, double precision)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, bytea, bigint, double precision)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, bigint, bigint, double precision)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_trans_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, text, bloom)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_template_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, bytea, bloom)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_template_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, bigint, bloom)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_template_trans_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_trans(internal, bloom)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_serial(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_agg_deserial(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(value text, capacity bigint, fpr double precision) (
	SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(value bytea, capacity bigint, fpr double precision) (
	SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(value bigint, capacity bigint, fpr double precision) (
	SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(value text, template bloom) (
	SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(value bytea, template bloom) (
	SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(value bigint, template bloom) (
	SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(text, bigint, double precision) IS
	'bloom filter of the values, sized for capacity at the given false-positive rate';
COMMENT ON AGGREGATE bloom_agg(bytea, bigint, double precision) IS
	'bloom filter of the values, sized for capacity at the given false-positive rate';
COMMENT ON AGGREGATE bloom_agg(bigint, bigint, double precision) IS
	'bloom filter of the values, sized for capacity at the given false-positive rate';
COMMENT ON AGGREGATE bloom_agg(text, bloom) IS
	'template filter with the values added';
COMMENT ON AGGREGATE bloom_agg(bytea, bloom) IS
	'template filter with the values added';
COMMENT ON AGGREGATE bloom_agg(bigint, bloom) IS
	'template filter with the values added';

CREATE AGGREGATE bloom_union_agg(filter bloom) (
	SFUNC = bloom_union_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = bloom_agg_final,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serial, DESERIALFUNC = bloom_agg_deserial,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_union_agg(bloom) IS
	'union of the filters (same bits, hashes and seed required)';

--
-- Marking duplicates in a stream of rows
--

CREATE FUNCTION is_duplicate(value text, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bytea, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bigint, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate_int8' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION is_duplicate(text, bloom) IS
	'window function: value probably seen earlier in the partition or in filter; then remembered';
COMMENT ON FUNCTION is_duplicate(bytea, bloom) IS
	'window function: value probably seen earlier in the partition or in filter; then remembered';
COMMENT ON FUNCTION is_duplicate(bigint, bloom) IS
	'window function: value probably seen earlier in the partition or in filter; then remembered';

--
-- The stablebloom type: a Stable Bloom filter (Deng & Rafiei 2006) of m
-- cells of 0..Max, k probes and P decrements per insertion
--

CREATE TYPE stablebloom;

CREATE FUNCTION stablebloom_in(cstring) RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_out(stablebloom) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_recv(internal) RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_send(stablebloom) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE stablebloom (
	INPUT = stablebloom_in,
	OUTPUT = stablebloom_out,
	RECEIVE = stablebloom_recv,
	SEND = stablebloom_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = double,
	STORAGE = external
);
COMMENT ON TYPE stablebloom IS
	'Stable Bloom filter: bounded false positives on an endless stream, some false negatives';

-- Sizing: P from a target false-positive rate, and the stable point

CREATE FUNCTION stablebloom_p(fpr double precision, hashes integer, cells bigint, max integer)
	RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_p(double precision, integer, bigint, integer) IS
	'decrements per insertion whose stable false-positive rate is fpr (Deng & Rafiei 2006)';

CREATE FUNCTION stablebloom_stable_zeros(cells bigint, hashes integer,
										 decrements double precision, max integer)
	RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_stable_zeros(bigint, integer, double precision, integer) IS
	'fraction of zero cells at the stable point: (1 / (1 + 1/(P (1/k - 1/m))))^Max';

CREATE FUNCTION stablebloom_fpr(cells bigint, hashes integer,
								decrements double precision, max integer)
	RETURNS double precision
	AS 'MODULE_PATHNAME', 'stablebloom_fpr_params' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_fpr(bigint, integer, double precision, integer) IS
	'false-positive rate at the stable point: (1 - stable_zeros)^k';

-- Constructors

CREATE FUNCTION stablebloom_empty(cells bigint, hashes integer, max integer,
								  decrements integer, seed bigint DEFAULT 0)
	RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_empty(bigint, integer, integer, integer, bigint) IS
	'empty stable bloom filter with the given cells, hashes, max and decrements';

CREATE FUNCTION stablebloom_sized(cells bigint, fpr double precision, hashes integer,
								  max integer DEFAULT 1, seed bigint DEFAULT 0)
	RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_sized(bigint, double precision, integer, integer, bigint) IS
	'empty stable bloom filter with P = round(stablebloom_p(fpr, hashes, cells, max)), at least 1';

-- Adding and testing elements

CREATE FUNCTION stablebloom_add(filter stablebloom, value text) RETURNS stablebloom
	AS 'MODULE_PATHNAME', 'stablebloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION stablebloom_add(filter stablebloom, value bytea) RETURNS stablebloom
	AS 'MODULE_PATHNAME', 'stablebloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION stablebloom_add(filter stablebloom, value bigint) RETURNS stablebloom
	AS 'MODULE_PATHNAME', 'stablebloom_add_int8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_add(stablebloom, text) IS 'filter after one insertion of value (NULL inserts nothing)';
COMMENT ON FUNCTION stablebloom_add(stablebloom, bytea) IS 'filter after one insertion of value (NULL inserts nothing)';
COMMENT ON FUNCTION stablebloom_add(stablebloom, bigint) IS 'filter after one insertion of value (NULL inserts nothing)';

CREATE FUNCTION stablebloom_contains(filter stablebloom, value text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'stablebloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_contains(filter stablebloom, value bytea) RETURNS boolean
	AS 'MODULE_PATHNAME', 'stablebloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_contains(filter stablebloom, value bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'stablebloom_contains_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_contains(stablebloom, text) IS 'true if value was probably inserted recently';
COMMENT ON FUNCTION stablebloom_contains(stablebloom, bytea) IS 'true if value was probably inserted recently';
COMMENT ON FUNCTION stablebloom_contains(stablebloom, bigint) IS 'true if value was probably inserted recently';

CREATE FUNCTION stablebloom_contained_by(value text, filter stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'stablebloom_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_contained_by(value bytea, filter stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'stablebloom_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION stablebloom_contained_by(value bigint, filter stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'stablebloom_contained_by_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_contained_by(text, stablebloom) IS 'stablebloom_contains with the arguments swapped';
COMMENT ON FUNCTION stablebloom_contained_by(bytea, stablebloom) IS 'stablebloom_contains with the arguments swapped';
COMMENT ON FUNCTION stablebloom_contained_by(bigint, stablebloom) IS 'stablebloom_contains with the arguments swapped';

CREATE FUNCTION stablebloom_eq(stablebloom, stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_eq(stablebloom, stablebloom) IS
	'same parameters, cells, insertions and PRNG state';
CREATE FUNCTION stablebloom_ne(stablebloom, stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_ne(stablebloom, stablebloom) IS 'not stablebloom_eq';

-- Statistics

CREATE FUNCTION stablebloom_fpr(stablebloom) RETURNS double precision
	AS 'MODULE_PATHNAME', 'stablebloom_fpr_current' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_fpr(stablebloom) IS
	'current false-positive probability: (1 - zero cells / cells)^hashes';

CREATE FUNCTION stablebloom_info(stablebloom) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION stablebloom_info(stablebloom) IS
	'parameters, insertions, zero fraction, current and stable false-positive rate as jsonb';

-- Operators

CREATE OPERATOR @> (
	LEFTARG = stablebloom, RIGHTARG = text, PROCEDURE = stablebloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR @> (
	LEFTARG = stablebloom, RIGHTARG = bytea, PROCEDURE = stablebloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR @> (
	LEFTARG = stablebloom, RIGHTARG = bigint, PROCEDURE = stablebloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = text, RIGHTARG = stablebloom, PROCEDURE = stablebloom_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR <@ (
	LEFTARG = bytea, RIGHTARG = stablebloom, PROCEDURE = stablebloom_contained_by,
	COMMUTATOR = @>
);
CREATE OPERATOR <@ (
	LEFTARG = bigint, RIGHTARG = stablebloom, PROCEDURE = stablebloom_contained_by,
	COMMUTATOR = @>
);
COMMENT ON OPERATOR @> (stablebloom, text) IS 'filter probably contains value';
COMMENT ON OPERATOR @> (stablebloom, bytea) IS 'filter probably contains value';
COMMENT ON OPERATOR @> (stablebloom, bigint) IS 'filter probably contains value';
COMMENT ON OPERATOR <@ (text, stablebloom) IS 'value is probably contained in filter';
COMMENT ON OPERATOR <@ (bytea, stablebloom) IS 'value is probably contained in filter';
COMMENT ON OPERATOR <@ (bigint, stablebloom) IS 'value is probably contained in filter';

CREATE OPERATOR = (
	LEFTARG = stablebloom, RIGHTARG = stablebloom, PROCEDURE = stablebloom_eq,
	COMMUTATOR = =, NEGATOR = <>
);
COMMENT ON OPERATOR = (stablebloom, stablebloom) IS 'same parameters, cells and state';
CREATE OPERATOR <> (
	LEFTARG = stablebloom, RIGHTARG = stablebloom, PROCEDURE = stablebloom_ne,
	COMMUTATOR = <>, NEGATOR = =
);
COMMENT ON OPERATOR <> (stablebloom, stablebloom) IS 'different parameters, cells or state';

-- The aggregate: insertions in input order, from a starting filter.  No
-- combine function (a stable Bloom filter has no meaningful union), so it
-- is not parallel safe; it runs in the leader, above any parallel scan.

CREATE FUNCTION stablebloom_agg_trans(internal, text, stablebloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'stablebloom_agg_trans' LANGUAGE C IMMUTABLE;
CREATE FUNCTION stablebloom_agg_trans(internal, bytea, stablebloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'stablebloom_agg_trans' LANGUAGE C IMMUTABLE;
CREATE FUNCTION stablebloom_agg_trans(internal, bigint, stablebloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'stablebloom_agg_trans_int8' LANGUAGE C IMMUTABLE;
CREATE FUNCTION stablebloom_agg_final(internal) RETURNS stablebloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE;

CREATE AGGREGATE stablebloom_agg(value text, filter stablebloom) (
	SFUNC = stablebloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = stablebloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE stablebloom_agg(value bytea, filter stablebloom) (
	SFUNC = stablebloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = stablebloom_agg_final,
	PARALLEL = RESTRICTED
);
CREATE AGGREGATE stablebloom_agg(value bigint, filter stablebloom) (
	SFUNC = stablebloom_agg_trans, STYPE = internal, SSPACE = 4194304,
	FINALFUNC = stablebloom_agg_final,
	PARALLEL = RESTRICTED
);
COMMENT ON AGGREGATE stablebloom_agg(text, stablebloom) IS
	'filter after inserting the values in input order: use ORDER BY a unique key';
COMMENT ON AGGREGATE stablebloom_agg(bytea, stablebloom) IS
	'filter after inserting the values in input order: use ORDER BY a unique key';
COMMENT ON AGGREGATE stablebloom_agg(bigint, stablebloom) IS
	'filter after inserting the values in input order: use ORDER BY a unique key';

-- Marking duplicates with a stable Bloom filter (the same C function as
-- for bloom: the filter's magic number picks the insertion)

CREATE FUNCTION is_duplicate(value text, filter stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bytea, filter stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION is_duplicate(value bigint, filter stablebloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'is_duplicate_int8' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION is_duplicate(text, stablebloom) IS
	'window function: value probably seen recently in the partition or in filter; then inserted';
COMMENT ON FUNCTION is_duplicate(bytea, stablebloom) IS
	'window function: value probably seen recently in the partition or in filter; then inserted';
COMMENT ON FUNCTION is_duplicate(bigint, stablebloom) IS
	'window function: value probably seen recently in the partition or in filter; then inserted';

--
-- The offline sieve (Vigna's "crivello offline", Mercator's flush): exact
-- deduplication with tables seen (Z), discovered (A) and frontier (F)
--

CREATE FUNCTION url_signature(url text) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION url_signature(text) IS
	'64-bit signature of a URL: XXH3-64 with seed 0 of its bytes';

CREATE FUNCTION sieve_flush(seen regclass, discovered regclass, frontier regclass)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION sieve_flush(regclass, regclass, regclass) IS
	'move the discovered URLs whose signature is not in seen to the frontier, in discovery order; returns how many';
