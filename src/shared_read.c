/*-------------------------------------------------------------------------
 *
 * shared_read.c
 *	  Shared filters: shared_contains, shared_info and the snapshots
 *	  shared_bloom_snapshot and shared_stablebloom_snapshot.
 *
 * Readers share-lock one page at a time and never write.  shared_info and
 * the snapshots read every page in turn, so under concurrent adding each
 * page is consistent but the whole is not one instant.
 *
 * A snapshot is a bloom or stablebloom value in the blocked layout
 * (BLOOM_FLAG_BLOCKED, STABLEBLOOM_FLAG_BLOCKED): block i of the value is
 * the block of data page 1 + i, byte for byte, and the value types probe
 * a blocked value exactly as the shared filter probes its pages, so the
 * snapshot's contains answers as shared_contains did for every value.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "bloom.h"
#include "shared.h"
#include "sizing.h"

PG_FUNCTION_INFO_V1(shared_contains);
PG_FUNCTION_INFO_V1(shared_contains_int8);
PG_FUNCTION_INFO_V1(shared_info);
PG_FUNCTION_INFO_V1(shared_bloom_snapshot);
PG_FUNCTION_INFO_V1(shared_stablebloom_snapshot);

/* Is the value present to this session in one sub-filter? */
static bool
sbf_contains_in(Relation rel, const SbfSharedMeta *filter,
				const SbfSubFilter *sub, SbfHash hash)
{
	SbfSharedMeta meta;
	Buffer		buf = sbf_shared_read(rel, sbf_sub_page_of(sub, hash), NULL);
	bool		found = false;

	if (BufferIsValid(buf))
	{
		Page		page = BufferGetPage(buf);

		sbf_sub_meta(filter, sub, &meta);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (!PageIsNew(page))
		{
			sbf_shared_check_page(rel, &meta, page, BufferGetBlockNumber(buf));
			if (meta.version == SBF_SHARED_LAYOUT_PENDING)
			{
				SbfChain	chain;

				sbf_chain_lock(rel, page, BufferGetBlockNumber(buf),
							   BUFFER_LOCK_SHARE, false, &chain);
				found = sbf_pending_test(&meta, page, &chain,
										 sbf_line_state(hash), NULL);
				sbf_chain_unlock(&chain);
			}
			else
				found = sbf_page_test(&meta, sbf_page_block(&meta, page), hash);
		}
		UnlockReleaseBuffer(buf);
	}
	return found;
}

/*
 * Present if any sub-filter has it, the newest (the largest) asked first;
 * a growing filter's sub-filters are read from its metapage each time.
 */
static bool
sbf_contains(Oid relid, Datum value, SbfElementKind kind, bool has_at,
			 TimestampTz at)
{
	Relation	rel = sbf_shared_open(relid, AccessShareLock, ACL_SELECT);
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	const SbfSharedState *state = sbf_shared_state(rel, false);
	SbfSubFilter subs[SBF_MAX_SUBFILTERS];
	SbfHash		hash = sbf_hash_element(value, kind, meta.seed);
	bool		found = false;
	int			j;

	if (meta.kind == SBF_SHARED_SLIDINGBLOOM)
	{
		found = sbf_sliding_contains(rel, hash, has_at, at);
		relation_close(rel, NoLock);
		return found;
	}
	if (has_at)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shared filter \"%s\" is a %s filter, which takes no time",
						RelationGetRelationName(rel), sbf_kind_name(meta.kind)),
				 errhint("Only a sliding filter with a window of time takes the time of an arrival.")));
	if (state->growth > 0.0)
		state = sbf_shared_state(rel, true);
	j = (int) state->nsub;
	memcpy(subs, state->sub, j * sizeof(SbfSubFilter));
	while (!found && --j >= 0)
		found = sbf_contains_in(rel, &meta, &subs[j], hash);
	relation_close(rel, NoLock);
	return found;
}

/* shared_contains(filter regclass, value text|bytea [, at timestamptz]) -> bool */
Datum
shared_contains(PG_FUNCTION_ARGS)
{
	SbfElementKind kind = sbf_varlena_kind(fcinfo, 1);
	Datum		value = sbf_refuse_array_literal(PG_GETARG_DATUM(1), kind);

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
 * Copy data page blkno's block, as this session sees it, into dest (all
 * zeros when the page was never written); returns whether it was written,
 * and adds the page's adds of open transactions to *uncommitted.
 */
static bool
sbf_read_block(Relation rel, const SbfSharedMeta *meta, BlockNumber blkno,
			   uint8 *dest, BufferAccessStrategy strategy, uint64 *uncommitted)
{
	Buffer		buf = sbf_shared_read(rel, blkno, strategy);
	bool		written = false;

	if (BufferIsValid(buf))
	{
		Page		page = BufferGetPage(buf);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		written = !PageIsNew(page);
		if (written)
		{
			SbfChain	chain = {0};

			sbf_shared_check_page(rel, meta, page, blkno);
			if (meta->version == SBF_SHARED_LAYOUT_PENDING)
				sbf_chain_lock(rel, page, blkno, BUFFER_LOCK_SHARE, false, &chain);
			*uncommitted += sbf_page_visible_block(meta, page, &chain, dest);
			sbf_chain_unlock(&chain);
		}
		UnlockReleaseBuffer(buf);
	}
	if (!written)
		memset(dest, 0, SBF_BLOCK_BYTES);
	return written;
}

