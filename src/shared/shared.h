/*-------------------------------------------------------------------------
 *
 * shared.h
 *	  Shared filters: the API between the files of src/shared, each of
 *	  which calls only those below it (README.md there):
 *
 *	  shared_meta.c		the metapage of each kind, as structures
 *	  shared_storage.c	a new filter's storage, the init fork
 *	  shared_page.c		opening a filter, its cached metapage, buffers
 *	  shared_wal.c		the generic WAL of a change to a page
 *	  shared_pending.c	pending adds and overflow pages, as readers see them
 *	  shared_grow.c		the count of adds, growth by sub-filters
 *	  shared_insert.c	the add path of bloom and stable filters
 *	  shared_read.c		their read path
 *	  shared_sliding.c	the sliding filters' paths
 *	  shared_create.c	shared_*_create and shared_reset
 *	  shared_am.c		the table access method sbf_filter
 *	  shared_functions.c	the SQL functions that test, add and describe
 *
 * A shared filter is a table of access method sbf_filter whose pages are
 * the filter's own (layout in format.h and docs/format.md).  All k probes
 * of an element fall in one data page, so testing an element is one
 * buffer share-locked and adding it one buffer locked exclusively.
 *
 * The metapage's parameters never change after creation (its state, a
 * transactional filter's counts and sub-filters or a sliding filter's
 * clock, does, and is read again from the page where it matters), so each
 * backend reads it once
 * and keeps it in the relcache entry's rd_amcache, with the number of
 * blocks it last saw (a probe of a page below it costs no lseek).  What
 * gives a filter other parameters gives it new storage (TRUNCATE, then a
 * restore), which invalidates the relcache entry and the copy with it.
 *
 * Every page that is not new is checked to have the layout it was given
 * (sbf_shared_check_page) before anything is read from it or written to
 * it: a damaged header is an ERROR, not a write outside the page.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SHARED_H
#define SBF_SHARED_H

#include "postgres.h"

#include "access/tableam.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/acl.h"
#include "utils/rel.h"

#include "batch_sort.h"
#include "format.h"
#include "hash.h"
#include "prng.h"
#include "stablebloom.h"

StaticAssertDecl(SBF_LINES_BLOCK_OFFSET + SBF_BLOCK_BYTES +
				 MAXALIGN(sizeof(SbfPageOpaque)) <= BLCKSZ,
				 "a shared filter's block must fit a page");
StaticAssertDecl(SBF_LINES_BLOCK_OFFSET >= MAXALIGN(SizeOfPageHeaderData) &&
				 SBF_BLOCK_BYTES % SBF_LINE_BYTES == 0 &&
				 SBF_LINE_BITS == 1 << SBF_LINE_PROBE_BITS,
				 "the line layout's block is whole lines after the page header");
StaticAssertDecl(sizeof(SbfSharedMeta) == 64,
				 "the metapage's contents are 64 bytes");
StaticAssertDecl(sizeof(SbfSubFilter) == 40 &&
				 sizeof(SbfSharedState) == 32 + 40 * SBF_MAX_SUBFILTERS &&
				 MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfSharedMeta) +
				 sizeof(SbfSharedState) <= BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)),
				 "the metapage's state follows its parameters within the page");
StaticAssertDecl(sizeof(SbfSlidingState) == 64 && sizeof(SbfStampedPage) == 16 &&
				 MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfSharedMeta) +
				 sizeof(SbfSharedState) + sizeof(SbfSlidingState) <=
				 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)),
				 "a sliding filter's metapage holds its clock after its state");
StaticAssertDecl(sizeof(SbfPendingAdd) == SBF_PENDING_BYTES &&
				 SBF_PENDING_START + SBF_PENDING_MAX * SBF_PENDING_BYTES <=
				 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)) &&
				 SBF_PENDING_START + SBF_PENDING_BYTES * SBF_PENDING_MAX >
				 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)) - SBF_PENDING_BYTES,
				 "the pending adds fill the page after the lines");

StaticAssertDecl(SBF_OVERFLOW_START == MAXALIGN(SizeOfPageHeaderData) +
				 sizeof(SbfOverflowHeader) &&
				 SBF_OVERFLOW_START + SBF_OVERFLOW_MAX * SBF_PENDING_BYTES <=
				 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)) &&
				 SBF_OVERFLOW_START + (SBF_OVERFLOW_MAX + 1) * SBF_PENDING_BYTES >
				 BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque)) &&
				 MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfOverflowLink) <=
				 SBF_LINES_BLOCK_OFFSET,
				 "an overflow page's adds fill it; a data page's link is before its lines");

/* A hint to bring an address into the cache; nothing where unsupported */
#if defined(__GNUC__) || defined(__clang__)
#define sbf_prefetch(addr)	__builtin_prefetch(addr)
#else
#define sbf_prefetch(addr)	((void) (addr))
#endif

