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
 *   8             4     reserved, must be zero
 *  12             8     bits     (m), >= 1
 *  20             8     seed     of XXH3-128
 *  28             8*W   words    bit i is bit (i % 64) of word (i / 64),
 *                                W = ceil(m / 64); bits >= m are zero
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
	uint32		reserved;
	uint64		bits;
	uint64		seed;
	uint64		words[FLEXIBLE_ARRAY_MEMBER];
} BloomData;

typedef BloomData *Bloom;

#define BLOOM_HEADER_SIZE	offsetof(BloomData, words)
#define BLOOM_WORDS(bits)	(((uint64) (bits) + 63) / 64)

/*
 * The largest filter that fits a varlena (1 GB, MaxAllocSize).  Checked
 * before anything is allocated.
 */
#define BLOOM_MAX_BITS \
	((uint64) ((MaxAllocSize - BLOOM_HEADER_SIZE) / sizeof(uint64)) * 64)

#endif							/* SBF_FORMAT_H */
