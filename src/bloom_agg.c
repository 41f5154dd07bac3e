/*-------------------------------------------------------------------------
 *
 * bloom_agg.c
 *	  The bloom aggregates: bloom_agg(value, capacity, fpr),
 *	  bloom_agg(value, template), bloom_union_agg(filter) and
 *	  bloom_intersect_agg(filter).
 *
 * The transition state ("internal") is the filter itself, a BloomData
 * allocated once per group in the aggregate memory context and mutated in
 * place: one allocation of exactly the filter's size, whatever the number
 * of rows.  A NULL state means no row has been seen yet.
 *
 * Bloom filters with equal parameters merge by OR-ing their bits, and the
 * result is exactly the filter of all the elements, so the aggregates have
 * combine, serial and deserial functions and run under parallel query.
 * AND-ing is associative and commutative too, so the intersection of many
 * filters splits into partial intersections the same way.
 *
 * The final function returns a copy and leaves the state alone, so it can
 * be called repeatedly, as a window aggregate over a growing frame does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "agg.h"
#include "bloom.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(bloom_agg_trans);
PG_FUNCTION_INFO_V1(bloom_agg_trans_int8);
PG_FUNCTION_INFO_V1(bloom_agg_template_trans);
PG_FUNCTION_INFO_V1(bloom_agg_template_trans_int8);
PG_FUNCTION_INFO_V1(bloom_union_agg_trans);
PG_FUNCTION_INFO_V1(bloom_intersect_agg_trans);
PG_FUNCTION_INFO_V1(bloom_agg_final);
PG_FUNCTION_INFO_V1(bloom_agg_combine);
PG_FUNCTION_INFO_V1(bloom_intersect_agg_combine);
PG_FUNCTION_INFO_V1(bloom_agg_serial);
PG_FUNCTION_INFO_V1(bloom_agg_deserial);

/* Add the element in argument 1, if not NULL, to the state */
static Datum
bloom_agg_add_value(FunctionCallInfo fcinfo, Bloom state, SbfElementKind kind)
{
	if (!PG_ARGISNULL(1))
		bloom_add_hash(state, sbf_hash_element(PG_GETARG_DATUM(1), kind,
											   state->seed));
	PG_RETURN_POINTER(state);
}

/* bloom_agg(value, capacity bigint, fpr float8) */
static Datum
bloom_agg_trans_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	MemoryContext aggcontext = sbf_agg_context(fcinfo, "bloom_agg");
	Bloom		state = PG_ARGISNULL(0) ? NULL : (Bloom) PG_GETARG_POINTER(0);

	if (state == NULL)
	{
		MemoryContext old;

		sbf_agg_check_not_null(fcinfo, 2, "capacity");
		sbf_agg_check_not_null(fcinfo, 3, "false-positive rate");
		old = MemoryContextSwitchTo(aggcontext);
		state = bloom_new_sized(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3), 0, true);
		MemoryContextSwitchTo(old);
	}
	return bloom_agg_add_value(fcinfo, state, kind);
}

Datum
bloom_agg_trans(PG_FUNCTION_ARGS)
{
	return bloom_agg_trans_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
bloom_agg_trans_int8(PG_FUNCTION_ARGS)
{
	return bloom_agg_trans_common(fcinfo, SBF_ELEMENT_INT8);
}

/*
 * bloom_agg(value, template bloom): the first row's template gives the
 * parameters and the starting contents; later rows' templates are not read
 * (not even detoasted).
 */
static Datum
bloom_agg_template_trans_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	MemoryContext aggcontext = sbf_agg_context(fcinfo, "bloom_agg");
	Bloom		state = PG_ARGISNULL(0) ? NULL : (Bloom) PG_GETARG_POINTER(0);

	if (state == NULL)
	{
		MemoryContext old;

		sbf_agg_check_not_null(fcinfo, 2, "template filter");
		old = MemoryContextSwitchTo(aggcontext);
		state = bloom_copy_datum(PG_GETARG_DATUM(2));
		MemoryContextSwitchTo(old);
	}
	return bloom_agg_add_value(fcinfo, state, kind);
}