/* What shared_info adds up over the pages */
typedef struct SbfInfoTotals
{
	uint64		pages_written;
	uint64		uncommitted;	/* adds of transactions still open */
	uint64		nonzero;		/* bits set, or cells > 0 */
	double		fpr_sum;		/* of each page's current fpr, in a
								 * sub-filter */
	double		cardinality;	/* bloom: sum of each page's estimate */
} SbfInfoTotals;

static void
sbf_info_page(const SbfSharedMeta *meta, const uint8 *block, SbfInfoTotals *t)
{
	uint64		cells = sbf_shared_page_cells(meta);
	uint64		nonzero = 0;
	uint64		i;

	/* (a pending block's bytes after its lines are zero) */
	if (meta->cell_bits == 1)
		nonzero = pg_popcount((const char *) block, SBF_BLOCK_BYTES);
	else
		for (i = 0; i < cells; i++)
			nonzero += sbf_cell_get(block, meta->cell_bits, i) != 0;

	t->nonzero += nonzero;
	t->fpr_sum += pow((double) nonzero / (double) cells, meta->hashes);
	/* Swamidass & Baldi 2007: n = -(m / k) ln(1 - X / m), per page */
	t->cardinality += -((double) cells / meta->hashes) *
		log(1.0 - (double) nonzero / (double) cells);
}

/*
 * Read every page of the filter into t; returns the current false-positive
 * rate.  Within a sub-filter it is the mean of its pages' rates (an absent
 * value probes one uniformly chosen page); a value is a false positive if
 * any sub-filter answers one.
 */
static double
sbf_info_read_pages(Relation rel, const SbfSharedMeta *filter,
					const SbfSharedState *state, SbfInfoTotals *t)
{
	uint8	   *block = palloc(SBF_BLOCK_BYTES);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	double		log_absent = 0.0;
	uint32		j;

	for (j = 0; j < state->nsub; j++)
	{
		const SbfSubFilter *sub = &state->sub[j];
		SbfSharedMeta meta;
		uint64		blkno;

		sbf_sub_meta(filter, sub, &meta);
		t->fpr_sum = 0.0;
		for (blkno = sub->first; blkno < (uint64) sub->first + sub->pages; blkno++)
		{
			CHECK_FOR_INTERRUPTS();
			if (sbf_read_block(rel, &meta, (BlockNumber) blkno, block, strategy,
							   &t->uncommitted))
			{
				t->pages_written++;
				sbf_info_page(&meta, block, t);
			}
		}
		log_absent += log1p(-t->fpr_sum / (double) sub->pages);
	}
	FreeAccessStrategy(strategy);
	pfree(block);
	/* 1 - product of (1 - rate), exact for tiny rates */
	return (state->nsub == 1) ? t->fpr_sum / (double) state->sub[0].pages :
		-expm1(log_absent);
}

/*
 * shared_info(filter regclass, read_pages boolean DEFAULT false) -> jsonb:
 * the parameters; a transactional filter's count of values added and its
 * sub-filters, from its metapage alone; and with read_pages, what reading
 * every page finds: set bits (bloom) or non-zero cells, the current
 * false-positive rate and, for bloom, the estimated number of distinct
 * values added.  Reading every page takes time in proportion to the
 * filter's size (minutes for tens of gigabytes, most of them never
 * written), so "how full is my filter?" is answered from page 0 unless the
 * caller asks for the pages.
 */
