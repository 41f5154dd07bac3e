/*-------------------------------------------------------------------------
 *
 * shared_sliding.c
 *	  Shared sliding filters: testing, adding and describing a filter of
 *	  the stamped layout (SBF_SHARED_LAYOUT_STAMPED, format.h); made by
 *	  shared_create.c, called by shared_functions.c.
 *
 * A shared sliding filter answers "was this value seen within the window?"
 * where the window is a number of arrivals or a time.  It is the stamped
 * layout of the slidingbloom type (exact expiry: a cell holds the clock of
 * the arrival that last set it) cut into pages as the other shared
 * filters are: all k cells of a value in one data page, so a test reads
 * one page and a test-and-add locks one.
 *
 * The clock is on the metapage (SbfSlidingState).  A window of arrivals
 * counts them per call: a call reserves as many clock values as it has
 * values, in one change of the metapage, and numbers its values in input
 * order, so the metapage is locked once a call, not once a value.  A
 * window of time takes the clock as the tick of the arrival's timestamp,
 * and changes the metapage only when the tick moves on (64 ticks a
 * window).
 *
 * Ageing is lazy, in O(touched pages): a page records the clock it was
 * last aged at and the newest clock stamped into it, and a writer ages it
 * only when it changes it: zeroed when everything in it is dead, its dead
 * cells cleared when its clock has moved a whole period since it was last
 * aged.  Nothing ever passes over the whole filter.  Readers never write:
 * they decode each cell relative to their clock, and take a page whose
 * newest stamp is older than the window for empty, so a standby answers as
 * the primary did at that point of the WAL.
 *
 * Adds are immediate, not transactional: a stamp is a clock, not a bit a
 * pending add could later fold in, and the window itself forgets.  What a
 * rolled-back transaction added stays until the window passes (only
 * "seen" answers more).  Logged filters change their pages through
 * generic WAL, as the other kinds do.
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
#include "common/int.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "shared.h"
#include "sizing.h"

/* The cells of a data page's block, after its SbfStampedPage */
static inline SbfStampedPage *
sbf_stamped_header(uint8 *block)
{
	return (SbfStampedPage *) block;
}

static inline uint32
sbf_stamp_get(const uint8 *cells, int cell_bits, uint64 i)
{
	if (cell_bits == 8)
		return cells[i];
	if (cell_bits == 16)
	{
		uint16		v;

		memcpy(&v, cells + 2 * i, sizeof(v));
		return v;
	}
	else
	{
		uint32		v;

		memcpy(&v, cells + 4 * i, sizeof(v));
		return v;
	}
}

static inline void
sbf_stamp_set(uint8 *cells, int cell_bits, uint64 i, uint32 value)
{
	if (cell_bits == 8)
		cells[i] = (uint8) value;
	else if (cell_bits == 16)
	{
		uint16		v = (uint16) value;

		memcpy(cells + 2 * i, &v, sizeof(v));
	}
	else
		memcpy(cells + 4 * i, &value, sizeof(value));
}

/* A cell's value for clock s: (s mod M) + 1 */
static inline uint32
sbf_stamp_encode(int64 s, int64 modulus)
{
	int64		r = s % modulus;

	if (r < 0)
		r += modulus;
	return (uint32) (r + 1);
}

/* ref mod M, in [0, M) */
static inline int64
sbf_stamp_residue(int64 ref, int64 modulus)
{
	int64		r = ref % modulus;

	return (r < 0) ? r + modulus : r;
}

/*
 * The age ref - s of the clock s in (ref - M, ref] that a non-zero cell
 * holds (its decoding), from ref's residue: no division a cell
 */
static inline int64
sbf_stamp_age(uint32 cell, int64 residue, int64 modulus)
{
	int64		d = residue - (int64) (cell - 1);

	return (d < 0) ? d + modulus : d;
}

/*
 * Are the value's k cells in the block all stamped at or after since,
 * decoded relative to ref (every stamp of the page is at most ref)?
 */
