/*-------------------------------------------------------------------------
 *
 * format.h
 *	  The on-disk (and on-the-wire) layout of every sbf value.
 *
 * This header is the single declaration of the stored format.  A value is
 * an ordinary varlena whose payload (everything after the 4-byte varlena
 * header) is exactly what binary COPY sends and what the text form spells
 * out in hexadecimal, so the three representations cannot drift apart.
 *
 * All multi-byte fields are little-endian.  The in-memory struct is used
 * directly on little-endian hosts; big-endian hosts are refused at compile
 * time rather than silently writing a different format.
 *
 * Every payload starts with a 32-bit magic number naming the type and a
 * 16-bit format version.  A reader refuses an unknown version with an
 * ERROR; a later release that changes the layout bumps the version and
 * keeps reading the old one.
 *
 * See docs/format.md for the same layout with worked examples.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_FORMAT_H
#define SBF_FORMAT_H

#include "postgres.h"

#include "storage/block.h"
#include "utils/memutils.h"

#ifdef WORDS_BIGENDIAN
#error "sbf stores its values little-endian; big-endian hosts are not supported"
#endif

/* Magic numbers: the ASCII bytes "SBFb" and "SBFs" read as little-endian */
#define SBF_MAGIC_BLOOM			0x62464253
#define SBF_MAGIC_STABLEBLOOM	0x73464253
#define SBF_MAGIC_SLIDINGBLOOM	0x77464253	/* "SBFw" */

/* The current (and so far only) format version of each type */
#define SBF_BLOOM_VERSION		1
#define SBF_STABLEBLOOM_VERSION	1
#define SBF_SLIDINGBLOOM_VERSION	1

/* Largest number of probes per element we accept */
#define SBF_MAX_HASHES			256

/*
 * Fields shared by every sbf value, in the same place in each, so that code
 * handed "some filter" (the window function) can tell which one it got.
 */
typedef struct SbfHeader
{
	int32		vl_len_;		/* varlena header (not part of the payload) */
	uint32		magic;			/* SBF_MAGIC_* */
	uint16		version;		/* format version of this type */
} SbfHeader;

/*
 * bloom: a classic Bloom filter of "bits" bits probed "hashes" times.
 *
 * payload offset  size  field
 *   0             4     magic    = SBF_MAGIC_BLOOM
 *   4             2     version  = 1
 *   6             2     hashes   (k), 1..SBF_MAX_HASHES
 *   8             4     flags    BLOOM_FLAG_EMPTY or 0; other bits zero
 *  12             8     bits     (m), >= 1
 *  20             8     seed     of XXH3-128
 *  28             8*W   words    bit i is bit (i % 64) of word (i / 64),
 *                                W = ceil(m / 64); bits >= m are zero.
 *                                Absent (W = 0) when BLOOM_FLAG_EMPTY is set.
 *
 * The empty form keeps a new filter as small as its header, however many
 * bits it has: bloom_sized(3400000, 0.01) is 28 bytes, not 4 MB, in a plan,
 * a table or a dump.  Code that sets bits first materializes the words.
 *
 * With the varlena header in front, the words start 32 bytes into the
 * value, so they are 8-byte aligned in any palloc'd copy.
 */
typedef struct BloomData
{
	int32		vl_len_;
	uint32		magic;
	uint16		version;
	uint16		hashes;
	uint32		flags;
	uint64		bits;
	uint64		seed;
	uint64		words[FLEXIBLE_ARRAY_MEMBER];
} BloomData;

/* flags: no words stored, every bit is zero */
#define BLOOM_FLAG_EMPTY		0x0001
/*
 * flags: the blocked layout of a shared filter (shared_bloom_snapshot): the
 * bits are bits / SBF_BLOCK_BITS blocks of SBF_BLOCK_BITS bits, and all k
 * probes of an element fall in one block (see sbf_block_of in hash.h).
 * bits is then a multiple of SBF_BLOCK_BITS.  1.0 refuses such a value
 * (unknown flag) rather than probing it the classic way.
 */
#define BLOOM_FLAG_BLOCKED		0x0002
/*
 * flags, with BLOOM_FLAG_BLOCKED: the line layout of a shared filter
 * (SBF_SHARED_LAYOUT_LINES): in its block, all k probes of an element fall
 * in one line of SBF_LINE_BITS bits, as in the filter's pages.
 */
#define BLOOM_FLAG_LINES		0x0004
/*
 * flags, with BLOOM_FLAG_LINES: the line layout of a transactional shared
 * filter (SBF_SHARED_LAYOUT_PENDING): a block's first SBF_PENDING_LINES
 * lines hold its bits, the rest is zero, and an element's line and probes
 * come from its line state alone (sbf_line_state in hash.h).
 */
