/*-------------------------------------------------------------------------
 *
 * shared_insert.c
 *	  Shared filters: the add path of bloom and stable filters, under
 *	  shared_test_and_add (shared_functions.c): values tested and added page
 *	  by page, the pending adds of transactional filters and their overflow
 *	  pages, growing filters' sub-filters, and VACUUM's fold of a page.
 *
 * Test-and-add of a value is done under the exclusive lock of its one data
 * page, so it is atomic: of many sessions adding the same value at once,
 * exactly one is answered false.  Sessions adding values of different
 * pages never wait for each other; the relation itself is only locked in
 * RowExclusiveLock, which adders share, held to the end of the transaction
 * as any table's lock is (so DROP TABLE waits for open adders).
 *
 * A batch is processed page by page: the values are sorted by page,
 * stably, and each page is locked and WAL-logged once for all its values,
 * taken in input order.  Values on different pages never interact, so the
 * answers are exactly those of adding the values one by one in input
 * order (a repeat inside the batch is answered true).
 *
 * Logged filters change their pages through generic WAL, as contrib/bloom
 * does: no shared_preload_libraries.  A page's first write is a full-page
 * image through GenericXLog; later changes are logged as the few bytes they
 * changed, in generic WAL's own record format (sbf_add_group_logged).  Like nextval(), a change assigns a
 * transaction id, so that COMMIT waits for the WAL to be flushed: what a
 * committed transaction added survives a crash.  The change is not undone
 * by ROLLBACK (a Bloom filter cannot forget), so what a rolled-back
 * transaction added may stay: only more false positives.  A bloom page
 * whose values are all present already is not changed nor logged; its WAL
 * is flushed up to the page's LSN instead, so that a value found present
 * because of another session's unflushed change is durable too.
 * Unlogged (and temporary) filters are changed without WAL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/generic_xlog.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "batch_sort.h"
#include "shared.h"

/*
 * The changes of a logged filter's pages, up to SBF_WAL_PAGES in one WAL
 * record (sbf_add_pages_logged): each page's copy of what it changes, and
 * its fragments, one buffer each per backend (not 24 kB of palloc a page)
 */
#define SBF_WAL_PAGES	MAX_GENERIC_XLOG_PAGES

static PGAlignedBlock sbf_wal_before[SBF_WAL_PAGES];
static SbfDelta sbf_wal_delta[SBF_WAL_PAGES];

/*
 * What one pass over a page did (the pending layout's adds, below; in the
 * line layout, only done)
 */
typedef struct SbfPendingPass
{
	int			done;			/* values answered */
	TransactionId wait;			/* an open transaction to wait for */
	bool		chain;			/* the page's room is full: take its chain */
	bool		extend;			/* its chain's pages are all full too */
	uint64		folded[2];		/* lines whose bits changed */
	TransactionId forget;		/* in: a folded xid older than this is
								 * cleared (VACUUM; else invalid) */
} SbfPendingPass;

StaticAssertDecl(SBF_PENDING_LINES <= 128, "SbfPendingPass.folded has 128 bits");

/* Are all values of the group present in the page (the bloom fast path)? */
static bool
sbf_group_all_present(const SbfSharedMeta *meta, Page page, bool isnew,
					  const SbfBatchItem *items, int n)
{
	int			i;

	if (meta->decrements > 0 || isnew)
		return false;
	for (i = 0; i < n; i++)
		if (!sbf_page_test(meta, sbf_page_block(meta, page), items[i].hash))
			return false;
	return true;
}

/* Add the n values to the page, in input order, writing their answers */
static void
sbf_add_to_page(Page page, const SbfSharedMeta *meta,
				const SbfBatchItem *items, int n, bool *answers)
{
	uint8	   *block = sbf_page_block(meta, page);
	SbfPageOpaque *opaque = sbf_page_opaque(page);
	int			i;

	for (i = 0; i < n; i++)
		answers[items[i].index] = sbf_page_add(meta, block, opaque, items[i].hash);
}

/*
 * Test-and-add the values of an initialized page of a logged filter, and
 * log the bytes they changed.
 *
 * GenericXLogFinish would find them by comparing the whole page byte by
 * byte, which measured as three quarters of the cost of a logged add
 * (bench/shared.sh); an add changes a few bytes, so compare 8-byte words of
 * the two regions that hold data (the block up to pd_lower, the special
 * space from pd_special) against a copy taken before, and write the record
 * generic_redo reads.  The page is changed, marked dirty and logged inside
 * one critical section, as every WAL-logged change is.
 */

/*
 * The line layout's logged add: an element changes only its line, so
 * only the lines the group touches are copied before (64 bytes each, at
 * their offsets in the page's scratch BEFORE, not the page) and compared
 * after.
 */
static void
sbf_add_lines_delta(Page page, const SbfSharedMeta *meta,
					const SbfBatchItem *items, int n, bool *answers,
					char *before, SbfDelta *delta)
{
	uint8	   *block = sbf_page_block(meta, page);
	uint64		touched[(SBF_BLOCK_LINES + 63) / 64] = {0};
	int			word;
	int			i;

	delta->len = 0;
	for (i = 0; i < n; i++)
	{
		uint64	   *words = sbf_line_words(block, items[i].hash);
		int			line = (int) sbf_line_of(items[i].hash, SBF_BLOCK_LINES);
		uint64		bit = UINT64CONST(1) << (line % 64);

		if ((touched[line / 64] & bit) == 0)
		{
			touched[line / 64] |= bit;
			memcpy(before + ((char *) words - (char *) page), words, SBF_LINE_BYTES);
		}
		answers[items[i].index] = sbf_line_probe(words, meta->hashes,
												 items[i].hash, true);
	}
	/* the touched lines only, in page order, of the SBF_BLOCK_LINES */
	for (word = 0; word < (int) lengthof(touched); word++)
	{
		uint64		lines = touched[word];

		while (lines != 0)
		{
			int			line = word * 64 + pg_rightmost_one_pos64(lines);
			Size		offset = (char *) (block + line * SBF_LINE_BYTES) - (char *) page;

			sbf_delta_region(delta, before, (const char *) page,
							 offset, offset + SBF_LINE_BYTES);
			lines &= lines - 1;
		}
	}
}

static void
sbf_add_group_logged(Buffer buf, const SbfSharedMeta *meta,
					 const SbfBatchItem *items, int n, bool *answers)
{
	Page		page = BufferGetPage(buf);
	PageHeader	header = (PageHeader) page;
	char	   *before = sbf_wal_before[0].data;
	SbfDelta   *delta = &sbf_wal_delta[0];

	memcpy(before, page, BLCKSZ);
	delta->len = 0;

	START_CRIT_SECTION();
	sbf_add_to_page(page, meta, items, n, answers);
	sbf_delta_region(delta, before, page,
					 sbf_contents_offset(meta, 1), header->pd_lower);
	sbf_delta_region(delta, before, page, header->pd_special, BLCKSZ);
	sbf_log_delta(buf, delta);
	END_CRIT_SECTION();
}

/* Append to DELTA the lines of the page that a pass folded adds into */
static void
sbf_delta_lines(SbfDelta *delta, const char *before, const char *page,
				const SbfPendingPass *pass)
{
	int			word;

	for (word = 0; word < (int) lengthof(pass->folded); word++)
	{
		uint64		lines = pass->folded[word];

		while (lines != 0)
		{
			int			line = word * 64 + pg_rightmost_one_pos64(lines);
			Size		offset = SBF_LINES_BLOCK_OFFSET + line * SBF_LINE_BYTES;

			sbf_delta_region(delta, before, page, offset, offset + SBF_LINE_BYTES);
			lines &= lines - 1;
		}
	}
}

