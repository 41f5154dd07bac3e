/*-------------------------------------------------------------------------
 *
 * slidingbloom_agg.c
 *	  slidingbloom_agg(value, filter ORDER BY ...): the filter after the
 *	  values arrived, in aggregate input order.
 *
 * The state is a private copy of the first row's filter, allocated once in
 * the aggregate context and mutated in place, as for stablebloom_agg.  A
 * sliding filter has no meaningful union (two windows do not merge), so
 * there is no combine function and the aggregate is not parallel safe; its
 * result depends on the order of the rows, which an ORDER BY on a unique
 * key makes reproducible.  A batch's filter carries the window on into
 * the next batch: continuing from it gives exactly the filter, and the
 * is_duplicate flags, of one pass over both.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "fmgr.h"

#include "agg.h"
#include "slidingbloom.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(slidingbloom_agg_trans);
PG_FUNCTION_INFO_V1(slidingbloom_agg_trans_int8);
PG_FUNCTION_INFO_V1(slidingbloom_agg_final);

static void *
slidingbloom_agg_copy(Datum filter)
{
	return slidingbloom_copy_datum(filter);
}

static uint64
slidingbloom_agg_seed(void *state)
{
	return ((SlidingBloom) state)->seed;
}

static void
slidingbloom_agg_arrive(void *state, SbfHash hash)
{
	slidingbloom_arrive_hash((SlidingBloom) state, hash);
}

static Datum
slidingbloom_agg_trans_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	return sbf_ordered_agg_trans(fcinfo, kind, "slidingbloom_agg",
								 slidingbloom_agg_copy, slidingbloom_agg_seed,
								 slidingbloom_agg_arrive);
}

Datum
slidingbloom_agg_trans(PG_FUNCTION_ARGS)
{
	return slidingbloom_agg_trans_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
slidingbloom_agg_trans_int8(PG_FUNCTION_ARGS)
{
	return slidingbloom_agg_trans_common(fcinfo, SBF_ELEMENT_INT8);
}

/* A copy, so the state stays usable (window aggregates) */
Datum
slidingbloom_agg_final(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}
