/*-------------------------------------------------------------------------
 *
 * hash.h
 *	  Element hashing and the probe sequence shared by every filter.
 *
 * Both are part of the stored format: changing either changes which bits a
 * stored filter has set, so they may only change with a format version.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_HASH_H
#define SBF_HASH_H

#include "postgres.h"

#include "fmgr.h"

#include "prng.h"

/* The 128-bit hash of one element, split into the two double-hashing halves */
typedef struct SbfHash
{
	uint64		h1;				/* low 64 bits of XXH3-128 */
	uint64		h2;				/* high 64 bits of XXH3-128 */
} SbfHash;

/*
 * What SQL type an element has, which decides its bytes (hash.c): a text is
 * its characters in UTF-8 whatever the database encoding, a bytea its bytes
 * as they are, a bigint its 8 bytes little-endian.
 *
 * One C function serves both the text and the bytea form of each SQL
 * function, so it asks sbf_varlena_kind which one it was called as.
 */
typedef enum SbfElementKind
{
	SBF_ELEMENT_TEXT,			/* text */
	SBF_ELEMENT_BYTEA,			/* bytea */
	SBF_ELEMENT_INT8			/* bigint */
} SbfElementKind;

extern SbfHash sbf_hash_bytes(const void *data, size_t len, uint64 seed);
extern SbfElementKind sbf_varlena_kind(FunctionCallInfo fcinfo, int argno);
extern SbfHash sbf_hash_element(Datum value, SbfElementKind kind, uint64 seed);
extern int64 sbf_signature(const void *data, size_t len);

/* a text's payload as UTF-8, the bytes it is hashed (and canonicalised) as */
extern const char *sbf_text_as_utf8(const char *data, size_t *len, size_t *bad);

/*
 * Enhanced double hashing (Kirsch & Mitzenmacher 2006, "Less Hashing, Same
 * Performance"; the "enhanced" variant of Dillinger & Manolios 2004):
 *
 *		x = h1; y = h2;
 *		for i in 0 .. k-1:  idx_i = x mod m;  x += y;  y += i;
 *
 * all in uint64 arithmetic.  The "+= i" term breaks the arithmetic
 * progression that plain double hashing falls into when h2 mod m is small.
 */
typedef struct SbfProbe
{
	uint64		x;
	uint64		y;
	uint64		i;
} SbfProbe;

static inline void
sbf_probe_init(SbfProbe *probe, SbfHash hash)
{
	probe->x = hash.h1;
	probe->y = hash.h2;
	probe->i = 0;
}

/* Return the next probe index in [0, m) */
static inline uint64
sbf_probe_next(SbfProbe *probe, uint64 m)
{
	uint64		idx;

	Assert(m > 0);
	idx = probe->x % m;
	probe->x += probe->y;
	probe->y += probe->i;
	probe->i++;
	return idx;
}

/*
 * The block of an element in the blocked layout of a shared filter (and of
 * its snapshots): fastrange of h2 over the number of blocks (Lemire 2019),
 * ((uint128) h2 * blocks) >> 64, uniform and without a division.  The k
 * probes are then sbf_probe_next(..., bits of one block) inside it.
 */
static inline uint64
sbf_block_of(SbfHash hash, uint64 blocks)
{
	return (uint64) (((unsigned __int128) hash.h2 * blocks) >> 64);
}

/*
 * The line layout (SBF_SHARED_LAYOUT_LINES, BLOOM_FLAG_LINES): the line of
 * an element in its block is fastrange of h1 over the lines of a block (the
 * block itself takes h2's high bits), and its k probes in the line of 512
 * bits are consecutive 9-bit fields of SplitMix64 outputs from the state
 * h1 XOR h2, seven fields an output.  Double hashing modulo 512 collides
 * more often than independent probes, which the sizing assumes (it
 * measured a rate 3% above the one asked for); SplitMix64's outputs are
 * independent of the bits that chose the block and the line.
 */
#define SBF_LINE_PROBE_BITS		9	/* log2 of the bits of a line */
#define SBF_LINE_PROBES_PER_WORD	7

static inline uint64
sbf_line_of(SbfHash hash, uint64 lines)
{
	return (uint64) (((unsigned __int128) hash.h1 * lines) >> 64);
}

/*
 * The line state of an element: the seed of its probes, and in the pending
 * layout (SBF_SHARED_LAYOUT_PENDING) of its line too (sbf_line_of_state),
 * so that a pending add keeps 64 bits of a value, not 128
 */
static inline uint64
sbf_line_state(SbfHash hash)
{
	return hash.h1 ^ hash.h2;
}

static inline uint64
sbf_line_of_state(uint64 state, uint64 lines)
{
	return (uint64) (((unsigned __int128) state * lines) >> 64);
}

/*
 * Set (or, with set false, only test) the k bits drawn from a line state in
 * its line, the 8 words at LINE; return whether all were set before
 */
static inline bool
sbf_line_probe_state(uint64 *line, int hashes, uint64 state, bool set)
{
	uint64		fields = 0;
	bool		present = true;
	int			i;

	for (i = 0; i < hashes; i++)
	{
		uint64		bit;
		uint64		mask;

		if (i % SBF_LINE_PROBES_PER_WORD == 0)
			fields = splitmix64_next(&state);
		bit = fields & ((UINT64CONST(1) << SBF_LINE_PROBE_BITS) - 1);
		fields >>= SBF_LINE_PROBE_BITS;
		mask = UINT64CONST(1) << (bit & 63);
		if ((line[bit >> 6] & mask) == 0)
		{
			present = false;
			if (!set)
				return false;
			line[bit >> 6] |= mask;
		}
	}
	return present;
}

/* The same for an element */
static inline bool
sbf_line_probe(uint64 *line, int hashes, SbfHash hash, bool set)
{
	return sbf_line_probe_state(line, hashes, sbf_line_state(hash), set);
}

#endif							/* SBF_HASH_H */
