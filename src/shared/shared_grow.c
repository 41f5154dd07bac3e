/*-------------------------------------------------------------------------
 *
 * shared_grow.c
 *	  Shared filters: the count of values added, kept in the metapage, and
 *	  filters that grow by sub-filters (Almeida, Baquero, Preguica &
 *	  Hutchison 2007, "Scalable Bloom Filters").
 *
 * A transactional filter's metapage holds its state (format.h): the values
 * added, in all and to each sub-filter, and the sub-filters themselves,
 * ranges of data pages (shared_meta.c checks them).  A filter of fixed size has one.  A
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
