/*-------------------------------------------------------------------------
 *
 * simhash.h
 *	  The simhash type (format.h), shared by simhash.c and simhash_gin.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SIMHASH_H
#define SBF_SIMHASH_H

#include "postgres.h"

#include "fmgr.h"
#include "port/pg_bitutils.h"

#include "format.h"

#define PG_GETARG_SIMHASH(n)	((uint64) PG_GETARG_INT64(n))
#define PG_RETURN_SIMHASH(x)	PG_RETURN_INT64((int64) (x))
#define DatumGetSimhash(d)		((uint64) DatumGetInt64(d))

/* Manku, Jain and Das Sarma (2007): 3 of 64 bits */
#define SIMHASH_DEFAULT_DISTANCE	3
/* The longest shingle, in words */
#define SIMHASH_MAX_SHINGLE		64

extern int	simhash_max_distance;

extern void simhash_define_gucs(void);

static inline int
simhash_distance(uint64 a, uint64 b)
{
	return pg_popcount64(a ^ b);
}

/*
 * The block layout shared by the GIN index (simhash_gin.c) and the join
 * keys (simhash_keys.c): block i of B covers bits
 * [floor(64 i / B), floor(64 (i + 1) / B))
 */
static inline int
simhash_block_start(int i, int blocks)
{
	return (SIMHASH_BITS * i) / blocks;
}

/* The bits of block i of B, shifted down */
static inline uint64
simhash_block_bits(uint64 value, int i, int blocks)
{
	int			start = simhash_block_start(i, blocks);
	int			width = simhash_block_start(i + 1, blocks) - start;

	if (width == SIMHASH_BITS)
		return value;
	return (value >> start) & ((UINT64CONST(1) << width) - 1);
}

/* The mask of block i of B */
static inline uint64
simhash_block_mask(int i, int blocks)
{
	int			start = simhash_block_start(i, blocks);
	int			width = simhash_block_start(i + 1, blocks) - start;

	if (width == SIMHASH_BITS)
		return ~UINT64CONST(0);
	return ((UINT64CONST(1) << width) - 1) << start;
}

#endif							/* SBF_SIMHASH_H */