static int	sbf_add_group_pending(SbfAddCall *call, const SbfSharedMeta *meta,
								  const SbfBatchItem *items, int n, bool *answers);
static void sbf_page_logged(Buffer buf, const SbfSharedMeta *meta,
							SbfXidStatus *status, TransactionId xid,
							const SbfBatchItem *items, int n, bool *answers,
							SbfPendingPass *pass);

/*
 * Test-and-add the n values of one page, in input order, writing their
 * answers; returns how many were answered, fewer than n only when a
 * growing filter grew (the others are then to be added to its new last
 * sub-filter).
 */
static int
sbf_add_group(SbfAddCall *call, const SbfSharedMeta *meta,
			  const SbfBatchItem *items, int n, bool *answers)
{
	Relation	rel = call->rel;
	bool		wal = RelationNeedsWAL(rel);
	Buffer		buf;
	GenericXLogState *state = NULL;
	bool		isnew;
	Page		page;
	int			i;

	if (meta->version == SBF_SHARED_LAYOUT_PENDING)
		return sbf_add_group_pending(call, meta, items, n, answers);
	isnew = sbf_shared_lock_for_write(rel, meta, items[0].page, &buf);
	if (sbf_group_all_present(meta, BufferGetPage(buf), isnew, items, n))
	{
		XLogRecPtr	lsn = wal ? PageGetLSN(BufferGetPage(buf)) : InvalidXLogRecPtr;

		UnlockReleaseBuffer(buf);

		/*
		 * The bits may come from another session's change whose WAL is not
		 * flushed yet (its transaction is still open).  This transaction
		 * takes no transaction id, so its COMMIT would not wait for that
		 * WAL: flush it now, so that what a committed transaction was told
		 * it added survives a crash.  Usually there is nothing to flush.
		 */
		if (wal)
			XLogFlush(lsn);
		for (i = 0; i < n; i++)
			answers[items[i].index] = true;
		return n;
	}

	/* about to write WAL: take a transaction id first, not under the lock */
	if (wal && !TransactionIdIsValid(GetTopTransactionIdIfAny()))
	{
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		(void) GetTopTransactionId();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	}

	if (wal && !PageIsNew(BufferGetPage(buf)))
	{
		SbfPendingPass pass = {0};

		if (meta->version == SBF_SHARED_LAYOUT_LINES)
			sbf_page_logged(buf, meta, NULL, InvalidTransactionId, items, n,
							answers, &pass);
		else
			sbf_add_group_logged(buf, meta, items, n, answers);
		UnlockReleaseBuffer(buf);
		return n;
	}

	/* a page's first write is logged whole; unlogged filters not at all */
	if (wal)
	{
		state = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	}
	else
		page = BufferGetPage(buf);

	/* (a logged page that was not new returned above) */
	if (wal || isnew)
		sbf_shared_page_init(page, meta, items[0].page);
	sbf_add_to_page(page, meta, items, n, answers);

	if (state != NULL)
		GenericXLogFinish(state);
	else
		sbf_mark_dirty(buf);
	UnlockReleaseBuffer(buf);
	return n;
}

/*
 * Is the sub-filter the call adds to still the growing filter's last?
 * Asked under the exclusive lock of the page about to be changed, from the
 * pinned metapage without its lock: the page lock's acquisition is a
 * barrier, and a session that saw the growth (under the metapage's lock)
 * and then read this page did so before this lock or sees this change.
 */
static bool
sbf_still_last(const SbfAddCall *call)
{
	volatile SbfSharedState *state;

	if (!call->growing)
		return true;
	state = sbf_meta_page_state(BufferGetPage(call->metabuf));
	return state->nsub == call->nsub;
}

/*
 * The pending layout (SBF_SHARED_LAYOUT_PENDING): transactional adds.
 *
 * Under the page's exclusive lock, its committed pending adds that every
 * snapshot sees are folded into the bits and its aborted ones dropped (a
 * committed add that a running snapshot may not see stays pending: a scan
 * under that snapshot, pg_dump's, leaves it out; shared_pending.c); then
 * each value, in input order, is present if its bits are all set or if it
 * has a pending add of this transaction (or of a committed one);
 * otherwise it gets a pending add of this transaction (the
 * subtransaction's id inside a savepoint) and is answered new.  A value
 * with a pending add of another open transaction is neither: as a
 * unique index's insertion does, the adder waits for that transaction to
 * end (XactLockTableWait, so deadlocks are detected) and tries the value
 * again.
 *
 * A page's own room holds SBF_PENDING_MAX pending adds; past it they go to
 * the page's chain of overflow pages (format.h), locked after the page and
 * read with it, and a chain whose pages are all full gets one more
 * (sbf_chain_extend), so that a transaction adds any number of values.  A
 * page whose room and chain hold no pending add is changed without
 * reading its chain.
 *
 * What can ERROR (the transactions' status in the commit log, the proc
 * array, reading the chain) is asked before the page is changed: the
 * change itself, decided from those answers, is made and logged in one
 * critical section (SbfPendingPass, above, is what a pass did).
 */

/*
 * What each of the n pending adds counts as now (outside any critical
 * section), through the session's cache (sbf_xid_cache_begin called): a
 * committed one is SBF_XID_COMMITTED_RECENT until its transaction is older
 * than every snapshot that can still be running (GlobalVisTestFor, the
 * horizon heap pruning uses: this database's snapshots, prepared
 * transactions, and the standbys' with hot_standby_feedback)
 */
static void
sbf_adds_statuses(Relation rel, const SbfPendingAdd *adds, int n,
				  SbfXidStatus *status, GlobalVisState **horizon)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		if (i > 0 && adds[i].xid == adds[i - 1].xid)
		{
			status[i] = status[i - 1];
			continue;
		}
		status[i] = sbf_xid_status_cached(adds[i].xid);
		if (status[i] != SBF_XID_COMMITTED)
			continue;
		if (*horizon == NULL)
			*horizon = GlobalVisTestFor(rel);
		if (!GlobalVisTestIsRemovableXid_compat(*horizon, adds[i].xid))
			status[i] = SBF_XID_COMMITTED_RECENT;
	}
}

/* The same for a page's own pending adds */
static void
sbf_pending_statuses(Relation rel, Page page, SbfXidStatus *status)
{
	GlobalVisState *horizon = NULL;

	sbf_adds_statuses(rel, sbf_pending_adds(page), sbf_pending_count(page),
					  status, &horizon);
}

/*
 * The statuses of a page's pending adds and of its chain's:
 * status[area][i], the chain's arrays allocated here
 */
static SbfXidStatus **
sbf_chain_statuses(Relation rel, Page page, const SbfChain *chain,
				   SbfXidStatus *own)
{
	SbfXidStatus **status = palloc(sbf_chain_areas(chain) * sizeof(SbfXidStatus *));
	GlobalVisState *horizon = NULL;
	int			a;

	status[0] = own;
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		if (a > 0)
			status[a] = palloc(SBF_OVERFLOW_MAX * sizeof(SbfXidStatus));
		sbf_adds_statuses(rel, adds, n, status[a], &horizon);
	}
	return status;
}

static void
sbf_chain_statuses_free(SbfXidStatus **status, const SbfChain *chain)
{
	int			a;

	for (a = 1; a < sbf_chain_areas(chain); a++)
		pfree(status[a]);
	pfree(status);
}

/*
 * Fold the committed pending adds of area a (of the page and its chain)
 * that every snapshot sees into the page's bits, and drop its aborted
 * ones, noting the lines changed in pass and the newest folded transaction
 * in the page's folded xid; status[a] follows the adds kept
 */
