/*-------------------------------------------------------------------------
 *
 * shared_grow.c
 *	  Shared filters: the count of values added, kept in the metapage, and
 *	  filters that grow by sub-filters (Almeida, Baquero, Preguica &
 *	  Hutchison 2007, "Scalable Bloom Filters").
 *
 * A transactional filter's metapage holds its state (format.h): the values
 * added, in all and to each sub-filter, and the sub-filters themselves,
 * consecutive ranges of data pages.  A filter of fixed size has one.  A
 * growing one is made with growth s and tightening r: its first sub-filter
 * is sized for its capacity at rate fpr (1 - r), and once the last one has
 * been given its capacity's values, a new one follows with s times its
 * capacity at r times its rate.  The rates then sum to less than fpr
 * (a geometric series), so the whole never exceeds the rate asked for,
 * and disk and WAL follow what was added: a sub-filter's pages are written
 * only as values land on them.
 *
 * Counting: every call that adds values adds their number to the metapage
 * once, under its exclusive lock, in one WAL record (the bytes of the state
 * it changed); the call that brings the last sub-filter to its capacity
 * appends the next one in the same record, so growth is atomic, crash-safe
 * and replayed on a standby as one change.
 *
 * Adding to a growing filter (shared_insert.c): a value is tested in every
 * sub-filter but the last, then tested and added in the last, whose page
 * is locked exclusively as for any filter.  Under that lock, before the
 * page is changed, the adder checks that the sub-filter is still the last
 * one; if the filter grew meanwhile, it lets the page go and tries again
 * with the new sub-filter.  Of two sessions adding the same value across a
 * growth, the second therefore meets the first's add (or its pending add,
 * and waits for it) in the sub-filter where the first made it: exactly one
 * is answered new.
 *
 * A filter of fixed size that passes its capacity warns, once per session
 * for each filter; so does a growing one that can grow no more (at most
 * SBF_MAX_SUBFILTERS sub-filters, and the pages a relation can have).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "access/xloginsert.h"
#include "common/int.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "shared.h"
#include "sizing.h"

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

/*
 * The sub-filter a growing filter gets after its last one, or false when
 * it can grow no more.  The classic size is checked first, with room for
 * the line layout's larger one, so that the sizing itself cannot fail.
 */
static bool
sbf_next_sub(const SbfSharedMeta *meta, const SbfSharedState *state,
			 BlockNumber nblocks, SbfSubFilter *next)
{
	const SbfSubFilter *last = &state->sub[state->nsub - 1];
	double		capacity = ceil((double) last->capacity * state->growth);
	double		fpr = last->fpr * state->tightening;
	uint64		first = Max((uint64) last->first + last->pages, (uint64) nblocks);
	double		classic;
	int			hashes;
	uint64		pages;

	if (state->nsub >= SBF_MAX_SUBFILTERS || capacity > (double) PG_INT64_MAX / 2 ||
		fpr < 1e-300)
		return false;
	classic = ceil(-capacity * log(fpr) / (M_LN2 * M_LN2) / meta->block_bits);
	if ((double) first + 8.0 * classic + 8.0 > (double) SBF_SHARED_MAX_PAGES)
		return false;
	pages = sbf_blocked_bloom_pages(meta->version, (int64) capacity, fpr, &hashes);
	if (first + pages - 1 > SBF_SHARED_MAX_PAGES)
		return false;
	memset(next, 0, sizeof(SbfSubFilter));
	next->first = (uint32) first;
	next->pages = (uint32) pages;
	next->hashes = (uint16) hashes;
	next->capacity = (int64) capacity;
	next->fpr = fpr;
	return true;
}

/* The rate expected of the values added so far, from the counts alone */
double
sbf_state_expected_fpr(const SbfSharedMeta *meta, const SbfSharedState *state)
{
	double		log_absent = 0.0;
	uint32		j;

	/* a value is a false positive if any sub-filter answers one */
	for (j = 0; j < state->nsub; j++)
		log_absent += log1p(-sbf_shared_bloom_fpr(meta->version, state->sub[j].pages,
												  state->sub[j].hashes,
												  (double) state->sub[j].adds));
	return -expm1(log_absent);
}

/* Filters this session has warned about (OIDs, in TopMemoryContext) */
static List *sbf_warned = NIL;

