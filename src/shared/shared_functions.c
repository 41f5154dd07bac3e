/*-------------------------------------------------------------------------
 *
 * shared_functions.c
 *	  Shared filters, the top layer: the SQL functions that test and add
 *	  values (shared_test_and_add, shared_contains), describe a filter
 *	  (shared_info) and copy one into a value (the snapshots).  Each
 *	  opens the filter, takes its arguments apart and hands the values to
 *	  the path of the filter's kind: the add path of bloom and stable
 *	  filters (shared_insert.c), their read path (shared_read.c), or the
 *	  sliding filters' (shared_sliding.c).  The kind is looked at here, and
 *	  nowhere below.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "batch_sort.h"
#include "bloom.h"
#include "misread.h"
#include "shared.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(shared_test_and_add);
PG_FUNCTION_INFO_V1(shared_test_and_add_int8);
PG_FUNCTION_INFO_V1(shared_test_and_add_array);
PG_FUNCTION_INFO_V1(shared_contains);
PG_FUNCTION_INFO_V1(shared_contains_int8);
PG_FUNCTION_INFO_V1(shared_info);
PG_FUNCTION_INFO_V1(shared_bloom_snapshot);
PG_FUNCTION_INFO_V1(shared_stablebloom_snapshot);

/* Interrupts are checked every this many values while hashing */
#define SBF_HASH_CHECK_EVERY	(1 << 16)

/* Refuse adding where nextval() is refused: read-only, standby, parallel */
static Relation
sbf_open_for_add(Oid relid)
{
	PreventCommandIfReadOnly("shared_test_and_add()");
	PreventCommandIfParallelMode("shared_test_and_add()");
	return sbf_shared_open(relid, RowExclusiveLock, ACL_UPDATE);
}

/*
 * The time of an arrival, given to the forms with a third argument, which
 * only a sliding filter with a window of time takes
 */
static bool
sbf_arrival_time(FunctionCallInfo fcinfo, TimestampTz *at)
{
	if (PG_NARGS() < 3)
		return false;
	*at = PG_GETARG_TIMESTAMPTZ(2);
	return true;
}

static void
sbf_refuse_time(Relation rel, const SbfSharedMeta *meta, bool has_at)
{
	if (has_at && meta->kind != SBF_SHARED_SLIDINGBLOOM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shared filter \"%s\" is a %s filter, which takes no time",
						RelationGetRelationName(rel), sbf_kind_name(meta->kind)),
				 errhint("Only a sliding filter with a window of time takes the time of an arrival.")));
}

static bool
sbf_test_and_add_one(Oid relid, Datum value, SbfElementKind kind, bool has_at,
					 TimestampTz at)
{
	Relation	rel = sbf_open_for_add(relid);
	SbfAddCall	call;
	SbfBatchItem item;
	bool		answer;

	sbf_refuse_time(rel, sbf_shared_meta(rel), has_at);
	if (sbf_shared_meta(rel)->kind == SBF_SHARED_SLIDINGBLOOM)
	{
		int			index = 0;

		item.hash = sbf_hash_element(value, kind, sbf_shared_meta(rel)->seed);
		item.index = 0;
		sbf_sliding_add(rel, &item, 1, &index, &answer, has_at, at);
		relation_close(rel, NoLock);
		return answer;
	}
	sbf_add_call_begin(&call, rel);
	item.hash = sbf_hash_element(value, kind, call.meta.seed);
	item.index = 0;
	sbf_add_items(&call, &item, 1, &answer);
	sbf_add_call_end(&call);
	relation_close(rel, NoLock);
	return answer;
}

/* shared_test_and_add(filter regclass, value text|bytea [, at timestamptz]) -> bool */
Datum
shared_test_and_add(PG_FUNCTION_ARGS)
{
	SbfElementKind kind = sbf_varlena_kind(fcinfo, 1);
	Datum		value = sbf_refuse_misread_text(PG_GETARG_DATUM(1), kind);
	TimestampTz at = 0;
	bool		has_at = sbf_arrival_time(fcinfo, &at);

	PG_RETURN_BOOL(sbf_test_and_add_one(PG_GETARG_OID(0), value, kind, has_at, at));
}

/* shared_test_and_add(filter regclass, value bigint [, at timestamptz]) -> bool */
Datum
shared_test_and_add_int8(PG_FUNCTION_ARGS)
{
	TimestampTz at = 0;
	bool		has_at = sbf_arrival_time(fcinfo, &at);

	PG_RETURN_BOOL(sbf_test_and_add_one(PG_GETARG_OID(0), PG_GETARG_DATUM(1),
										SBF_ELEMENT_INT8, has_at, at));
}

/*
 * shared_test_and_add(filter regclass, values text[]|bytea[]|bigint[]) -> bool[]
 *
 * Answers in input order, with the input's dimensions; a NULL element is
 * answered NULL and not added.
 */