static void
sbf_pending_fold_area(const SbfSharedMeta *meta, Page page,
					  const SbfChain *chain, int a, SbfXidStatus *status,
					  SbfPendingPass *pass)
{
	Page		area = sbf_chain_area_page(page, chain, a);
	PageHeader	header = (PageHeader) area;
	uint8	   *block = sbf_page_block(meta, page);
	Size		start = (a == 0) ? SBF_PENDING_START : SBF_OVERFLOW_START;
	TransactionId folded = sbf_page_folded_xid(page);
	int			count;
	SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &count);
	int			kept = 0;
	int			i;

	if (TransactionIdIsValid(folded) && TransactionIdIsValid(pass->forget) &&
		TransactionIdPrecedes(folded, pass->forget))
		folded = InvalidTransactionId;
	for (i = 0; i < count; i++)
	{
		uint64		state = sbf_pending_state(&adds[i]);

		if (status[i] == SBF_XID_COMMITTED)
		{
			int			line = (int) sbf_line_of_state(state, SBF_PENDING_LINES);

			(void) sbf_line_probe_state(sbf_state_line_words(block, state),
										meta->hashes, state, true);
			pass->folded[line / 64] |= UINT64CONST(1) << (line % 64);
			if (!TransactionIdIsValid(folded) ||
				TransactionIdFollows(adds[i].xid, folded))
				folded = adds[i].xid;
		}
		else if (status[i] != SBF_XID_ABORTED)
		{
			adds[kept] = adds[i];
			status[kept] = status[i];
			kept++;
		}
	}
	sbf_page_set_folded_xid(page, folded);
	/* what the adds no longer use is the page's hole, zero */
	if (start + kept * SBF_PENDING_BYTES < header->pd_lower)
		memset((char *) area + start + kept * SBF_PENDING_BYTES, 0,
			   header->pd_lower - (start + kept * SBF_PENDING_BYTES));
	header->pd_lower = start + kept * SBF_PENDING_BYTES;
}

/*
 * A pass over a page with a chain answers each value from an index built
 * once for the pass, not by reading every pending add for each value (a
 * transaction adding many times a page's room would otherwise cost the
 * square of its adds to the page): each line's bits with the pending adds
 * this session counts as present set in them, and the states of other
 * transactions' open adds, hashed.  Allocated before the critical
 * section, for as many adds as the page and its chain hold.
 */
typedef struct SbfPassIndex
{
	uint64		words[SBF_PENDING_LINES][SBF_LINE_WORDS];
	uint32		mask;			/* slots - 1, a power of two minus one */
	uint64	   *states;			/* open adds' states, 0 for an empty slot */
	TransactionId *xids;		/* and their transactions */
	bool		has_zero;		/* an open add has state 0 */
	TransactionId zero_xid;
} SbfPassIndex;

static SbfPassIndex *
sbf_pass_index_alloc(Page page, const SbfChain *chain, SbfXidStatus **status)
{
	SbfPassIndex *index = palloc(sizeof(SbfPassIndex));
	uint64		adds = 0;
	uint64		slots;
	int			a;
	int			i;

	/* (the hash holds other transactions' open adds: usually few) */
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;

		(void) sbf_chain_area_adds(page, chain, a, &n);
		for (i = 0; i < n; i++)
			adds += status[a][i] == SBF_XID_IN_PROGRESS;
	}
	slots = pg_nextpower2_64(2 * adds + 2);
	index->mask = (uint32) (slots - 1);
	index->states = palloc(slots * sizeof(uint64));
	index->xids = palloc(slots * sizeof(TransactionId));
	return index;
}

static void
sbf_pass_index_free(SbfPassIndex *index)
{
	if (index == NULL)
		return;
	pfree(index->states);
	pfree(index->xids);
	pfree(index);
}

static inline uint32
sbf_pass_index_slot(const SbfPassIndex *index, uint64 state)
{
	return (uint32) ((state * UINT64CONST(0x9E3779B97F4A7C15)) >> 32) & index->mask;
}

/*
 * The index of the pending adds of a page and its chain, their statuses
 * given (no ERROR, no palloc): after a pass's fold, or for a test; only
 * the adds of the lines of the n items are read into it
 */
static void
sbf_pass_index_build(const SbfSharedMeta *meta, Page page,
					 const SbfChain *chain, SbfXidStatus **status,
					 const SbfBatchItem *items, int nitems,
					 SbfPassIndex *index)
{
	uint64		lines[2] = {0};
	int			a;
	int			i;

	/* only the lines of the items are asked: only their adds are indexed */
	for (i = 0; i < nitems; i++)
	{
		int			line = (int) sbf_line_of_state(sbf_line_state(items[i].hash),
												   SBF_PENDING_LINES);

		lines[line / 64] |= UINT64CONST(1) << (line % 64);
	}
	memcpy(index->words, sbf_page_block(meta, page), sizeof(index->words));
	memset(index->states, 0, ((Size) index->mask + 1) * sizeof(uint64));
	index->has_zero = false;
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		for (i = 0; i < n; i++)
		{
			uint64		state = sbf_pending_state(&adds[i]);
			int			line = (int) sbf_line_of_state(state, SBF_PENDING_LINES);
			uint32		slot;

			if ((lines[line / 64] & (UINT64CONST(1) << (line % 64))) == 0 ||
				status[a][i] == SBF_XID_ABORTED)
				continue;
			if (status[a][i] != SBF_XID_IN_PROGRESS)
			{
				(void) sbf_line_probe_state(index->words[line], meta->hashes,
											state, true);
				continue;
			}
			if (state == 0)
			{
				index->has_zero = true;
				index->zero_xid = adds[i].xid;
				continue;
			}
			for (slot = sbf_pass_index_slot(index, state);
				 index->states[slot] != 0 && index->states[slot] != state;
				 slot = (slot + 1) & index->mask)
				;
			index->states[slot] = state;
			index->xids[slot] = adds[i].xid;
		}
	}
}

/* Another transaction's open add of the state, or InvalidTransactionId */
static TransactionId
sbf_pass_index_open(const SbfPassIndex *index, uint64 state)
{
	uint32		slot;

	if (state == 0)
		return index->has_zero ? index->zero_xid : InvalidTransactionId;
	for (slot = sbf_pass_index_slot(index, state); index->states[slot] != 0;
		 slot = (slot + 1) & index->mask)
		if (index->states[slot] == state)
			return index->xids[slot];
	return InvalidTransactionId;
}

/*
 * The area (of the page and its chain) where one more pending add goes:
 * the page's own room first, then the first overflow page with room; -1
 * when all are full
 */
static int
sbf_pending_room(Page page, const SbfChain *chain)
{
	int			a;

	if (sbf_pending_count(page) < SBF_PENDING_MAX)
		return 0;
	for (a = 1; a < sbf_chain_areas(chain); a++)
		if (sbf_overflow_count(sbf_chain_area_page(page, chain, a)) < SBF_OVERFLOW_MAX)
			return a;
	return -1;
}

/*
 * Fold and add on an initialized page, and on its chain when given (else
 * the page's link says its chain holds no pending add), from the statuses
 * taken under the same locks: no ERROR, no allocation, so it can run in a
 * critical section.  A pass stops at a value that must wait for an open
 * transaction, and at one that finds no room: in the page's own room
 * without its chain (pass->chain: take it), or anywhere in the chain
 * (pass->extend: give it one more page).
 */