static bool
sbf_stamped_test(const SbfSharedMeta *meta, const uint8 *cells, SbfHash hash,
				 int64 ref, int64 since)
{
	uint64		span = sbf_shared_page_cells(meta);
	int64		modulus = sbf_stamp_modulus(meta->cell_bits);
	int64		residue = sbf_stamp_residue(ref, modulus);
	SbfProbe	probe;
	int			i;

	/* (a stamp in the future of since is live: ref >= since is not needed) */
	sbf_probe_init(&probe, hash);
	for (i = 0; i < meta->hashes; i++)
	{
		uint32		cell = sbf_stamp_get(cells, meta->cell_bits,
										 sbf_probe_next(&probe, span));

		if (cell == 0 || ref - sbf_stamp_age(cell, residue, modulus) < since)
			return false;
	}
	return true;
}

/*
 * A page's worth of scratch for the bytes a change overwrote, and the
 * fragments of what it changed, one of each per backend: the metapage's
 * clock (sbf_sliding_advance) and a data page's adds (sbf_sliding_add_group)
 * are logged one at a time
 */
static PGAlignedBlock sbf_sliding_before;
static SbfDelta sbf_sliding_delta;

/*
 * The 8-byte words of a page an add may change, each copied into BEFORE (a
 * page's worth of scratch, at the word's offset) when first touched, before
 * it changes: the add then logs the bytes that differ from the copy
 * (sbf_delta_region, as the line layout compares its lines), not the
 * page's 8 kB nor the touched words whole (130 to 174 bytes of WAL a URL
 * in bench/shared.sh, where a stamp changes one to three bytes of a word).
 */
typedef struct SbfTouched
{
	uint64		words[BLCKSZ / sizeof(uint64) / 64];
	char	   *before;
} SbfTouched;

static inline void
sbf_touch(SbfTouched *touched, const void *page, const void *at, Size length)
{
	Size		first = ((const char *) at - (const char *) page) / sizeof(uint64);
	Size		last = ((const char *) at - (const char *) page + length - 1) / sizeof(uint64);
	Size		w;

	if (touched == NULL)
		return;
	for (w = first; w <= last; w++)
	{
		uint64		bit = UINT64CONST(1) << (w % 64);

		if (touched->words[w / 64] & bit)
			continue;
		touched->words[w / 64] |= bit;
		memcpy(touched->before + w * sizeof(uint64),
			   (const char *) page + w * sizeof(uint64), sizeof(uint64));
	}
}

/*
 * Stamp the value's k cells with clock t where they hold an older one,
 * touching each before it changes (page: the page they are in)
 */
static void
sbf_stamped_stamp(const SbfSharedMeta *meta, uint8 *cells, SbfHash hash,
				  int64 ref, int64 t, SbfTouched *touched, const void *page)
{
	uint64		span = sbf_shared_page_cells(meta);
	int64		modulus = sbf_stamp_modulus(meta->cell_bits);
	int64		residue = sbf_stamp_residue(ref, modulus);
	uint32		stamp = sbf_stamp_encode(t, modulus);
	SbfProbe	probe;
	int			i;

	sbf_probe_init(&probe, hash);
	for (i = 0; i < meta->hashes; i++)
	{
		uint64		c = sbf_probe_next(&probe, span);
		uint32		cell = sbf_stamp_get(cells, meta->cell_bits, c);

		if (cell == 0 || ref - sbf_stamp_age(cell, residue, modulus) < t)
		{
			sbf_touch(touched, page, cells + c * (meta->cell_bits / 8),
					  meta->cell_bits / 8);
			sbf_stamp_set(cells, meta->cell_bits, c, stamp);
		}
	}
}

/*
 * Age a page about to be written at clock c (c >= its latest): zero it
 * when its newest stamp is beyond the horizon, or clear its dead cells
 * when its clock moved a whole period since it was last aged.  After
 * this, every stamp s of the page has c - s < period + 2 H <= M.
 */
