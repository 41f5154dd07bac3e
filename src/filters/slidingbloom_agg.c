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
 * is_duplicate flags, of one pass over both.  With a window of time,
 * slidingbloom_agg(value, filter, at ORDER BY at) brings each arrival's
 * time (slidingbloom_time.c).
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
PG_FUNCTION_INFO_V1(slidingbloom_agg_trans_at);
PG_FUNCTION_INFO_V1(slidingbloom_agg_trans_at_int8);

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
slidingbloom_agg_arrive(void *state, SbfHash hash, FunctionCallInfo fcinfo)
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

/* A copy of a filter of time (an ERROR for a filter of arrivals) */
static void *
slidingbloom_agg_copy_time(Datum filter)
{
	SlidingBloom copy = slidingbloom_copy_datum(filter);

	slidingbloom_check_time(copy);
	return copy;
}

/* An arrival at the row's time, argument 3 */
static void
slidingbloom_agg_arrive_at(void *state, SbfHash hash, FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(3))
		slidingbloom_time_is_null();
	slidingbloom_arrive_at((SlidingBloom) state, hash, PG_GETARG_INT64(3));
}

/*
 * slidingbloom_agg(value, filter, at ORDER BY at): the filter after the
 * values arrived at their times, in aggregate input order: as
 * slidingbloom_agg above, with the time of each arrival.
 */
static Datum
slidingbloom_agg_trans_at_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	return sbf_ordered_agg_trans(fcinfo, kind, "slidingbloom_agg",
								 slidingbloom_agg_copy_time, slidingbloom_agg_seed,
								 slidingbloom_agg_arrive_at);
}

Datum
slidingbloom_agg_trans_at(PG_FUNCTION_ARGS)
{
	return slidingbloom_agg_trans_at_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
slidingbloom_agg_trans_at_int8(PG_FUNCTION_ARGS)
{
	return slidingbloom_agg_trans_at_common(fcinfo, SBF_ELEMENT_INT8);
}

/* A copy, so the state stays usable (window aggregates) */
Datum
slidingbloom_agg_final(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}