static void
sbf_pending_pass(const SbfSharedMeta *meta, Page page, const SbfChain *chain,
				 SbfXidStatus **status, SbfPassIndex *index, TransactionId xid,
				 const SbfBatchItem *items, int n, bool *answers,
				 SbfPendingPass *pass)
{
	SbfOverflowLink *link = sbf_page_overflow_link(page);
	int			areas = sbf_chain_areas(chain);
	int			a;
	int			i;

	/* committed adds every snapshot sees become bits, aborted ones go */
	for (a = 0; a < areas; a++)
		sbf_pending_fold_area(meta, page, chain, a, status[a], pass);
	if (chain != NULL && chain->n > 0)
	{
		link->adds = 0;
		for (a = 1; a < areas; a++)
			link->adds += sbf_overflow_count(sbf_chain_area_page(page, chain, a));
	}

	if (index != NULL && n > 0)
		sbf_pass_index_build(meta, page, chain, status, items, n, index);

	for (pass->done = 0; pass->done < n; pass->done++)
	{
		const SbfBatchItem *item = &items[pass->done];
		uint64		state = sbf_line_state(item->hash);
		uint64	   *words = NULL;
		Page		target;
		SbfPendingAdd *adds;
		int			count;

		/* present with this transaction's own adds, as if already folded */
		if (index != NULL)
		{
			words = index->words[sbf_line_of_state(state, SBF_PENDING_LINES)];
			if (sbf_line_probe_state(words, meta->hashes, state, false))
			{
				answers[item->index] = true;
				continue;
			}
			pass->wait = sbf_pass_index_open(index, state);
		}
		else if (sbf_pending_test(meta, page, chain, state, status))
		{
			answers[item->index] = true;
			continue;
		}
		for (a = 0; index == NULL && a < areas && !TransactionIdIsValid(pass->wait); a++)
		{
			adds = sbf_chain_area_adds(page, chain, a, &count);
			for (i = 0; i < count; i++)
				if (sbf_pending_state(&adds[i]) == state)
				{
					/* another transaction's, still open (its own is present) */
					pass->wait = adds[i].xid;
					break;
				}
		}
		if (TransactionIdIsValid(pass->wait))
			break;
		a = sbf_pending_room(page, chain);
		if (a < 0)
		{
			if (chain == NULL)
				pass->chain = true;
			else
				pass->extend = true;
			break;
		}
		target = sbf_chain_area_page(page, chain, a);
		adds = sbf_chain_area_adds(page, chain, a, &count);
		adds[count].xid = xid;
		adds[count].state_lo = (uint32) state;
		adds[count].state_hi = (uint32) (state >> 32);
		status[a][count] = SBF_XID_OWN;
		((PageHeader) target)->pd_lower += SBF_PENDING_BYTES;
		if (a > 0)
			link->adds++;
		if (words != NULL)
			(void) sbf_line_probe_state(words, meta->hashes, state, true);
		answers[item->index] = false;
	}
}

/*
 * The same on a logged page that is not new and has no chain to read,
 * collecting in DELTA the bytes it changed: the lines it folded into, the
 * pending adds and pd_lower (BEFORE: a page's worth of scratch).  The
 * caller makes the change and logs it in one critical section.
 */
static void
sbf_pending_pass_delta(Page page, const SbfSharedMeta *meta,
					   SbfXidStatus *status, TransactionId xid,
					   const SbfBatchItem *items, int n, bool *answers,
					   SbfPendingPass *pass, char *before, SbfDelta *delta)
{
	PageHeader	header = (PageHeader) page;
	uint8	   *block = sbf_page_block(meta, page);
	const SbfPendingAdd *adds = sbf_pending_adds(page);
	int			count = sbf_pending_count(page);
	LocationIndex lower_before = header->pd_lower;
	Size		copied;
	int			i;

	/*
	 * copy what may change: the lines of committed adds, the adds, and the
	 * special space (the folded xid)
	 */
	memcpy(before + BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)),
		   (char *) page + BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)),
		   MAXALIGN(sizeof(SbfPageOpaque)));
	for (i = 0; i < count; i++)
		if (status[i] == SBF_XID_COMMITTED)
		{
			Size		offset = (char *) sbf_state_line_words(block, sbf_pending_state(&adds[i])) -
				(char *) page;

			memcpy(before + offset, (char *) page + offset, SBF_LINE_BYTES);
		}
	/*
	 * and the adds up to pd_lower (checked to be within them), with the room
	 * of the n that this pass may append: the rest of the room for adds is
	 * neither changed nor logged.  Copying all of it would read 15 lines of
	 * the page to log one or two.
	 */
	copied = Min(lower_before + n * SBF_PENDING_BYTES,
				 SBF_PENDING_START + SBF_PENDING_MAX * SBF_PENDING_BYTES);
	memcpy(before + SBF_PENDING_START, (char *) page + SBF_PENDING_START,
		   copied - SBF_PENDING_START);

	delta->len = 0;
	sbf_pending_pass(meta, page, NULL, &status, NULL, xid, items, n, answers, pass);
	sbf_delta_lines(delta, before, page, pass);
	sbf_delta_region(delta, before, (const char *) page,
					 SBF_PENDING_START, header->pd_lower);
	sbf_delta_region(delta, before, (const char *) page,
					 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)), BLCKSZ);
	if (header->pd_lower != lower_before)
		sbf_delta_append(delta, (const char *) page,
						 offsetof(PageHeaderData, pd_lower), sizeof(LocationIndex));
}

/*
 * One page's change in a logged filter of the line or the pending layout,
 * its bytes collected in DELTA (BEFORE: a page's worth of scratch), not yet
 * logged; pass->done tells how many items were answered (all, in the line
 * layout)
 */
static void
sbf_page_delta(Page page, const SbfSharedMeta *meta, SbfXidStatus *status,
			   TransactionId xid, const SbfBatchItem *items, int n,
			   bool *answers, SbfPendingPass *pass, char *before, SbfDelta *delta)
{
	if (meta->version == SBF_SHARED_LAYOUT_LINES)
	{
		sbf_add_lines_delta(page, meta, items, n, answers, before, delta);
		pass->done = n;
	}
	else
		sbf_pending_pass_delta(page, meta, status, xid, items, n, answers,
							   pass, before, delta);
}

/* The same, changed and logged alone, in one critical section */
static void
sbf_page_logged(Buffer buf, const SbfSharedMeta *meta, SbfXidStatus *status,
				TransactionId xid, const SbfBatchItem *items, int n,
				bool *answers, SbfPendingPass *pass)
{
	SbfDelta   *delta = &sbf_wal_delta[0];

	START_CRIT_SECTION();
	sbf_page_delta(BufferGetPage(buf), meta, status, xid, items, n, answers,
				   pass, sbf_wal_before[0].data, delta);
	sbf_log_deltas(&buf, &delta, 1);
	END_CRIT_SECTION();
}

/*
 * A pass over a page and its chain (locked exclusively, statuses taken),
 * changed, marked dirty and, in a logged filter, logged in one critical
 * section.  The page's change (its folded lines, its adds, its link, its
 * special space) and each overflow page's (its adds) are compared with
 * copies taken before, and logged in records of up to
 * MAX_GENERIC_XLOG_PAGES pages, the data page in the first: every prefix
 * of them leaves the page and its chain as readers may find them (a page's
 * folded adds are in its bits before they leave its chain, and a chain's
 * new adds belong to this transaction, which has not committed).
 */
