/*-------------------------------------------------------------------------
 *
 * bloom_agg.c
 *	  The bloom aggregates: bloom_agg(value, capacity, fpr),
 *	  bloom_agg(value, template), bloom_union_agg(filter) and
 *	  bloom_intersect_agg(filter).
 *
 * The transition state is a bloom value, the filter itself (STYPE = bloom),
 * so that a partial state is an ordinary value: parallel workers hand it to
 * the leader, and Citus ships it from the workers to the coordinator, whose
 * aggregate pushdown refuses pseudo-type states such as internal.  Bloom
 * filters with equal parameters merge by OR-ing their bits, and the result
 * is exactly the filter of all the elements, so partial filters combine
 * (bloom_agg_combine) to the single-server result bit for bit; AND-ing is
 * associative and commutative too, so partial intersections combine the
 * same way (bloom_intersect_agg_combine).  A filter row of bloom_union_agg
 * and a partial state are both bloom values, so the combine functions are
 * also the transition functions of bloom_union_agg and bloom_intersect_agg.
 *
 * One filter per group, mutated in place, never copied per row.  nodeAgg
 * (and nodeWindowAgg, and Citus's worker_partial_agg) keeps a state that a
 * transition function returns as the very pointer it was given; any other
 * pointer it copies into the aggregate context, once more, unless it is a
 * read-write expanded object (utils/expandeddatum.h) whose memory context
 * is a child of the aggregate context.  So the first row of a group makes
 * the filter inside such an object, which the executor adopts as it is, and
 * later rows set its bits and return it: one allocation of the filter's
 * size per group, never a copy.  Wherever the state leaves the aggregate -
 * as its result (there is no final function), as a partial state for a
 * parallel leader, in Citus's text form - the executor or the reader
 * flattens the object into an ordinary bloom value: one copy, as the 1.0
 * final function made.
 *
 * The support functions are SQL-callable with a real bloom as their first
 * argument, which may point into a shared buffer, so they write only into
 * a state the aggregate owns: the expanded object described above, in the
 * calling aggregate's own context.  Anything else - a value from a table, a
 * direct call outside an aggregate - is copied first, and then the result
 * is a new value: bloom_agg_trans(filter, value, ...) outside an aggregate
 * is filter with value added, bloom_agg_combine(a, b) is a | b.
 *
 * sbf 1.0 declared these aggregates with an internal state and separate
 * final, serial and deserial functions.  Their C entry points stay at the
 * end of this file, for a 1.0 install still running this library before
 * ALTER EXTENSION sbf UPDATE (and for CREATE EXTENSION sbf VERSION '1.0');
 * the update replaces the aggregates and drops those functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "fmgr.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "agg.h"
#include "bloom.h"
#include "value_io.h"

/* sbf 1.1: the state is a bloom value */
PG_FUNCTION_INFO_V1(bloom_agg_trans_sized_text);
PG_FUNCTION_INFO_V1(bloom_agg_trans_sized_bytea);
PG_FUNCTION_INFO_V1(bloom_agg_trans_sized_int8);
PG_FUNCTION_INFO_V1(bloom_agg_trans_template_text);
PG_FUNCTION_INFO_V1(bloom_agg_trans_template_bytea);
PG_FUNCTION_INFO_V1(bloom_agg_trans_template_int8);
PG_FUNCTION_INFO_V1(bloom_agg_combine_union);
PG_FUNCTION_INFO_V1(bloom_agg_combine_intersect);

/* sbf 1.0: the state is internal */
PG_FUNCTION_INFO_V1(bloom_agg_trans);
PG_FUNCTION_INFO_V1(bloom_agg_trans_int8);
PG_FUNCTION_INFO_V1(bloom_agg_template_trans);
PG_FUNCTION_INFO_V1(bloom_agg_template_trans_int8);
PG_FUNCTION_INFO_V1(bloom_union_agg_trans);
PG_FUNCTION_INFO_V1(bloom_agg_final);
PG_FUNCTION_INFO_V1(bloom_agg_combine);
PG_FUNCTION_INFO_V1(bloom_agg_serial);
PG_FUNCTION_INFO_V1(bloom_agg_deserial);

/* What the state argument of a support function is */
typedef enum BloomStateForm
{
	BLOOM_STATE_VALUE,			/* a bloom value (sbf 1.1) */
	BLOOM_STATE_INTERNAL		/* a filter in the aggregate context (sbf 1.0) */
} BloomStateForm;