static void
sbf_stamped_age(const SbfSharedMeta *meta, const SbfSlidingState *sliding,
				uint8 *block, int64 c, SbfTouched *touched, const void *page)
{
	SbfStampedPage *header = sbf_stamped_header(block);
	uint8	   *cells = block + sizeof(SbfStampedPage);
	int64		horizon = sbf_sliding_horizon(sliding);
	int64		modulus = sbf_stamp_modulus(meta->cell_bits);

	/* (its words logged only where they change) */
	sbf_touch(touched, page, header, sizeof(SbfStampedPage));
	if (c - header->latest > horizon)
	{
		sbf_touch(touched, page, cells, SBF_STAMPED_CELL_BYTES);
		memset(cells, 0, SBF_STAMPED_CELL_BYTES);
		header->aged = c;
	}
	else if (c - header->aged >= sliding->period)
	{
		uint64		span = sbf_shared_page_cells(meta);
		int64		residue = sbf_stamp_residue(c, modulus);
		uint64		i;

		for (i = 0; i < span; i++)
		{
			uint32		cell = sbf_stamp_get(cells, meta->cell_bits, i);

			if (cell != 0 && sbf_stamp_age(cell, residue, modulus) > horizon)
			{
				sbf_touch(touched, page, cells + i * (meta->cell_bits / 8),
						  meta->cell_bits / 8);
				sbf_stamp_set(cells, meta->cell_bits, i, 0);
			}
		}
		header->aged = c;
	}
	header->latest = Max(header->latest, c);
}

/*
 * Is the value present to a reader at clock t in this page (NULL: never
 * written)?  No write: a page whose newest stamp is older than the window
 * is empty, the others are decoded relative to the later of t and their
 * newest stamp.
 */
static bool
sbf_stamped_read(const SbfSharedMeta *meta, const SbfSlidingState *sliding,
				 uint8 *block, SbfHash hash, int64 t)
{
	SbfStampedPage *header = sbf_stamped_header(block);

	if (header->latest < t - sliding->reach)
		return false;
	return sbf_stamped_test(meta, block + sizeof(SbfStampedPage), hash,
							Max(t, header->latest), t - sliding->reach);
}

/* A time's clock: its tick, floor(microseconds / unit) */
static int64
sbf_sliding_tick(const SbfSlidingState *sliding, TimestampTz at)
{
	int64		tick = at / sliding->unit;

	if (at % sliding->unit < 0)
		tick--;
	return tick;
}

/*
 * Sizing (shared_slidingbloom_create)
 */

/*
 * The false-positive rate of P pages of c stamped cells holding "live"
 * values in the window: each page gets a Poisson(live / P) share of them
 * (the blocked Bloom filter of Putze, Sanders & Singler 2007), and a page
 * with i of them has the stamped rate of one filter of c cells.
 */
double
sbf_sliding_blocked_fpr(int hashes, uint64 cells, double pages, double live)
{
	double		lambda = live / pages;
	double		spread;
	double		sum = 0.0;
	int64		lo;
	int64		hi;
	int64		i;

	if (lambda <= 0.0)
		return 0.0;
	spread = 12.0 * sqrt(lambda) + 30.0;
	lo = (int64) Max(0.0, floor(lambda - spread));
	hi = (int64) ceil(lambda + spread);
	for (i = lo; i <= hi; i++)
	{
		double		p = exp((double) i * log(lambda) - lambda - lgamma((double) i + 1.0));

		sum += p * slidingbloom_stamped_fpr(hashes, cells, (double) i);
	}
	return sum;
}

/*
 * Testing and adding
 */

static void
sbf_sliding_refuse_at(Relation rel, const SbfSlidingState *sliding, bool has_at)
{
	if (has_at && !(sliding->flags & SBF_SLIDING_TIME))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shared filter \"%s\" has a window of arrivals, not of time",
						RelationGetRelationName(rel)),
				 errdetail("Only a filter made with an interval window takes the time of an arrival."),
				 errhint("Call the function without a time.")));
}