static void
sbf_chain_pass(Relation rel, Buffer buf, const SbfChain *chain,
			   const SbfSharedMeta *meta, SbfXidStatus **status,
			   TransactionId xid, const SbfBatchItem *items, int n,
			   bool *answers, SbfPendingPass *pass)
{
	Page		page = BufferGetPage(buf);
	bool		wal = RelationNeedsWAL(rel);
	int			areas = sbf_chain_areas(chain);
	char	   *before = palloc(areas * (Size) BLCKSZ);
	SbfDelta  **deltas = palloc0(areas * sizeof(SbfDelta *));
	Buffer		record_bufs[MAX_GENERIC_XLOG_PAGES];
	SbfDelta   *record_deltas[MAX_GENERIC_XLOG_PAGES];
	SbfPassIndex *index;
	int			room = sbf_pending_room(page, chain);
	int			done = 0;
	int			a;

	/*
	 * a copy of what the pass may change: the data page, the overflow pages
	 * with adds to fold or drop, and those it may append to (the first with
	 * room and those after it); the others are neither compared nor logged
	 */
	for (a = 0; a < areas; a++)
	{
		bool		changes = (a == 0) || (room >= 0 && a >= room);
		int			count;
		int			i;

		(void) sbf_chain_area_adds(page, chain, a, &count);
		for (i = 0; i < count && !changes; i++)
			changes = status[a][i] == SBF_XID_COMMITTED ||
				status[a][i] == SBF_XID_ABORTED;
		if (!changes)
			continue;
		memcpy(before + a * (Size) BLCKSZ, sbf_chain_area_page(page, chain, a), BLCKSZ);
		deltas[a] = (a == 0) ? &sbf_wal_delta[0] : palloc(sizeof(SbfDelta));
		deltas[a]->len = 0;
	}
	index = (n > 0) ? sbf_pass_index_alloc(page, chain, status) : NULL;

	START_CRIT_SECTION();
	sbf_pending_pass(meta, page, chain, status, index, xid, items, n, answers, pass);
	sbf_mark_dirty(buf);
	if (wal)
	{
		sbf_delta_region(deltas[0], before, page, MAXALIGN(SizeOfPageHeaderData),
						 MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfOverflowLink));
		sbf_delta_lines(deltas[0], before, page, pass);
		sbf_delta_region(deltas[0], before, page, SBF_PENDING_START,
						 ((PageHeader) page)->pd_lower);
		sbf_delta_region(deltas[0], before, page,
						 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)), BLCKSZ);
		if (((PageHeader) page)->pd_lower != ((PageHeader) before)->pd_lower)
			sbf_delta_append(deltas[0], page, offsetof(PageHeaderData, pd_lower),
							 sizeof(LocationIndex));
		if (deltas[0]->len > 0)
		{
			record_bufs[done] = buf;
			record_deltas[done++] = deltas[0];
		}
	}

	/*
	 * the overflow pages' changes, made in their copies, are written back,
	 * each page locked exclusively only for its own record: a record holds
	 * the data page's change (the first) and up to MAX_GENERIC_XLOG_PAGES
	 * pages in all
	 */
	for (a = 1; a < areas; a++)
	{
		Page		p = sbf_chain_area_page(page, chain, a);
		char	   *b = before + a * (Size) BLCKSZ;
		Buffer		over = chain->bufs[a - 1];

		if (deltas[a] == NULL)
			continue;
		sbf_delta_region(deltas[a], b, p, SBF_OVERFLOW_START,
						 ((PageHeader) p)->pd_lower);
		if (((PageHeader) p)->pd_lower != ((PageHeader) b)->pd_lower)
			sbf_delta_append(deltas[a], p, offsetof(PageHeaderData, pd_lower),
							 sizeof(LocationIndex));
		if (deltas[a]->len == 0)
			continue;
		LockBuffer(over, BUFFER_LOCK_EXCLUSIVE);
		sbf_delta_apply(BufferGetPage(over), deltas[a]);
		if (!wal)
		{
			sbf_mark_dirty(over);
			LockBuffer(over, BUFFER_LOCK_UNLOCK);
			continue;
		}
		record_bufs[done] = over;
		record_deltas[done++] = deltas[a];
		if (done == MAX_GENERIC_XLOG_PAGES || a == areas - 1)
		{
			int			i;

			sbf_log_deltas(record_bufs, record_deltas, done);
			for (i = 0; i < done; i++)
				if (record_bufs[i] != buf)
					LockBuffer(record_bufs[i], BUFFER_LOCK_UNLOCK);
			done = 0;
		}
	}
	if (done > 0)
	{
		int			i;

		sbf_log_deltas(record_bufs, record_deltas, done);
		for (i = 0; i < done; i++)
			if (record_bufs[i] != buf)
				LockBuffer(record_bufs[i], BUFFER_LOCK_UNLOCK);
	}
	END_CRIT_SECTION();
	sbf_pass_index_free(index);
	for (a = 1; a < areas; a++)
		if (deltas[a] != NULL)
			pfree(deltas[a]);
	pfree(before);
	pfree(deltas);
}

/*
 * Give data page blkno's chain one more overflow page, at its end.  The
 * page is allocated under the relation extension lock, past the data pages
 * of every sub-filter (a growing filter's next one starts past it:
 * shared_grow.c) and past the relation's end, and written whole; a filter
 * made before overflow pages existed is marked as having them first.  It
 * is then linked, under the data page's lock and its chain's.  No lock of
 * a data page is held while the extension lock is waited for.  A crash
 * between the two leaves the page unlinked: never read, and left behind
 * by VACUUM FULL.
 */
static void
sbf_chain_extend(Relation rel, const SbfSharedMeta *meta, BlockNumber blkno)
{
	bool		wal = RelationNeedsWAL(rel);
	Buffer		metabuf;
	Buffer		buf;
	Page		page;
	SbfSharedState *state;
	BlockNumber newblk;
	GenericXLogState *xlog = NULL;
	PGAlignedBlock zero;
	SbfChain	chain;
	SbfOverflowHeader *over;

	LockRelationForExtension(rel, ExclusiveLock);
	metabuf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	sbf_shared_check_page(rel, NULL, BufferGetPage(metabuf), SBF_METAPAGE_BLKNO);
	state = sbf_meta_page_state(BufferGetPage(metabuf));
	sbf_shared_validate_state(sbf_shared_meta(rel), state, ERRCODE_DATA_CORRUPTED,
							  RelationGetRelationName(rel));
	newblk = (BlockNumber) Max(sbf_state_pages(state) + 1,
							   (uint64) RelationGetNumberOfBlocks(rel));
	if ((uint64) newblk > SBF_SHARED_MAX_PAGES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shared filter \"%s\" has no room for another overflow page",
						RelationGetRelationName(rel)),
				 errdetail("Its pending adds need more pages than a relation can have.")));
	if ((state->flags & SBF_STATE_OVERFLOW) == 0)
	{
		if (wal)
		{
			xlog = GenericXLogStart(rel);
			state = sbf_meta_page_state(GenericXLogRegisterBuffer(xlog, metabuf, 0));
		}
		else
			START_CRIT_SECTION();
		state->flags |= SBF_STATE_OVERFLOW;
		if (xlog != NULL)
			GenericXLogFinish(xlog);
		else
		{
			MarkBufferDirty(metabuf);
			END_CRIT_SECTION();
		}
	}
	UnlockReleaseBuffer(metabuf);
	memset(zero.data, 0, BLCKSZ);
	smgrextend(RelationGetSmgr(rel), MAIN_FORKNUM, newblk, zero.data, false);
	UnlockRelationForExtension(rel, ExclusiveLock);
	(void) sbf_shared_block_exists(rel, newblk);

	/* the new page, whole (linked below) */
	buf = ReadBuffer(rel, newblk);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	xlog = NULL;
	if (wal)
	{
		xlog = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(xlog, buf, GENERIC_XLOG_FULL_IMAGE);
	}
	else
	{
		START_CRIT_SECTION();
		page = BufferGetPage(buf);
	}
	PageInit(page, BLCKSZ, MAXALIGN(sizeof(SbfPageOpaque)));
	((PageHeader) page)->pd_lower = SBF_OVERFLOW_START;
	over = sbf_overflow_header(page);
	over->magic = SBF_MAGIC_OVERFLOW;
	over->owner = blkno;
	if (xlog != NULL)
		GenericXLogFinish(xlog);
	else
	{
		MarkBufferDirty(buf);
		END_CRIT_SECTION();
	}
	UnlockReleaseBuffer(buf);

	/*
	 * linked in the chain, in block order (at its end, unless another
	 * session gave it a later page meanwhile): a chain's blocks ascend,
	 * which is how a reader knows it does not loop
	 */
	(void) sbf_shared_lock_for_write(rel, meta, blkno, &buf);
	sbf_chain_read(rel, BufferGetPage(buf), blkno, true,
				   &chain);
	{
		Buffer		newbuf = ReadBuffer(rel, newblk);
		Buffer		prev = buf;
		int			i;

		for (i = 0; i < chain.n && BufferGetBlockNumber(chain.bufs[i]) < newblk; i++)
			prev = chain.bufs[i];
		/* (the data page is locked already; an overflow page only now) */
		if (prev != buf)
			LockBuffer(prev, BUFFER_LOCK_EXCLUSIVE);
		LockBuffer(newbuf, BUFFER_LOCK_EXCLUSIVE);
		xlog = NULL;
		if (wal)
		{
			xlog = GenericXLogStart(rel);
			page = GenericXLogRegisterBuffer(xlog, prev, 0);
			over = sbf_overflow_header(GenericXLogRegisterBuffer(xlog, newbuf, 0));
		}
		else
		{
			START_CRIT_SECTION();
			page = BufferGetPage(prev);
			over = sbf_overflow_header(BufferGetPage(newbuf));
		}
		if (prev == buf)
		{
			over->next = sbf_page_overflow_link(page)->first;
			sbf_page_overflow_link(page)->first = newblk;
		}
		else
		{
			over->next = sbf_overflow_header(page)->next;
			sbf_overflow_header(page)->next = newblk;
		}
		if (xlog != NULL)
			GenericXLogFinish(xlog);
		else
		{
			MarkBufferDirty(prev);
			MarkBufferDirty(newbuf);
			END_CRIT_SECTION();
		}
		UnlockReleaseBuffer(newbuf);
		if (prev != buf)
			LockBuffer(prev, BUFFER_LOCK_UNLOCK);
	}
	sbf_chain_release(&chain);
	UnlockReleaseBuffer(buf);
}