#define BLOOM_FLAG_PENDING_LINES	0x0008

typedef BloomData *Bloom;

#define BLOOM_HEADER_SIZE	offsetof(BloomData, words)
#define BLOOM_WORDS(bits)	(((uint64) (bits) + 63) / 64)

/*
 * The largest filter that fits a varlena (1 GB, MaxAllocSize).  Checked
 * before anything is allocated.
 */
#define BLOOM_MAX_BITS \
	((uint64) ((MaxAllocSize - BLOOM_HEADER_SIZE) / sizeof(uint64)) * 64)

/*
 * stablebloom: a Stable Bloom filter (Deng & Rafiei 2006) of "cells" cells
 * holding 0..max, probed "hashes" times, with "decrements" cells
 * decremented per insertion at positions drawn from a SplitMix64 PRNG
 * whose state is part of the value (so a filter continues exactly where it
 * stopped).
 *
 * payload offset  size  field
 *   0             4     magic       = SBF_MAGIC_STABLEBLOOM
 *   4             2     version     = 1
 *   6             2     hashes      (k), 1..SBF_MAX_HASHES
 *   8             1     max         (Max), 1..255
 *   9             1     cell_bits   bits per cell: the fewest that hold max
 *  10             2     flags       STABLEBLOOM_FLAG_EMPTY or 0
 *  12             8     decrements  (P), 0..cells
 *  20             8     cells       (m), >= 1
 *  28             8     seed        of XXH3-128
 *  36             8     insertions  elements inserted so far
 *  44             8     prng        SplitMix64 state
 *  52             8*W   words       cell i is bits [i*b, i*b + b) of the
 *                                   little-endian bit string of the words
 *                                   (b = cell_bits), W = ceil(m * b / 64);
 *                                   no cell exceeds max, bits >= m * b are 0;
 *                                   absent (W = 0) with STABLEBLOOM_FLAG_EMPTY
 *
 * With the varlena header in front, the words start 56 bytes into the
 * value, 8-byte aligned.
 */
typedef struct StableBloomData
{
	int32		vl_len_;
	uint32		magic;
	uint16		version;
	uint16		hashes;
	uint8		max;
	uint8		cell_bits;
	uint16		flags;
	uint64		decrements;
	uint64		cells;
	uint64		seed;
	uint64		insertions;
	uint64		prng;
	uint64		words[FLEXIBLE_ARRAY_MEMBER];
} StableBloomData;

typedef StableBloomData *StableBloom;

/* flags: no cells stored, every cell is zero */
#define STABLEBLOOM_FLAG_EMPTY	0x0001
/*
 * flags: the blocked layout of a shared filter (shared_stablebloom_snapshot):
 * blocks of SBF_BLOCK_BITS / cell_bits cells; the k probes and the P
 * decrements of an insertion stay in the element's block.  cells is a
 * multiple of the cells per block, and decrements at most that many.
 */
#define STABLEBLOOM_FLAG_BLOCKED	0x0002

#define STABLEBLOOM_HEADER_SIZE	offsetof(StableBloomData, words)
#define STABLEBLOOM_WORDS(cells, cell_bits) \
	(((uint64) (cells) * (uint64) (cell_bits) + 63) / 64)
#define STABLEBLOOM_MAX_MAX		255

/* The largest number of cells of b bits that fits 1 GB */
#define STABLEBLOOM_MAX_CELLS(cell_bits) \
	((uint64) ((MaxAllocSize - STABLEBLOOM_HEADER_SIZE) / sizeof(uint64)) * 64 / (cell_bits))

