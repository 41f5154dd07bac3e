/*-------------------------------------------------------------------------
 *
 * shared_pending.c
 *	  Shared filters: the pending adds of the pending layout, as readers
 *	  see them.
 *
 * A transactional filter (SBF_SHARED_LAYOUT_PENDING, format.h) does not
 * set a value's bits when a transaction adds it: it records a pending add,
 * the transaction's id and the value's line state, on the value's page.
 * The bits are only ever set for values whose transaction committed, so a
 * rolled-back add (ROLLBACK, ROLLBACK TO SAVEPOINT, ROLLBACK PREPARED, a
 * session or a server dying before COMMIT) leaves no trace once its
 * pending add is dropped.  What a pending add counts as is decided as heap
 * tuples' visibility is (heapam_visibility.c), in the same order:
 *
 *	- this transaction's own adds (of its open subtransactions too) are
 *	  present to it;
 *	- another transaction's, still open or prepared, are absent to readers,
 *	  and make an adder of the same value wait for it (shared_insert.c);
 *	- a committed transaction's are present;
 *	- anything else aborted, or crashed before it committed.
 *
 * The functions (shared_contains, the snapshots, shared_info) therefore see
 * what committed and what they added themselves, page by page as it is
 * now, like a unique index's check rather than a snapshot.  Only adders
 * change pages: the next add to a page folds its committed adds into the
 * bits and drops its aborted ones; VACUUM does it for every page
 * (shared_am.c).
 *
 * A scan of the table (SELECT, COPY, so pg_dump) reads the pages as of its
 * snapshot instead: a pending add counts if the snapshot sees its
 * transaction committed.  For that, a committed add is folded only once
 * every snapshot sees it (its transaction is older than the horizon heap
 * pruning uses): until then it stays pending, so a dump's rows hold what
 * its snapshot saw committed, as its other tables do, and not a batch that
 * committed while it ran.  A page whose room for adds is full keeps more
 * in its chain of overflow pages (format.h), read with the page by every
 * function here (the chain is given locked, or NULL).  The page's folded
 * xid (format.h) tells a scan whose snapshot is older than a fold that the
 * bits hold adds it does not see (on a standby, whose snapshots the
 * primary's horizon does not count, or in a copy by VACUUM FULL), and the
 * scan refuses the page (sbf_page_snapshot_block).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "shared.h"

/*
 * What a pending add of transaction xid counts as now.  The order matters
 * (see HeapTupleSatisfiesMVCC): a transaction is marked committed in the
 * commit log before it leaves the proc array, so "in progress" is asked
 * first; TransactionIdIsInProgress answers an xid older than every running
 * transaction's from RecentXmin without looking at the proc array.
 */
SbfXidStatus
sbf_xid_status(TransactionId xid)
{
	if (TransactionIdIsCurrentTransactionId(xid))
		return SBF_XID_OWN;
	if (TransactionIdIsInProgress(xid))
		return SBF_XID_IN_PROGRESS;
	if (TransactionIdDidCommit(xid))
		return SBF_XID_COMMITTED;
	return SBF_XID_ABORTED;
}

/*
 * The session's cache of ended transactions' statuses: direct-mapped by
 * transaction id, only final answers kept (a transaction that has committed
 * or aborted stays so).  The adds a batch meets come from the last few
 * hundred transactions, nearly consecutive ids, each met on many pages over
 * many calls: a call's own cache of 64 missed for most of them (1 GB,
 * batches of 1,000 new URLs: see docs/benchmarks.md).
 *
 * Pending adds keep 32-bit transaction ids, so an id may come back after
 * 2^32 transactions.  Every id on a page lies within 2^31 before the next
 * one to be assigned (VACUUM keeps relfrozenxid so, as for heap tuples), and
 * the cache is emptied once the next id has moved SBF_XID_CACHE_SPAN past
 * where it stood when the cache was last emptied: an id cached and an id
 * met later then both lie in a range narrower than 2^32, so they are the
 * same transaction when they are equal.
 */
#define SBF_XID_CACHE_SIZE	4096
#define SBF_XID_CACHE_SPAN	(UINT64CONST(1) << 30)

typedef struct SbfXidCache
{
	uint64		emptied;		/* the next full transaction id, when emptied */
	TransactionId xid[SBF_XID_CACHE_SIZE];	/* InvalidTransactionId: empty */
	uint8		status[SBF_XID_CACHE_SIZE]; /* an SbfXidStatus */
} SbfXidCache;