static int
sbf_add_group_pending(SbfAddCall *call, const SbfSharedMeta *meta,
					  const SbfBatchItem *items, int n, bool *answers)
{
	Relation	rel = call->rel;
	bool		wal = RelationNeedsWAL(rel);
	BlockNumber blkno = items[0].page;
	bool		take_chain = false;
	int			next = 0;

	while (next < n)
	{
		Buffer		buf;
		SbfXidStatus own[SBF_PENDING_MAX];
		SbfXidStatus *status = own;
		SbfPendingPass pass = {0};
		Page		page;
		bool		isnew;
		int			i;

		isnew = sbf_shared_lock_for_write(rel, meta, blkno, &buf);
		page = BufferGetPage(buf);
		if (sbf_group_all_present(meta, page, isnew, items + next, n - next))
		{
			XLogRecPtr	lsn = wal ? PageGetLSN(page) : InvalidXLogRecPtr;

			UnlockReleaseBuffer(buf);
			/* as in sbf_add_group: the bits' WAL may not be flushed yet */
			if (wal)
				XLogFlush(lsn);
			for (i = next; i < n; i++)
				answers[items[i].index] = true;
			return n;
		}

		/* a pending add needs this (sub)transaction's id: not under the lock */
		if (!TransactionIdIsValid(GetCurrentTransactionIdIfAny()))
		{
			UnlockReleaseBuffer(buf);
			(void) GetCurrentTransactionId();
			continue;
		}

		/* the filter grew: the rest goes to its new last sub-filter */
		if (!sbf_still_last(call))
		{
			UnlockReleaseBuffer(buf);
			return next;
		}

		if (isnew)
		{
			GenericXLogState *state = NULL;

			if (wal)
			{
				state = GenericXLogStart(rel);
				page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
			}
			else
				START_CRIT_SECTION();
			sbf_shared_page_init(page, meta, blkno);
			sbf_pending_pass(meta, page, NULL, &status, NULL,
							 GetCurrentTransactionId(), items + next, n - next,
							 answers, &pass);
			if (state != NULL)
				GenericXLogFinish(state);
			else
			{
				MarkBufferDirty(buf);
				END_CRIT_SECTION();
			}
		}
		else if (take_chain || sbf_page_overflow_link(page)->adds > 0)
		{
			/* the page and its chain */
			SbfChain	chain;
			SbfXidStatus **statuses;

			sbf_chain_read(rel, page, blkno, true, &chain);
			statuses = sbf_chain_statuses(rel, page, &chain, own);
			sbf_chain_pass(rel, buf, &chain, meta, statuses,
						   GetCurrentTransactionId(), items + next, n - next,
						   answers, &pass);
			sbf_chain_statuses_free(statuses, &chain);
			sbf_chain_release(&chain);
		}
		else
		{
			sbf_pending_statuses(rel, page, status);
			if (wal)
				sbf_page_logged(buf, meta, status, GetCurrentTransactionId(),
								items + next, n - next, answers, &pass);
			else
			{
				START_CRIT_SECTION();
				sbf_pending_pass(meta, page, NULL, &status, NULL,
								 GetCurrentTransactionId(), items + next, n - next,
								 answers, &pass);
				sbf_mark_dirty(buf);
				END_CRIT_SECTION();
			}
		}
		UnlockReleaseBuffer(buf);
		next += pass.done;

		take_chain = pass.chain || pass.extend;
		if (pass.extend)
			sbf_chain_extend(rel, meta, blkno);
		if (TransactionIdIsValid(pass.wait))
			XactLockTableWait(pass.wait, rel, NULL, XLTW_None);
	}
	return n;
}

/*
 * A logged filter of the line or the pending layout, the transaction's id
 * taken: test-and-add items[start..] on up to SBF_WAL_PAGES pages at once,
 * in one WAL record.  Returns where the items not yet answered start:
 * after the pages done, or on a page left to sbf_add_group (its first
 * write, a filter that grew) or, after waiting, on the page where an open
 * transaction's add was met; start itself when the first page is left.
 *
 * One record a page cost its header, a reference to the relation and an
 * insertion into the WAL buffers a value: in steady state a third of a
 * logged add's WAL, and with two sessions a contention on the insertion
 * and on the WAL buffers' cache lines.  The pages are locked in block
 * order, as every adder locks them (a batch is sorted by page; nothing
 * else holds two data pages), and everything that can ERROR (reading and
 * checking a page, the transactions' status) is done before the first
 * change; the changes and their record are then one critical section.
 * Only pages that exist are taken after the first: extending the relation
 * under the lock of another page is left to sbf_add_group.
 */