Datum
shared_info(PG_FUNCTION_ARGS)
{
	Relation	rel = sbf_shared_open(PG_GETARG_OID(0), AccessShareLock, ACL_SELECT);
	bool		read_pages = PG_GETARG_BOOL(1);
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfSharedState *state = palloc(sizeof(SbfSharedState));
	bool		bloom = meta.kind == SBF_SHARED_BLOOM;
	SbfInfoTotals t = {0};
	double		current_fpr = 0.0;
	uint64		pages;
	uint64		bits;
	StringInfoData buf;

	if (meta.kind == SBF_SHARED_SLIDINGBLOOM)
	{
		initStringInfo(&buf);
		sbf_sliding_info(rel, &buf, read_pages);
		relation_close(rel, NoLock);
		PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
	}
	*state = *sbf_shared_state(rel, true);
	pages = sbf_state_pages(state);
	bits = pages * meta.block_bits;
	if (read_pages)
		current_fpr = sbf_info_read_pages(rel, &meta, state, &t);

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"kind\": \"%s\", \"format_version\": %u",
					 bloom ? "bloom" : "stablebloom", (unsigned) meta.version);
	if (bloom)
		appendStringInfo(&buf, ", \"capacity\": " INT64_FORMAT ", \"bits\": " UINT64_FORMAT,
						 meta.capacity, bits);
	else
		appendStringInfo(&buf, ", \"cells\": " UINT64_FORMAT ", \"max\": %u, \"cell_bits\": %u, \"decrements\": " UINT64_FORMAT,
						 meta.cells, (unsigned) meta.max, (unsigned) meta.cell_bits,
						 meta.decrements);
	appendStringInfo(&buf, ", \"fpr\": %s, \"hashes\": %u, \"seed\": " INT64_FORMAT,
					 float8out_internal(meta.fpr), (unsigned) meta.hashes,
					 (int64) meta.seed);
	appendStringInfo(&buf, ", \"pages\": " UINT64_FORMAT, pages);
	if (read_pages)
		appendStringInfo(&buf, ", \"pages_written\": " UINT64_FORMAT, t.pages_written);
	appendStringInfo(&buf, ", \"size_bytes\": " UINT64_FORMAT ", \"logged\": %s",
					 table_block_relation_size(rel, MAIN_FORKNUM),
					 rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT ? "true" : "false");
	appendStringInfo(&buf, ", \"transactional\": %s",
					 meta.version == SBF_SHARED_LAYOUT_PENDING ? "true" : "false");
	if (sbf_meta_has_state(&meta))
	{
		int64		total_capacity = 0;
		uint32		j;

		for (j = 0; j < state->nsub; j++)
			total_capacity += state->sub[j].capacity;
		appendStringInfo(&buf, ", \"growth\": %s, \"tightening\": %s, \"subfilters\": %u",
						 float8out_internal(state->growth),
						 float8out_internal(state->tightening), state->nsub);
		appendStringInfo(&buf, ", \"adds\": " INT64_FORMAT ", \"total_capacity\": " INT64_FORMAT ", \"load\": %s, \"expected_fpr\": %s",
						 state->adds, total_capacity,
						 float8out_internal((double) state->adds / (double) total_capacity),
						 float8out_internal(sbf_state_expected_fpr(&meta, state)));
		if (read_pages)
			appendStringInfo(&buf, ", \"uncommitted_adds\": " UINT64_FORMAT, t.uncommitted);
		if (state->growth > 0.0)
		{
			appendStringInfoString(&buf, ", \"sub_filters\": [");
			for (j = 0; j < state->nsub; j++)
				appendStringInfo(&buf, "%s{\"first_page\": %u, \"pages\": %u, \"hashes\": %u, \"capacity\": " INT64_FORMAT ", \"fpr\": %s, \"adds\": " INT64_FORMAT "}",
								 j > 0 ? ", " : "", state->sub[j].first,
								 state->sub[j].pages, (unsigned) state->sub[j].hashes,
								 state->sub[j].capacity,
								 float8out_internal(state->sub[j].fpr),
								 state->sub[j].adds);
			appendStringInfoChar(&buf, ']');
		}
	}
	if (bloom && read_pages)
	{
		appendStringInfo(&buf, ", \"bits_set\": " UINT64_FORMAT ", \"fill\": %s",
						 t.nonzero, float8out_internal((double) t.nonzero / (double) bits));
		/* JSON has no infinity: a saturated page has no estimate */
		appendStringInfo(&buf, ", \"estimated_cardinality\": %s",
						 isinf(t.cardinality) ? "null" : float8out_internal(round(t.cardinality)));
	}
	else if (!bloom)
	{
		double		page_zeros = stablebloom_stable_zeros_for((int64) sbf_shared_page_cells(&meta),
															  meta.hashes,
															  (double) meta.decrements,
															  meta.max);

		if (read_pages)
			appendStringInfo(&buf, ", \"zero_cells\": " UINT64_FORMAT ", \"zero_fraction\": %s",
							 meta.cells - t.nonzero,
							 float8out_internal((double) (meta.cells - t.nonzero) / (double) meta.cells));
		appendStringInfo(&buf, ", \"stable_fpr\": %s",
						 float8out_internal(pow(1.0 - page_zeros, meta.hashes)));
	}
	if (read_pages)
		appendStringInfo(&buf, ", \"estimated_fpr\": %s",
						 float8out_internal(current_fpr));
	appendStringInfoChar(&buf, '}');
	relation_close(rel, NoLock);
	pfree(state);

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

/* Copy every block into consecutive SBF_BLOCK_BYTES of dest */
static void
sbf_snapshot_blocks(Relation rel, const SbfSharedMeta *meta, uint8 *dest)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	uint64		uncommitted = 0;
	uint64		blkno;

	for (blkno = 1; blkno <= meta->pages; blkno++)
	{
		CHECK_FOR_INTERRUPTS();
		(void) sbf_read_block(rel, meta, (BlockNumber) blkno,
							  dest + (blkno - 1) * SBF_BLOCK_BYTES, strategy, &uncommitted);
	}
	FreeAccessStrategy(strategy);
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