/* The metapage, and the data pages 1..pages */
#define SBF_METAPAGE_BLKNO		0

/* A data row of the table (COPY, pg_dump): the PRNG state, then the block */
#define SBF_ROW_DATA_SIZE		(sizeof(uint64) + SBF_BLOCK_BYTES)

/*
 * What rd_amcache holds: the metapage, and for a filter in shared buffers
 * the buffer each page was last found in (recent[page % nrecent], a power
 * of two: 4 bytes a page, at most SBF_RECENT_MAX entries), so that a page
 * is pinned without a lookup in the buffer mapping table
 * (ReadRecentBuffer checks that the buffer still holds it) and its buffer
 * can be prefetched before it is pinned.
 */
#define SBF_RECENT_MAX			(1 << 20)

typedef struct SbfSharedCache
{
	SbfSharedMeta meta;
	SbfSharedState state;		/* as last read (one sub-filter, the
								 * metapage's, in the layouts without) */
	SbfSlidingState sliding;	/* a sliding filter's, as last read */
	BlockNumber nblocks;		/* relation size last seen */
	uint32		nrecent;		/* 0 for temporary filters (local buffers) */
	Buffer		recent[FLEXIBLE_ARRAY_MEMBER];
} SbfSharedCache;

/*
 * A batch prefetches what adding an item will read this many items ahead
 * of the one it adds (sbf_shared_prefetch_ahead)
 */
#define SBF_PREFETCH_DISTANCE	8

/* How far a batch's prefetching has gone: items[0 .. n-1] asked for */
typedef struct SbfPrefetchAhead
{
	int			slots;			/* recent-buffer cache entries */
	int			pages;			/* buffers, headers, lines */
	int			folds;			/* lines the pending adds fold into */
} SbfPrefetchAhead;

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
 * A batch is hashed, sorted and added this many values at a time, so that
 * its working memory is bounded (24 bytes a value) whatever its size, and
 * a cancel is answered within one chunk's sort.  Chunks are added in input
 * order, so the answers are those of the whole batch at once.
 */
#define SBF_BATCH_CHUNK		(1 << 19)

extern const TableAmRoutine sbf_filter_methods;

/* shared_page.c */
extern Relation sbf_shared_open(Oid relid, LOCKMODE lockmode, AclMode mode);
extern void sbf_shared_check_relation(Relation rel, int *page_att, int *data_att);
extern void sbf_shared_check_recovery(Relation rel);
extern bool sbf_shared_has_meta(Relation rel);
extern const SbfSharedMeta *sbf_shared_meta(Relation rel);
extern const SbfSharedState *sbf_shared_state(Relation rel, bool refresh);
extern void sbf_shared_validate_meta(const SbfSharedMeta *meta, int sqlstate,
									 const char *relname);
extern void sbf_shared_meta_page_init(Page page, const SbfSharedMeta *meta,
									  const SbfSharedState *state,
									  const SbfSlidingState *sliding);
extern const SbfSlidingState *sbf_shared_sliding(Relation rel, bool refresh);
extern Buffer sbf_shared_read(Relation rel, BlockNumber blkno,
							  BufferAccessStrategy strategy);