/*
 * One call of a support function: where its state lives, the filter it may
 * write into, and the datum it returns.
 */
typedef struct BloomStateCall
{
	BloomStateForm form;
	MemoryContext aggcontext;	/* NULL: called outside an aggregate */
	Bloom		filter;			/* writable; NULL: to be made */
	Datum		result;
} BloomStateCall;

/*
 * The state of a group while it aggregates: a read-write expanded object in
 * a memory context of its own, a child of the aggregate context.  Its flat
 * form is the filter, byte for byte.
 */
typedef struct BloomAggState
{
	ExpandedObjectHeader hdr;
	Bloom		filter;			/* materialized, in hdr.eoh_context */
} BloomAggState;

static Size
bloom_state_flat_size(ExpandedObjectHeader *eohptr)
{
	return VARSIZE(((BloomAggState *) eohptr)->filter);
}

static void
bloom_state_flatten_into(ExpandedObjectHeader *eohptr, void *result,
						 Size allocated_size)
{
	Bloom		filter = ((BloomAggState *) eohptr)->filter;

	Assert(allocated_size == VARSIZE(filter));
	memcpy(result, filter, allocated_size);
}

static const ExpandedObjectMethods bloom_state_methods = {
	bloom_state_flat_size,
	bloom_state_flatten_into
};

/*
 * Begin a call: find the filter of the state argument if this call may
 * write into it.  A bloom state qualifies only inside an aggregate and only
 * as a read-write state object of this very aggregate context; an internal
 * state always (it exists only inside an aggregate).
 */
static void
bloom_state_begin(BloomStateCall *call, FunctionCallInfo fcinfo,
				  BloomStateForm form, const char *fname)
{
	call->form = form;
	call->filter = NULL;
	call->result = PG_ARGISNULL(0) ? (Datum) 0 : PG_GETARG_DATUM(0);

	if (form == BLOOM_STATE_INTERNAL)
	{
		call->aggcontext = sbf_agg_context(fcinfo, fname);
		call->filter = (Bloom) DatumGetPointer(call->result);
		return;
	}

	if (!AggCheckCallContext(fcinfo, &call->aggcontext))
		call->aggcontext = NULL;
	if (call->aggcontext != NULL && !PG_ARGISNULL(0) &&
		VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(call->result)))
	{
		ExpandedObjectHeader *eoh = DatumGetEOHP(call->result);

		if (eoh->eoh_methods == &bloom_state_methods &&
			MemoryContextGetParent(eoh->eoh_context) == call->aggcontext)
			call->filter = ((BloomAggState *) eoh)->filter;
	}
}

/*
 * The memory context a new filter is made in, by the caller, before
 * bloom_state_set: a new state object's own in an aggregate (the filter
 * then lives exactly as long as the group), the caller's outside one.
 */
static MemoryContext
bloom_state_context(BloomStateCall *call)
{
	if (call->aggcontext == NULL)
		return CurrentMemoryContext;
	if (call->form == BLOOM_STATE_INTERNAL)
		return call->aggcontext;
	return AllocSetContextCreate(call->aggcontext, "bloom_agg state",
								 ALLOCSET_SMALL_SIZES);
}

/* The new filter, made in CONTEXT, becomes the call's state and result */
static void
bloom_state_set(BloomStateCall *call, MemoryContext context, Bloom filter)
{
	BloomAggState *state;

	Assert(!BLOOM_IS_EMPTY(filter));
	call->filter = filter;
	if (call->form == BLOOM_STATE_INTERNAL || call->aggcontext == NULL)
	{
		call->result = PointerGetDatum(filter);
		return;
	}
	state = (BloomAggState *) MemoryContextAlloc(context, sizeof(BloomAggState));
	EOH_init_header(&state->hdr, &bloom_state_methods, context);
	state->filter = filter;
	call->result = EOHPGetRWDatum(&state->hdr);
}

/* A writable, materialized copy of a bloom datum as the call's state */
static void
bloom_state_copy(BloomStateCall *call, Datum datum)
{
	MemoryContext context = bloom_state_context(call);
	MemoryContext old = MemoryContextSwitchTo(context);
	Bloom		filter = bloom_copy_datum(datum);

	MemoryContextSwitchTo(old);
	bloom_state_set(call, context, filter);
}

