/*-------------------------------------------------------------------------
 *
 * shared_page.c
 *	  Shared filters: opening a filter, its metapage and the cache of it,
 *	  and reading, extending and writing its data pages.
 *
 * Data pages are created lazily.  shared_*_create extends the relation to
 * its full size with a single write of its last block, so the blocks in
 * between are a hole in the file that reads as zeros (an all-zero page is
 * a valid page to the buffer manager: PageIsNew), and the first write of a
 * page initializes it.  A page past the end of the relation (after an OS
 * crash lost the size, on a standby whose copy is shorter, after a crash
 * reset an unlogged filter to its metapage) also reads as zeros; a writer
 * that needs one extends the relation up to it, again with one write of
 * that block and a hole before it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "access/generic_xlog.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/buf_internals.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "shared.h"

/*
 * Is the table's access method sbf_filter?  Asked by its name, not by its
 * routine (shared_am.c, which calls down into this file): an access
 * method's name is unique, and goes with the extension that made it.
 */
static bool
sbf_is_filter_am(Relation rel)
{
	return OidIsValid(rel->rd_rel->relam) &&
		rel->rd_rel->relam == get_am_oid("sbf_filter", true);
}

/*
 * Open a shared filter by OID with the given lock, after checking that the
 * current user has the given privilege on it: a role without it is refused
 * at once, before it queues for a lock behind another session (and makes
 * later lockers queue behind it), as LOCK TABLE and sieve_flush do; the
 * check is made again once the lock is held.  Then check that the relation
 * is a shared filter.
 */
Relation
sbf_shared_open(Oid relid, LOCKMODE lockmode, AclMode mode)
{
	Relation	rel;
	AclResult	aclresult;
	bool		missing = false;

	aclresult = pg_class_aclcheck_ext(relid, GetUserId(), mode, &missing);
	if (missing)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("shared filter with OID %u does not exist", relid),
				 errdetail("It may have been dropped.")));
	if (aclresult != ACLCHECK_OK)
	{
		char	   *name = get_rel_name(relid);

		aclcheck_error(aclresult, OBJECT_TABLE, name ? name : "?");
	}

	rel = try_relation_open(relid, lockmode);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("shared filter with OID %u does not exist", relid),
				 errdetail("It may have been dropped.")));
	/* again under the lock: a REVOKE may have committed while it waited */
	aclresult = pg_class_aclcheck(relid, GetUserId(), mode);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, RelationGetRelationName(rel));
	if (rel->rd_rel->relkind != RELKIND_RELATION || !sbf_is_filter_am(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a shared filter", RelationGetRelationName(rel)),
				 errdetail("A shared filter is a table of access method sbf_filter, made by shared_bloom_create or shared_stablebloom_create.")));
	/* its pages are in the local buffers of the session that made it */
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
	sbf_shared_check_recovery(rel);
	return rel;
}

/*
 * An unlogged filter has no pages on a standby (nor during recovery): say
 * so as the planner does for any unlogged table, rather than fail to open
 * a file.
 */
void
sbf_shared_check_recovery(Relation rel)
{
	if (!RelationNeedsWAL(rel) && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary or unlogged relations during recovery")));
}

/*
 * A shared filter's table has exactly the columns (page bigint, data
 * bytea): its rows are its pages.  Checked when the table is made and
 * whenever it is scanned or written, since ALTER TABLE can add columns.
 * Dropped columns are allowed anywhere (ALTER TABLE ... DROP COLUMN of a
 * column added by mistake must give the filter back); *page_att and
 * *data_att, when given, are set to the two columns' indexes in the tuple
 * descriptor.
 */
void
sbf_shared_check_relation(Relation rel, int *page_att, int *data_att)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			live[2];
	int			nlive = 0;
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		if (TupleDescAttr(desc, i)->attisdropped)
			continue;
		if (nlive < 2)
			live[nlive] = i;
		nlive++;
	}
	if (nlive != 2 ||
		TupleDescAttr(desc, live[0])->atttypid != INT8OID ||
		TupleDescAttr(desc, live[1])->atttypid != BYTEAOID)
	{
		/* name the columns, not the table: a rewrite's is a transient one */
		StringInfoData columns;

		initStringInfo(&columns);
		for (i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (att->attisdropped)
				continue;
			appendStringInfo(&columns, "%s%s %s", columns.len > 0 ? ", " : "",
							 quote_identifier(NameStr(att->attname)),
							 format_type_be(att->atttypid));
		}
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a table of access method sbf_filter must have exactly the columns (page bigint, data bytea)"),
				 errdetail("The table has the columns (%s).", columns.data),
				 errhint("Make shared filters with shared_bloom_create or shared_stablebloom_create; drop any column added to one.")));
	}
	if (page_att != NULL)
		*page_att = live[0];
	if (data_att != NULL)
		*data_att = live[1];
}