extern Buffer sbf_shared_read_extend(Relation rel, BlockNumber blkno);
extern Buffer sbf_shared_pin(Relation rel, BlockNumber blkno);
extern void sbf_mark_dirty(Buffer buf);
extern bool sbf_shared_block_exists(Relation rel, BlockNumber blkno);
extern bool sbf_shared_lock_for_write(Relation rel, const SbfSharedMeta *meta,
									  BlockNumber blkno, Buffer *buf);
extern Buffer sbf_shared_pin_existing(Relation rel, BlockNumber blkno);
extern void sbf_shared_sort_by_page(SbfBatchItem *items, int n, uint64 pages);
extern void sbf_shared_prefetch_ahead(Relation rel, const SbfSharedMeta *meta,
									  const SbfBatchItem *items, int n, int end,
									  SbfPrefetchAhead *ahead);
extern void sbf_shared_page_init(Page page, const SbfSharedMeta *meta,
								 BlockNumber blkno);
extern void sbf_shared_write_page(Relation rel, BlockNumber blkno,
								  uint64 prng, const uint8 *block);
extern bool sbf_block_is_zero(const uint8 *block);
extern void sbf_shared_page_corrupted(Relation rel, const SbfSharedMeta *meta,
									  Page page, BlockNumber blkno);

/*
 * The overflow pages of a data page of the pending layout (format.h), as a
 * reader or an adder holds them while it holds the data page's lock:
 * pinned, in chain order, and copied (sbf_chain_read, shared_pending.c).
 * n is 0 when the chain holds no pending add, or was not asked for.
 */
typedef struct SbfChain
{
	int			n;
	int			size;			/* of bufs and copies */
	Buffer	   *bufs;
	char	   *copies;			/* page i's at copies + i * BLCKSZ */
} SbfChain;

/* shared_pending.c */
typedef enum SbfXidStatus
{
	SBF_XID_OWN,				/* this transaction or one of its open
								 * subtransactions */
	SBF_XID_IN_PROGRESS,		/* another transaction, still open (or
								 * prepared) */
	SBF_XID_COMMITTED,
	SBF_XID_COMMITTED_RECENT,	/* committed, but a snapshot that does not
								 * see it may still be running: present,
								 * and kept pending (shared_insert.c) */
	SBF_XID_ABORTED				/* or crashed before it committed */
} SbfXidStatus;

/*
 * The statuses of transactions that have ended, as this session found them
 * (shared_pending.c): an add folds the pending adds it meets, left by the
 * last few hundred transactions (each batch's adds land on as many pages as
 * it has values, and wait there for the next add to the page), and a
 * status in the commit log costs a lock and a search of its buffers.
 * sbf_xid_cache_begin is called before a call or a page's statuses are
 * taken from it.
 */
extern void sbf_xid_cache_begin(void);
extern SbfXidStatus sbf_xid_status_cached(TransactionId xid);
extern SbfXidStatus sbf_xid_status(TransactionId xid);
extern void sbf_chain_read(Relation rel, Page page, BlockNumber blkno,
						   bool whole, SbfChain *chain);
extern void sbf_chain_release(SbfChain *chain);
extern bool sbf_pending_test(const SbfSharedMeta *meta, Page page,
							 const SbfChain *chain, uint64 state,
							 SbfXidStatus *const *status);
extern int	sbf_page_visible_block(const SbfSharedMeta *meta, Page page,
								   const SbfChain *chain, uint8 *dest);
extern bool sbf_page_snapshot_block(const SbfSharedMeta *meta, Page page,
									const SbfChain *chain, Snapshot snapshot,
									uint8 *dest);
extern TransactionId sbf_page_newest_committed(const SbfSharedMeta *meta,
											   Page page, const SbfChain *chain);
extern bool sbf_pending_lookup(const SbfSharedMeta *meta, Page page,
							   const SbfChain *chain, uint64 state,
							   TransactionId *wait);

/* shared_read.c */
extern bool sbf_contains_hash(Relation rel, SbfHash hash);
extern void sbf_info(Relation rel, StringInfo out, bool read_pages);
extern void sbf_snapshot_blocks(Relation rel, const SbfSharedMeta *meta,
								uint8 *dest);

