/*-------------------------------------------------------------------------
 *
 * shared_insert.c
 *	  Shared filters: shared_test_and_add, for one value and for arrays.
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

PG_FUNCTION_INFO_V1(shared_test_and_add);
PG_FUNCTION_INFO_V1(shared_test_and_add_int8);
PG_FUNCTION_INFO_V1(shared_test_and_add_array);

/*
 * One call's adding: the filter, its sub-filters as the call last read
 * them (a growing filter's metapage pinned, to see whether it grew), and
 * the values it added to each, counted in the metapage at its end.
 */
typedef struct SbfAddCall
{
	Relation	rel;
	SbfSharedMeta meta;			/* the filter's */
	bool		growing;
	Buffer		metabuf;		/* pinned while a growing filter is added to */
	uint32		nsub;
	SbfSubFilter sub[SBF_MAX_SUBFILTERS];
	int64		added[SBF_MAX_SUBFILTERS];
} SbfAddCall;

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
	bool		full;			/* the page is full of this transaction's */
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
 * The changes to one page, as the fragments of a generic WAL record
 * (access/generic_xlog.c): each is <offset uint16, length uint16, bytes>,
 * and core's generic_redo applies them, so no preloading is needed.  At
 * most every byte of the block and the special space, in fragments more
 * than SBF_DELTA_GAP unchanged bytes apart (sbf_delta_region): under twice
 * a page.
 */
/* Append to DELTA the fragment of LENGTH bytes at OFFSET of the page */
void
sbf_delta_append(SbfDelta *delta, const char *page, Size offset, Size length)
{
	uint16		off16 = (uint16) offset;
	uint16		len16 = (uint16) length;

	Assert(delta->len + sizeof(off16) + sizeof(len16) + length <= sizeof(delta->data));
	memcpy(delta->data + delta->len, &off16, sizeof(off16));
	memcpy(delta->data + delta->len + sizeof(off16), &len16, sizeof(len16));
	memcpy(delta->data + delta->len + sizeof(off16) + sizeof(len16),
		   page + offset, length);
	delta->len += sizeof(off16) + sizeof(len16) + length;
}

/*
 * The bytes of [pos, pos + 8) that differ between BEFORE and AFTER, as the
 * bits of a 64-bit word in memory order (byte pos in the lowest 8 bits)
 */
static inline uint64
sbf_delta_word_xor(const char *before, const char *after, Size pos)
{
	uint64		a;
	uint64		b;

	memcpy(&a, before + pos, sizeof(uint64));
	memcpy(&b, after + pos, sizeof(uint64));
#ifdef WORDS_BIGENDIAN
	return pg_bswap64(a ^ b);
#else
	return a ^ b;
#endif
}

/*
 * Append to DELTA the bytes of [start, end) that differ between BEFORE and
 * AFTER, in few bytes: a fragment's header is SBF_DELTA_GAP bytes, so
 * changed bytes at most that far apart go in one fragment with the
 * unchanged ones between them.  An element sets a few bits scattered over
 * its line, so it is bytes, not words, that change (a quarter to a third
 * fewer bytes of WAL a value than logging the changed 8-byte words).  The
 * region is compared 8 bytes at a time, a changed word taken from its
 * first changed byte to its last: comparing each byte, an unpredictable
 * branch a byte, made a logged add as slow as before this saved anything.
 */
#define SBF_DELTA_GAP	(2 * sizeof(uint16))