Datum
shared_test_and_add_array(PG_FUNCTION_ARGS)
{
	ArrayType  *values = PG_GETARG_ARRAYTYPE_P(1);
	Oid			elemtype = ARR_ELEMTYPE(values);
	SbfElementKind kind = (elemtype == INT8OID) ? SBF_ELEMENT_INT8 :
		(elemtype == BYTEAOID) ? SBF_ELEMENT_BYTEA : SBF_ELEMENT_TEXT;
	Relation	rel = sbf_open_for_add(PG_GETARG_OID(0));
	SbfAddCall *call = palloc(sizeof(SbfAddCall));
	int			nelems = ArrayGetNItems(ARR_NDIM(values), ARR_DIMS(values));
	TimestampTz at = 0;
	bool		has_at = sbf_arrival_time(fcinfo, &at);
	bool		sliding = sbf_shared_meta(rel)->kind == SBF_SHARED_SLIDINGBLOOM;
	int		   *index = NULL;
	ArrayIterator it;
	Datum		value;
	bool		isnull;
	int			nnulls = 0;
	SbfBatchItem *items;
	bool	   *answers;
	int			nitems = 0;
	int			chunk;
	int			i = 0;
	ArrayType  *result;

	if (kind == SBF_ELEMENT_TEXT)
		sbf_refuse_bytea_hex_elements(values);
	sbf_refuse_time(rel, sbf_shared_meta(rel), has_at);
	if (nelems == 0)
	{
		relation_close(rel, NoLock);
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
	}
	sbf_add_call_begin(call, rel);
	chunk = sliding ? SBF_BATCH_CHUNK : sbf_add_call_chunk(call);
	items = palloc(sizeof(SbfBatchItem) * Min(nelems, SBF_BATCH_CHUNK));
	/* a sliding filter's items are numbered in the chunk: their arrivals */
	if (sliding)
		index = palloc(sizeof(int) * Min(nelems, SBF_BATCH_CHUNK));
	answers = palloc0(sizeof(bool) * nelems);
	it = array_create_iterator(values, 0, NULL);
	for (; array_iterate(it, &value, &isnull); i++)
	{
		if (isnull)
		{
			nnulls++;
			continue;
		}
		items[nitems].hash = sbf_hash_element(value, kind, call->meta.seed);
		items[nitems].index = sliding ? nitems : i;
		if (sliding)
			index[nitems] = i;
		if (++nitems == chunk)
		{
			if (sliding)
				sbf_sliding_add(rel, items, nitems, index, answers, has_at, at);
			else
			{
				sbf_add_items(call, items, nitems, answers);
				sbf_add_call_count(call);
				chunk = sbf_add_call_chunk(call);
			}
			nitems = 0;
		}
		if (i % SBF_HASH_CHECK_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
	}
	array_free_iterator(it);
	if (sliding)
		sbf_sliding_add(rel, items, nitems, index, answers, has_at, at);
	else
		sbf_add_items(call, items, nitems, answers);
	sbf_add_call_end(call);
	relation_close(rel, NoLock);
	pfree(items);
	pfree(call);

	result = sbf_answers_array(values, answers, nelems, nnulls);
	pfree(answers);
	PG_RETURN_ARRAYTYPE_P(result);
}

/* Test one value, in the path of the filter's kind */
static bool
sbf_contains(Oid relid, Datum value, SbfElementKind kind, bool has_at,
			 TimestampTz at)
{
	Relation	rel = sbf_shared_open(relid, AccessShareLock, ACL_SELECT);
	SbfHash		hash = sbf_hash_element(value, kind, sbf_shared_meta(rel)->seed);
	bool		found;

	if (sbf_shared_meta(rel)->kind == SBF_SHARED_SLIDINGBLOOM)
		found = sbf_sliding_contains(rel, hash, has_at, at);
	else
	{
		sbf_refuse_time(rel, sbf_shared_meta(rel), has_at);
		found = sbf_contains_hash(rel, hash);
	}
	relation_close(rel, NoLock);
	return found;
}

/* shared_contains(filter regclass, value text|bytea [, at timestamptz]) -> bool */
Datum
shared_contains(PG_FUNCTION_ARGS)
{
	SbfElementKind kind = sbf_varlena_kind(fcinfo, 1);
	Datum		value = sbf_refuse_misread_text(PG_GETARG_DATUM(1), kind);

	PG_RETURN_BOOL(sbf_contains(PG_GETARG_OID(0), value, kind, PG_NARGS() > 2,
								PG_NARGS() > 2 ? PG_GETARG_TIMESTAMPTZ(2) : 0));
}

/* shared_contains(filter regclass, value bigint [, at timestamptz]) -> bool */
Datum
shared_contains_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(sbf_contains(PG_GETARG_OID(0), PG_GETARG_DATUM(1),
								SBF_ELEMENT_INT8, PG_NARGS() > 2,
								PG_NARGS() > 2 ? PG_GETARG_TIMESTAMPTZ(2) : 0));
}