/*
 * slidingbloom: an age-partitioned Bloom filter (Shtul, Baquero & Almeida
 * 2020, "Age-Partitioned Bloom Filters") answering "was this value among
 * the last w arrivals?" with no false negative inside the window.
 *
 * "slices" = k + l slices of "slice_bits" (m) bits form a circular buffer,
 * in age order newest, newest + 1, ..., newest + slices - 1 (mod slices).
 * A value is stored in the k newest slices; it is present when some k
 * consecutive slices, in age order, all have its bit set.  Every
 * "generation" (g) arrivals the oldest slice is cleared and becomes the
 * newest.  Physical slice q (0 <= q < slices, whatever its age) holds the
 * element's bit floor(mix(x_q) * m / 2^64), x_q the q-th value of the
 * enhanced double-hashing sequence (hash.h) before reduction and mix
 * SplitMix64's output function (slidingbloom_probe), so a stored bit stays
 * findable as its slice ages.
 *
 * payload offset  size  field
 *   0             4     magic       = SBF_MAGIC_SLIDINGBLOOM
 *   4             2     version     = 1
 *   6             2     hashes      (k), 1..slices - 1
 *   8             2     slices      (k + l), 2..SLIDINGBLOOM_MAX_SLICES
 *  10             2     flags       SLIDINGBLOOM_FLAG_EMPTY, _REFRESH
 *  12             8     slice_bits  (m), >= 1
 *  20             8     generation  (g), arrivals per generation, >= 1
 *  28             8     window      (w) asked for, 1..l * g
 *  36             8     seed        of XXH3-128
 *  44             8     arrivals    values counted so far (NULLs are not)
 *  52             8     generation_fill  arrivals in the current
 *                                   generation, 0..g - 1
 *  60             8     newest      index of the newest slice, 0..slices-1
 *  68             8*S*W words       slice q is words [q*W, q*W + W), bit i
 *                                   of it bit (i % 64) of word q*W + i/64,
 *                                   W = ceil(m / 64); bits >= m of each
 *                                   slice are zero; absent with
 *                                   SLIDINGBLOOM_FLAG_EMPTY
 *
 * An arrival is: test; store the value (always with REFRESH, else only if
 * it was not present); count it; when the generation has g arrivals, start
 * the next one.  A value stored d arrivals ago is present for every
 * d <= l * g (docs/slidingbloom.md), so l * g >= window.
 *
 * With the varlena header in front, the words start 72 bytes into the
 * value, 8-byte aligned.
 *
 * The stamped layout (flag SLIDINGBLOOM_FLAG_STAMPED, 1.1): exact expiry,
 * for windows in which few values recur often, where the stale tail of
 * generations costs most.  m cells of b bits, each 0 (empty) or the
 * arrival that last set it, t, as (t mod M) + 1, M = 2^b - 1.  A value is
 * present when its k cells (cell slidingbloom_probe(hash, i, m) for i in
 * 0..k-1) were all set by one of the w - 1 arrivals before: a cell's age
 * at arrival "arrivals" is (arrivals - (cell - 1)) mod M, live when it is
 * at most w - 1.  So a value stored d arrivals ago is present exactly for
 * d <= w - 1, the definition's window, and no stale positive follows.  An
 * arrival is: test; store (set its k cells to its stamp, with REFRESH or
 * if it was not present); sweep "step" cells from "sweep", clearing those
 * no later arrival can find live (age >= w - 1); count it.  The sweep
 * visits every cell at least once every M - w arrivals, so a cell is
 * cleared before its age can reach M and wrap around.  The fields:
 *
 *   hashes      k, 1..SBF_MAX_HASHES
 *   slices      b, the bits of a cell, 2..32, with M = 2^b - 1 > w
 *   slice_bits  m, the number of cells, >= 1
 *   generation  step = ceil(m / (M - w)), the cells swept per arrival,
 *               at most SLIDINGBLOOM_STAMP_MAX_SWEEP
 *   window      w, 1..M - 1
 *   arrivals    at most 2^63 - 1 (so that t mod M never jumps at 2^64)
 *   generation_fill  0
 *   newest      sweep, the next cell to sweep, 0..m - 1
 *   words       ceil(m b / 64): cell i is bits [i b, i b + b) of the
 *               little-endian bit string of the words; bits >= m b zero;
 *               absent with SLIDINGBLOOM_FLAG_EMPTY
 *
 * A window of time (flags SLIDINGBLOOM_FLAG_STAMPED | _TIME, 1.1): the
 * stamped layout whose clock is a tick of time, not the arrival count.
 * The window W (microseconds, an interval with months of 30 days) is cut
 * into n = ceil(W / unit) <= SLIDINGBLOOM_TIME_TICKS ticks of unit =
 * ceil(W / SLIDINGBLOOM_TIME_TICKS) microseconds; the tick of a timestamp
 * ts (microseconds) is floor(ts / unit), and a cell holds (tick mod M) + 1.
 * The clock is the newest tick an arrival brought.  An arrival at tick t
 * is late by d = clock - t, at most the tolerance L ticks (a later one is
 * an ERROR); a cell of age a (from the clock) is live for it when a <=
 * n + d, so a value stored at tick t' is found at every t with t - t' <=
 * n: whatever arrived less than W before.  Storing a value stamps each of
 * its cells that is empty or older than t.  When the clock moves on by D
 * ticks, "step" cells are swept for each, clearing those older than the
 * horizon H = n + L, or all of them when D > H.  The sweep visits every
 * cell at least once every M - 2H - 1 ticks, and no cell ages more than H
 * ticks at one move, so a cell is cleared before its age can reach M.
 * The fields differ from the stamped layout's in:
 *
 *   window      n + 1, so that a cell is live for an arrival on time when
 *               its age is at most window - 1, as in the stamped layout
 *   generation  step = ceil(m / (M - 2H - 1)), cells swept per tick
 *   arrivals    values counted so far; the clock is unset while it is 0
 *
 * and the value ends with a SlidingBloomClock (after the words, or right
 * after the header in the empty form).
 */