/* The tick of an arrival at "at", or now */
static int64
sbf_sliding_time_clock(const SbfSlidingState *sliding, bool has_at, TimestampTz at)
{
	if (!has_at)
		at = GetCurrentTimestamp();
	if (TIMESTAMP_NOT_FINITE(at))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the time of an arrival must be finite")));
	return sbf_sliding_tick(sliding, at);
}

/* The clock a reader tests at: the next arrival's, or the time's tick */
static int64
sbf_sliding_read_clock(Relation rel, const SbfSlidingState *sliding,
					   bool has_at, TimestampTz at)
{
	Buffer		buf;
	int64		clock;

	sbf_sliding_refuse_at(rel, sliding, has_at);
	if (sliding->flags & SBF_SLIDING_TIME)
		return sbf_sliding_time_clock(sliding, has_at, at);
	buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	sbf_shared_check_page(rel, NULL, BufferGetPage(buf), SBF_METAPAGE_BLKNO);
	clock = sbf_meta_page_sliding(BufferGetPage(buf))->clock;
	UnlockReleaseBuffer(buf);
	return clock + 1;
}

/* Is the value present in a sliding filter (shared_contains)? */
bool
sbf_sliding_contains(Relation rel, SbfHash hash, bool has_at, TimestampTz at)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfSlidingState sliding = *sbf_shared_sliding(rel, false);
	int64		t = sbf_sliding_read_clock(rel, &sliding, has_at, at);
	BlockNumber blkno = sbf_shared_page_of(&meta, hash);
	Buffer		buf = sbf_shared_read(rel, blkno, NULL);
	bool		found = false;

	if (BufferIsValid(buf))
	{
		Page		page = BufferGetPage(buf);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (!PageIsNew(page))
		{
			sbf_shared_check_page(rel, &meta, page, blkno);
			found = sbf_stamped_read(&meta, &sliding, sbf_page_block(&meta, page),
									 hash, t);
		}
		UnlockReleaseBuffer(buf);
	}
	return found;
}

/*
 * Change the metapage's clock under its exclusive lock, logged: a window
 * of arrivals reserves n clock values and returns the first's predecessor;
 * a window of time moves the clock to tick t if it is later, after
 * checking that t is within the tolerance.
 */
static int64
sbf_sliding_advance(Relation rel, const SbfSlidingState *params, int64 n,
					int64 t)
{
	char	   *before = sbf_sliding_before.data;
	SbfDelta   *delta = &sbf_sliding_delta;
	bool		time = (params->flags & SBF_SLIDING_TIME) != 0;
	SbfSlidingState *sliding;
	Buffer		buf;
	Page		page;
	Size		start;
	int64		clock;

	buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	LockBuffer(buf, time ? BUFFER_LOCK_SHARE : BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	sbf_shared_check_page(rel, NULL, page, SBF_METAPAGE_BLKNO);
	sliding = sbf_meta_page_sliding(page);
	clock = sliding->clock;
	if (time)
	{
		if (clock != SBF_SLIDING_NO_CLOCK && t < clock - params->tolerance)
		{
			UnlockReleaseBuffer(buf);
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("arrival too late for shared filter \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("Its clock is at tick " INT64_FORMAT " of " INT64_FORMAT " microseconds, and it takes arrivals at most " INT64_FORMAT " ticks (its tolerance of " INT64_FORMAT " microseconds) before; this one is at tick " INT64_FORMAT ".",
							   clock, params->unit, params->tolerance,
							   params->tolerance_us, t),
					 errhint("Pass the time of the arrival, or make the filter with a larger tolerance.")));
		}
		if (t <= clock && clock != SBF_SLIDING_NO_CLOCK)
		{
			UnlockReleaseBuffer(buf);
			return clock;
		}
		/* the clock moves on: again under the exclusive lock */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		clock = sliding->clock;
		if (t <= clock && clock != SBF_SLIDING_NO_CLOCK)
		{
			UnlockReleaseBuffer(buf);
			return clock;
		}
	}

	start = (char *) sliding - (char *) page;
	memcpy(before + start, sliding, sizeof(SbfSlidingState));
	delta->len = 0;
	START_CRIT_SECTION();
	sliding->clock = time ? t : clock + n;
	if (RelationNeedsWAL(rel))
	{
		sbf_delta_region(delta, before, (const char *) page,
						 start, start + sizeof(SbfSlidingState));
		sbf_log_delta(buf, delta);
	}
	else
		MarkBufferDirty(buf);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
	return time ? t : clock;
}