/*
 * Does the relation have its metapage?  An empty relation (after TRUNCATE,
 * or CREATE TABLE ... USING sbf_filter) has none; nor has one whose block 0
 * was never written: a restore of page 0 interrupted by a crash extends
 * the relation, but the WAL record of its metapage may be lost.
 */
bool
sbf_shared_has_meta(Relation rel)
{
	Buffer		buf;
	bool		isnew;

	if (RelationGetNumberOfBlocks(rel) == 0)
		return false;
	buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	isnew = PageIsNew(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	return !isnew;
}

/*
 * The state of a metapage of the layouts without one: the filter's one
 * sub-filter, as its parameters give it
 */
static void
sbf_state_of_meta(const SbfSharedMeta *meta, SbfSharedState *state)
{
	sbf_state_init(state, meta, 0.0, 0.0);
}

/* Read and check the metapage and its state */
static void
sbf_shared_load_meta(Relation rel, SbfSharedMeta *meta, SbfSharedState *state,
					 SbfSlidingState *sliding)
{
	bool		has_state = false;
	bool		has_sliding = false;

	Buffer		buf;
	Page		page;
	bool		isnew;

	if (RelationGetNumberOfBlocks(rel) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared filter \"%s\" has no metapage", RelationGetRelationName(rel)),
				 errdetail("Its storage is empty, as after TRUNCATE or CREATE TABLE ... USING sbf_filter."),
				 errhint("shared_reset empties a filter and keeps its parameters, where TRUNCATE loses them. Make shared filters with shared_bloom_create or shared_stablebloom_create, or restore one with COPY FROM starting with its page 0.")));

	buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	isnew = PageIsNew(page);
	if (!isnew)
	{
		sbf_shared_check_page(rel, NULL, page, SBF_METAPAGE_BLKNO);
		memcpy(meta, PageGetContents(page), sizeof(SbfSharedMeta));
		has_state = ((PageHeader) page)->pd_lower !=
			MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfSharedMeta);
		if (has_state)
			memcpy(state, sbf_meta_page_state(page), sizeof(SbfSharedState));
		has_sliding = ((PageHeader) page)->pd_lower ==
			MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfSharedMeta) +
			sizeof(SbfSharedState) + sizeof(SbfSlidingState);
		if (has_sliding)
			memcpy(sliding, sbf_meta_page_sliding(page), sizeof(SbfSlidingState));
		else
			memset(sliding, 0, sizeof(SbfSlidingState));
	}
	UnlockReleaseBuffer(buf);

	if (isnew)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared filter \"%s\" has no metapage", RelationGetRelationName(rel)),
				 errdetail("Its page 0 was never written, as after a crash during a restore of page 0."),
				 errhint("Make shared filters with shared_bloom_create or shared_stablebloom_create, or restore one with COPY FROM starting with its page 0.")));
	sbf_shared_validate_meta(meta, ERRCODE_DATA_CORRUPTED, RelationGetRelationName(rel));
	if (has_state != sbf_meta_has_state(meta))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid metapage in shared filter \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("A metapage of format version %u %s a state.",
						   (unsigned) meta->version,
						   has_state ? "has no" : "must have")));
	if (has_sliding != (meta->version == SBF_SHARED_LAYOUT_STAMPED))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid metapage in shared filter \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("A metapage of format version %u %s a clock.",
						   (unsigned) meta->version,
						   has_sliding ? "has no" : "must have")));
	if (has_state)
		sbf_shared_validate_state(meta, state, ERRCODE_DATA_CORRUPTED,
								  RelationGetRelationName(rel));
	else
		sbf_state_of_meta(meta, state);
	if (has_sliding)
		sbf_sliding_validate(meta, sliding, ERRCODE_DATA_CORRUPTED,
							 RelationGetRelationName(rel));
}