static int
sbf_add_pages_logged(SbfAddCall *call, const SbfSharedMeta *meta,
					 SbfBatchItem *items, int start, int n, bool *answers,
					 SbfPrefetchAhead *ahead)
{
	Relation	rel = call->rel;
	bool		pending = meta->version == SBF_SHARED_LAYOUT_PENDING;
	TransactionId xid = pending ? GetCurrentTransactionIdIfAny() : InvalidTransactionId;
	Buffer		bufs[SBF_WAL_PAGES] = {0};
	SbfDelta   *deltas[SBF_WAL_PAGES] = {0};
	int			first[SBF_WAL_PAGES];
	int			last[SBF_WAL_PAGES];
	SbfXidStatus status[SBF_WAL_PAGES][SBF_PENDING_MAX];
	SbfPendingPass pass[SBF_WAL_PAGES];
	XLogRecPtr	flush = InvalidXLogRecPtr;
	TransactionId wait = InvalidTransactionId;
	int			npages = 0;
	int			pos = start;
	int			stopped = -1;
	int			p;

	Assert(pending ? TransactionIdIsValid(xid) :
		   TransactionIdIsValid(GetTopTransactionIdIfAny()));
	while (npages < SBF_WAL_PAGES && pos < n)
	{
		BlockNumber blkno = items[pos].page;
		int			end = pos + 1;
		Buffer		buf;
		bool		isnew;

		while (end < n && items[end].page == blkno)
			end++;
		if (pos > start)
		{
			sbf_shared_prefetch_ahead(rel, meta, items, n, end, ahead);
			if (!sbf_shared_block_exists(rel, blkno))
				break;
		}
		isnew = sbf_shared_lock_for_write(rel, meta, blkno, &buf);
		/* (a page whose chain holds adds is read with it: sbf_add_group) */
		if (isnew || !sbf_still_last(call) ||
			(pending && sbf_page_overflow_link(BufferGetPage(buf))->adds > 0))
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		if (sbf_group_all_present(meta, BufferGetPage(buf), false,
								  items + pos, end - pos))
		{
			/* as in sbf_add_group: the bits' WAL is flushed, after the locks */
			flush = Max(flush, PageGetLSN(BufferGetPage(buf)));
			UnlockReleaseBuffer(buf);
			for (p = pos; p < end; p++)
				answers[items[p].index] = true;
			pos = end;
			continue;
		}
		if (pending)
			sbf_pending_statuses(rel, BufferGetPage(buf), status[npages]);
		memset(&pass[npages], 0, sizeof(SbfPendingPass));
		bufs[npages] = buf;
		deltas[npages] = &sbf_wal_delta[npages];
		first[npages] = pos;
		last[npages] = end;
		npages++;
		pos = end;
	}

	/*
	 * The changes, in page order; a page whose pass stopped (an open
	 * transaction's add met, or the page's room full) ends them: the pages
	 * after it are left unchanged, to be taken again
	 */
	START_CRIT_SECTION();
	for (p = 0; p < npages; p++)
	{
		if (stopped >= 0)
		{
			deltas[p]->len = 0;
			continue;
		}
		sbf_page_delta(BufferGetPage(bufs[p]), meta, status[p], xid,
					   items + first[p], last[p] - first[p], answers,
					   &pass[p], sbf_wal_before[p].data, deltas[p]);
		if (pass[p].done < last[p] - first[p])
			stopped = p;
	}
	sbf_log_deltas(bufs, deltas, npages);
	END_CRIT_SECTION();
	for (p = 0; p < npages; p++)
		UnlockReleaseBuffer(bufs[p]);
	if (!XLogRecPtrIsInvalid(flush))
		XLogFlush(flush);

	if (stopped >= 0)
	{
		wait = pass[stopped].wait;
		pos = first[stopped] + pass[stopped].done;
	}
	if (TransactionIdIsValid(wait))
		XactLockTableWait(wait, rel, NULL, XLTW_None);
	return pos;
}

/*
 * VACUUM of a transactional filter: fold page blkno's committed pending
 * adds that every snapshot sees and drop its aborted ones, and clear its
 * folded xid if it is older than forget; return the oldest transaction id
 * the page keeps (InvalidTransactionId if none).  The change needs no
 * transaction id: lost in a crash, it is made again from the same pending
 * adds.
 */
TransactionId
sbf_pending_fold_page(Relation rel, const SbfSharedMeta *meta,
					  BlockNumber blkno, BufferAccessStrategy strategy,
					  TransactionId forget)
{
	Buffer		buf = sbf_shared_read(rel, blkno, strategy);
	SbfXidStatus own[SBF_PENDING_MAX];
	SbfPendingPass pass = {0};
	TransactionId oldest = InvalidTransactionId;
	TransactionId folded;
	Page		page;
	int			a;
	int			i;

	pass.forget = forget;

	if (!BufferIsValid(buf))
		return InvalidTransactionId;
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	if (PageIsNew(page))
	{
		UnlockReleaseBuffer(buf);
		return InvalidTransactionId;
	}
	sbf_shared_check_page(rel, meta, page, blkno);
	folded = sbf_page_folded_xid(page);
	if (sbf_pending_count(page) > 0 || sbf_page_overflow_link(page)->adds > 0 ||
		(TransactionIdIsValid(folded) && TransactionIdPrecedes(folded, forget)))
	{
		SbfChain	chain;
		SbfXidStatus **status;

		sbf_xid_cache_begin();
		sbf_chain_read(rel, page, blkno, false, &chain);
		status = sbf_chain_statuses(rel, page, &chain, own);
		sbf_chain_pass(rel, buf, &chain, meta, status, InvalidTransactionId,
					   NULL, 0, NULL, &pass);
		for (a = 0; a < sbf_chain_areas(&chain); a++)
		{
			int			n;
			const SbfPendingAdd *adds = sbf_chain_area_adds(page, &chain, a, &n);

			for (i = 0; i < n; i++)
				if (!TransactionIdIsValid(oldest) ||
					TransactionIdPrecedes(adds[i].xid, oldest))
					oldest = adds[i].xid;
		}
		sbf_chain_statuses_free(status, &chain);
		sbf_chain_release(&chain);
	}
	folded = sbf_page_folded_xid(page);
	if (TransactionIdIsValid(folded) &&
		(!TransactionIdIsValid(oldest) || TransactionIdPrecedes(folded, oldest)))
		oldest = folded;
	UnlockReleaseBuffer(buf);
	return oldest;
}

/* Begin a call: the filter's parameters, and what tells whether it grows */
void
sbf_add_call_begin(SbfAddCall *call, Relation rel)
{
	call->rel = rel;
	call->meta = *sbf_shared_meta(rel);
	call->growing = sbf_shared_state(rel, false)->growth > 0.0;
	call->metabuf = call->growing ? ReadBuffer(rel, SBF_METAPAGE_BLKNO) : InvalidBuffer;
	call->nsub = 0;
	memset(call->added, 0, sizeof(call->added));
	if (call->meta.version == SBF_SHARED_LAYOUT_PENDING)
		sbf_xid_cache_begin();
}

/* Take the sub-filters: a growing filter's from its metapage, each time */
static void
sbf_add_call_refresh(SbfAddCall *call)
{
	const SbfSharedState *state;

	if (call->nsub > 0 && !call->growing)
		return;
	state = sbf_shared_state(call->rel, call->growing);
	memcpy(call->sub, state->sub, state->nsub * sizeof(SbfSubFilter));
	call->nsub = state->nsub;
}

/*
 * Count what the call added so far in the metapage (shared_grow.c), where a
 * growing filter's last sub-filter given its capacity gets the next one:
 * after each chunk of a large batch, so that its later chunks go to the
 * new one instead of overfilling the last
 */
void
sbf_add_call_count(SbfAddCall *call)
{
	sbf_shared_count_adds(call->rel, call->added, (int) call->nsub);
	memset(call->added, 0, sizeof(call->added));
}

/* End a call: count what it added */
void
sbf_add_call_end(SbfAddCall *call)
{
	if (BufferIsValid(call->metabuf))
		ReleaseBuffer(call->metabuf);
	call->metabuf = InvalidBuffer;
	sbf_add_call_count(call);
}

/*
 * Give the n items their pages in a sub-filter and sort them by page
 * (stably: the items of a page stay in the order they had)
 */