static SbfXidCache sbf_xid_cache;

void
sbf_xid_cache_begin(void)
{
	uint64		next = U64FromFullTransactionId(ReadNextFullTransactionId());

	if (next - sbf_xid_cache.emptied >= SBF_XID_CACHE_SPAN)
	{
		memset(sbf_xid_cache.xid, 0, sizeof(sbf_xid_cache.xid));
		sbf_xid_cache.emptied = next;
	}
}

/* sbf_xid_status through the session's cache (sbf_xid_cache_begin first) */
SbfXidStatus
sbf_xid_status_cached(TransactionId xid)
{
	int			slot = xid % SBF_XID_CACHE_SIZE;
	SbfXidStatus status;

	if (sbf_xid_cache.xid[slot] == xid && TransactionIdIsValid(xid))
		return (SbfXidStatus) sbf_xid_cache.status[slot];
	status = sbf_xid_status(xid);
	if (status == SBF_XID_COMMITTED || status == SBF_XID_ABORTED)
	{
		sbf_xid_cache.xid[slot] = xid;
		sbf_xid_cache.status[slot] = (uint8) status;
	}
	return status;
}

/*
 * An overflow page that is not what its data page's chain says it is: a
 * damaged chain is an ERROR, never a read outside a page nor a loop
 */
static void
sbf_chain_corrupted(Relation rel, BlockNumber owner, BlockNumber blkno,
					const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid overflow page %u of page %u in shared filter \"%s\"",
					blkno, owner, RelationGetRelationName(rel)),
			 errdetail("%s", what)));
}

static void
sbf_chain_check(Relation rel, Page page, BlockNumber owner, BlockNumber blkno)
{
	PageHeader	header = (PageHeader) page;
	const SbfOverflowHeader *over = sbf_overflow_header(page);
	LocationIndex special = BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque));

	if (PageIsNew(page))
		sbf_chain_corrupted(rel, owner, blkno, "The page was never written.");
	if (header->pd_pagesize_version != (BLCKSZ | PG_PAGE_LAYOUT_VERSION) ||
		header->pd_upper != special || header->pd_special != special ||
		header->pd_lower < SBF_OVERFLOW_START ||
		header->pd_lower > SBF_OVERFLOW_START + SBF_OVERFLOW_MAX * SBF_PENDING_BYTES ||
		(header->pd_lower - SBF_OVERFLOW_START) % SBF_PENDING_BYTES != 0)
		sbf_chain_corrupted(rel, owner, blkno, "Its page header is not an overflow page's.");
	if (over->magic != SBF_MAGIC_OVERFLOW || over->owner != owner || over->zero != 0)
		sbf_chain_corrupted(rel, owner, blkno, "It is not an overflow page of this data page.");
}

/*
 * Pin and lock (in mode, as the data page is) the overflow pages of data
 * page blkno, locked, in chain order: all of them with whole (an adder
 * looking for room), else only when the chain holds pending adds (a
 * reader).  A chain is checked page by page as it is followed.
 */
void
sbf_chain_lock(Relation rel, Page page, BlockNumber blkno, int mode,
			   bool whole, SbfChain *chain)
{
	const SbfOverflowLink *link = sbf_page_overflow_link(page);
	BlockNumber next = link->first;
	BlockNumber prev = blkno;
	BlockNumber nblocks;

	chain->n = 0;
	chain->size = 0;
	chain->bufs = NULL;
	if (next == 0 || (!whole && link->adds == 0))
		return;
	nblocks = RelationGetNumberOfBlocks(rel);
	while (next != 0)
	{
		Buffer		buf;

		/*
		 * overflow pages are allocated past the data pages, in ascending
		 * order, and linked at the chain's end: a chain that goes back
		 * would loop (and lock a page twice)
		 */
		if (next >= nblocks || next <= prev)
		{
			sbf_chain_unlock(chain);
			sbf_chain_corrupted(rel, blkno, next,
								next >= nblocks ? "The chain links to a page past the end of the relation." :
								"The chain goes back to an earlier page.");
		}
		prev = next;
		if (chain->n == chain->size)
		{
			chain->size = Max(4, chain->size * 2);
			chain->bufs = chain->bufs == NULL ?
				palloc(chain->size * sizeof(Buffer)) :
				repalloc(chain->bufs, chain->size * sizeof(Buffer));
		}
		buf = ReadBuffer(rel, next);
		LockBuffer(buf, mode);
		chain->bufs[chain->n++] = buf;
		sbf_chain_check(rel, BufferGetPage(buf), blkno, next);
		next = sbf_overflow_header(BufferGetPage(buf))->next;
	}
}