static SbfSharedCache *
sbf_shared_cache(Relation rel)
{
	if (rel->rd_amcache == NULL)
	{
		SbfSharedMeta meta;
		SbfSharedState *state = palloc(sizeof(SbfSharedState));
		SbfSlidingState sliding;
		SbfSharedCache *cache;
		uint32		nrecent = 0;

		sbf_shared_load_meta(rel, &meta, state, &sliding);
		sbf_shared_repair_init_fork(rel, &meta, state, &sliding);
		if (!RelationUsesLocalBuffers(rel))
			nrecent = (uint32) Min(pg_nextpower2_64(sbf_state_pages(state) + 1),
								   SBF_RECENT_MAX);
		cache = MemoryContextAllocZero(CacheMemoryContext,
									   offsetof(SbfSharedCache, recent) +
									   nrecent * sizeof(Buffer));
		cache->meta = meta;
		cache->state = *state;
		cache->sliding = sliding;
		pfree(state);
		cache->nblocks = RelationGetNumberOfBlocks(rel);
		cache->nrecent = nrecent;
		rel->rd_amcache = cache;
	}
	return (SbfSharedCache *) rel->rd_amcache;
}

/*
 * The metapage's fields, from the cache.  The pointer is valid until the
 * next relcache invalidation: callers copy what they keep across lock
 * acquisitions.
 */
const SbfSharedMeta *
sbf_shared_meta(Relation rel)
{
	return &sbf_shared_cache(rel)->meta;
}

/*
 * The filter's state (its count and sub-filters), from the cache.  With
 * refresh, a growing filter's is read again from its metapage first, so
 * that every sub-filter made until now is in it: whoever tests or adds
 * values asks so once per call.  (A filter of fixed size never changes its
 * one sub-filter: its count is only read by shared_info, which refreshes.)
 * The pointer is valid until the next relcache invalidation or refresh.
 */
const SbfSharedState *
sbf_shared_state(Relation rel, bool refresh)
{
	SbfSharedCache *cache = sbf_shared_cache(rel);

	if (refresh && sbf_meta_has_state(&cache->meta))
	{
		Buffer		buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
		Page		page = BufferGetPage(buf);
		SbfSharedState *state;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		sbf_shared_check_page(rel, NULL, page, SBF_METAPAGE_BLKNO);
		state = sbf_meta_page_state(page);
		/* sub-filters are only ever appended: copy what is new */
		if (state->nsub >= 1 && state->nsub <= SBF_MAX_SUBFILTERS &&
			state->nsub >= cache->state.nsub)
		{
			memcpy(&cache->state, state,
				   offsetof(SbfSharedState, sub) + state->nsub * sizeof(SbfSubFilter));
			/* (the clock only moves forwards; the rest never changes) */
			if (cache->meta.version == SBF_SHARED_LAYOUT_STAMPED)
				cache->sliding.clock = Max(cache->sliding.clock,
										   sbf_meta_page_sliding(page)->clock);
			UnlockReleaseBuffer(buf);
			if (cache->state.nsub > 1)
				sbf_shared_validate_state(&cache->meta, &cache->state,
										  ERRCODE_DATA_CORRUPTED,
										  RelationGetRelationName(rel));
		}
		else
		{
			UnlockReleaseBuffer(buf);
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid metapage in shared filter \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("It has %u sub-filters, where %u were seen before.",
							   state->nsub, cache->state.nsub)));
		}
	}
	return &cache->state;
}