/*
 * Test-and-add the n items of one data page: age it, then each item in
 * input order at its clock, clocks[i] for item i.  A page's first write is
 * a full-page image; later ones log the bytes that changed in the words
 * the adds touched, in generic WAL's record format (sbf_log_delta), as the
 * other kinds do.
 */
static void
sbf_sliding_add_group(Relation rel, const SbfSharedMeta *meta,
					  const SbfSlidingState *sliding, const SbfBatchItem *items,
					  int n, const int64 *clocks, bool *present)
{
	bool		wal = RelationNeedsWAL(rel);
	bool		refresh = (sliding->flags & SBF_SLIDING_REFRESH) != 0;
	BlockNumber blkno = items[0].page;
	Buffer		buf;
	GenericXLogState *xlog = NULL;
	SbfDelta   *delta = &sbf_sliding_delta;
	SbfTouched	touched;
	SbfTouched *track = NULL;
	SbfStampedPage *header;
	uint8	   *block;
	Page		page;
	bool		isnew;
	int			i;

	isnew = sbf_shared_lock_for_write(rel, meta, blkno, &buf);
	page = BufferGetPage(buf);
	if (isnew && wal)
	{
		xlog = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(xlog, buf, GENERIC_XLOG_FULL_IMAGE);
	}
	else
	{
		if (wal)
		{
			memset(touched.words, 0, sizeof(touched.words));
			touched.before = sbf_sliding_before.data;
			track = &touched;
		}
		START_CRIT_SECTION();
	}

	if (isnew)
	{
		sbf_shared_page_init(page, meta, blkno);
		header = sbf_stamped_header(sbf_page_block(meta, page));
		header->aged = header->latest = clocks[0];
	}
	block = sbf_page_block(meta, page);
	header = sbf_stamped_header(block);
	for (i = 0; i < n; i++)
	{
		/* a call that lags more than the tolerance behind is moved up to it */
		int64		t = Max(clocks[i], header->latest - sliding->tolerance);
		int64		c = Max(t, header->latest);

		sbf_stamped_age(meta, sliding, block, c, track, page);
		present[i] = sbf_stamped_test(meta, block + sizeof(SbfStampedPage),
									  items[i].hash, c, t - sliding->reach);
		if (refresh || !present[i])
			sbf_stamped_stamp(meta, block + sizeof(SbfStampedPage),
							  items[i].hash, c, t, track, page);
	}

	if (xlog != NULL)
	{
		GenericXLogFinish(xlog);
		UnlockReleaseBuffer(buf);
		return;
	}
	if (track != NULL)
	{
		int			w;

		/*
		 * each run of touched words, found a bitmap word at a time, and the
		 * bytes of it that changed
		 */
		delta->len = 0;
		for (w = 0; w < (int) (BLCKSZ / sizeof(uint64));)
		{
			uint64		bits = touched.words[w / 64] >> (w % 64);
			int			run;

			if (bits == 0)
			{
				w = (w / 64 + 1) * 64;
				continue;
			}
			w += pg_rightmost_one_pos64(bits);
			run = w;
			while (w < (int) (BLCKSZ / sizeof(uint64)) &&
				   (touched.words[w / 64] & (UINT64CONST(1) << (w % 64))))
				w++;
			sbf_delta_region(delta, sbf_sliding_before.data, (const char *) page,
							 run * sizeof(uint64), w * sizeof(uint64));
		}
		sbf_log_delta(buf, delta);
	}
	else
		sbf_mark_dirty(buf);
	END_CRIT_SECTION();
	if (track != NULL && delta->len == 0)
	{
		/* nothing changed: what was found may be another's unflushed WAL */
		XLogRecPtr	lsn = PageGetLSN(page);

		UnlockReleaseBuffer(buf);
		XLogFlush(lsn);
		return;
	}
	UnlockReleaseBuffer(buf);
}

