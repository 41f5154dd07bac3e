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

#include "utils/memutils.h"

#ifdef WORDS_BIGENDIAN
#error "sbf stores its values little-endian; big-endian hosts are not supported"
#endif

/* Magic numbers: the ASCII bytes "SBFb" and "SBFs" read as little-endian */
#define SBF_MAGIC_BLOOM			0x62464253
#define SBF_MAGIC_STABLEBLOOM	0x73464253

/* The current (and so far only) format version of each type */
#define SBF_BLOOM_VERSION		1
#define SBF_STABLEBLOOM_VERSION	1

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

#define STABLEBLOOM_HEADER_SIZE	offsetof(StableBloomData, words)
#define STABLEBLOOM_WORDS(cells, cell_bits) \
	(((uint64) (cells) * (uint64) (cell_bits) + 63) / 64)
#define STABLEBLOOM_MAX_MAX		255

/* The largest number of cells of b bits that fits 1 GB */
#define STABLEBLOOM_MAX_CELLS(cell_bits) \
	((uint64) ((MaxAllocSize - STABLEBLOOM_HEADER_SIZE) / sizeof(uint64)) * 64 / (cell_bits))

#endif							/* SBF_FORMAT_H */
