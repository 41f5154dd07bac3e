/*-------------------------------------------------------------------------
 *
 * shared_meta.c
 *	  Shared filters, the bottom layer: the metapage of each kind (its
 *	  fields, a transactional filter's state and sub-filters, a sliding
 *	  filter's window and clock) as structures: their checks, a new
 *	  filter's state, the page layouts' initialization.  No buffer, no
 *	  catalog: everything else in src/shared reads pages through these.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "common/int.h"
#include "utils/builtins.h"

#include "shared.h"
#include "stablebloom.h"

/*
 * Check every field of a metapage: read from disk (ERRCODE_DATA_CORRUPTED)
 * or from a row being restored (ERRCODE_INVALID_BINARY_REPRESENTATION).
 */
void
sbf_shared_validate_meta(const SbfSharedMeta *meta, int sqlstate,
						 const char *relname)
{
#define SBF_META_INVALID(...) \
	ereport(ERROR, \
			(errcode(sqlstate), \
			 errmsg("invalid metapage in shared filter \"%s\"", relname), \
			 errdetail(__VA_ARGS__)))

	if (meta->magic != SBF_MAGIC_SHARED)
		SBF_META_INVALID("The magic number is 0x%08x, not 0x%08x.",
						 meta->magic, SBF_MAGIC_SHARED);
	if (meta->version != SBF_SHARED_LAYOUT_PAGES &&
		meta->version != SBF_SHARED_LAYOUT_LINES &&
		meta->version != SBF_SHARED_LAYOUT_PENDING &&
		meta->version != SBF_SHARED_LAYOUT_STAMPED)
		SBF_META_INVALID("The format version is %u; this version of sbf reads versions %d to %d.",
						 (unsigned) meta->version, SBF_SHARED_LAYOUT_PAGES,
						 SBF_SHARED_LAYOUT_STAMPED);
	if (meta->kind != SBF_SHARED_BLOOM && meta->kind != SBF_SHARED_STABLEBLOOM &&
		meta->kind != SBF_SHARED_SLIDINGBLOOM)
		SBF_META_INVALID("The kind is %u, none of bloom (%d), stablebloom (%d) and slidingbloom (%d).",
						 (unsigned) meta->kind, SBF_SHARED_BLOOM, SBF_SHARED_STABLEBLOOM,
						 SBF_SHARED_SLIDINGBLOOM);
	if ((meta->kind == SBF_SHARED_SLIDINGBLOOM) !=
		(meta->version == SBF_SHARED_LAYOUT_STAMPED))
		SBF_META_INVALID("The stamped layout (version %d) is that of sliding filters, and theirs only.",
						 SBF_SHARED_LAYOUT_STAMPED);
	if (meta->kind == SBF_SHARED_SLIDINGBLOOM)
	{
		sbf_sliding_validate_meta(meta, sqlstate, relname);
		return;
	}
	if (meta->version != SBF_SHARED_LAYOUT_PAGES && meta->kind != SBF_SHARED_BLOOM)
		SBF_META_INVALID("The line layouts (versions %d and %d) are for bloom filters only.",
						 SBF_SHARED_LAYOUT_LINES, SBF_SHARED_LAYOUT_PENDING);
	if (meta->hashes < 1 || meta->hashes > SBF_MAX_HASHES)
		SBF_META_INVALID("The number of hashes is %u, outside 1..%d.",
						 (unsigned) meta->hashes, SBF_MAX_HASHES);
	if (meta->max < 1 || meta->cell_bits != stablebloom_cell_bits(meta->max) ||
		(meta->kind == SBF_SHARED_BLOOM && meta->max != 1))
		SBF_META_INVALID("The max is %u and cells have %u bits.",
						 (unsigned) meta->max, (unsigned) meta->cell_bits);
	if (meta->block_bits != sbf_layout_block_bits(meta->version))
		SBF_META_INVALID("A data page holds %u bits, not " UINT64_FORMAT ".",
						 meta->block_bits, sbf_layout_block_bits(meta->version));
	if (meta->pages < 1 || meta->pages > SBF_SHARED_MAX_PAGES)
		SBF_META_INVALID("The number of data pages is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT ".",
						 meta->pages, SBF_SHARED_MAX_PAGES);
	if (meta->cells != meta->pages * sbf_shared_page_cells(meta))
		SBF_META_INVALID("The number of cells is " UINT64_FORMAT ", not " UINT64_FORMAT " pages of " UINT64_FORMAT ".",
						 meta->cells, meta->pages, sbf_shared_page_cells(meta));
	if (meta->decrements >= sbf_shared_page_cells(meta) ||
		(meta->kind == SBF_SHARED_BLOOM && meta->decrements != 0))
		SBF_META_INVALID("The number of decrements is " UINT64_FORMAT ".",
						 meta->decrements);
	if (sbf_shared_page_cells(meta) <= meta->hashes)
		SBF_META_INVALID("A page's " UINT64_FORMAT " cells do not exceed the %u hashes.",
						 sbf_shared_page_cells(meta), (unsigned) meta->hashes);
	if (meta->capacity < 1 || isnan(meta->fpr) || meta->fpr <= 0.0 || meta->fpr >= 1.0)
		SBF_META_INVALID("The capacity is " INT64_FORMAT " and the false-positive rate %g.",
						 meta->capacity, meta->fpr);
}