/* shared_insert.c */
extern void sbf_add_call_begin(SbfAddCall *call, Relation rel);
extern int	sbf_add_call_chunk(SbfAddCall *call);
extern void sbf_add_items(SbfAddCall *call, SbfBatchItem *items, int n,
						  bool *answers);
extern void sbf_add_call_count(SbfAddCall *call);
extern void sbf_add_call_end(SbfAddCall *call);
extern TransactionId sbf_pending_fold_page(Relation rel, const SbfSharedMeta *meta,
										   BlockNumber blkno,
										   BufferAccessStrategy strategy,
										   TransactionId forget);

/* The WAL of a change to a page: shared_insert.c */
typedef struct SbfDelta
{
	int			len;
	char		data[2 * BLCKSZ];
} SbfDelta;

extern void sbf_delta_append(SbfDelta *delta, const char *page, Size offset,
							 Size length);
extern void sbf_delta_region(SbfDelta *delta, const char *before,
							 const char *after, Size start, Size end);
extern void sbf_log_delta(Buffer buf, SbfDelta *delta);
extern void sbf_delta_apply(Page page, const SbfDelta *delta);
extern void sbf_log_deltas(const Buffer *bufs, SbfDelta *const *deltas, int n);

/* shared_grow.c */
extern void sbf_state_init(SbfSharedState *state, const SbfSharedMeta *meta,
						   double growth, double tightening);
extern void sbf_check_growth(double growth, double tightening, bool transactional);
extern double sbf_first_fpr(double fpr, double growth, double tightening);
extern void sbf_shared_validate_state(const SbfSharedMeta *meta,
									  const SbfSharedState *state,
									  int sqlstate, const char *relname);
extern int	sbf_sub_of_block(const SbfSharedState *state, BlockNumber blkno);
extern void sbf_sub_meta(const SbfSharedMeta *meta, const SbfSubFilter *sub,
						 SbfSharedMeta *out);
extern void sbf_shared_count_adds(Relation rel, const int64 *added, int nsub);
extern double sbf_state_expected_fpr(const SbfSharedMeta *meta,
									 const SbfSharedState *state);

/* shared_create.c */
extern void sbf_shared_init_storage(Relation rel, const SbfSharedMeta *meta,
									const SbfSharedState *state,
									const SbfSlidingState *sliding);
extern void sbf_shared_write_init_fork(Relation rel, const SbfSharedMeta *meta,
									   const SbfSharedState *state,
									   const SbfSlidingState *sliding);
extern void sbf_shared_repair_init_fork(Relation rel, const SbfSharedMeta *meta,
										const SbfSharedState *state,
										const SbfSlidingState *sliding);
extern Oid	sbf_shared_create(text *name, const SbfSharedMeta *meta,
							  const SbfSharedState *state,
							  const SbfSlidingState *sliding, bool unlogged,
							  bool if_not_exists);
extern void sbf_shared_meta_common(SbfSharedMeta *meta, int kind, int64 seed);

/* shared_sliding.c */
extern void sbf_sliding_validate(const SbfSharedMeta *meta,
								 const SbfSlidingState *sliding, int sqlstate,
								 const char *relname);
extern void sbf_sliding_validate_meta(const SbfSharedMeta *meta, int sqlstate,
									  const char *relname);
extern bool sbf_sliding_contains(Relation rel, SbfHash hash, bool has_at,
								 TimestampTz at);
extern void sbf_sliding_add(Relation rel, SbfBatchItem *items, int n,
							const int *index, bool *answers, bool has_at,
							TimestampTz at);
extern void sbf_sliding_info(Relation rel, StringInfo buf, bool read_pages);
extern const char *sbf_kind_name(int kind);
extern double sbf_sliding_blocked_fpr(int hashes, uint64 cells, double pages,
									  double live);

/* M = 2^b - 1: the stamps a cell of b bits tells apart */
static inline int64
sbf_stamp_modulus(int cell_bits)
{
	return (int64) ((UINT64CONST(1) << cell_bits) - 1);
}