static void
sbf_warn_full(Relation rel, const SbfSharedMeta *meta, const SbfSharedState *state)
{
	Oid			relid = RelationGetRelid(rel);
	MemoryContext old;

	if (list_member_oid(sbf_warned, relid))
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	sbf_warned = lappend_oid(sbf_warned, relid);
	MemoryContextSwitchTo(old);

	if (state->growth == 0.0)
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shared filter \"%s\" has been given more values than its capacity",
						RelationGetRelationName(rel)),
				 errdetail("It has been given " INT64_FORMAT " values for a capacity of " INT64_FORMAT ": its expected false-positive rate is now %g, and grows with every value added (it was made for %g).",
						   state->adds, meta->capacity,
						   sbf_state_expected_fpr(meta, state), meta->fpr),
				 errhint("Make a filter that grows (shared_bloom_create(..., growth => 2)) or a larger one.")));
	else
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shared filter \"%s\" can grow no more and has been given more values than its capacity",
						RelationGetRelationName(rel)),
				 errdetail("It has %u sub-filters and has been given " INT64_FORMAT " values: its expected false-positive rate is now %g, and grows with every value added (it was made for %g).",
						   state->nsub, state->adds,
						   sbf_state_expected_fpr(meta, state), meta->fpr),
				 errhint("Make a filter with a larger capacity or growth.")));
}

/*
 * Count the values a call added, added[j] of them to sub-filter j (of the
 * nsub it knew), in the metapage, and append a sub-filter when the last
 * one has been given its capacity.  One WAL record of the state's bytes
 * that changed.  Layouts without a state count nothing.
 */
void
sbf_shared_count_adds(Relation rel, const int64 *added, int nsub)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	static PGAlignedBlock before;
	static SbfDelta delta_buffer;
	SbfDelta   *delta = &delta_buffer;
	SbfSharedState *state;
	SbfSharedState now;
	SbfSubFilter next;
	bool		grow = false;
	bool		extending = false;
	int64		total = 0;
	Buffer		buf;
	Page		page;
	Size		start;
	int			j;

	if (!sbf_meta_has_state(&meta))
		return;
	for (j = 0; j < nsub; j++)
		total += added[j];
	if (total == 0)
		return;

	buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	for (;;)
	{
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		sbf_shared_check_page(rel, NULL, page, SBF_METAPAGE_BLKNO);
		state = sbf_meta_page_state(page);
		if (state->nsub < (uint32) nsub || state->nsub > SBF_MAX_SUBFILTERS)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid metapage in shared filter \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("It has %u sub-filters, where %d were seen before.",
							   state->nsub, nsub)));
		if (extending || state->growth == 0.0 ||
			(state->flags & SBF_STATE_OVERFLOW) == 0 ||
			state->sub[state->nsub - 1].adds +
			(state->nsub == (uint32) nsub ? added[nsub - 1] : 0) <
			state->sub[state->nsub - 1].capacity)
			break;

		/*
		 * A filter with overflow pages grows past them: its next sub-filter
		 * starts at the relation's end, read under the extension lock that
		 * overflow pages are allocated under (taken before the metapage's,
		 * as their allocation takes them: shared_insert.c)
		 */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockRelationForExtension(rel, ExclusiveLock);
		extending = true;
	}

	/* the next sub-filter is sized before anything changes (it can ERROR) */
	if (state->growth > 0.0 &&
		state->sub[state->nsub - 1].adds +
		(state->nsub == (uint32) nsub ? added[nsub - 1] : 0) >=
		state->sub[state->nsub - 1].capacity)
		grow = sbf_next_sub(&meta, state,
							extending ? RelationGetNumberOfBlocks(rel) : 0, &next);

	start = (char *) state - (char *) page;
	memcpy(before.data + start, state, sizeof(SbfSharedState));
	delta->len = 0;
	START_CRIT_SECTION();
	state->adds += total;
	for (j = 0; j < nsub; j++)
		state->sub[j].adds += added[j];
	if (grow)
		state->sub[state->nsub++] = next;
	if (RelationNeedsWAL(rel))
	{
		sbf_delta_region(delta, before.data, (const char *) page,
						 start, start + sizeof(SbfSharedState));
		sbf_log_delta(buf, delta);
	}
	else
		MarkBufferDirty(buf);
	END_CRIT_SECTION();

	now = *state;
	UnlockReleaseBuffer(buf);
	if (extending)
		UnlockRelationForExtension(rel, ExclusiveLock);

	if (grow)
		ereport(DEBUG1,
				(errmsg("shared filter \"%s\" grew a sub-filter for " INT64_FORMAT " values",
						RelationGetRelationName(rel), next.capacity)));
	if (now.sub[now.nsub - 1].adds > now.sub[now.nsub - 1].capacity)
		sbf_warn_full(rel, &meta, &now);
}