/*
 * A page's first seed: the filter's seed and the block number, mixed by
 * one SplitMix64 step so that neighbouring pages' sequences do not overlap
 */
static uint64
sbf_shared_page_seed(uint64 seed, BlockNumber blkno)
{
	uint64		state = seed ^ ((uint64) blkno * UINT64CONST(0xD1B54A32D192ED03));

	return splitmix64_next(&state);
}

/*
 * Initialize a page: the standard layout with the block (or the metapage's
 * fields) right after the header and pd_lower at its end (in the pending
 * layout, at the end of the lines: no pending adds), so a full-page image
 * keeps it; a data page's PRNG is seeded for the stable kind.
 */
void
sbf_shared_page_init(Page page, const SbfSharedMeta *meta, BlockNumber blkno)
{
	Size		contents = (blkno == SBF_METAPAGE_BLKNO) ?
		sizeof(SbfSharedMeta) : SBF_BLOCK_BYTES;

	Assert(blkno != SBF_METAPAGE_BLKNO || !sbf_meta_has_state(meta));

	PageInit(page, BLCKSZ, MAXALIGN(sizeof(SbfPageOpaque)));
	((PageHeader) page)->pd_lower = sbf_contents_offset(meta, blkno) + contents;
	if (blkno != SBF_METAPAGE_BLKNO && meta->version == SBF_SHARED_LAYOUT_PENDING)
		((PageHeader) page)->pd_lower = SBF_PENDING_START;	/* no pending adds */
	if (blkno == SBF_METAPAGE_BLKNO)
		memcpy(PageGetContents(page), meta, sizeof(SbfSharedMeta));
	else if (meta->kind == SBF_SHARED_STABLEBLOOM)
		sbf_page_opaque(page)->prng = sbf_shared_page_seed(meta->seed, blkno);
}

/*
 * Initialize a metapage: the filter's fields and, in a layout that has
 * one, its state after them, pd_lower at their end.
 */
void
sbf_shared_meta_page_init(Page page, const SbfSharedMeta *meta,
						  const SbfSharedState *state,
						  const SbfSlidingState *sliding)
{
	if (!sbf_meta_has_state(meta))
	{
		sbf_shared_page_init(page, meta, SBF_METAPAGE_BLKNO);
		return;
	}
	Assert(state != NULL);
	PageInit(page, BLCKSZ, MAXALIGN(sizeof(SbfPageOpaque)));
	memcpy(PageGetContents(page), meta, sizeof(SbfSharedMeta));
	memcpy(sbf_meta_page_state(page), state, sizeof(SbfSharedState));
	if (meta->version == SBF_SHARED_LAYOUT_STAMPED)
	{
		Assert(sliding != NULL);
		memcpy(sbf_meta_page_sliding(page), sliding, sizeof(SbfSlidingState));
	}
	((PageHeader) page)->pd_lower = MAXALIGN(SizeOfPageHeaderData) +
		sbf_meta_contents_size(meta);
}