/* Is blkno below the end of the relation (asking the kernel only when not) */
bool
sbf_shared_block_exists(Relation rel, BlockNumber blkno)
{
	SbfSharedCache *cache = sbf_shared_cache(rel);

	if (blkno < cache->nblocks)
		return true;
	cache->nblocks = RelationGetNumberOfBlocks(rel);
	return blkno < cache->nblocks;
}

/*
 * A data page to read, pinned (not locked), or InvalidBuffer when it lies
 * past the end of the relation: then it is all zeros.  Whoever reads every
 * page passes a bulk-read strategy, so as not to fill shared buffers.
 */
Buffer
sbf_shared_read(Relation rel, BlockNumber blkno, BufferAccessStrategy strategy)
{
	if (!sbf_shared_block_exists(rel, blkno))
		return InvalidBuffer;
	return ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
}

/*
 * A data page to write, pinned (not locked): past the end of the relation,
 * extend the relation up to it first, under the relation extension lock,
 * by writing only that block (the blocks before it are a hole).  The new
 * page is all zeros; the caller initializes it (PageIsNew) and so logs a
 * full-page image, which lets redo recreate it on a standby.
 */
Buffer
sbf_shared_read_extend(Relation rel, BlockNumber blkno)
{
	if (!sbf_shared_block_exists(rel, blkno))
	{
		PGAlignedBlock zero;

		memset(zero.data, 0, BLCKSZ);
		LockRelationForExtension(rel, ExclusiveLock);
		if (blkno >= RelationGetNumberOfBlocks(rel))
			smgrextend(RelationGetSmgr(rel), MAIN_FORKNUM, blkno, zero.data, false);
		UnlockRelationForExtension(rel, ExclusiveLock);
		sbf_shared_cache(rel)->nblocks = RelationGetNumberOfBlocks(rel);
	}
	return ReadBuffer(rel, blkno);
}

/*
 * A data page to write, pinned (not locked), as sbf_shared_read_extend: in
 * the buffer it was last found in when that still holds it, which spares
 * the buffer mapping table's lookup and its partition lock.
 */
Buffer
sbf_shared_pin(Relation rel, BlockNumber blkno)
{
	SbfSharedCache *cache = sbf_shared_cache(rel);
	Buffer	   *slot;
	Buffer		buf;

	if (cache->nrecent == 0)
		return sbf_shared_read_extend(rel, blkno);
	slot = &cache->recent[blkno & (cache->nrecent - 1)];
	if (*slot != InvalidBuffer &&
		ReadRecentBuffer(RelationFileLocator(rel), MAIN_FORKNUM, blkno, *slot))
		return *slot;
	buf = sbf_shared_read_extend(rel, blkno);
	/* (sbf_shared_read_extend keeps the cache: it takes no heavyweight lock) */
	*slot = buf;
	return buf;
}

/*
 * MarkBufferDirty, skipped when the buffer is dirty already, as core's
 * MarkBufferDirtyHint skips it: the caller holds the buffer's content lock
 * exclusively, so no write of the buffer is under way (a write holds it
 * shared, and clears BM_JUST_DIRTIED when it starts), and the next write
 * will see the change.  A large filter's pages stay dirty between
 * checkpoints, so this spares an atomic operation on the descriptor for
 * nearly every page an add changes.
 */
void
sbf_mark_dirty(Buffer buf)
{
#ifdef BM_JUST_DIRTIED
	if (!BufferIsLocal(buf))
	{
		uint32		dirty = BM_DIRTY | BM_JUST_DIRTIED;

		if ((pg_atomic_read_u32(&GetBufferDescriptor(buf - 1)->state) & dirty) == dirty)
			return;
	}
#endif
	MarkBufferDirty(buf);
}

/*
 * A data page to write, as sbf_shared_pin, locked exclusively and checked
 * unless it is new (all zeros: its writer initializes it); returns whether
 * it is new.
 */
bool
sbf_shared_lock_for_write(Relation rel, const SbfSharedMeta *meta,
						  BlockNumber blkno, Buffer *buf)
{
	bool		isnew;

	*buf = sbf_shared_pin(rel, blkno);
	LockBuffer(*buf, BUFFER_LOCK_EXCLUSIVE);
	isnew = PageIsNew(BufferGetPage(*buf));
	if (!isnew)
		sbf_shared_check_page(rel, meta, BufferGetPage(*buf), blkno);
	return isnew;
}

