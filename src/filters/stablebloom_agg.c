/*-------------------------------------------------------------------------
 *
 * stablebloom_agg.c
 *	  stablebloom_agg(value, filter ORDER BY ...): the filter after
 *	  inserting the values, in aggregate input order.
 *
 * The state is a private copy of the first row's filter, allocated once in
 * the aggregate context and mutated in place.  A stable Bloom filter has no
 * meaningful union (the cells' ages and the PRNG state do not merge), so
 * there is no combine function and the aggregate is not parallel safe; its
 * result depends on the order of the rows, which an ORDER BY on a unique
 * key makes reproducible.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "fmgr.h"

#include "agg.h"
#include "stablebloom.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(stablebloom_agg_trans);
PG_FUNCTION_INFO_V1(stablebloom_agg_trans_int8);
PG_FUNCTION_INFO_V1(stablebloom_agg_final);

static void *
stablebloom_agg_copy(Datum filter)
{
	return stablebloom_copy_datum(filter);
}

static uint64
stablebloom_agg_seed(void *state)
{
	return ((StableBloom) state)->seed;
}

static void
stablebloom_agg_arrive(void *state, SbfHash hash, FunctionCallInfo fcinfo)
{
	stablebloom_add_hash((StableBloom) state, hash);
}

static Datum
stablebloom_agg_trans_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	return sbf_ordered_agg_trans(fcinfo, kind, "stablebloom_agg",
								 stablebloom_agg_copy, stablebloom_agg_seed,
								 stablebloom_agg_arrive);
}

Datum
stablebloom_agg_trans(PG_FUNCTION_ARGS)
{
	return stablebloom_agg_trans_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
stablebloom_agg_trans_int8(PG_FUNCTION_ARGS)
{
	return stablebloom_agg_trans_common(fcinfo, SBF_ELEMENT_INT8);
}

/* A copy, so the state stays usable (window aggregates) */
Datum
stablebloom_agg_final(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}