/*
 * bloom_agg(value, capacity bigint, fpr float8): the first row makes an
 * all-zero filter (a NULL state); every row adds its value, if not NULL.
 */
static Datum
bloom_agg_sized_common(FunctionCallInfo fcinfo, BloomStateForm form,
					   SbfElementKind kind)
{
	BloomStateCall call;

	bloom_state_begin(&call, fcinfo, form, "bloom_agg");
	if (call.filter == NULL && PG_ARGISNULL(0))
	{
		MemoryContext context;
		MemoryContext old;
		Bloom		filter;

		sbf_agg_check_not_null(fcinfo, 2, "capacity");
		sbf_agg_check_not_null(fcinfo, 3, "false-positive rate");
		context = bloom_state_context(&call);
		old = MemoryContextSwitchTo(context);
		filter = bloom_new_sized(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3), 0, true);
		MemoryContextSwitchTo(old);
		bloom_state_set(&call, context, filter);
	}
	else if (call.filter == NULL)
		bloom_state_copy(&call, PG_GETARG_DATUM(0));

	if (!PG_ARGISNULL(1))
		bloom_add_hash(call.filter, sbf_hash_element(PG_GETARG_DATUM(1), kind,
													 call.filter->seed));
	PG_RETURN_DATUM(call.result);
}

/*
 * bloom_agg(value, template bloom): the first row's template gives the
 * parameters and the starting contents; later rows' templates are not read
 * (not even detoasted).
 */
static Datum
bloom_agg_template_common(FunctionCallInfo fcinfo, BloomStateForm form,
						  SbfElementKind kind)
{
	BloomStateCall call;

	bloom_state_begin(&call, fcinfo, form, "bloom_agg");
	if (call.filter == NULL && PG_ARGISNULL(0))
	{
		sbf_agg_check_not_null(fcinfo, 2, "template filter");
		bloom_state_copy(&call, PG_GETARG_DATUM(2));
	}
	else if (call.filter == NULL)
		bloom_state_copy(&call, PG_GETARG_DATUM(0));

	if (!PG_ARGISNULL(1))
		bloom_add_hash(call.filter, sbf_hash_element(PG_GETARG_DATUM(1), kind,
													 call.filter->seed));
	PG_RETURN_DATUM(call.result);
}

/* How the filter aggregates merge one filter into another */
typedef enum BloomMerge
{
	BLOOM_MERGE_UNION,
	BLOOM_MERGE_INTERSECT
} BloomMerge;

/*
 * Merge the filter in argument 1 into the state in argument 0: the
 * transition of bloom_union_agg and bloom_intersect_agg, and the combine
 * function of all the aggregates.  A NULL filter is skipped, and a NULL
 * state (no filter yet: a group that saw no row, or only NULL filters)
 * left out, for union and intersection alike.  The first filter is copied
 * into the state, never written into.
 */
static Datum
bloom_merge_common(FunctionCallInfo fcinfo, BloomStateForm form,
				   BloomMerge merge, const char *fname)
{
	BloomStateCall call;
	Bloom		source;

	bloom_state_begin(&call, fcinfo, form, fname);
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(call.result);
	}
	if (PG_ARGISNULL(0))
	{
		bloom_state_copy(&call, PG_GETARG_DATUM(1));
		PG_RETURN_DATUM(call.result);
	}
	if (call.filter == NULL)
		bloom_state_copy(&call, PG_GETARG_DATUM(0));

	source = bloom_from_datum(PG_GETARG_DATUM(1));
	if (merge == BLOOM_MERGE_UNION)
	{
		bloom_check_compatible(call.filter, source, "union");
		bloom_union_into(call.filter, source);
	}
	else
	{
		bloom_check_compatible(call.filter, source, "intersect");
		bloom_intersect_into(call.filter, source);
	}
	PG_RETURN_DATUM(call.result);
}

/*
 * sbf 1.1
 */

/*
 * One C function per element type, not one for text and bytea that asks
 * its call expression which it is (sbf_varlena_kind): Citus's
 * worker_partial_agg calls the transition function with no expression.
 */