/*
 * Test-and-add n values of one call (a chunk of it), items[i].index being
 * the value's place among them (its arrival order) and index[] mapping
 * that to its answer.  A window of arrivals numbers them from the clock
 * reserved for them, in input order; a window of time stamps them all
 * with the tick of "at" (the current time when not has_at).
 */
void
sbf_sliding_add(Relation rel, SbfBatchItem *items, int n, const int *index,
				bool *answers, bool has_at, TimestampTz at)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfSlidingState sliding = *sbf_shared_sliding(rel, false);
	bool		time = (sliding.flags & SBF_SLIDING_TIME) != 0;
	int64		base;
	int64	   *clocks;
	bool	   *present;
	int			start;
	SbfPrefetchAhead ahead = {0};
	int			i;

	sbf_sliding_refuse_at(rel, &sliding, has_at);
	if (n == 0)
		return;
	/* about to write WAL: take a transaction id first, not under a lock */
	if (RelationNeedsWAL(rel))
		(void) GetTopTransactionId();
	if (time)
	{
		base = sbf_sliding_time_clock(&sliding, has_at, at);
		(void) sbf_sliding_advance(rel, &sliding, n, base);
	}
	else
		base = sbf_sliding_advance(rel, &sliding, n, 0);

	for (i = 0; i < n; i++)
		items[i].page = sbf_shared_page_of(&meta, items[i].hash);
	if (n > 1)
		sbf_shared_sort_by_page(items, n, meta.pages);
	clocks = palloc(n * sizeof(int64));
	present = palloc(n * sizeof(bool));
	for (i = 0; i < n; i++)
		clocks[i] = time ? base : base + 1 + items[i].index;

	for (start = 0; start < n;)
	{
		int			end = start + 1;

		while (end < n && items[end].page == items[start].page)
			end++;
		/* as the other kinds' batches: buffers, headers and cells, ahead */
		sbf_shared_prefetch_ahead(rel, &meta, items, n, end, &ahead);
		sbf_sliding_add_group(rel, &meta, &sliding, items + start, end - start,
							  clocks + start, present + start);
		start = end;
		CHECK_FOR_INTERRUPTS();
	}
	for (i = 0; i < n; i++)
		answers[index[items[i].index]] = present[i];
	pfree(clocks);
	pfree(present);
}

/*
 * Microseconds as the text of an interval of days and a time, in the
 * postgres style whatever the session's IntervalStyle: "30 days",
 * "01:00:00"
 */
static char *
sbf_usecs_text(int64 usecs)
{
	Interval	span;
	struct pg_itm itm;
	char	   *text = palloc(MAXDATELEN + 1);

	span.month = 0;
	span.day = (int32) (usecs / USECS_PER_DAY);
	span.time = usecs % USECS_PER_DAY;
	interval2itm(span, &itm);
	EncodeInterval(&itm, INTSTYLE_POSTGRES, text);
	return text;
}

/*
 * shared_info of a sliding filter: its parameters and clock and, with
 * read_pages, the cells live at the clock and the rate they give
 */