Datum
bloom_agg_template_trans(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_trans_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
bloom_agg_template_trans_int8(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_trans_common(fcinfo, SBF_ELEMENT_INT8);
}

/* How the filter aggregates merge one filter into another */
typedef enum BloomMerge
{
	BLOOM_MERGE_UNION,
	BLOOM_MERGE_INTERSECT
} BloomMerge;

static void
bloom_merge_into(Bloom target, const BloomData *source, BloomMerge merge)
{
	if (merge == BLOOM_MERGE_UNION)
	{
		bloom_check_compatible(target, source, "union");
		bloom_union_into(target, source);
	}
	else
	{
		bloom_check_compatible(target, source, "intersect");
		bloom_intersect_into(target, source);
	}
}

/*
 * bloom_union_agg(bloom) and bloom_intersect_agg(bloom): the first non-NULL
 * filter is copied into the aggregate context, later ones are merged into
 * it; NULL filters are skipped.
 */
static Datum
bloom_merge_agg_trans(FunctionCallInfo fcinfo, BloomMerge merge,
					  const char *fname)
{
	MemoryContext aggcontext = sbf_agg_context(fcinfo, fname);
	Bloom		state = PG_ARGISNULL(0) ? NULL : (Bloom) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1))
	{
		/* only NULL filters so far: the state stays NULL, not a null pointer */
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	if (state == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(aggcontext);

		state = bloom_copy_datum(PG_GETARG_DATUM(1));
		MemoryContextSwitchTo(old);
	}
	else
		bloom_merge_into(state, bloom_from_datum(PG_GETARG_DATUM(1)), merge);
	Assert(!BLOOM_IS_EMPTY(state));
	PG_RETURN_POINTER(state);
}

Datum
bloom_union_agg_trans(PG_FUNCTION_ARGS)
{
	return bloom_merge_agg_trans(fcinfo, BLOOM_MERGE_UNION, "bloom_union_agg");
}

Datum
bloom_intersect_agg_trans(PG_FUNCTION_ARGS)
{
	return bloom_merge_agg_trans(fcinfo, BLOOM_MERGE_INTERSECT,
								 "bloom_intersect_agg");
}

/* A copy of the state, which stays usable for more rows */
Datum
bloom_agg_final(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}

/*
 * Combine two partial states.  A NULL state is a group that saw no row (no
 * non-NULL filter): it is left out, for union and intersection alike.
 */
static Datum
bloom_combine_common(FunctionCallInfo fcinfo, BloomMerge merge,
					 const char *fname)
{
	MemoryContext aggcontext = sbf_agg_context(fcinfo, fname);
	Bloom		state1 = PG_ARGISNULL(0) ? NULL : (Bloom) PG_GETARG_POINTER(0);
	Bloom		state2 = PG_ARGISNULL(1) ? NULL : (Bloom) PG_GETARG_POINTER(1);

	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	if (state1 == NULL)
	{
		/* state2 may live in a shorter-lived context: copy it over */
		MemoryContext old = MemoryContextSwitchTo(aggcontext);

		state1 = (Bloom) sbf_value_copy((struct varlena *) state2);
		MemoryContextSwitchTo(old);
		PG_RETURN_POINTER(state1);
	}
	bloom_merge_into(state1, state2, merge);
	PG_RETURN_POINTER(state1);
}

Datum
bloom_agg_combine(PG_FUNCTION_ARGS)
{
	return bloom_combine_common(fcinfo, BLOOM_MERGE_UNION, "bloom_agg_combine");
}

Datum
bloom_intersect_agg_combine(PG_FUNCTION_ARGS)
{
	return bloom_combine_common(fcinfo, BLOOM_MERGE_INTERSECT,
								"bloom_intersect_agg_combine");
}

/* The serialized state is the filter's own varlena */
Datum
bloom_agg_serial(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}

/*
 * The result lives in the caller's per-tuple context; the combine function
 * copies it into the aggregate context when it becomes a group's state.
 */
Datum
bloom_agg_deserial(PG_FUNCTION_ARGS)
{
	(void) sbf_agg_context(fcinfo, "bloom_agg_deserial");
	PG_RETURN_POINTER(bloom_copy_datum(PG_GETARG_DATUM(0)));
}