/*
 * shared_info(filter regclass, read_pages boolean DEFAULT false) -> jsonb:
 * the filter's parameters and counts, from page 0 alone unless read_pages
 * asks for what its pages hold (shared_read.c, shared_sliding.c)
 */
Datum
shared_info(PG_FUNCTION_ARGS)
{
	Relation	rel = sbf_shared_open(PG_GETARG_OID(0), AccessShareLock, ACL_SELECT);
	bool		read_pages = PG_GETARG_BOOL(1);
	StringInfoData buf;

	initStringInfo(&buf);
	if (sbf_shared_meta(rel)->kind == SBF_SHARED_SLIDINGBLOOM)
		sbf_sliding_info(rel, &buf, read_pages);
	else
		sbf_info(rel, &buf, read_pages);
	relation_close(rel, NoLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/* Open a filter for a snapshot, checking its kind */
static Relation
sbf_open_for_snapshot(Oid relid, int kind, SbfSharedMeta *meta)
{
	Relation	rel = sbf_shared_open(relid, AccessShareLock, ACL_SELECT);
	uint32		nsub = sbf_shared_state(rel, true)->nsub;

	*meta = *sbf_shared_meta(rel);
	if (nsub > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shared filter \"%s\" has grown to %u sub-filters",
						RelationGetRelationName(rel), nsub),
				 errdetail("A bloom value is one filter; a snapshot can only be taken of a growing filter before it grows."),
				 errhint("Test values with shared_contains, or copy the filter with COPY or pg_dump.")));
	if (meta->kind == SBF_SHARED_SLIDINGBLOOM)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shared filter \"%s\" is a slidingbloom filter, which has no snapshot",
						RelationGetRelationName(rel)),
				 errhint("Test values with shared_contains, or copy the filter with COPY or pg_dump.")));
	if (meta->kind != kind)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("shared filter \"%s\" is a %s filter",
						RelationGetRelationName(rel),
						meta->kind == SBF_SHARED_BLOOM ? "bloom" : "stablebloom"),
				 errhint("Use %s.",
						 meta->kind == SBF_SHARED_BLOOM ? "shared_bloom_snapshot" :
						 "shared_stablebloom_snapshot")));
	return rel;
}

static void
sbf_snapshot_too_large(Relation rel, const SbfSharedMeta *meta, const char *type)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("shared filter \"%s\" is too large for a %s value",
					RelationGetRelationName(rel), type),
			 errdetail("Its " UINT64_FORMAT " data pages take " UINT64_FORMAT " bytes; a value holds at most 1 GB.",
					   meta->pages, meta->pages * SBF_BLOCK_BYTES)));
}

/* shared_bloom_snapshot(filter regclass) -> bloom */
Datum
shared_bloom_snapshot(PG_FUNCTION_ARGS)
{
	SbfSharedMeta meta;
	Relation	rel = sbf_open_for_snapshot(PG_GETARG_OID(0), SBF_SHARED_BLOOM, &meta);
	Bloom		filter;

	/* a block of SBF_BLOCK_BYTES a page, whatever bits the layout uses */
	if (meta.pages * SBF_BLOCK_BITS > BLOOM_MAX_BITS)
		sbf_snapshot_too_large(rel, &meta, "bloom");
	filter = bloom_new((int64) (meta.pages * SBF_BLOCK_BITS), meta.hashes, meta.seed, true);
	filter->flags |= BLOOM_FLAG_BLOCKED;
	if (meta.version != SBF_SHARED_LAYOUT_PAGES)
		filter->flags |= BLOOM_FLAG_LINES;
	if (meta.version == SBF_SHARED_LAYOUT_PENDING)
		filter->flags |= BLOOM_FLAG_PENDING_LINES;
	sbf_snapshot_blocks(rel, &meta, (uint8 *) filter->words);
	relation_close(rel, NoLock);
	PG_RETURN_POINTER(filter);
}

/*
 * shared_stablebloom_snapshot(filter regclass) -> stablebloom
 *
 * The value has one PRNG where the filter has one per page: it starts from
 * the seed, as a new stablebloom's does, and the insertion count is 0
 * (a shared filter does not count them).
 */
Datum
shared_stablebloom_snapshot(PG_FUNCTION_ARGS)
{
	SbfSharedMeta meta;
	Relation	rel = sbf_open_for_snapshot(PG_GETARG_OID(0), SBF_SHARED_STABLEBLOOM,
											&meta);
	StableBloom filter;

	if (meta.cells > STABLEBLOOM_MAX_CELLS(meta.cell_bits))
		sbf_snapshot_too_large(rel, &meta, "stablebloom");
	filter = stablebloom_new((int64) meta.cells, meta.hashes, meta.max,
							 (int64) meta.decrements, meta.seed, true);
	filter->flags |= STABLEBLOOM_FLAG_BLOCKED;
	sbf_snapshot_blocks(rel, &meta, (uint8 *) filter->words);
	relation_close(rel, NoLock);
	PG_RETURN_POINTER(filter);
}