/* The first sub-filter's rate: all of fpr for a filter of fixed size */
double
sbf_first_fpr(double fpr, double growth, double tightening)
{
	return growth > 0.0 ? fpr * (1.0 - tightening) : fpr;
}

/* shared_bloom_create's growth and tightening */
void
sbf_check_growth(double growth, double tightening, bool transactional)
{
	if (isnan(growth) || (growth != 0.0 && (growth < 1.0 || growth > SBF_MAX_GROWTH)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("growth must be 0 (a filter of fixed size) or between 1 and %d",
						SBF_MAX_GROWTH),
				 errdetail("The growth given was %g.", growth)));
	if (isnan(tightening) || tightening <= 0.0 || tightening >= 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tightening must be between 0 and 1 exclusive"),
				 errdetail("The tightening given was %g.", tightening)));
	if (growth > 0.0 && !transactional)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a shared filter that grows must be transactional"),
				 errdetail("Only a transactional filter's metapage counts the values added, which tells when to grow.")));
}

/*
 * A new filter's state: no value added, one sub-filter, the one its
 * parameters give (its rate tightened if it grows)
 */
void
sbf_state_init(SbfSharedState *state, const SbfSharedMeta *meta,
			   double growth, double tightening)
{
	memset(state, 0, sizeof(SbfSharedState));
	state->nsub = 1;
	state->growth = growth;
	state->tightening = growth > 0.0 ? tightening : 0.0;
	state->sub[0].first = 1;
	state->sub[0].pages = (uint32) meta->pages;
	state->sub[0].hashes = meta->hashes;
	state->sub[0].capacity = meta->capacity;
	state->sub[0].fpr = sbf_first_fpr(meta->fpr, growth, tightening);
}

/*
 * Check a state read from the metapage (ERRCODE_DATA_CORRUPTED) or from a
 * row being restored (ERRCODE_INVALID_BINARY_REPRESENTATION): what the
 * filter's pages are read with must be sound, whatever the bytes.
 */
void
sbf_shared_validate_state(const SbfSharedMeta *meta, const SbfSharedState *state,
						  int sqlstate, const char *relname)
{
	static const SbfSubFilter zero_sub;
	int64		adds = 0;
	uint32		j;

#define SBF_STATE_INVALID(...) \
	ereport(ERROR, \
			(errcode(sqlstate), \
			 errmsg("invalid metapage in shared filter \"%s\"", relname), \
			 errdetail(__VA_ARGS__)))

	if (state->nsub < 1 || state->nsub > SBF_MAX_SUBFILTERS)
		SBF_STATE_INVALID("It has %u sub-filters, outside 1..%d.",
						  state->nsub, SBF_MAX_SUBFILTERS);
	if (isnan(state->growth) || isnan(state->tightening) ||
		(state->growth == 0.0 ? state->tightening != 0.0 || state->nsub != 1 :
		 state->growth < 1.0 || state->growth > SBF_MAX_GROWTH ||
		 state->tightening <= 0.0 || state->tightening >= 1.0))
		SBF_STATE_INVALID("Its growth is %g and its tightening %g, with %u sub-filters.",
						  state->growth, state->tightening, state->nsub);
	if ((state->flags & ~SBF_STATE_OVERFLOW) != 0)
		SBF_STATE_INVALID("Its flags are 0x%x.", state->flags);
	if (state->adds < 0)
		SBF_STATE_INVALID("Its count of values added is " INT64_FORMAT ".",
						  state->adds);
	for (j = 0; j < SBF_MAX_SUBFILTERS; j++)
	{
		const SbfSubFilter *sub = &state->sub[j];
		uint32		first = (j == 0) ? 1 :
			state->sub[j - 1].first + state->sub[j - 1].pages;

		/* (overflow pages may lie between two sub-filters: format.h) */
		if (j > 0 && j < state->nsub && (state->flags & SBF_STATE_OVERFLOW) &&
			sub->first > first)
			first = sub->first;

		if (j >= state->nsub)
		{
			if (memcmp(sub, &zero_sub, sizeof(SbfSubFilter)) != 0)
				SBF_STATE_INVALID("Sub-filter %u, past the %u in use, is not zero.",
								  j + 1, state->nsub);
			continue;
		}
		if (sub->first != first || sub->pages < 1 ||
			(uint64) sub->first + sub->pages - 1 > SBF_SHARED_MAX_PAGES ||
			sub->hashes < 1 || sub->hashes > SBF_MAX_HASHES ||
			sub->zero1 != 0 || sub->zero2 != 0 ||
			sub->capacity < 1 || isnan(sub->fpr) || sub->fpr <= 0.0 ||
			sub->fpr >= 1.0 || sub->adds < 0 || pg_add_s64_overflow(adds, sub->adds, &adds))
			SBF_STATE_INVALID("Sub-filter %u has pages %u..%u, %u hashes, capacity " INT64_FORMAT ", rate %g and " INT64_FORMAT " values added.",
							  j + 1, sub->first, sub->first + sub->pages - 1,
							  (unsigned) sub->hashes, sub->capacity, sub->fpr,
							  sub->adds);
	}
	if (adds != state->adds)
		SBF_STATE_INVALID("Its sub-filters were given " INT64_FORMAT " values, and it " INT64_FORMAT ".",
						  adds, state->adds);
	if (state->sub[0].pages != meta->pages || state->sub[0].hashes != meta->hashes ||
		state->sub[0].capacity != meta->capacity ||
		state->sub[0].fpr != sbf_first_fpr(meta->fpr, state->growth, state->tightening))
		SBF_STATE_INVALID("Its first sub-filter is not the one its parameters give.");
}