static void
sbf_items_to_sub(const SbfSubFilter *sub, SbfBatchItem *items, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		items[i].page = (BlockNumber) (1 + sbf_block_of(items[i].hash, sub->pages));
	if (n > 1)
		sbf_shared_sort_by_page(items, n, sub->pages);
	for (i = 0; i < n; i++)
		items[i].page += sub->first - 1;
}

/*
 * Test the n items of one page of a sub-filter that is not the last: an
 * item present to this session (sbf_pending_test) is answered true and
 * marked with page InvalidBlockNumber.  An item with an add of another
 * transaction still open waits for it, as adding it to the last would, and
 * the page is tested again.
 */
static void
sbf_test_group(Relation rel, const SbfSharedMeta *meta, SbfBatchItem *items,
			   int n, bool *answers)
{
	BlockNumber blkno = items[0].page;

	for (;;)
	{
		Buffer		buf = sbf_shared_pin_existing(rel, blkno);
		TransactionId wait = InvalidTransactionId;
		SbfChain	chain;
		SbfXidStatus own[SBF_PENDING_MAX];
		SbfXidStatus **status = NULL;
		SbfPassIndex *index = NULL;
		Page		page;
		int			i;

		if (!BufferIsValid(buf))
			return;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page))
		{
			UnlockReleaseBuffer(buf);
			return;
		}
		sbf_shared_check_page(rel, meta, page, blkno);
		sbf_chain_read(rel, page, blkno, false, &chain);
		/* a chain's adds are indexed once, as an adder's pass does */
		if (chain.n > 0)
		{
			status = sbf_chain_statuses(rel, page, &chain, own);
			index = sbf_pass_index_alloc(page, &chain, status);
			sbf_pass_index_build(meta, page, &chain, status, items, n, index);
		}
		for (i = 0; i < n && !TransactionIdIsValid(wait); i++)
		{
			uint64		state = sbf_line_state(items[i].hash);
			bool		present;

			if (items[i].page == InvalidBlockNumber)
				continue;
			if (index != NULL)
			{
				present = sbf_line_probe_state(index->words[sbf_line_of_state(state, SBF_PENDING_LINES)],
											   meta->hashes, state, false);
				if (!present)
					wait = sbf_pass_index_open(index, state);
			}
			else
				present = sbf_pending_lookup(meta, page, &chain, state, &wait);
			if (present)
			{
				answers[items[i].index] = true;
				items[i].page = InvalidBlockNumber;
			}
		}
		if (index != NULL)
		{
			sbf_pass_index_free(index);
			sbf_chain_statuses_free(status, &chain);
			index = NULL;
		}
		sbf_chain_release(&chain);
		UnlockReleaseBuffer(buf);
		if (!TransactionIdIsValid(wait))
			return;
		XactLockTableWait(wait, rel, NULL, XLTW_None);
	}
}

/*
 * A growing filter: test the n items in sub-filter j; return how many are
 * left (not present there), moved to the front in the order they had.
 */
static int
sbf_test_sub(SbfAddCall *call, int j, SbfBatchItem *items, int n, bool *answers)
{
	SbfSharedMeta meta;
	SbfPrefetchAhead ahead = {0};
	int			start;
	int			kept = 0;
	int			i;

	sbf_sub_meta(&call->meta, &call->sub[j], &meta);
	sbf_items_to_sub(&call->sub[j], items, n);
	for (start = 0; start < n;)
	{
		int			end = start + 1;

		while (end < n && items[end].page == items[start].page)
			end++;
		sbf_shared_prefetch_ahead(call->rel, &meta, items, n, end, &ahead);
		sbf_test_group(call->rel, &meta, items + start, end - start, answers);
		start = end;
		CHECK_FOR_INTERRUPTS();
	}
	for (i = 0; i < n; i++)
		if (items[i].page != InvalidBlockNumber)
			items[kept++] = items[i];
	return kept;
}

/*
 * A growing filter: test the n items in its sub-filters, the last (the
 * largest, which holds the most values) first, then the others newest
 * first; return how many are present in none, moved to the front.  Only
 * "present" is answered here: the last sub-filter is tested again, and
 * added to, under its pages' exclusive locks.
 */
static int
sbf_test_subs(SbfAddCall *call, SbfBatchItem *items, int n, bool *answers)
{
	int			j;

	for (j = (int) call->nsub - 1; j >= 0 && n > 0; j--)
		n = sbf_test_sub(call, j, items, n, answers);
	return n;
}

/*
 * Test-and-add the n items in the last sub-filter, page by page; return how
 * many are left because the filter grew meanwhile, moved to the front.
 */
static int
sbf_add_to_last(SbfAddCall *call, SbfBatchItem *items, int n, bool *answers)
{
	Relation	rel = call->rel;
	int			last = (int) call->nsub - 1;
	SbfSharedMeta meta;
	SbfPrefetchAhead ahead = {0};
	int			start;

	sbf_sub_meta(&call->meta, &call->sub[last], &meta);
	sbf_items_to_sub(&call->sub[last], items, n);
	for (start = 0; start < n;)
	{
		int			end = start + 1;
		int			done;
		int			i;

		while (end < n && items[end].page == items[start].page)
			end++;
		sbf_shared_prefetch_ahead(rel, &meta, items, n, end, &ahead);
		/* several pages a WAL record, once the transaction has its id */
		if (RelationNeedsWAL(rel) &&
			((meta.version == SBF_SHARED_LAYOUT_PENDING &&
			  TransactionIdIsValid(GetCurrentTransactionIdIfAny())) ||
			 (meta.version == SBF_SHARED_LAYOUT_LINES &&
			  TransactionIdIsValid(GetTopTransactionIdIfAny()))))
		{
			int			next = sbf_add_pages_logged(call, &meta, items, start, n,
													answers, &ahead);

			if (next > start)
			{
				for (i = start; i < next; i++)
					if (!answers[items[i].index])
						call->added[last]++;
				start = next;
				CHECK_FOR_INTERRUPTS();
				continue;
			}
		}
		done = sbf_add_group(call, &meta, items + start, end - start, answers);
		for (i = start; i < start + done; i++)
			if (!answers[items[i].index])
				call->added[last]++;
		if (done < end - start)
		{
			memmove(items, items + start + done,
					(n - start - done) * sizeof(SbfBatchItem));
			return n - start - done;
		}
		start = end;
		CHECK_FOR_INTERRUPTS();
	}
	return 0;
}

/*
 * Test-and-add the n items (in input order), answers[i] for item i: in a
 * growing filter, test them in its sub-filters, then add those present in
 * none to the last, again from the test if it grew meanwhile.
 */
void
sbf_add_items(SbfAddCall *call, SbfBatchItem *items, int n, bool *answers)
{
	while (n > 0)
	{
		sbf_add_call_refresh(call);
		if (call->nsub > 1)
			n = sbf_test_subs(call, items, n, answers);
		if (n > 0)
			n = sbf_add_to_last(call, items, n, answers);
	}
}

/*
 * A growing filter's chunks end where its last sub-filter is given its
 * capacity (at least SBF_GROW_CHUNK_MIN values), so that a batch many times
 * that capacity grows the filter as it goes, as many calls would
 */
#define SBF_GROW_CHUNK_MIN	1024

int
sbf_add_call_chunk(SbfAddCall *call)
{
	const SbfSubFilter *last;
	int64		room;

	if (!call->growing)
		return SBF_BATCH_CHUNK;
	sbf_add_call_refresh(call);
	last = &call->sub[call->nsub - 1];
	room = last->capacity - last->adds;
	/* (a last sub-filter past its capacity is one that can grow no more) */
	if (room <= 0)
		return SBF_BATCH_CHUNK;
	return (int) Max(SBF_GROW_CHUNK_MIN, Min(room, SBF_BATCH_CHUNK));
}