void
sbf_delta_region(SbfDelta *delta, const char *before, const char *after,
				 Size start, Size end)
{
	Size		pos;
	Size		run = 0;		/* the open fragment: [run, run_end) */
	Size		run_end = 0;

	for (pos = start; pos < end; pos += sizeof(uint64))
	{
		Size		first;
		Size		last;

		if (end - pos >= sizeof(uint64))
		{
			uint64		changed = sbf_delta_word_xor(before, after, pos);

			if (changed == 0)
				continue;
			first = pos + pg_rightmost_one_pos64(changed) / 8;
			last = pos + pg_leftmost_one_pos64(changed) / 8 + 1;
		}
		else
		{
			/* the region's last bytes, fewer than 8 */
			for (first = pos; first < end && before[first] == after[first]; first++)
				;
			if (first == end)
				break;
			for (last = end; before[last - 1] == after[last - 1]; last--)
				;
		}
		if (run_end > run && first - run_end <= SBF_DELTA_GAP)
			run_end = last;
		else
		{
			if (run_end > run)
				sbf_delta_append(delta, after, run, run_end - run);
			run = first;
			run_end = last;
		}
	}
	if (run_end > run)
		sbf_delta_append(delta, after, run, run_end - run);
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
 * Log the fragments of the n DELTAS as one generic WAL record of the
 * changes to BUFS (in a critical section, the buffers locked exclusively;
 * at most MAX_GENERIC_XLOG_PAGES, which generic_redo replays): one record
 * header, and one relation in the block references, for them all.  A
 * buffer whose delta is empty did not change and is left out.
 */
void
sbf_log_deltas(const Buffer *bufs, SbfDelta *const *deltas, int n)
{
	XLogRecPtr	lsn;
	int			registered = 0;
	int			i;

	Assert(n <= MAX_GENERIC_XLOG_PAGES);
	for (i = 0; i < n; i++)
		if (deltas[i]->len > 0)
			break;
	if (i == n)
		return;
	XLogBeginInsert();
	for (i = 0; i < n; i++)
	{
		if (deltas[i]->len == 0)
			continue;
		sbf_mark_dirty(bufs[i]);
		XLogRegisterBuffer(registered, bufs[i], REGBUF_STANDARD);
		XLogRegisterBufData(registered, deltas[i]->data, deltas[i]->len);
		registered++;
	}
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	for (i = 0; i < n; i++)
		if (deltas[i]->len > 0)
			PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

/* The same for one buffer */
void
sbf_log_delta(Buffer buf, SbfDelta *delta)
{
	sbf_log_deltas(&buf, &delta, 1);
}

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
 * again.  A page full of pending adds waits for an open transaction's in
 * the same way; with none, it folds the committed adds that some snapshot
 * may not see all the same, and records the newest of their transactions
 * as the page's folded xid, so that a scan under such a snapshot refuses
 * the page rather than hold adds it does not see (adders never wait for a
 * snapshot, which a dump holds for as long as it runs); full of this
 * transaction's own, it is an ERROR: nothing can make room before this
 * transaction ends.
 *
 * What can ERROR (the transactions' status in the commit log, the proc
 * array) is asked before the page is changed: the change itself, decided
 * from those answers, is made and logged in one critical section
 * (SbfPendingPass, above, is what a pass did).
 */

/*
 * What each pending add of the page counts as now (outside any critical
 * section), through the session's cache (sbf_xid_cache_begin called): a
 * committed one is SBF_XID_COMMITTED_RECENT until its transaction is older
 * than every snapshot that can still be running (GlobalVisTestFor, the
 * horizon heap pruning uses: this database's snapshots, prepared
 * transactions, and the standbys' with hot_standby_feedback)
 */
static void
sbf_pending_statuses(Relation rel, Page page, SbfXidStatus *status)
{
	const SbfPendingAdd *adds = sbf_pending_adds(page);
	int			n = sbf_pending_count(page);
	GlobalVisState *horizon = NULL;
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
		if (horizon == NULL)
			horizon = GlobalVisTestFor(rel);
		if (!GlobalVisTestIsRemovableXid(horizon, adds[i].xid))
			status[i] = SBF_XID_COMMITTED_RECENT;
	}
}

/*
 * Fold the page's committed pending adds into its bits (with all, also
 * those a snapshot may not see yet) and drop its aborted ones, noting the
 * lines changed in pass and the newest folded transaction in the page's
 * folded xid; status follows the adds kept
 */
static void
sbf_pending_fold(const SbfSharedMeta *meta, Page page, SbfXidStatus *status,
				 bool all, SbfPendingPass *pass)
{
	PageHeader	header = (PageHeader) page;
	uint8	   *block = sbf_page_block(meta, page);
	SbfPendingAdd *adds = sbf_pending_adds(page);
	int			count = sbf_pending_count(page);
	TransactionId folded = sbf_page_folded_xid(page);
	int			kept = 0;
	int			i;

	if (TransactionIdIsValid(folded) && TransactionIdIsValid(pass->forget) &&
		TransactionIdPrecedes(folded, pass->forget))
		folded = InvalidTransactionId;
	for (i = 0; i < count; i++)
	{
		uint64		state = sbf_pending_state(&adds[i]);

		if (status[i] == SBF_XID_COMMITTED ||
			(all && status[i] == SBF_XID_COMMITTED_RECENT))
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
	if (SBF_PENDING_START + kept * SBF_PENDING_BYTES < header->pd_lower)
		memset((char *) page + SBF_PENDING_START + kept * SBF_PENDING_BYTES, 0,
			   header->pd_lower - (SBF_PENDING_START + kept * SBF_PENDING_BYTES));
	header->pd_lower = SBF_PENDING_START + kept * SBF_PENDING_BYTES;
}

/*
 * Fold and add on an initialized page, from the statuses taken under the
 * same lock: no ERROR, no allocation, so it can run in a critical section.
 */
static void
sbf_pending_pass(const SbfSharedMeta *meta, Page page, SbfXidStatus *status,
				 TransactionId xid, const SbfBatchItem *items, int n,
				 bool *answers, SbfPendingPass *pass)
{
	PageHeader	header = (PageHeader) page;
	SbfPendingAdd *adds = sbf_pending_adds(page);
	int			count;
	int			i;

	/* committed adds every snapshot sees become bits, aborted ones go */
	sbf_pending_fold(meta, page, status, false, pass);
	count = sbf_pending_count(page);

	for (pass->done = 0; pass->done < n; pass->done++)
	{
		const SbfBatchItem *item = &items[pass->done];
		uint64		state = sbf_line_state(item->hash);
		int			open = -1;

		/* present with this transaction's own adds, as if already folded */
		if (sbf_pending_test(meta, page, state, status))
		{
			answers[item->index] = true;
			continue;
		}
		for (i = 0; i < count; i++)
			if (sbf_pending_state(&adds[i]) == state)
				break;
		if (i < count)
		{
			/* another transaction's, still open (its own would be present) */
			pass->wait = adds[i].xid;
			break;
		}
		if (count == SBF_PENDING_MAX)
		{
			bool		recent = false;

			for (i = 0; i < count && open < 0; i++)
			{
				if (status[i] == SBF_XID_IN_PROGRESS)
					open = i;
				if (status[i] == SBF_XID_COMMITTED_RECENT)
					recent = true;
			}
			if (open >= 0)
				pass->wait = adds[open].xid;
			else if (recent)
			{
				/* room, at the price of the older snapshots' scans */
				sbf_pending_fold(meta, page, status, true, pass);
				count = sbf_pending_count(page);
				pass->done--;
				continue;
			}
			else
				pass->full = true;
			break;
		}
		adds[count].xid = xid;
		adds[count].state_lo = (uint32) state;
		adds[count].state_hi = (uint32) (state >> 32);
		status[count] = SBF_XID_OWN;
		count++;
		header->pd_lower += SBF_PENDING_BYTES;
		answers[item->index] = false;
	}
}

/*
 * The same on a logged page that is not new, collecting in DELTA the bytes
 * it changed: the lines it folded into, the pending adds and pd_lower
 * (BEFORE: a page's worth of scratch).  The caller makes the change and
 * logs it in one critical section.
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
	int			word;
	int			i;

	/*
	 * copy what may change: the lines of committed adds (of those a snapshot
	 * may not see too, if this pass can fill the page and so fold them), the
	 * adds, and the special space (the folded xid)
	 */
	memcpy(before + BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)),
		   (char *) page + BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)),
		   MAXALIGN(sizeof(SbfPageOpaque)));
	for (i = 0; i < count; i++)
		if (status[i] == SBF_XID_COMMITTED ||
			(status[i] == SBF_XID_COMMITTED_RECENT && count + n >= SBF_PENDING_MAX))
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
	sbf_pending_pass(meta, page, status, xid, items, n, answers, pass);
	for (word = 0; word < (int) lengthof(pass->folded); word++)
	{
		uint64		lines = pass->folded[word];

		while (lines != 0)
		{
			int			line = word * 64 + pg_rightmost_one_pos64(lines);
			Size		offset = SBF_LINES_BLOCK_OFFSET + line * SBF_LINE_BYTES;

			sbf_delta_region(delta, before, (const char *) page,
							 offset, offset + SBF_LINE_BYTES);
			lines &= lines - 1;
		}
	}
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