/* bloom_agg_trans(bloom, text, bigint, float8) */
Datum
bloom_agg_trans_sized_text(PG_FUNCTION_ARGS)
{
	return bloom_agg_sized_common(fcinfo, BLOOM_STATE_VALUE, SBF_ELEMENT_TEXT);
}

/* bloom_agg_trans(bloom, bytea, bigint, float8) */
Datum
bloom_agg_trans_sized_bytea(PG_FUNCTION_ARGS)
{
	return bloom_agg_sized_common(fcinfo, BLOOM_STATE_VALUE, SBF_ELEMENT_BYTEA);
}

/* bloom_agg_trans(bloom, bigint, bigint, float8) */
Datum
bloom_agg_trans_sized_int8(PG_FUNCTION_ARGS)
{
	return bloom_agg_sized_common(fcinfo, BLOOM_STATE_VALUE, SBF_ELEMENT_INT8);
}

/* bloom_agg_trans(bloom, text, bloom) */
Datum
bloom_agg_trans_template_text(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_common(fcinfo, BLOOM_STATE_VALUE,
									 SBF_ELEMENT_TEXT);
}

/* bloom_agg_trans(bloom, bytea, bloom) */
Datum
bloom_agg_trans_template_bytea(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_common(fcinfo, BLOOM_STATE_VALUE,
									 SBF_ELEMENT_BYTEA);
}

/* bloom_agg_trans(bloom, bigint, bloom) */
Datum
bloom_agg_trans_template_int8(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_common(fcinfo, BLOOM_STATE_VALUE,
									 SBF_ELEMENT_INT8);
}

/* bloom_agg_combine(bloom, bloom) */
Datum
bloom_agg_combine_union(PG_FUNCTION_ARGS)
{
	return bloom_merge_common(fcinfo, BLOOM_STATE_VALUE, BLOOM_MERGE_UNION,
							  "bloom_agg_combine");
}

/* bloom_intersect_agg_combine(bloom, bloom) */
Datum
bloom_agg_combine_intersect(PG_FUNCTION_ARGS)
{
	return bloom_merge_common(fcinfo, BLOOM_STATE_VALUE, BLOOM_MERGE_INTERSECT,
							  "bloom_intersect_agg_combine");
}

/*
 * sbf 1.0: the support functions of the aggregates as sbf--1.0.sql declares
 * them, with an internal state; ALTER EXTENSION sbf UPDATE drops them.
 */

Datum
bloom_agg_trans(PG_FUNCTION_ARGS)
{
	return bloom_agg_sized_common(fcinfo, BLOOM_STATE_INTERNAL,
								  sbf_varlena_kind(fcinfo, 1));
}

Datum
bloom_agg_trans_int8(PG_FUNCTION_ARGS)
{
	return bloom_agg_sized_common(fcinfo, BLOOM_STATE_INTERNAL,
								  SBF_ELEMENT_INT8);
}

Datum
bloom_agg_template_trans(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_common(fcinfo, BLOOM_STATE_INTERNAL,
									 sbf_varlena_kind(fcinfo, 1));
}

Datum
bloom_agg_template_trans_int8(PG_FUNCTION_ARGS)
{
	return bloom_agg_template_common(fcinfo, BLOOM_STATE_INTERNAL,
									 SBF_ELEMENT_INT8);
}

Datum
bloom_union_agg_trans(PG_FUNCTION_ARGS)
{
	return bloom_merge_common(fcinfo, BLOOM_STATE_INTERNAL, BLOOM_MERGE_UNION,
							  "bloom_union_agg");
}

/*
 * The states are deserialized filters in the caller's per-tuple context:
 * the first one is copied into the aggregate context.
 */
Datum
bloom_agg_combine(PG_FUNCTION_ARGS)
{
	return bloom_merge_common(fcinfo, BLOOM_STATE_INTERNAL, BLOOM_MERGE_UNION,
							  "bloom_agg_combine");
}

/* A copy of the state, which stays usable for more rows */
Datum
bloom_agg_final(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}

/* The serialized state is the filter's own varlena */
Datum
bloom_agg_serial(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(sbf_value_copy((struct varlena *) PG_GETARG_POINTER(0)));
}

Datum
bloom_agg_deserial(PG_FUNCTION_ARGS)
{
	(void) sbf_agg_context(fcinfo, "bloom_agg_deserial");
	PG_RETURN_POINTER(bloom_copy_datum(PG_GETARG_DATUM(0)));
}
