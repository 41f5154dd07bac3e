/*-------------------------------------------------------------------------
 *
 * window.c
 *	  is_duplicate(value, filter) OVER (...): marking repeats in a stream
 *	  of rows.
 *
 * For each row of a partition, in window order, the function answers
 * whether the value was (probably) seen before in the partition or is in
 * the filter given on the partition's first row, and then inserts it.
 * It reads only the current row, so the frame clause does not matter.
 *
 * The filter is copied once per partition into partition-local memory and
 * mutated in place for every row: the per-row cost is one hash and k
 * probes, never a copy of the filter.  The filter argument is read (and
 * detoasted) on the partition's first row only, and its header checked as
 * every function checks a value it reads.  Its cells were checked once,
 * when the value was input; the copies are not checked again (walking each
 * partition's copy made 20 partitions of a 400-million-cell filter take
 * 10 s instead of 1).
 *
 * One C entry point serves every filter type: the value's magic number
 * picks the insert operation.  is_duplicate(value, filter, at) is the
 * arrival of a sliding filter whose window is a time, at its time.  NULL values are never duplicates and are
 * not inserted; a NULL filter is an error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "fmgr.h"
#include "utils/memutils.h"
#include "windowapi.h"

#include "bloom.h"
#include "format.h"
#include "hash.h"
#include "slidingbloom.h"
#include "stablebloom.h"

PG_FUNCTION_INFO_V1(is_duplicate);
PG_FUNCTION_INFO_V1(is_duplicate_int8);

/* Insert one element; return whether it was (probably) present before */
typedef bool (*FilterInsertFn) (void *filter, SbfHash hash);

typedef struct IsDuplicateState
{
	void	   *filter;			/* private copy, in partition memory */
	uint64		seed;			/* the filter's hash seed */
	FilterInsertFn insert;
} IsDuplicateState;

static bool
bloom_insert(void *filter, SbfHash hash)
{
	return bloom_add_hash((Bloom) filter, hash);
}

static bool
stablebloom_insert(void *filter, SbfHash hash)
{
	return stablebloom_add_hash((StableBloom) filter, hash);
}

/* One arrival: test, store (per the filter's refresh flag) and count */
static bool
slidingbloom_insert(void *filter, SbfHash hash)
{
	return slidingbloom_arrive_hash((SlidingBloom) filter, hash);
}

/*
 * Make the partition's private filter from the first row's filter
 * argument, in the memory context of the partition-local state.
 */
static void
is_duplicate_start(WindowObject winobj, IsDuplicateState *state)
{
	MemoryContext partcontext = GetMemoryChunkContext(state);
	MemoryContext old;
	Datum		datum;
	bool		isnull;
	SbfHeader  *header;
	void	   *copy = NULL;
	uint32		magic;

	datum = WinGetFuncArgCurrent(winobj, 1, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("filter argument of is_duplicate must not be null"),
				 errhint("Start from an empty filter, e.g. bloom_sized(capacity, fpr).")));

	/* the magic number says which filter; only the first bytes are read */
	header = (SbfHeader *) PG_DETOAST_DATUM_SLICE(datum, 0,
												  offsetof(SbfHeader, version) - VARHDRSZ);
	magic = VARSIZE(header) >= offsetof(SbfHeader, version) ? header->magic : 0;

	/* one private, materialized copy of the filter, in partition memory */
	old = MemoryContextSwitchTo(partcontext);
	switch (magic)
	{
		case SBF_MAGIC_BLOOM:
			copy = bloom_copy_datum(datum);
			state->seed = ((Bloom) copy)->seed;
			state->insert = bloom_insert;
			break;
		case SBF_MAGIC_STABLEBLOOM:
			copy = stablebloom_copy_datum(datum);
			state->seed = ((StableBloom) copy)->seed;
			state->insert = stablebloom_insert;
			break;
		case SBF_MAGIC_SLIDINGBLOOM:
			copy = slidingbloom_copy_datum(datum);
			state->seed = ((SlidingBloom) copy)->seed;
			state->insert = slidingbloom_insert;
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("filter argument of is_duplicate is not a valid filter")));
	}
	MemoryContextSwitchTo(old);
	Assert(copy != NULL && state->insert != NULL);
	state->filter = copy;
}

static Datum
is_duplicate_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	WindowObject winobj = PG_WINDOW_OBJECT();
	IsDuplicateState *state;
	Datum		value;
	bool		isnull;

	state = (IsDuplicateState *)
		WinGetPartitionLocalMemory(winobj, sizeof(IsDuplicateState));
	if (state->filter == NULL)
		is_duplicate_start(winobj, state);
	Assert(state->filter != NULL);

	/* earlier rows are never read again: let the tuplestore drop them */
	WinSetMarkPosition(winobj, WinGetCurrentPosition(winobj));

	value = WinGetFuncArgCurrent(winobj, 0, &isnull);
	if (isnull)
		PG_RETURN_BOOL(false);

	/* is_duplicate(value, filter, at): an arrival at its time */
	if (PG_NARGS() == 3)
	{
		Datum		at = WinGetFuncArgCurrent(winobj, 2, &isnull);

		if (isnull)
			slidingbloom_time_is_null();
		if (state->insert != slidingbloom_insert)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("only a sliding filter's window can be a time")));
		PG_RETURN_BOOL(slidingbloom_arrive_at((SlidingBloom) state->filter,
											  sbf_hash_element(value, kind, state->seed),
											  DatumGetInt64(at)));
	}
	PG_RETURN_BOOL(state->insert(state->filter,
								 sbf_hash_element(value, kind, state->seed)));
}

Datum
is_duplicate(PG_FUNCTION_ARGS)
{
	return is_duplicate_common(fcinfo, sbf_varlena_kind(fcinfo, 0));
}

Datum
is_duplicate_int8(PG_FUNCTION_ARGS)
{
	return is_duplicate_common(fcinfo, SBF_ELEMENT_INT8);
}

