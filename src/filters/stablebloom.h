/*-------------------------------------------------------------------------
 *
 * stablebloom.h
 *	  The stablebloom type's operations, for the SQL functions, the
 *	  aggregate and the window function.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_STABLEBLOOM_H
#define SBF_STABLEBLOOM_H

#include "postgres.h"

#include "miscadmin.h"

#include "format.h"
#include "hash.h"
#include "prng.h"

#define STABLEBLOOM_SIZE(cells, cell_bits) \
	(STABLEBLOOM_HEADER_SIZE + STABLEBLOOM_WORDS(cells, cell_bits) * sizeof(uint64))

extern int	stablebloom_cell_bits(int max);
#define STABLEBLOOM_IS_EMPTY(filter)	(((filter)->flags & STABLEBLOOM_FLAG_EMPTY) != 0)

extern StableBloom stablebloom_new(int64 cells, int32 hashes, int32 max,
								   int64 decrements, uint64 seed,
								   bool materialized);
extern void stablebloom_validate(const StableBloomData *filter, int sqlstate);
extern StableBloom stablebloom_from_datum(Datum datum);
extern StableBloom stablebloom_copy_datum(Datum datum);

/* Cells of one block of the blocked layout (STABLEBLOOM_FLAG_BLOCKED) */
#define STABLEBLOOM_BLOCK_CELLS(filter)	(SBF_BLOCK_BITS / (filter)->cell_bits)

/*
 * Cells are b-bit fields (b = cell_bits <= 8) of a little-endian bit
 * string, so cell i starts at bit i*b: byte (i*b)/8, bit (i*b)%8, and
 * spans at most two bytes.  The same helpers serve the cells of a shared
 * filter's page.
 */
static inline uint32
sbf_cell_get(const uint8 *bytes, int cell_bits, uint64 i)
{
	uint64		bit = i * cell_bits;
	uint32		shift = bit & 7;
	uint32		v = bytes[bit >> 3];

	if (shift + cell_bits > 8)
		v |= (uint32) bytes[(bit >> 3) + 1] << 8;
	return (v >> shift) & ((1U << cell_bits) - 1);
}

static inline void
sbf_cell_set(uint8 *bytes, int cell_bits, uint64 i, uint32 value)
{
	uint64		bit = i * cell_bits;
	uint32		shift = bit & 7;
	uint32		mask = ((1U << cell_bits) - 1) << shift;
	uint32		v = value << shift;

	bytes[bit >> 3] = (bytes[bit >> 3] & ~mask) | (v & mask);
	if (shift + cell_bits > 8)
		bytes[(bit >> 3) + 1] = (bytes[(bit >> 3) + 1] & ~(mask >> 8)) | ((v & mask) >> 8);
}

static inline uint32
stablebloom_get(const StableBloomData *filter, uint64 i)
{
	Assert(i < filter->cells);
	return sbf_cell_get((const uint8 *) filter->words, filter->cell_bits, i);
}

static inline void
stablebloom_set(StableBloom filter, uint64 i, uint32 value)
{
	/* no Assert on value: a stored cell above max is only checked on input */
	Assert(i < filter->cells);
	sbf_cell_set((uint8 *) filter->words, filter->cell_bits, i, value);
}

/*
 * The cells an element's probes and decrements use: all of them, or in the
 * blocked layout the cells of its block.
 */
static inline void
stablebloom_probe_span(const StableBloomData *filter, SbfHash hash,
					   uint64 *base, uint64 *span)
{
	if ((filter->flags & STABLEBLOOM_FLAG_BLOCKED) != 0)
	{
		*span = STABLEBLOOM_BLOCK_CELLS(filter);
		*base = sbf_block_of(hash, filter->cells / *span) * *span;
	}
	else
	{
		*base = 0;
		*span = filter->cells;
	}
}

/* All k probed cells are non-zero */
static inline bool
stablebloom_test_hash(const StableBloomData *filter, SbfHash hash)
{
	SbfProbe	probe;
	uint64		base;
	uint64		span;
	int			i;

	if (STABLEBLOOM_IS_EMPTY(filter))
		return false;
	stablebloom_probe_span(filter, hash, &base, &span);
	sbf_probe_init(&probe, hash);
	for (i = 0; i < filter->hashes; i++)
		if (stablebloom_get(filter, base + sbf_probe_next(&probe, span)) == 0)
			return false;
	return true;
}

/*
 * One insertion (Deng & Rafiei 2006, Algorithm 1): the verdict is whether
 * all k cells were non-zero; then P cells are decremented, then the k cells
 * are set to Max.
 *
 * The P cells are consecutive, mod m, from one uniformly random start: one
 * PRNG draw per insertion and one or two cache lines touched, instead of P
 * random draws and P cache misses.  The stable point depends only on each
 * cell being decremented with probability P/m per insertion, which holds
 * for any start drawn uniformly; t/011_stablebloom_accuracy.pl measures the
 * false-positive rate against the formula.  In the blocked layout the P
 * cells are consecutive mod the block, inside the element's block: blocks
 * are chosen uniformly, so each cell is still decremented with probability
 * P/m per insertion.
 *
 * The filter must be materialized (stablebloom_copy_datum).
 */
static inline bool
stablebloom_add_hash(StableBloom filter, SbfHash hash)
{
	uint64		probes[SBF_MAX_HASHES];
	uint64		start = 0;
	uint64		base;
	uint64		span;
	bool		present = true;
	SbfProbe	probe;
	int			i;

	Assert(!STABLEBLOOM_IS_EMPTY(filter));
	Assert(filter->hashes >= 1 && (uint64) filter->hashes < filter->cells);
	Assert(filter->decrements <= filter->cells);

	/* prefetch the k cells and the first decremented one (see bloom_add_hash) */
	stablebloom_probe_span(filter, hash, &base, &span);
	sbf_probe_init(&probe, hash);
	for (i = 0; i < filter->hashes; i++)
	{
		probes[i] = base + sbf_probe_next(&probe, span);
		__builtin_prefetch((const uint8 *) filter->words +
						   ((probes[i] * filter->cell_bits) >> 3), 1);
	}
	if (filter->decrements > 0)
	{
		start = prng_below(splitmix64_next(&filter->prng), span);
		__builtin_prefetch((const uint8 *) filter->words +
						   (((base + start) * filter->cell_bits) >> 3), 1);
	}

	for (i = 0; i < filter->hashes; i++)
	{
		if (stablebloom_get(filter, probes[i]) == 0)
		{
			present = false;
			break;
		}
	}

	if (filter->decrements > 0)
	{
		uint64		cell = start;
		uint64		j;

		for (j = 0; j < filter->decrements; j++)
		{
			uint32		v = stablebloom_get(filter, base + cell);

			/* P may be as large as m: stay cancellable */
			if ((j & 0xFFFFF) == 0xFFFFF)
				CHECK_FOR_INTERRUPTS();

			if (v > 0)
				stablebloom_set(filter, base + cell, v - 1);
			if (++cell == span)
				cell = 0;
		}
	}

	for (i = 0; i < filter->hashes; i++)
		stablebloom_set(filter, probes[i], filter->max);

	filter->insertions++;
	return present;
}

#endif							/* SBF_STABLEBLOOM_H */