/* The sub-filter of data page blkno, or -1 past the last */
int
sbf_sub_of_block(const SbfSharedState *state, BlockNumber blkno)
{
	uint32		j;

	for (j = 0; j < state->nsub; j++)
		if (blkno >= state->sub[j].first &&
			blkno - state->sub[j].first < state->sub[j].pages)
			return (int) j;
	return -1;
}

/*
 * The filter's parameters as one sub-filter has them (its pages, hashes,
 * capacity and rate), for the code that reads and changes a page, which
 * takes them from an SbfSharedMeta
 */
void
sbf_sub_meta(const SbfSharedMeta *meta, const SbfSubFilter *sub,
			 SbfSharedMeta *out)
{
	*out = *meta;
	out->pages = sub->pages;
	out->hashes = sub->hashes;
	out->cells = (uint64) sub->pages * meta->block_bits;
	out->capacity = sub->capacity;
	out->fpr = sub->fpr;
}

const char *
sbf_kind_name(int kind)
{
	switch (kind)
	{
		case SBF_SHARED_BLOOM:
			return "bloom";
		case SBF_SHARED_STABLEBLOOM:
			return "stablebloom";
		default:
			return "slidingbloom";
	}
}

/*
 * Check a sliding filter's metapage fields (called by
 * sbf_shared_validate_meta for the kind)
 */