/*
 * A data page to test, pinned (not locked), as sbf_shared_read without a
 * strategy, or InvalidBuffer past the end of the relation: through the
 * buffer it was last found in, as sbf_shared_pin (a growing filter's adder
 * tests a value in several sub-filters' pages).
 */
Buffer
sbf_shared_pin_existing(Relation rel, BlockNumber blkno)
{
	SbfSharedCache *cache = sbf_shared_cache(rel);
	Buffer	   *slot;

	if (!sbf_shared_block_exists(rel, blkno))
		return InvalidBuffer;
	if (cache->nrecent == 0)
		return ReadBuffer(rel, blkno);
	slot = &cache->recent[blkno & (cache->nrecent - 1)];
	if (*slot != InvalidBuffer &&
		ReadRecentBuffer(RelationFileLocator(rel), MAIN_FORKNUM, blkno, *slot))
		return *slot;
	*slot = ReadBuffer(rel, blkno);
	return *slot;
}

/*
 * Ask the CPU for what adding the element to page blkno will read: the
 * buffer's descriptor (pin and lock), the page's header (its check) and,
 * in the line layout, the element's line; a page whose buffer is not known
 * is not prefetched.  A batch calls this some pages ahead of the one it
 * works on, so that their cache misses overlap instead of following each
 * other.  Prefetching reads nothing that could fault: the addresses are
 * those of shared buffers, whatever page they now hold.
 */
static void
sbf_shared_prefetch_slot(Relation rel, BlockNumber blkno)
{
	SbfSharedCache *cache = (SbfSharedCache *) rel->rd_amcache;

	if (cache != NULL && cache->nrecent > 0)
		sbf_prefetch(&cache->recent[blkno & (cache->nrecent - 1)]);
}

static void
sbf_shared_prefetch(Relation rel, const SbfSharedMeta *meta, BlockNumber blkno,
					SbfHash hash)
{
	SbfSharedCache *cache = (SbfSharedCache *) rel->rd_amcache;
	Buffer		buf;
	char	   *page;

	if (cache == NULL || cache->nrecent == 0)
		return;
	buf = cache->recent[blkno & (cache->nrecent - 1)];
	if (buf == InvalidBuffer)
		return;
	page = (char *) BufferGetBlock(buf);
	sbf_prefetch(GetBufferDescriptor(buf - 1));
	sbf_prefetch(page);
	if (meta->version == SBF_SHARED_LAYOUT_LINES)
		sbf_prefetch(sbf_line_words((uint8 *) page + SBF_LINES_BLOCK_OFFSET, hash));
	else if (meta->version == SBF_SHARED_LAYOUT_PENDING)
	{
		sbf_prefetch(sbf_state_line_words((uint8 *) page + SBF_LINES_BLOCK_OFFSET,
										  sbf_line_state(hash)));
		/* the first pending adds, which the add reads and appends to */
		sbf_prefetch((char *) page + SBF_PENDING_START);
	}
	else if (meta->version == SBF_SHARED_LAYOUT_STAMPED)
	{
		/* a sliding filter's k cells, anywhere in the page */
		uint8	   *cells = (uint8 *) page + SBF_LINES_BLOCK_OFFSET + sizeof(SbfStampedPage);
		uint64		span = sbf_shared_page_cells(meta);
		SbfProbe	probe;
		int			i;

		sbf_prefetch(page + SBF_LINES_BLOCK_OFFSET);
		sbf_probe_init(&probe, hash);
		for (i = 0; i < meta->hashes; i++)
			sbf_prefetch(cells + sbf_probe_next(&probe, span) * (meta->cell_bits / 8));
	}
}

/*
 * Sort the n items of a batch by page (0-based within pages), stably: the
 * items of a page keep the order they had (batch_sort.h, with scratch from
 * palloc)
 */