typedef struct SlidingBloomData
{
	int32		vl_len_;
	uint32		magic;
	uint16		version;
	uint16		hashes;
	uint16		slices;
	uint16		flags;
	uint64		slice_bits;
	uint64		generation;
	uint64		window;
	uint64		seed;
	uint64		arrivals;
	uint64		generation_fill;
	uint64		newest;
	uint64		words[FLEXIBLE_ARRAY_MEMBER];
} SlidingBloomData;

typedef SlidingBloomData *SlidingBloom;

/* The end of a slidingbloom of a window of time, 40 bytes */
typedef struct SlidingBloomClock
{
	int64		window_usec;	/* W as asked, (n - 1) unit < W <= n unit */
	int64		unit;			/* microseconds a tick, >= 1 */
	int64		tolerance;		/* L, ticks an arrival may be late, >= 0 */
	int64		clock;			/* the newest tick brought by an arrival */
	int64		capacity;		/* values a window, sized for, >= 1 */
} SlidingBloomClock;

/* flags: no slices stored, every bit is zero */
#define SLIDINGBLOOM_FLAG_EMPTY		0x0001
/* flags: every arrival is stored, not only those reported new */
#define SLIDINGBLOOM_FLAG_REFRESH	0x0002
/* flags: the stamped layout (exact expiry), not slices of generations */
#define SLIDINGBLOOM_FLAG_STAMPED	0x0004
#define SLIDINGBLOOM_STAMP_MAX_BITS	32
/* flags: a window of time (with _STAMPED), the value ends with its clock */
#define SLIDINGBLOOM_FLAG_TIME		0x0008
/* The ticks of a window of time: its stale tail is under two ticks */
#define SLIDINGBLOOM_TIME_TICKS		64
/* The most cells a stamped filter may sweep an arrival (slidingbloom_fit: 256) */
#define SLIDINGBLOOM_STAMP_MAX_SWEEP	65536

#define SLIDINGBLOOM_HEADER_SIZE	offsetof(SlidingBloomData, words)
/* ceil(m / 64), without the wrap-around of m + 63 near 2^64 */
#define SLIDINGBLOOM_SLICE_WORDS(slice_bits) \
	((uint64) (slice_bits) / 64 + ((uint64) (slice_bits) % 64 != 0))
#define SLIDINGBLOOM_MAX_SLICES		256

/* The most words all slices together may take in 1 GB */
#define SLIDINGBLOOM_MAX_WORDS \
	((uint64) ((MaxAllocSize - SLIDINGBLOOM_HEADER_SIZE) / sizeof(uint64)))

/*
 * Shared filters (shared_bloom_create, shared_stablebloom_create,
 * shared_slidingbloom_create; see
 * docs/format.md): a relation of the table access method sbf_filter.
 * Block 0 is the metapage, blocks 1..pages the data pages.  Every page has
 * the standard page layout (so checksums, full-page images and generic WAL
 * handle it as any page) with an SbfPageOpaque as its special space.
 *
 * A data page holds one block of the blocked layout: SBF_BLOCK_BYTES bytes
 * right after the page header, bit (or cell) i of the block at bit i (i*b)
 * of that little-endian bit string, as in the value types.  pd_lower is
 * set to the end of the block, so that the hole of a full-page image
 * never covers it.  An element's block is sbf_block_of(hash, pages): data
 * page 1 + that.  A data page that is all zeros (PageIsNew: never written,
 * a hole of the sparse file, or past its end) reads as an all-zero block.
 *
 * The block is a fixed 8000 bytes whatever BLCKSZ, so that a filter's
 * answers do not depend on the server's page size and a snapshot (a value)
 * means the same everywhere; BLCKSZ below 8 kB is refused at compile time.
 */
#define SBF_MAGIC_SHARED		0x68464253	/* "SBFh" */