void
sbf_sliding_validate_meta(const SbfSharedMeta *meta, int sqlstate,
						  const char *relname)
{
#define SBF_SLIDING_META_INVALID(...) \
	ereport(ERROR, \
			(errcode(sqlstate), \
			 errmsg("invalid metapage in shared filter \"%s\"", relname), \
			 errdetail(__VA_ARGS__)))

	if (meta->hashes < 1 || meta->hashes > SBF_MAX_HASHES)
		SBF_SLIDING_META_INVALID("The number of hashes is %u, outside 1..%d.",
								 (unsigned) meta->hashes, SBF_MAX_HASHES);
	if (meta->max != 0 ||
		(meta->cell_bits != 8 && meta->cell_bits != 16 && meta->cell_bits != 32))
		SBF_SLIDING_META_INVALID("The max is %u and cells have %u bits, not 0 and 8, 16 or 32.",
								 (unsigned) meta->max, (unsigned) meta->cell_bits);
	if (meta->block_bits != sbf_layout_block_bits(meta->version))
		SBF_SLIDING_META_INVALID("A data page holds %u bits, not " UINT64_FORMAT ".",
								 meta->block_bits, sbf_layout_block_bits(meta->version));
	if (meta->pages < 1 || meta->pages > SBF_SHARED_MAX_PAGES)
		SBF_SLIDING_META_INVALID("The number of data pages is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT ".",
								 meta->pages, SBF_SHARED_MAX_PAGES);
	if (meta->cells != meta->pages * sbf_shared_page_cells(meta))
		SBF_SLIDING_META_INVALID("The number of cells is " UINT64_FORMAT ", not " UINT64_FORMAT " pages of " UINT64_FORMAT ".",
								 meta->cells, meta->pages, sbf_shared_page_cells(meta));
	if (meta->decrements != 0 || sbf_shared_page_cells(meta) <= meta->hashes)
		SBF_SLIDING_META_INVALID("The number of decrements is " UINT64_FORMAT " and a page has " UINT64_FORMAT " cells for %u hashes.",
								 meta->decrements, sbf_shared_page_cells(meta),
								 (unsigned) meta->hashes);
	if (meta->capacity < 1 || isnan(meta->fpr) || meta->fpr <= 0.0 || meta->fpr >= 1.0)
		SBF_SLIDING_META_INVALID("The capacity is " INT64_FORMAT " and the false-positive rate %g.",
								 meta->capacity, meta->fpr);
}

/*
 * Check a sliding filter's window and clock: read from disk
 * (ERRCODE_DATA_CORRUPTED) or from a row being restored
 * (ERRCODE_INVALID_BINARY_REPRESENTATION).  What the pages are decoded
 * with must be sound whatever the bytes: period + 2 H <= M.
 */
void
sbf_sliding_validate(const SbfSharedMeta *meta, const SbfSlidingState *sliding,
					 int sqlstate, const char *relname)
{
	bool		time = (sliding->flags & SBF_SLIDING_TIME) != 0;
	int64		modulus = sbf_stamp_modulus(meta->cell_bits);
	bool		ok;

	ok = sliding->window >= 1 && sliding->zero == 0 &&
		(sliding->flags & ~(SBF_SLIDING_TIME | SBF_SLIDING_REFRESH)) == 0 &&
		sliding->tolerance >= 0 && sliding->tolerance <= modulus &&
		sliding->reach >= 0 && sliding->reach <= modulus &&
		sliding->period >= 1 && sliding->period <= modulus;
	if (ok && time)
		ok = sliding->unit == (sliding->window - 1) / SBF_SLIDING_TICKS + 1 &&
			sliding->reach == (sliding->window - 1) / sliding->unit + 1 &&
			sliding->tolerance_us >= 0 &&
			sliding->tolerance == (sliding->tolerance_us == 0 ? 0 :
								   (sliding->tolerance_us - 1) / sliding->unit + 1);
	else if (ok)
		ok = sliding->unit == 0 && sliding->tolerance_us == 0 &&
			sliding->reach == sliding->window - 1 && sliding->clock >= 0;
	if (ok)
		ok = sliding->period + 2 * sbf_sliding_horizon(sliding) <= modulus;
	if (!ok)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid metapage in shared filter \"%s\"", relname),
				 errdetail("Its window is " INT64_FORMAT " with flags 0x%x, unit " INT64_FORMAT ", reach " INT64_FORMAT ", tolerance " INT64_FORMAT " (" INT64_FORMAT " us), period " INT64_FORMAT " and clock " INT64_FORMAT ", for cells of %u bits.",
						   sliding->window, sliding->flags, sliding->unit,
						   sliding->reach, sliding->tolerance,
						   sliding->tolerance_us, sliding->period,
						   sliding->clock, (unsigned) meta->cell_bits)));
}

void
sbf_shared_meta_common(SbfSharedMeta *meta, int kind, int64 seed)
{
	memset(meta, 0, sizeof(SbfSharedMeta));
	meta->magic = SBF_MAGIC_SHARED;
	meta->version = SBF_SHARED_LAYOUT_PAGES;
	meta->kind = (uint16) kind;
	meta->block_bits = (uint32) SBF_BLOCK_BITS;
	meta->seed = (uint64) seed;
}