void
sbf_shared_sort_by_page(SbfBatchItem *items, int n, uint64 pages)
{
	uint64		buckets = pg_nextpower2_64((uint64) n);
	int		   *start = palloc((buckets + 1) * sizeof(int));
	SbfBatchItem *sorted = palloc(n * sizeof(SbfBatchItem));

	sbf_batch_sort(items, n, pages, sorted, start, buckets);
	pfree(sorted);
	pfree(start);
}

/*
 * In the pending layout, ask the CPU for the lines that adding to page
 * blkno will fold its pending adds into: a steady stream of transactions
 * leaves one or two on each page, each in a line of its own, which the
 * next add reads and writes.  A batch calls this a few pages ahead, once
 * sbf_shared_prefetch has brought the page's header and first pending adds
 * in.  The page is read without its lock, so what it finds may be changing
 * under it: only the lines of the page itself are ever prefetched, and
 * nothing read is used for anything else.
 */
static void
sbf_shared_prefetch_folds(Relation rel, const SbfSharedMeta *meta,
						  BlockNumber blkno)
{
	SbfSharedCache *cache = (SbfSharedCache *) rel->rd_amcache;
	volatile PageHeaderData *header;
	const volatile SbfPendingAdd *adds;
	Buffer		buf;
	int			n;
	int			i;

	if (cache == NULL || cache->nrecent == 0 ||
		meta->version != SBF_SHARED_LAYOUT_PENDING)
		return;
	buf = cache->recent[blkno & (cache->nrecent - 1)];
	if (buf == InvalidBuffer)
		return;
	header = (volatile PageHeaderData *) BufferGetBlock(buf);
	adds = (const volatile SbfPendingAdd *) ((char *) header + SBF_PENDING_START);
	n = ((int) header->pd_lower - SBF_PENDING_START) / SBF_PENDING_BYTES;
	/* the first few: the ones in the line already brought in, and the next */
	n = Min(n, (2 * SBF_LINE_BYTES) / SBF_PENDING_BYTES);
	for (i = 0; i < n; i++)
	{
		uint64		state = ((uint64) adds[i].state_hi << 32) | adds[i].state_lo;

		sbf_prefetch((char *) header + SBF_LINES_BLOCK_OFFSET +
					 sbf_line_of_state(state, SBF_PENDING_LINES) * SBF_LINE_BYTES);
	}
}

/*
 * Before a batch works on its items up to end (sorted by page), ask the
 * CPU for what the next ones will read: their pages' buffers, headers and
 * lines (sbf_shared_prefetch) SBF_PREFETCH_DISTANCE items ahead and more,
 * the entries of the recent-buffer cache that tell where those are another
 * SBF_PREFETCH_DISTANCE ahead (so that no prefetch waits on a load), and in
 * the pending layout the lines that adding will fold into, read from
 * headers prefetched earlier (sbf_shared_prefetch_folds).
 *
 * Pages are prefetched in bursts: when fewer than half the distance are
 * left ahead, up to one and a half distances ahead.  Profiles of a 1 GB
 * filter showed adds waiting just after the prefetch of a page's header,
 * not at their own loads: on a page of a large filter the prefetch misses
 * the TLB (a nested walk in a virtual machine), and the work between two
 * prefetches, atomic operations on buffer descriptors, does not run past
 * it.  One prefetch per item made every add wait for one page; in a burst
 * the pages are asked for together and one wait covers several (1 GB,
 * unlogged, batches of 1,000 new URLs: 453 ns a URL net before, 317 after,
 * medians of five alternations; bursts of 2 to 16 pages measured alike).
 */