/*
 * The metapage's version is the data pages' layout:
 *
 * SBF_SHARED_LAYOUT_PAGES (1, every stablebloom filter, and bloom filters
 * made before the line layout): the block starts right after the page
 * header, and the k probes of an element (and a stable insertion's P
 * decrements) fall anywhere in the element's block, sbf_probe_next(...,
 * cells of a block).
 *
 * SBF_SHARED_LAYOUT_LINES (2, bloom filters made since): the block starts
 * at byte SBF_LINES_BLOCK_OFFSET of the page, so that its SBF_BLOCK_LINES
 * lines of SBF_LINE_BYTES are the machine's cache lines, and the k probes
 * of an element fall in one line: line sbf_line_of(hash) of the block,
 * bits as sbf_line_probe (hash.h) draws them.  One cache miss an element
 * instead of k; the filter is sized for it (sizing.c).
 *
 * SBF_SHARED_LAYOUT_PENDING (3, transactional bloom filters, the default
 * since): the line layout with SBF_PENDING_LINES lines, whose element's
 * line and probes both come from its line state (sbf_line_state), and
 * after them, up to the special space, the page's pending adds: an
 * SbfPendingAdd for each value added by a transaction that had not
 * committed when the page was last changed, pd_lower at the end of the
 * last one.  A pending add counts as present once its transaction has
 * committed, and as absent if it aborted; the next add to the page folds
 * the first kind into the bits and drops the second (shared_insert.c).
 */
#define SBF_SHARED_LAYOUT_PAGES	1
#define SBF_SHARED_LAYOUT_LINES	2
#define SBF_SHARED_LAYOUT_PENDING	3
#define SBF_SHARED_LAYOUT_STAMPED	4
#define SBF_LINE_BYTES			64
#define SBF_LINE_BITS			(SBF_LINE_BYTES * 8)
#define SBF_LINE_WORDS			(SBF_LINE_BYTES / 8)
#define SBF_BLOCK_LINES			(SBF_BLOCK_BYTES / SBF_LINE_BYTES)
#define SBF_LINES_BLOCK_OFFSET	64
#define SBF_SHARED_BLOOM		1
#define SBF_SHARED_STABLEBLOOM	2
#define SBF_SHARED_SLIDINGBLOOM	3

#define SBF_BLOCK_BYTES			8000
#define SBF_BLOCK_BITS			((uint64) SBF_BLOCK_BYTES * 8)

/*
 * The pending layout: 112 lines of bits (7,168 bytes), then room for
 * SBF_PENDING_MAX adds of SBF_PENDING_BYTES up to the special space.  A
 * row of the table (COPY) still carries SBF_BLOCK_BYTES, zero after the
 * lines, with the pending adds its scan's snapshot sees folded in.
 */
#define SBF_PENDING_LINES		112
#define SBF_PENDING_START		(SBF_LINES_BLOCK_OFFSET + SBF_PENDING_LINES * SBF_LINE_BYTES)
#define SBF_PENDING_BYTES		12
#define SBF_PENDING_MAX			79

/*
 * Overflow pages (the pending layout, in a filter whose state has
 * SBF_STATE_OVERFLOW): a data page whose room for pending adds is full
 * keeps more in a chain of overflow pages, each holding up to
 * SBF_OVERFLOW_MAX pending adds of any transactions, so that a transaction
 * adds any number of values.  A data page's link to its chain is the
 * SbfOverflowLink right after its page header, in the bytes before its
 * lines (zero in a page without a chain and in every filter made before).
 * Its adds count is a hint: 0 means no pending add is in the chain (a
 * reader then reads only the data page); otherwise the chain is read.
 *
 * An overflow page is a standard page whose contents are an
 * SbfOverflowHeader then its pending adds, pd_lower at the end of the last
 * one; its special space is zero.  It lies past every data page of the
 * sub-filters that existed when it was allocated (the relation's end, or
 * the block after the last data page): a growing filter's next sub-filter
 * starts past it, so sub-filters may have overflow pages between them.
 * An overflow page belongs to one data page (owner) for good; one whose
 * adds were all folded stays in its chain, to be filled again.  Its adds
 * are folded, as the data page's own, by the next add to the data page or
 * by VACUUM; VACUUM FULL leaves every overflow page behind.
 */
typedef struct SbfOverflowLink
{
	uint32		first;			/* the chain's first overflow page, or 0 */
	uint32		adds;			/* pending adds in the chain: 0 if none */
} SbfOverflowLink;

typedef struct SbfOverflowHeader
{
	uint32		magic;			/* SBF_MAGIC_OVERFLOW */
	uint32		owner;			/* the data page whose chain it is in */
	uint32		next;			/* the next overflow page, or 0 */
	uint32		zero;
} SbfOverflowHeader;

#define SBF_MAGIC_OVERFLOW		0x6F464253	/* "SBFo" */
#define SBF_OVERFLOW_START		(24 + sizeof(SbfOverflowHeader))
#define SBF_OVERFLOW_MAX		678

/*
 * A pending add: the transaction that added the value (a subtransaction's
 * own id inside a savepoint) and the value's line state, which gives its
 * line and its probes.  Twelve bytes, 4-byte aligned, so the state is two
 * halves, native byte order as every page.
 */
typedef struct SbfPendingAdd
{
	TransactionId xid;
	uint32		state_lo;
	uint32		state_hi;
} SbfPendingAdd;