/* H: no arrival at or after clock C - tolerance finds a cell older than C - H */
static inline int64
sbf_sliding_horizon(const SbfSlidingState *sliding)
{
	return sliding->reach + sliding->tolerance;
}

/* The clock of a time window that has seen no arrival yet */
#define SBF_SLIDING_NO_CLOCK	PG_INT64_MIN

/* The data page of an element: page 1 + its block */
static inline BlockNumber
sbf_shared_page_of(const SbfSharedMeta *meta, SbfHash hash)
{
	return (BlockNumber) (1 + sbf_block_of(hash, meta->pages));
}

static inline uint64
sbf_shared_page_cells(const SbfSharedMeta *meta)
{
	return meta->block_bits / meta->cell_bits;
}

/*
 * Where a page's contents start: the metapage's fields right after the
 * page header, a data page's block there too or, in the line layouts, at
 * SBF_LINES_BLOCK_OFFSET (format.h).  meta may be NULL for the metapage.
 */
static inline Size
sbf_contents_offset(const SbfSharedMeta *meta, BlockNumber blkno)
{
	if (blkno != SBF_METAPAGE_BLKNO && meta->version != SBF_SHARED_LAYOUT_PAGES)
		return SBF_LINES_BLOCK_OFFSET;
	return MAXALIGN(SizeOfPageHeaderData);
}

/*
 * Where a page's pd_lower must be: at the end of its contents; in the
 * pending layout, at the end of one of its 0..SBF_PENDING_MAX pending adds
 */
static inline bool
sbf_page_lower_valid(const SbfSharedMeta *meta, BlockNumber blkno,
					 LocationIndex lower)
{
	/* a transactional filter's metapage has its state after its fields */
	if (blkno == SBF_METAPAGE_BLKNO &&
		(lower == MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfSharedMeta) +
		 sizeof(SbfSharedState) ||
		 lower == MAXALIGN(SizeOfPageHeaderData) + sizeof(SbfSharedMeta) +
		 sizeof(SbfSharedState) + sizeof(SbfSlidingState)))
		return true;
	if (blkno != SBF_METAPAGE_BLKNO && meta->version == SBF_SHARED_LAYOUT_PENDING)
		return lower >= SBF_PENDING_START &&
			lower <= SBF_PENDING_START + SBF_PENDING_MAX * SBF_PENDING_BYTES &&
			(lower - SBF_PENDING_START) % SBF_PENDING_BYTES == 0;
	return lower == sbf_contents_offset(meta, blkno) +
		((blkno == SBF_METAPAGE_BLKNO) ? sizeof(SbfSharedMeta) : SBF_BLOCK_BYTES);
}

/*
 * A page that is not new must have the layout sbf_shared_page_init gave it:
 * its block (or the metapage's fields) where its layout puts them, pd_lower
 * at their end (or at the end of its pending adds), and the special space
 * at the end of the page.  Checked whenever such a page is read, before
 * anything is taken from it: a corrupted header would otherwise put the
 * special space outside the page, and a pd_lower inside the block would
 * make generic WAL zero part of it.  meta may be NULL for the metapage.
 */
static inline void
sbf_shared_check_page(Relation rel, const SbfSharedMeta *meta, Page page,
					  BlockNumber blkno)
{
	PageHeader	header = (PageHeader) page;
	LocationIndex special = BLCKSZ - MAXALIGN(sizeof(SbfPageOpaque));

	if (unlikely(header->pd_pagesize_version != (BLCKSZ | PG_PAGE_LAYOUT_VERSION) ||
				 !sbf_page_lower_valid(meta, blkno, header->pd_lower) ||
				 header->pd_upper != special ||
				 header->pd_special != special))
		sbf_shared_page_corrupted(rel, meta, page, blkno);
}

/* Does a metapage of this layout have a state (format.h)? */
static inline bool
sbf_meta_has_state(const SbfSharedMeta *meta)
{
	return meta->version == SBF_SHARED_LAYOUT_PENDING ||
		meta->version == SBF_SHARED_LAYOUT_STAMPED;
}