/* A page full of this transaction's pending adds: nothing makes room */
static void
sbf_pending_full(Relation rel, BlockNumber blkno)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many uncommitted adds to page %u of shared filter \"%s\"",
					blkno, RelationGetRelationName(rel)),
			 errdetail("A page holds the adds of transactions that have not committed yet, at most %d, and this transaction's fill it.",
					   SBF_PENDING_MAX),
			 errhint("Commit more often: a transaction can add about 1%% of the filter's capacity. A bulk load can use a filter made with transactional => false.")));
}

static int
sbf_add_group_pending(SbfAddCall *call, const SbfSharedMeta *meta,
					  const SbfBatchItem *items, int n, bool *answers)
{
	Relation	rel = call->rel;
	bool		wal = RelationNeedsWAL(rel);
	BlockNumber blkno = items[0].page;
	int			next = 0;

	while (next < n)
	{
		Buffer		buf;
		SbfXidStatus status[SBF_PENDING_MAX];
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
			sbf_pending_pass(meta, page, status, GetCurrentTransactionId(),
							 items + next, n - next, answers, &pass);
			if (state != NULL)
				GenericXLogFinish(state);
			else
			{
				MarkBufferDirty(buf);
				END_CRIT_SECTION();
			}
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
				sbf_pending_pass(meta, page, status, GetCurrentTransactionId(),
								 items + next, n - next, answers, &pass);
				sbf_mark_dirty(buf);
				END_CRIT_SECTION();
			}
		}
		UnlockReleaseBuffer(buf);
		next += pass.done;

		if (pass.full)
			sbf_pending_full(rel, blkno);
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
		if (isnew || !sbf_still_last(call))
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
	 * transaction's add met, or the page full) ends them: the pages after it
	 * are left unchanged, to be taken again
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
		if (pass[stopped].full)
			sbf_pending_full(rel, items[first[stopped]].page);
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
	SbfXidStatus status[SBF_PENDING_MAX];
	SbfPendingPass pass = {0};
	TransactionId oldest = InvalidTransactionId;
	TransactionId folded;
	Page		page;
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
	if (sbf_pending_count(page) > 0 ||
		(TransactionIdIsValid(folded) && TransactionIdPrecedes(folded, forget)))
	{
		sbf_xid_cache_begin();
		sbf_pending_statuses(rel, page, status);
		if (RelationNeedsWAL(rel))
			sbf_page_logged(buf, meta, status, InvalidTransactionId,
							NULL, 0, NULL, &pass);
		else
		{
			START_CRIT_SECTION();
			sbf_pending_pass(meta, page, status, InvalidTransactionId,
							 NULL, 0, NULL, &pass);
			MarkBufferDirty(buf);
			END_CRIT_SECTION();
		}
		for (i = 0; i < sbf_pending_count(page); i++)
			if (!TransactionIdIsValid(oldest) ||
				TransactionIdPrecedes(sbf_pending_adds(page)[i].xid, oldest))
				oldest = sbf_pending_adds(page)[i].xid;
	}
	folded = sbf_page_folded_xid(page);
	if (TransactionIdIsValid(folded) &&
		(!TransactionIdIsValid(oldest) || TransactionIdPrecedes(folded, oldest)))
		oldest = folded;
	UnlockReleaseBuffer(buf);
	return oldest;
}

