/*-------------------------------------------------------------------------
 *
 * bloom.h
 *	  The bloom type's operations, for the SQL functions, the aggregates
 *	  and the window function.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_BLOOM_H
#define SBF_BLOOM_H

#include "postgres.h"

#include "fmgr.h"

#include "format.h"
#include "hash.h"

#define BLOOM_SIZE(bits)	(BLOOM_HEADER_SIZE + BLOOM_WORDS(bits) * sizeof(uint64))
#define BLOOM_IS_EMPTY(filter)	(((filter)->flags & BLOOM_FLAG_EMPTY) != 0)
/* The flags that give a value's layout, and those with the empty form */
#define BLOOM_LAYOUT_FLAGS		(BLOOM_FLAG_BLOCKED | BLOOM_FLAG_LINES | \
								 BLOOM_FLAG_PENDING_LINES)
#define BLOOM_LAYOUT_FLAGS_EMPTY	(BLOOM_LAYOUT_FLAGS | BLOOM_FLAG_EMPTY)

extern Bloom bloom_new(int64 bits, int32 hashes, uint64 seed, bool materialized);
extern Bloom bloom_new_sized(int64 capacity, double fpr, uint64 seed,
							 bool materialized);
extern void bloom_validate(const BloomData *filter, int sqlstate);
extern Bloom bloom_from_datum(Datum datum);
extern Bloom bloom_copy_datum(Datum datum);
extern void bloom_check_compatible(const BloomData *a, const BloomData *b,
								   const char *operation);
extern void bloom_union_into(Bloom target, const BloomData *source);
extern void bloom_intersect_into(Bloom target, const BloomData *source);
extern uint64 bloom_bits_set(const BloomData *filter);

/*
 * Where the k probes of an element go: the whole filter, or in the blocked
 * layout (BLOOM_FLAG_BLOCKED) the SBF_BLOCK_BITS bits of its block.
 */
static inline void
bloom_probe_span(const BloomData *filter, SbfHash hash, uint64 *base,
				 uint64 *span)
{
	if ((filter->flags & BLOOM_FLAG_BLOCKED) != 0)
	{
		*base = sbf_block_of(hash, filter->bits / SBF_BLOCK_BITS) * SBF_BLOCK_BITS;
		*span = SBF_BLOCK_BITS;
	}
	else
	{
		*base = 0;
		*span = filter->bits;
	}
}

/*
 * The line layout (BLOOM_FLAG_LINES, with BLOOM_FLAG_BLOCKED): the 8 words
 * of the element's line in its block, probed by sbf_line_probe_state; with
 * BLOOM_FLAG_PENDING_LINES, of the first SBF_PENDING_LINES lines, chosen by
 * the line state as a transactional filter's page chooses it
 */
static inline uint64 *
bloom_line(const BloomData *filter, SbfHash hash)
{
	uint64		line = (filter->flags & BLOOM_FLAG_PENDING_LINES) != 0 ?
		sbf_line_of_state(sbf_line_state(hash), SBF_PENDING_LINES) :
		sbf_line_of(hash, SBF_BLOCK_LINES);
	uint64		bit = sbf_block_of(hash, filter->bits / SBF_BLOCK_BITS) * SBF_BLOCK_BITS +
		line * SBF_LINE_BITS;

	return (uint64 *) &filter->words[bit / 64];
}

/* The bits elements can set: all but the zero tail of each pending block */
static inline uint64
bloom_usable_bits(const BloomData *filter)
{
	if ((filter->flags & BLOOM_FLAG_PENDING_LINES) != 0)
		return filter->bits / SBF_BLOCK_BITS * SBF_PENDING_LINES * SBF_LINE_BITS;
	return filter->bits;
}

/* Test the k bits of one element */
static inline bool
bloom_test_hash(const BloomData *filter, SbfHash hash)
{
	SbfProbe	probe;
	uint64		base;
	uint64		span;
	int			i;

	if (BLOOM_IS_EMPTY(filter))
		return false;
	if ((filter->flags & BLOOM_FLAG_LINES) != 0)
		return sbf_line_probe(bloom_line(filter, hash), filter->hashes, hash, false);
	bloom_probe_span(filter, hash, &base, &span);
	sbf_probe_init(&probe, hash);
	for (i = 0; i < filter->hashes; i++)
	{
		uint64		bit = base + sbf_probe_next(&probe, span);

		if ((filter->words[bit >> 6] & (UINT64CONST(1) << (bit & 63))) == 0)
			return false;
	}
	return true;
}

/*
 * Set the k bits of one element; return whether all were set already.
 * The filter must be materialized (bloom_copy_datum, bloom_new(..., true)).
 */
static inline bool
bloom_add_hash(Bloom filter, SbfHash hash)
{
	SbfProbe	probe;
	uint64		base;
	uint64		span;
	bool		present = true;
	int			i;

	Assert(!BLOOM_IS_EMPTY(filter));
	Assert(filter->hashes >= 1 && filter->hashes <= SBF_MAX_HASHES);
	if ((filter->flags & BLOOM_FLAG_LINES) != 0)
		return sbf_line_probe(bloom_line(filter, hash), filter->hashes, hash, true);
	bloom_probe_span(filter, hash, &base, &span);
	sbf_probe_init(&probe, hash);
	for (i = 0; i < filter->hashes; i++)
	{
		uint64		bit = base + sbf_probe_next(&probe, span);
		uint64		mask = UINT64CONST(1) << (bit & 63);

		Assert(bit < filter->bits);
		if ((filter->words[bit >> 6] & mask) == 0)
		{
			present = false;
			filter->words[bit >> 6] |= mask;
		}
	}
	return present;
}

#endif							/* SBF_BLOOM_H */