/* Where a metapage's contents end: after its state and clock, if any */
static inline Size
sbf_meta_contents_size(const SbfSharedMeta *meta)
{
	if (meta->version == SBF_SHARED_LAYOUT_STAMPED)
		return sizeof(SbfSharedMeta) + sizeof(SbfSharedState) + sizeof(SbfSlidingState);
	if (meta->version == SBF_SHARED_LAYOUT_PENDING)
		return sizeof(SbfSharedMeta) + sizeof(SbfSharedState);
	return sizeof(SbfSharedMeta);
}

/* A sliding filter's clock and window, after its state on the metapage */
static inline SbfSlidingState *
sbf_meta_page_sliding(Page page)
{
	return (SbfSlidingState *) (PageGetContents(page) + sizeof(SbfSharedMeta) +
								sizeof(SbfSharedState));
}

/* The state on a metapage that has one */
static inline SbfSharedState *
sbf_meta_page_state(Page page)
{
	return (SbfSharedState *) (PageGetContents(page) + sizeof(SbfSharedMeta));
}

/* The data page of an element in a sub-filter */
static inline BlockNumber
sbf_sub_page_of(const SbfSubFilter *sub, SbfHash hash)
{
	return (BlockNumber) (sub->first + sbf_block_of(hash, sub->pages));
}

/* The data pages of all sub-filters: 1..this */
static inline uint64
sbf_state_pages(const SbfSharedState *state)
{
	const SbfSubFilter *last = &state->sub[state->nsub - 1];

	return (uint64) last->first + last->pages - 1;
}

/* The pending layout's adds on a page, and how many there are */
static inline SbfPendingAdd *
sbf_pending_adds(Page page)
{
	return (SbfPendingAdd *) ((char *) page + SBF_PENDING_START);
}

static inline int
sbf_pending_count(Page page)
{
	return (((PageHeader) page)->pd_lower - SBF_PENDING_START) / SBF_PENDING_BYTES;
}

/* A data page's link to its overflow pages (format.h) */
static inline SbfOverflowLink *
sbf_page_overflow_link(Page page)
{
	return (SbfOverflowLink *) PageGetContents(page);
}

/* An overflow page's header, its adds, and how many there are */
static inline SbfOverflowHeader *
sbf_overflow_header(Page page)
{
	return (SbfOverflowHeader *) PageGetContents(page);
}

static inline SbfPendingAdd *
sbf_overflow_adds(Page page)
{
	return (SbfPendingAdd *) ((char *) page + SBF_OVERFLOW_START);
}

static inline int
sbf_overflow_count(Page page)
{
	return (((PageHeader) page)->pd_lower - SBF_OVERFLOW_START) / SBF_PENDING_BYTES;
}

/*
 * The pending adds of area a of a data page and its chain: area 0 is the
 * data page's own room, area 1 + i the chain's overflow page i
 */
static inline int
sbf_chain_areas(const SbfChain *chain)
{
	return 1 + (chain != NULL ? chain->n : 0);
}

static inline Page
sbf_chain_area_page(Page page, const SbfChain *chain, int area)
{
	return area == 0 ? page : (Page) (chain->copies + (area - 1) * (Size) BLCKSZ);
}

static inline SbfPendingAdd *
sbf_chain_area_adds(Page page, const SbfChain *chain, int area, int *count)
{
	Page		p = sbf_chain_area_page(page, chain, area);

	if (area == 0)
	{
		*count = sbf_pending_count(p);
		return sbf_pending_adds(p);
	}
	*count = sbf_overflow_count(p);
	return sbf_overflow_adds(p);
}

/*
 * The pending layout's folded xid, in the special space (format.h): the
 * newest transaction whose adds were folded into the page's bits, or
 * InvalidTransactionId
 */
static inline TransactionId
sbf_page_folded_xid(Page page)
{
	return (TransactionId) ((SbfPageOpaque *) PageGetSpecialPointer(page))->prng;
}

static inline void
sbf_page_set_folded_xid(Page page, TransactionId xid)
{
	((SbfPageOpaque *) PageGetSpecialPointer(page))->prng = xid;
}