/*
 * SBF_SHARED_LAYOUT_STAMPED (4, shared sliding filters, kind
 * SBF_SHARED_SLIDINGBLOOM, 1.1): the stamped layout of the slidingbloom
 * type (above) in pages.  The block starts at SBF_LINES_BLOCK_OFFSET, as
 * in the line layouts; its first 16 bytes are an SbfStampedPage, the
 * rest m = SBF_STAMPED_CELL_BYTES * 8 / b cells of b = cell_bits bits
 * (8, 16 or 32, so a cell is a little-endian integer of 1, 2 or 4 bytes),
 * each 0 (empty) or (s mod M) + 1 for the clock s of the arrival that last
 * set it, M = 2^b - 1.  An element's k cells are sbf_probe_next(...,
 * m) in its page.  The special space's prng is 0.
 *
 * The clock counts arrivals (a window of arrivals) or ticks of the time
 * (a window of time): SbfSlidingState, on the metapage.  A value arriving
 * at clock t is present when its k cells hold clocks s >= t - reach.  A
 * page is aged lazily, when it is next written at clock C (shared_sliding.c):
 * with H = reach + tolerance (no later arrival can find a cell older than
 * C - H), if C - latest > H every cell is dead and the cells are zeroed;
 * else if C - aged >= period the dead cells are cleared; either way aged
 * becomes C.  The cells then hold clocks in (aged - H, aged + period), and
 * a reader at a clock R <= latest + reach decodes each cell as the clock
 * s in (R - M, R] with that residue: period + 2 H <= M makes that the
 * clock written.  A reader whose clock is more than reach past latest
 * finds the page empty without decoding.  A page never written reads
 * as empty.  In a row of the table (COPY), the 8000 bytes of the block.
 */
typedef struct SbfStampedPage
{
	int64		aged;			/* clock the page was last aged at */
	int64		latest;			/* newest clock stamped into the page */
} SbfStampedPage;

#define SBF_STAMPED_CELL_BYTES	(SBF_BLOCK_BYTES - sizeof(SbfStampedPage))

/* The bits of a data page of a layout */
static inline uint64
sbf_layout_block_bits(int layout)
{
	if (layout == SBF_SHARED_LAYOUT_PENDING)
		return SBF_PENDING_LINES * SBF_LINE_BITS;
	if (layout == SBF_SHARED_LAYOUT_STAMPED)
		return SBF_STAMPED_CELL_BYTES * 8;
	return SBF_BLOCK_BITS;
}

/* Whether the bytes [from, SBF_BLOCK_BYTES) of a block are all zero */
static inline bool
sbf_block_is_zero_from(const uint8 *block, Size from)
{
	Size		i;

	for (i = from; i < SBF_BLOCK_BYTES; i++)
		if (block[i] != 0)
			return false;
	return true;
}

/* The metapage's contents (at PageGetContents of block 0), 64 bytes */
typedef struct SbfSharedMeta
{
	uint32		magic;			/* SBF_MAGIC_SHARED */
	uint16		version;		/* the layout: SBF_SHARED_LAYOUT_* */
	uint16		kind;			/* SBF_SHARED_BLOOM, _STABLEBLOOM or
								 * _SLIDINGBLOOM */
	uint16		hashes;			/* k, 1..SBF_MAX_HASHES */
	uint8		max;			/* Max of a cell: 1 for bloom, 0 for sliding */
	uint8		cell_bits;		/* bits per cell: 1 for bloom, 1/2/4/8,
								 * 8/16/32 for sliding */
	uint32		block_bits;		/* bits of one data page: SBF_BLOCK_BITS */
	uint64		pages;			/* data pages (blocks 1..pages) */
	uint64		cells;			/* bits (bloom) or cells in all: pages *
								 * cells per page */
	uint64		decrements;		/* P per insertion, in the element's page; 0
								 * for bloom */
	uint64		seed;			/* of XXH3-128 and of the pages' PRNGs */
	int64		capacity;		/* bloom, sliding: capacity asked (sliding:
								 * values a window); stable: cells asked */
	float8		fpr;			/* false-positive rate asked */
} SbfSharedMeta;