void
sbf_sliding_info(Relation rel, StringInfo buf, bool read_pages)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfSlidingState sliding = *sbf_shared_sliding(rel, true);
	bool		time = (sliding.flags & SBF_SLIDING_TIME) != 0;
	int64		t = sbf_sliding_read_clock(rel, &sliding, false, 0);

	appendStringInfo(buf, "{\"kind\": \"slidingbloom\", \"format_version\": %u",
					 (unsigned) meta.version);
	if (time)
		appendStringInfo(buf, ", \"window\": \"%s\", \"window_us\": " INT64_FORMAT ", \"tick_us\": " INT64_FORMAT ", \"ticks\": " INT64_FORMAT ", \"tolerance\": \"%s\", \"tolerance_ticks\": " INT64_FORMAT,
						 sbf_usecs_text(sliding.window),
						 sliding.window, sliding.unit, sliding.reach,
						 sbf_usecs_text(sliding.tolerance_us), sliding.tolerance);
	else
		appendStringInfo(buf, ", \"window\": " INT64_FORMAT ", \"tolerance\": " INT64_FORMAT,
						 sliding.window, sliding.tolerance);
	appendStringInfo(buf, ", \"window_of\": \"%s\", \"refresh\": %s, \"capacity\": " INT64_FORMAT,
					 time ? "time" : "arrivals",
					 (sliding.flags & SBF_SLIDING_REFRESH) ? "true" : "false",
					 meta.capacity);
	appendStringInfo(buf, ", \"fpr\": %s, \"hashes\": %u, \"seed\": " INT64_FORMAT ", \"cells\": " UINT64_FORMAT ", \"cell_bits\": %u, \"period\": " INT64_FORMAT,
					 float8out_internal(meta.fpr), (unsigned) meta.hashes,
					 (int64) meta.seed, meta.cells, (unsigned) meta.cell_bits,
					 sliding.period);
	if (sliding.clock == SBF_SLIDING_NO_CLOCK)
		appendStringInfoString(buf, ", \"clock\": null");
	else
		appendStringInfo(buf, ", \"clock\": " INT64_FORMAT, sliding.clock);
	appendStringInfo(buf, ", \"pages\": " UINT64_FORMAT ", \"size_bytes\": " UINT64_FORMAT ", \"logged\": %s, \"transactional\": false",
					 meta.pages, table_block_relation_size(rel, MAIN_FORKNUM),
					 rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT ? "true" : "false");
	appendStringInfo(buf, ", \"expected_fpr\": %s",
					 float8out_internal(sbf_sliding_blocked_fpr(meta.hashes,
																sbf_shared_page_cells(&meta),
																(double) meta.pages,
																(double) meta.capacity)));
	if (read_pages)
	{
		BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
		uint64		span = sbf_shared_page_cells(&meta);
		int64		modulus = sbf_stamp_modulus(meta.cell_bits);
		uint64		written = 0;
		uint64		live = 0;
		double		fpr_sum = 0.0;
		uint64		blkno;

		for (blkno = 1; blkno <= meta.pages; blkno++)
		{
			Buffer		page_buf = sbf_shared_read(rel, (BlockNumber) blkno, strategy);
			uint64		page_live = 0;

			CHECK_FOR_INTERRUPTS();
			if (!BufferIsValid(page_buf))
				break;
			LockBuffer(page_buf, BUFFER_LOCK_SHARE);
			if (!PageIsNew(BufferGetPage(page_buf)))
			{
				uint8	   *block = sbf_page_block(&meta, BufferGetPage(page_buf));
				SbfStampedPage *header = sbf_stamped_header(block);
				const uint8 *cells = block + sizeof(SbfStampedPage);

				sbf_shared_check_page(rel, &meta, BufferGetPage(page_buf),
									  (BlockNumber) blkno);
				written++;
				if (header->latest >= t - sliding.reach)
				{
					int64		ref = Max(t, header->latest);
					int64		residue = sbf_stamp_residue(ref, modulus);
					uint64		i;

					for (i = 0; i < span; i++)
					{
						uint32		cell = sbf_stamp_get(cells, meta.cell_bits, i);

						if (cell != 0 &&
							ref - sbf_stamp_age(cell, residue, modulus) >= t - sliding.reach)
							page_live++;
					}
				}
			}
			UnlockReleaseBuffer(page_buf);
			live += page_live;
			fpr_sum += pow((double) page_live / (double) span, meta.hashes);
		}
		FreeAccessStrategy(strategy);
		appendStringInfo(buf, ", \"pages_written\": " UINT64_FORMAT ", \"live_cells\": " UINT64_FORMAT ", \"fill\": %s, \"estimated_fpr\": %s",
						 written, live,
						 float8out_internal((double) live / (double) meta.cells),
						 float8out_internal(fpr_sum / (double) meta.pages));
	}
	appendStringInfoChar(buf, '}');
}