void
sbf_chain_unlock(SbfChain *chain)
{
	int			i;

	for (i = chain->n - 1; i >= 0; i--)
		UnlockReleaseBuffer(chain->bufs[i]);
	if (chain->bufs != NULL)
		pfree(chain->bufs);
	chain->n = 0;
	chain->size = 0;
	chain->bufs = NULL;
}

/*
 * Whether the value of line state is present to this session in the page:
 * all its bits set in its line, with the bits of the pending adds of that
 * line that this session counts as present set too (as if they had been
 * folded in, so that the answer does not depend on when they are), those
 * of the page's chain included (chain locked, or NULL).  The statuses of
 * the pending adds are taken from status when given (status[area][i],
 * shared_insert.c, in a critical section: nothing here can then fail),
 * else asked for each pending add of the line.
 */
bool
sbf_pending_test(const SbfSharedMeta *meta, Page page, const SbfChain *chain,
				 uint64 state, SbfXidStatus *const *status)
{
	uint64		line = sbf_line_of_state(state, SBF_PENDING_LINES);
	uint64		words[SBF_LINE_WORDS];
	int			a;
	int			i;

	Assert(meta->version == SBF_SHARED_LAYOUT_PENDING);
	memcpy(words, sbf_state_line_words(sbf_page_block(meta, page), state), SBF_LINE_BYTES);
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		for (i = 0; i < n; i++)
		{
			uint64		other = sbf_pending_state(&adds[i]);
			SbfXidStatus st;

			if (sbf_line_of_state(other, SBF_PENDING_LINES) != line)
				continue;
			st = status ? status[a][i] : sbf_xid_status(adds[i].xid);
			if (st == SBF_XID_OWN || st == SBF_XID_COMMITTED ||
				st == SBF_XID_COMMITTED_RECENT)
				(void) sbf_line_probe_state(words, meta->hashes, other, true);
		}
	}
	return sbf_line_probe_state(words, meta->hashes, state, false);
}

/*
 * Copy a data page's block as a reader sees it into dest (SBF_BLOCK_BYTES):
 * in the pending layout, its lines with the pending adds this session sees
 * (its chain's too: locked, or NULL) set in them, and zeros after the
 * lines, as in a row of the table and a snapshot.  Returns how many of its
 * pending adds belong to transactions still open (this one's included).
 */
int
sbf_page_visible_block(const SbfSharedMeta *meta, Page page,
					   const SbfChain *chain, uint8 *dest)
{
	const uint8 *block = sbf_page_block(meta, page);
	int			open = 0;
	int			a;
	int			i;

	if (meta->version != SBF_SHARED_LAYOUT_PENDING)
	{
		memcpy(dest, block, SBF_BLOCK_BYTES);
		return 0;
	}
	memcpy(dest, block, SBF_PENDING_LINES * SBF_LINE_BYTES);
	memset(dest + SBF_PENDING_LINES * SBF_LINE_BYTES, 0,
		   SBF_BLOCK_BYTES - SBF_PENDING_LINES * SBF_LINE_BYTES);
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		for (i = 0; i < n; i++)
		{
			SbfXidStatus status = sbf_xid_status(adds[i].xid);
			uint64		state = sbf_pending_state(&adds[i]);

			if (status == SBF_XID_OWN || status == SBF_XID_COMMITTED)
				(void) sbf_line_probe_state(sbf_state_line_words(dest, state),
											meta->hashes, state, true);
			if (status == SBF_XID_OWN || status == SBF_XID_IN_PROGRESS)
				open++;
		}
	}
	return open;
}

/*
 * Copy a data page's block as of a scan's snapshot into dest
 * (SBF_BLOCK_BYTES), for a row of the table: in the pending layout, its
 * lines with the pending adds of this transaction and of the transactions
 * the snapshot sees committed set in them, and zeros after the lines; the
 * adds of transactions that were running when the snapshot was taken, or
 * that began after, are left out, as a heap scan leaves out their rows.
 * Returns false when the bits themselves may hold adds the snapshot does
 * not see: the page's folded xid is not older than the snapshot's xmin
 * (a page full of pending adds folded them, or a standby replays a fold
 * its primary made past this snapshot).  dest is then filled all the same.
 */