/*
 * The metapage of a transactional filter (SBF_SHARED_LAYOUT_PENDING) holds,
 * right after SbfSharedMeta, its state: the only part of a filter's
 * metapage that changes after creation.  It counts the values added and
 * lists the sub-filters (Almeida, Baquero, Preguica & Hutchison 2007,
 * "Scalable Bloom Filters") in consecutive ranges of data pages: a filter
 * of fixed size has one, its SbfSharedMeta's; a growing one (growth > 0)
 * gets a new one when its last has been given its capacity's values, of
 * capacity growth times the last's and false-positive rate tightening
 * times the last's, the first's being fpr * (1 - tightening), so that the
 * rates sum to less than the fpr asked.  A value is present if any
 * sub-filter has it, and is added to the last.  The metapage of the other
 * layouts ends at SbfSharedMeta: they keep no count and do not grow.
 *
 * offset  size  field
 *   0       4   nsub        sub-filters in use, 1..SBF_MAX_SUBFILTERS
 *   4       4   flags       SBF_STATE_OVERFLOW once the filter has had an
 *                           overflow page (a filter made before overflow
 *                           pages existed has 0 until it needs one)
 *   8       8   growth      expansion factor: 0 (fixed size) or 1..16
 *  16       8   tightening  ratio of one sub-filter's rate to the last's
 *  24       8   adds        values answered new (those of transactions
 *                           that later rolled back included)
 *  32   40 x n  sub         the sub-filters, SBF_MAX_SUBFILTERS entries,
 *                           zero after the first nsub
 *
 * A sub-filter: first (4) its first data page, pages (4), hashes (2),
 * zero (6), capacity (8), fpr (8), adds (8) the values added to it.
 */
#define SBF_MAX_SUBFILTERS		64

/*
 * flags: the filter may have overflow pages (above), and a sub-filter may
 * start past the last one's end (past the overflow pages allocated before
 * it); without it, each sub-filter starts right after the last one's pages
 */
#define SBF_STATE_OVERFLOW		0x0001
#define SBF_MAX_GROWTH			16

/*
 * A growing filter's first sub-filter has at least this many pages (its
 * capacity raised to what they hold), so that a batch of a thousand values
 * fits in its pages' own room for pending adds without overflow pages.
 */
#define SBF_GROWING_MIN_PAGES	32

typedef struct SbfSubFilter
{
	uint32		first;			/* its first data page; the first's is 1 */
	uint32		pages;			/* its data pages, from first */
	uint16		hashes;			/* its k */
	uint16		zero1;
	uint32		zero2;
	int64		capacity;		/* values it is sized for */
	float8		fpr;			/* its rate at capacity */
	int64		adds;			/* values added to it */
} SbfSubFilter;

typedef struct SbfSharedState
{
	uint32		nsub;			/* sub-filters in use */
	uint32		flags;			/* SBF_STATE_OVERFLOW, or zero */
	float8		growth;			/* 0: a filter of fixed size */
	float8		tightening;
	int64		adds;			/* values answered new, in all */
	SbfSubFilter sub[SBF_MAX_SUBFILTERS];
} SbfSharedState;

/*
 * The metapage of a shared sliding filter (SBF_SHARED_LAYOUT_STAMPED) has
 * the state of a transactional one (one sub-filter, no growth, its count
 * of values answered new) and, after it, the SbfSlidingState: the
 * window's parameters and its clock, the only field that changes.
 *
 * offset  size  field
 *   0       8   clock       arrivals counted (the last one's number), or
 *                           the newest tick seen; never goes back
 *   8       8   window      arrivals (w), or the time in microseconds (W)
 *  16       8   unit        microseconds a tick, ceil(W / 64); 0 for
 *                           arrivals
 *  24       8   reach       w - 1 arrivals, or n = ceil(W / unit) ticks:
 *                           a value at t sees stamps s >= t - reach
 *  32       8   tolerance   how late an arrival may come, in arrivals or
 *                           ticks
 *  40       8   tolerance_us  the tolerance asked, in microseconds (time)
 *  48       8   period      a written page clears its dead cells when its
 *                           clock has moved this far since it was aged
 *  56       4   flags       SBF_SLIDING_TIME, SBF_SLIDING_REFRESH
 *  60       4   (zero)
 */
typedef struct SbfSlidingState
{
	int64		clock;
	int64		window;
	int64		unit;
	int64		reach;
	int64		tolerance;
	int64		tolerance_us;
	int64		period;
	uint32		flags;
	uint32		zero;
} SbfSlidingState;

/* flags: the window is a time (the clock counts ticks, not arrivals) */
#define SBF_SLIDING_TIME		0x0001
/* flags: every arrival stamps its cells, not only those answered new */
#define SBF_SLIDING_REFRESH		0x0002
/* Ticks in a time window (its unit is ceil(W / this)) */
#define SBF_SLIDING_TICKS		64

/*
 * The special space of every page.  prng: the SplitMix64 state of a data
 * page of a stable filter, seeded at the page's first write with
 * sbf_shared_page_seed(seed, block); 0 in the other pages and the
 * metapage, except a data page of the pending layout, where it holds the
 * page's folded xid (low 32 bits, the high ones zero): the newest
 * transaction whose pending adds were folded into the bits, 0 when none
 * or once VACUUM has found it older than every snapshot can be.  A scan
 * whose snapshot is older refuses the page (shared_am.c).  In a row of
 * the table it is 0.
 */
