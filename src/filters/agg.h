/*-------------------------------------------------------------------------
 *
 * agg.h
 *	  Small helpers shared by the aggregate transition functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_AGG_H
#define SBF_AGG_H

#include "postgres.h"

#include "fmgr.h"

#include "hash.h"

/* The aggregate's long-lived memory context; an ERROR outside an aggregate */
static inline MemoryContext
sbf_agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in non-aggregate context", fname)));
	return aggcontext;
}

/* A parameter argument that must be given */
static inline void
sbf_agg_check_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
}

/*
 * The transition of an ordered aggregate that carries a filter on
 * (stablebloom_agg, slidingbloom_agg): f(value, filter ORDER BY ...).
 *
 * The state is a private copy of the first row's filter (argument 2),
 * made once in the aggregate context by copy and changed in place by
 * arrive for each value (argument 1) that is not NULL (arrive may read the
 * row's further arguments, such as its time, from fcinfo); seed_of gives
 * the filter's hash seed.  The filter has no union, so there is no combine
 * function, and the final function returns a copy, so that the state stays
 * usable in a window.
 */
typedef void *(*SbfAggCopy) (Datum filter);
typedef uint64 (*SbfAggSeed) (void *state);
typedef void (*SbfAggArrive) (void *state, SbfHash hash, FunctionCallInfo fcinfo);

static inline Datum
sbf_ordered_agg_trans(FunctionCallInfo fcinfo, SbfElementKind kind,
					  const char *fname, SbfAggCopy copy, SbfAggSeed seed_of,
					  SbfAggArrive arrive)
{
	MemoryContext aggcontext = sbf_agg_context(fcinfo, fname);
	void	   *state = PG_ARGISNULL(0) ? NULL : PG_GETARG_POINTER(0);

	if (state == NULL)
	{
		MemoryContext old;

		sbf_agg_check_not_null(fcinfo, 2, "filter");
		old = MemoryContextSwitchTo(aggcontext);
		state = copy(PG_GETARG_DATUM(2));
		MemoryContextSwitchTo(old);
	}
	if (!PG_ARGISNULL(1))
		arrive(state, sbf_hash_element(PG_GETARG_DATUM(1), kind,
									   seed_of(state)), fcinfo);
	PG_RETURN_POINTER(state);
}

#endif							/* SBF_AGG_H */
