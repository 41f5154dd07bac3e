/*-------------------------------------------------------------------------
 *
 * shared_read.c
 *	  Shared filters: the read path of bloom and stable filters, under
 *	  shared_contains, shared_info and the snapshots (shared_functions.c):
 *	  a value tested in each sub-filter, and every page read in turn.
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
			/* (bits all set answer at once; else the page's pending adds) */
			if (meta.version == SBF_SHARED_LAYOUT_PENDING &&
				!sbf_page_test(&meta, sbf_page_block(&meta, page), hash))
			{
				SbfChain	chain;

				sbf_chain_read(rel, page, BufferGetBlockNumber(buf), false, &chain);
				found = sbf_pending_test(&meta, page, &chain,
										 sbf_line_state(hash), NULL);
				sbf_chain_release(&chain);
			}
			else
				found = sbf_page_test(&meta, sbf_page_block(&meta, page), hash);
		}
		UnlockReleaseBuffer(buf);
	}
	return found;
}

/*
 * Is the value of hash present to this session in a bloom or stable
 * filter?  Present if any sub-filter has it, the newest (the largest)
 * asked first; a growing filter's sub-filters are read from its metapage
 * each time.
 */
bool
sbf_contains_hash(Relation rel, SbfHash hash)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	const SbfSharedState *state = sbf_shared_state(rel, false);
	SbfSubFilter subs[SBF_MAX_SUBFILTERS];
	bool		found = false;
	int			j;

	if (state->growth > 0.0)
		state = sbf_shared_state(rel, true);
	j = (int) state->nsub;
	memcpy(subs, state->sub, j * sizeof(SbfSubFilter));
	while (!found && --j >= 0)
		found = sbf_contains_in(rel, &meta, &subs[j], hash);
	return found;
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
				sbf_chain_read(rel, page, blkno, false, &chain);
			*uncommitted += sbf_page_visible_block(meta, page, &chain, dest);
			sbf_chain_release(&chain);
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
 * shared_info's object for a bloom or stable filter (shared_functions.c):
 * the parameters; a transactional filter's count of values added and its
 * sub-filters, from its metapage alone; and with read_pages, what reading
 * every page finds: set bits (bloom) or non-zero cells, the current
 * false-positive rate and, for bloom, the estimated number of distinct
 * values added.  Reading every page takes time in proportion to the
 * filter's size (minutes for tens of gigabytes, most of them never
 * written), so "how full is my filter?" is answered from page 0 unless the
 * caller asks for the pages.
 */
void
sbf_info(Relation rel, StringInfo out, bool read_pages)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfSharedState *state = palloc(sizeof(SbfSharedState));
	bool		bloom = meta.kind == SBF_SHARED_BLOOM;
	SbfInfoTotals t = {0};
	double		current_fpr = 0.0;
	uint64		pages;
	uint64		bits;
	StringInfoData buf;

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
	pfree(state);
	appendBinaryStringInfo(out, buf.data, buf.len);
	pfree(buf.data);
}

/* Copy every block into consecutive SBF_BLOCK_BYTES of dest */
void
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