/* Refuse adding where nextval() is refused: read-only, standby, parallel */
static Relation
sbf_open_for_add(Oid relid)
{
	PreventCommandIfReadOnly("shared_test_and_add()");
	PreventCommandIfParallelMode("shared_test_and_add()");
	return sbf_shared_open(relid, RowExclusiveLock, ACL_UPDATE);
}

/* Begin a call: the filter's parameters, and what tells whether it grows */
static void
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

/* End a call: count what it added in the metapage (shared_grow.c) */
static void
sbf_add_call_end(SbfAddCall *call)
{
	if (BufferIsValid(call->metabuf))
		ReleaseBuffer(call->metabuf);
	call->metabuf = InvalidBuffer;
	sbf_shared_count_adds(call->rel, call->added, (int) call->nsub);
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
		for (i = 0; i < n && !TransactionIdIsValid(wait); i++)
		{
			uint64		state = sbf_line_state(items[i].hash);

			if (items[i].page == InvalidBlockNumber)
				continue;
			if (sbf_pending_lookup(meta, page, state, &wait))
			{
				answers[items[i].index] = true;
				items[i].page = InvalidBlockNumber;
			}
		}
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
static void
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
	Datum		value = sbf_refuse_array_literal(PG_GETARG_DATUM(1), kind);
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
 * A batch is hashed, sorted and added this many values at a time, so that
 * its working memory is bounded (24 bytes a value) whatever its size, and
 * a cancel is answered within one chunk's sort.  Chunks are added in input
 * order, so the answers are those of the whole batch at once.
 */
#define SBF_BATCH_CHUNK		(1 << 19)

/* Interrupts are checked every this many values while hashing */
#define SBF_HASH_CHECK_EVERY	(1 << 16)

/*
 * The answers as a bool[] of the shape of the input, whose NULL elements
 * (and so whose null bitmap) it shares: answers[i] for each non-NULL
 * element i.  Built directly rather than through a Datum per element, so
 * that any array PostgreSQL can hold gets its answer.
 */
static ArrayType *
sbf_answers_array(const ArrayType *values, const bool *answers, int n, int nnulls)
{
	int			ndim = ARR_NDIM(values);
	const bits8 *nulls = ARR_NULLBITMAP((ArrayType *) values);
	Size		overhead = nulls ? ARR_OVERHEAD_WITHNULLS(ndim, n) : ARR_OVERHEAD_NONULLS(ndim);
	ArrayType  *result = (ArrayType *) palloc0(overhead + (n - nnulls));
	char	   *data = (char *) result + overhead;	/* after header and bitmap */
	int			i;

	SET_VARSIZE(result, overhead + (n - nnulls));
	result->ndim = ndim;
	result->dataoffset = nulls ? (int32) overhead : 0;
	result->elemtype = BOOLOID;
	memcpy(ARR_DIMS(result), ARR_DIMS((ArrayType *) values), ndim * sizeof(int));
	memcpy(ARR_LBOUND(result), ARR_LBOUND((ArrayType *) values), ndim * sizeof(int));
	if (nulls)
		memcpy(ARR_LBOUND(result) + ndim, nulls, (n + 7) / 8);	/* its bitmap */
	for (i = 0; i < n; i++)
		if (nulls == NULL || (nulls[i / 8] & (1 << (i % 8))))
			*data++ = answers[i];
	return result;
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
	int			i = 0;
	ArrayType  *result;

	sbf_refuse_time(rel, sbf_shared_meta(rel), has_at);
	if (nelems == 0)
	{
		relation_close(rel, NoLock);
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
	}
	sbf_add_call_begin(call, rel);
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
		if (++nitems == SBF_BATCH_CHUNK)
		{
			if (sliding)
				sbf_sliding_add(rel, items, nitems, index, answers, has_at, at);
			else
				sbf_add_items(call, items, nitems, answers);
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