bool
sbf_page_snapshot_block(const SbfSharedMeta *meta, Page page,
						const SbfChain *chain, Snapshot snapshot, uint8 *dest)
{
	TransactionId folded;
	int			a;
	int			i;

	if (meta->version != SBF_SHARED_LAYOUT_PENDING || snapshot == NULL ||
		!IsMVCCSnapshot(snapshot))
	{
		(void) sbf_page_visible_block(meta, page, chain, dest);
		return true;
	}
	memcpy(dest, sbf_page_block(meta, page), SBF_PENDING_LINES * SBF_LINE_BYTES);
	memset(dest + SBF_PENDING_LINES * SBF_LINE_BYTES, 0,
		   SBF_BLOCK_BYTES - SBF_PENDING_LINES * SBF_LINE_BYTES);
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		for (i = 0; i < n; i++)
		{
			TransactionId xid = adds[i].xid;
			uint64		state = sbf_pending_state(&adds[i]);

			/* (as HeapTupleSatisfiesMVCC: the snapshot first, then the log) */
			if (TransactionIdIsCurrentTransactionId(xid) ||
				(!XidInMVCCSnapshot(xid, snapshot) && TransactionIdDidCommit(xid)))
				(void) sbf_line_probe_state(sbf_state_line_words(dest, state),
											meta->hashes, state, true);
		}
	}
	folded = sbf_page_folded_xid(page);
	return !TransactionIdIsValid(folded) ||
		TransactionIdPrecedes(folded, snapshot->xmin);
}

/*
 * The folded xid a copy of the page gets when its committed pending adds
 * are folded into the copy's bits (VACUUM FULL): the newest of theirs and
 * the page's own
 */
TransactionId
sbf_page_newest_committed(const SbfSharedMeta *meta, Page page,
						  const SbfChain *chain)
{
	TransactionId newest = sbf_page_folded_xid(page);
	int			a;
	int			i;

	Assert(meta->version == SBF_SHARED_LAYOUT_PENDING);
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		for (i = 0; i < n; i++)
			if (sbf_xid_status(adds[i].xid) == SBF_XID_COMMITTED &&
				(!TransactionIdIsValid(newest) ||
				 TransactionIdFollows(adds[i].xid, newest)))
				newest = adds[i].xid;
	}
	return newest;
}

/*
 * Whether the value of line state is present to this session in the page
 * (as sbf_pending_test answers); when it is not but another transaction,
 * still open or prepared, has a pending add of it, that transaction is set
 * in *wait: an adder waits for it, as for one in the page it adds to.  The
 * bits alone answer most values (a seen value's are set); only the page's
 * pending adds of the value's line have their transaction's status asked.
 */
bool
sbf_pending_lookup(const SbfSharedMeta *meta, Page page, const SbfChain *chain,
				   uint64 state, TransactionId *wait)
{
	uint64		line = sbf_line_of_state(state, SBF_PENDING_LINES);
	uint64	   *bits = sbf_state_line_words(sbf_page_block(meta, page), state);
	uint64		words[SBF_LINE_WORDS];
	TransactionId open = InvalidTransactionId;
	int			a;
	int			i;

	if (sbf_line_probe_state(bits, meta->hashes, state, false))
		return true;
	memcpy(words, bits, SBF_LINE_BYTES);
	for (a = 0; a < sbf_chain_areas(chain); a++)
	{
		int			n;
		const SbfPendingAdd *adds = sbf_chain_area_adds(page, chain, a, &n);

		for (i = 0; i < n; i++)
		{
			uint64		other = sbf_pending_state(&adds[i]);
			SbfXidStatus st;

			if (sbf_line_of_state(other, SBF_PENDING_LINES) != line)
				continue;
			st = sbf_xid_status(adds[i].xid);
			if (st == SBF_XID_OWN || st == SBF_XID_COMMITTED)
				(void) sbf_line_probe_state(words, meta->hashes, other, true);
			else if (st == SBF_XID_IN_PROGRESS && other == state)
				open = adds[i].xid;
		}
	}
	if (sbf_line_probe_state(words, meta->hashes, state, false))
		return true;
	if (TransactionIdIsValid(open))
		*wait = open;
	return false;
}
