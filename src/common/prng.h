/*-------------------------------------------------------------------------
 *
 * prng.h
 *	  SplitMix64, the pseudo-random generator of the stable Bloom filter.
 *
 * Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
 * generators" (the generator used to seed xoshiro).  Its whole state is
 * one 64-bit word, stored in every stablebloom value, so a filter's
 * decrements continue exactly where they stopped: marking two batches one
 * after the other equals marking them in one pass.  It is part of the
 * stored format.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_PRNG_H
#define SBF_PRNG_H

#include "postgres.h"

static inline uint64
splitmix64_next(uint64 *state)
{
	uint64		z = (*state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * A uniform integer in [0, n) from 64 random bits, by multiply-high
 * (Lemire 2019): no division, and a bias below n / 2^64.
 */
static inline uint64
prng_below(uint64 random, uint64 n)
{
	return (uint64) (((unsigned __int128) random * n) >> 64);
}

#endif							/* SBF_PRNG_H */