void
sbf_shared_prefetch_ahead(Relation rel, const SbfSharedMeta *meta,
						  const SbfBatchItem *items, int n, int end,
						  SbfPrefetchAhead *ahead)
{
	if (ahead->pages < Min(n, end + SBF_PREFETCH_DISTANCE / 2))
	{
		int			to = Min(n, end + SBF_PREFETCH_DISTANCE + SBF_PREFETCH_DISTANCE / 2);

		for (; ahead->slots < Min(n, to + SBF_PREFETCH_DISTANCE); ahead->slots++)
			sbf_shared_prefetch_slot(rel, items[ahead->slots].page);
		for (; ahead->pages < to; ahead->pages++)
			sbf_shared_prefetch(rel, meta, items[ahead->pages].page,
								items[ahead->pages].hash);
	}
	/* (pages prefetched at least a quarter of the distance earlier) */
	if (meta->version == SBF_SHARED_LAYOUT_PENDING)
		for (; ahead->folds < Min(n, end + SBF_PREFETCH_DISTANCE / 4); ahead->folds++)
			sbf_shared_prefetch_folds(rel, meta, items[ahead->folds].page);
}

/*
 * A sliding filter's window and clock, from the cache; with refresh, the
 * clock read again from the metapage first
 */
const SbfSlidingState *
sbf_shared_sliding(Relation rel, bool refresh)
{
	SbfSharedCache *cache = sbf_shared_cache(rel);

	if (refresh && cache->meta.version == SBF_SHARED_LAYOUT_STAMPED)
		(void) sbf_shared_state(rel, true);
	return &cache->sliding;
}

/*
 * Fill a data page never written with a block and PRNG state (restoring a
 * dump, copying a filter), logged as a full-page image when the relation
 * is WAL-logged.  A written page is never overwritten: INSERT on the table
 * cannot take values out of a filter.
 */
void
sbf_shared_write_page(Relation rel, BlockNumber blkno, uint64 prng,
					  const uint8 *block)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	Buffer		buf = sbf_shared_read_extend(rel, blkno);
	GenericXLogState *state = NULL;
	Page		page;

	/* as for any logged change: COMMIT then flushes the WAL */
	if (RelationNeedsWAL(rel))
		(void) GetTopTransactionId();
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (!PageIsNew(BufferGetPage(buf)))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("page %u of shared filter \"%s\" is already written",
						blkno, RelationGetRelationName(rel)),
				 errdetail("Inserting rows only fills pages never written; values are added with shared_test_and_add.")));
	if (RelationNeedsWAL(rel))
	{
		state = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	}
	else
		page = BufferGetPage(buf);

	sbf_shared_page_init(page, &meta, blkno);
	/* (a stamped block is its SbfStampedPage and cells: the whole block) */
	memcpy(sbf_page_block(&meta, page), block,
		   meta.version == SBF_SHARED_LAYOUT_STAMPED ? SBF_BLOCK_BYTES :
		   sbf_layout_block_bits(meta.version) / 8);
	sbf_page_opaque(page)->prng = prng;

	if (state != NULL)
		GenericXLogFinish(state);
	else
		MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
}

/* sbf_shared_check_page found a page whose header is not a shared filter's */
void
sbf_shared_page_corrupted(Relation rel, const SbfSharedMeta *meta, Page page,
						  BlockNumber blkno)
{
	PageHeader	header = (PageHeader) page;
	Size		contents = (blkno == SBF_METAPAGE_BLKNO) ?
		sizeof(SbfSharedMeta) : SBF_BLOCK_BYTES;
	LocationIndex special = BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque));
	bool		pending = blkno != SBF_METAPAGE_BLKNO &&
		meta->version == SBF_SHARED_LAYOUT_PENDING;

	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("page %u of shared filter \"%s\" is corrupted",
					blkno, RelationGetRelationName(rel)),
			 errdetail("Its header has size and version 0x%04x, pd_lower %u, pd_upper %u and pd_special %u, not 0x%04x, %s%u, %u and %u.",
					   (unsigned) header->pd_pagesize_version,
					   (unsigned) header->pd_lower, (unsigned) header->pd_upper,
					   (unsigned) header->pd_special,
					   (unsigned) (BLCKSZ | PG_PAGE_LAYOUT_VERSION),
					   pending ? "the end of a pending add from " : "",
					   (unsigned) (pending ? SBF_PENDING_START :
								   sbf_contents_offset(meta, blkno) + contents),
					   (unsigned) special, (unsigned) special)));
}

bool
sbf_block_is_zero(const uint8 *block)
{
	return sbf_block_is_zero_from(block, 0);
}
