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