typedef struct SbfPageOpaque
{
	uint64		prng;
} SbfPageOpaque;

/* The largest number of data pages: BlockNumber is 32 bits */
#define SBF_SHARED_MAX_PAGES	((uint64) MaxBlockNumber - 1)

/*
 * sieve_chunk: a run of sorted 64-bit URL signatures, Rice-coded gaps
 * (sieve_codes.c).  A compressed seen (sieve_store.c) is a table of rows
 * (head bigint PRIMARY KEY, chunk sieve_chunk), head being the chunk's
 * first signature and the chunks' ranges disjoint and ascending.
 *
 * payload offset  size  field
 *   0             4     magic    = SBF_MAGIC_SIEVE_CHUNK
 *   4             2     version  = 1
 *   6             1     rice     (b), the Rice parameter, 0..SIEVE_RICE_MAX
 *   7             1     flags    zero
 *   8             4     count    signatures in the chunk, >= 1
 *  12             8     first    the first (smallest) signature
 *  20             8     last     the last (largest); = first when count = 1
 *  28             ...   codes    count - 1 gaps, a bit stream
 *
 * Signatures are bigints (url_signature) ordered as bigints; the codes
 * work on u = sig XOR 2^63, which orders the same as unsigned integers.
 * Each gap g = u[i] - u[i-1] - 1 (>= 0, the signatures being distinct) is
 * written as its Rice code with parameter b (Golomb 1966, Rice 1979; the
 * "instantaneous codes" of Vigna's notes): q = g >> b zero bits, a one
 * bit, then the b low bits of g, least significant first.  A quotient of
 * SIEVE_RICE_ESCAPE or more (a gap far above the chunk's mean, which
 * uniform signatures make vanishingly rare) is written as
 * SIEVE_RICE_ESCAPE zero bits followed by the whole gap in 64 bits, so no
 * code is longer than 96 bits.  Bit i of the stream is bit i % 8 of byte
 * i / 8; the codes take exactly ceil(bits / 8) bytes, and the unused high
 * bits of the last byte are zero.
 *
 * The writer chooses b for each chunk from the gaps that follow its first
 * signature (the b that codes them in the fewest bits: about
 * log2(2^64 / n) for n uniform signatures), and closes a chunk before its
 * codes pass SIEVE_CHUNK_CODE_BYTES, so that a row of the table stays
 * under the TOAST threshold: four chunks to an 8 kB page, and never
 * toasted (the type's storage is plain).  A reader accepts any length up
 * to SIEVE_CHUNK_MAX_CODE_BYTES.
 */
#define SBF_MAGIC_SIEVE_CHUNK	0x7A464253	/* "SBFz" */
#define SBF_SIEVE_CHUNK_VERSION	1
#define SIEVE_RICE_MAX			56
#define SIEVE_RICE_ESCAPE		32
#define SIEVE_CHUNK_CODE_BYTES	1968
#define SIEVE_CHUNK_MAX_CODE_BYTES	8192
#define SIEVE_CHUNK_MAX_COUNT	(SIEVE_CHUNK_MAX_CODE_BYTES * 8 + 1)

typedef struct SieveChunkData
{
	int32		vl_len_;		/* varlena header (not part of the payload) */
	uint32		magic;			/* SBF_MAGIC_SIEVE_CHUNK */
	uint16		version;		/* SBF_SIEVE_CHUNK_VERSION */
	uint8		rice;			/* b */
	uint8		flags;			/* zero */
	uint32		count;			/* signatures, >= 1 */
	int64		first;			/* smallest signature */
	int64		last;			/* largest signature */
	uint8		codes[FLEXIBLE_ARRAY_MEMBER];	/* count - 1 gaps */
} SieveChunkData;

typedef SieveChunkData *SieveChunk;

#define SIEVE_CHUNK_HEADER_SIZE	offsetof(SieveChunkData, codes)
#define SIEVE_CHUNK_CODES_LEN(chunk) \
	(VARSIZE(chunk) - SIEVE_CHUNK_HEADER_SIZE)

/*
 * simhash: a 64-bit SimHash fingerprint (simhash.c), passed by value like
 * a bigint.  It has no header: the value is the 64 bits, bit b of the
 * fingerprint being bit b of the integer.
 *
 * binary form (send/recv)  8 bytes, the integer little-endian
 * text form                16 hexadecimal digits, most significant first
 */
#define SIMHASH_BYTES			8
#define SIMHASH_BITS			64

#endif							/* SBF_FORMAT_H */
