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

#endif							/* SBF_AGG_H */