static inline uint64
sbf_pending_state(const SbfPendingAdd *add)
{
	return ((uint64) add->state_hi << 32) | add->state_lo;
}

/* A data page's block */
static inline uint8 *
sbf_page_block(const SbfSharedMeta *meta, Page page)
{
	return (uint8 *) page + sbf_contents_offset(meta, 1);
}

static inline SbfPageOpaque *
sbf_page_opaque(Page page)
{
	return (SbfPageOpaque *) PageGetSpecialPointer(page);
}

/* The line layout: the 8 words of the element's line in its block */
static inline uint64 *
sbf_line_words(uint8 *block, SbfHash hash)
{
	return (uint64 *) (block + sbf_line_of(hash, SBF_BLOCK_LINES) * SBF_LINE_BYTES);
}

/* The pending layout: the 8 words of the line of a line state */
static inline uint64 *
sbf_state_line_words(uint8 *block, uint64 state)
{
	return (uint64 *) (block + sbf_line_of_state(state, SBF_PENDING_LINES) * SBF_LINE_BYTES);
}

/*
 * All k probed cells (bits) of the element's page are non-zero (in the
 * pending layout: in the bits, not counting the page's pending adds)
 */
static inline bool
sbf_page_test(const SbfSharedMeta *meta, const uint8 *block, SbfHash hash)
{
	uint64		span = sbf_shared_page_cells(meta);
	SbfProbe	probe;
	int			i;

	if (meta->version == SBF_SHARED_LAYOUT_PENDING)
	{
		uint64		state = sbf_line_state(hash);

		return sbf_line_probe_state(sbf_state_line_words((uint8 *) block, state),
									meta->hashes, state, false);
	}
	if (meta->version == SBF_SHARED_LAYOUT_LINES)
		return sbf_line_probe(sbf_line_words((uint8 *) block, hash),
							  meta->hashes, hash, false);
	sbf_probe_init(&probe, hash);
	for (i = 0; i < meta->hashes; i++)
		if (sbf_cell_get(block, meta->cell_bits, sbf_probe_next(&probe, span)) == 0)
			return false;
	return true;
}

/*
 * One insertion into the element's page; returns whether all k cells were
 * non-zero before.  For bloom (max 1, 1-bit cells, no decrements) this sets
 * k bits, in one line in the line layout.  For the stable kind it is Deng
 * & Rafiei's insertion confined to the page (see stablebloom_add_hash): the
 * P decremented cells are consecutive, mod the page's cells, from a start
 * drawn from the page's own PRNG, so one insertion touches one page.
 * (The pending layout adds through pending adds: shared_insert.c.)
 */
static inline bool
sbf_page_add(const SbfSharedMeta *meta, uint8 *block, SbfPageOpaque *opaque,
			 SbfHash hash)
{
	uint64		probes[SBF_MAX_HASHES];
	uint64		span = sbf_shared_page_cells(meta);
	bool		present = true;
	SbfProbe	probe;
	int			i;

	if (meta->version == SBF_SHARED_LAYOUT_LINES)
		return sbf_line_probe(sbf_line_words(block, hash), meta->hashes, hash, true);

	sbf_probe_init(&probe, hash);
	for (i = 0; i < meta->hashes; i++)
	{
		probes[i] = sbf_probe_next(&probe, span);
		if (present && sbf_cell_get(block, meta->cell_bits, probes[i]) == 0)
			present = false;
	}

	if (meta->decrements > 0)
	{
		uint64		cell = prng_below(splitmix64_next(&opaque->prng), span);
		uint64		j;

		for (j = 0; j < meta->decrements; j++)
		{
			uint32		v = sbf_cell_get(block, meta->cell_bits, cell);

			if (v > 0)
				sbf_cell_set(block, meta->cell_bits, cell, v - 1);
			if (++cell == span)
				cell = 0;
		}
	}

	for (i = 0; i < meta->hashes; i++)
		sbf_cell_set(block, meta->cell_bits, probes[i], meta->max);
	return present;
}

#endif							/* SBF_SHARED_H */
