/*-------------------------------------------------------------------------
 *
 * sizing.c
 *	  The formulas that size filters and predict their accuracy, and the SQL
 *	  helpers that let a user plan memory before building anything.
 *
 * Bloom filter (Bloom 1970; the optimum as derived in e.g. Broder &
 * Mitzenmacher 2004, "Network Applications of Bloom Filters"):
 *
 *	  after n insertions into m bits with k probes, the false-positive rate is
 *		  fpr = (1 - e^(-k n / m))^k
 *	  minimised at k = (m / n) ln 2, where it equals (1/2)^k, so a target
 *	  fpr p at capacity n needs
 *		  m = -n ln p / (ln 2)^2	bits.
 *
 * Blocked Bloom filter (Putze, Sanders & Singler 2007, "Cache-, Hash- and
 * Space-Efficient Bloom Filters", section 3), the layout of shared
 * filters: the m bits are b blocks of B bits and all k probes of an
 * element fall in one block, chosen uniformly.  The number of elements in
 * one block is then Binomial(n, 1/b), close to Poisson(lambda = n / b), and
 * a block holding i elements answers a false positive with the classic
 * rate of B bits after i insertions, so
 *		  fpr = sum over i >= 0 of  e^-lambda lambda^i / i!  (1 - e^(-k i / B))^k.
 * Fuller blocks cost more than emptier ones save, so this exceeds the
 * classic (1 - e^(-k n / m))^k for the same m; the paper's table 1 shows
 * the gap shrinking as B grows.  sbf_blocked_bloom_pages starts from the
 * classic m and k and adds whole blocks until the sum is at most the fpr
 * asked for at capacity.
 *
 * The Stable Bloom filter's formulas are further down.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"

#include "format.h"
#include "sizing.h"

PG_FUNCTION_INFO_V1(bloom_optimal_bits);
PG_FUNCTION_INFO_V1(bloom_optimal_hashes);
PG_FUNCTION_INFO_V1(bloom_expected_fpr);

void
sbf_check_fpr(double fpr)
{
	if (isnan(fpr) || fpr <= 0.0 || fpr >= 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false-positive rate must be between 0 and 1 exclusive"),
				 errdetail("The false-positive rate given was %g.", fpr)));
}

void
sbf_check_capacity(int64 capacity)
{
	if (capacity < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be at least 1"),
				 errdetail("The capacity given was " INT64_FORMAT ".", capacity)));
}

/*
 * m = ceil(-n ln p / (ln 2)^2), rounded up to a multiple of 64 so that the
 * last word of the bit array is used in full.  Any size that fits a bigint:
 * this is a planning figure, and bloom_value_bits_for() is what checks that
 * a bloom value can hold it.
 */
uint64
bloom_bits_for(int64 capacity, double fpr)
{
	double		bits;

	sbf_check_capacity(capacity);
	sbf_check_fpr(fpr);

	bits = ceil(-(double) capacity * log(fpr) / (M_LN2 * M_LN2));
	bits = ceil(bits / 64.0) * 64.0;
	/* 2^63 exactly is representable, and is the first value out of range */
	if (!(bits < (double) PG_INT64_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a bloom filter for " INT64_FORMAT " elements at false-positive rate %g needs more than 2^63 bits",
						capacity, fpr)));
	Assert(bits >= 64.0);
	return (uint64) bits;
}

/* bloom_bits_for(), for a filter that must fit in one bloom value */
uint64
bloom_value_bits_for(int64 capacity, double fpr)
{
	uint64		bits = bloom_bits_for(capacity, fpr);

	if (bits > BLOOM_MAX_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a bloom filter for " INT64_FORMAT " elements at false-positive rate %g needs " UINT64_FORMAT " bits",
						capacity, fpr, bits),
				 errdetail("A bloom value holds at most " UINT64_FORMAT " bits (1 GB).",
						   BLOOM_MAX_BITS),
				 errhint("Split the elements over several filters, or accept a higher false-positive rate.")));
	return bits;
}

/* k = max(1, round(m / n * ln 2)), capped at SBF_MAX_HASHES */
int
bloom_hashes_for(uint64 bits, int64 capacity)
{
	double		k;

	sbf_check_capacity(capacity);
	k = round((double) bits / (double) capacity * M_LN2);
	if (k < 1.0)
		return 1;
	if (k > SBF_MAX_HASHES)
		return SBF_MAX_HASHES;
	return (int) k;
}

/* (1 - e^(-k n / m))^k */
double
bloom_fpr_after(uint64 bits, int hashes, double n)
{
	return pow(1.0 - exp(-(double) hashes * n / (double) bits), hashes);
}

/*
 * The blocked layout's expected false-positive rate (Putze et al. 2007, see
 * the top of this file) with n elements in "blocks" blocks of
 * SBF_BLOCK_BITS bits.  The Poisson terms are summed where they matter,
 * within 12 standard deviations of lambda, one by one up to
 * SBF_BLOCKED_FPR_TERMS of them.  Beyond that (more than 17 million
 * elements per block, where the rate is 1 for any useful filter) the sum
 * takes every h-th term times h: the pmf is then smooth over h, and the
 * loop stays short and cannot stall where i + 1 == i in a double.
 */
#define SBF_BLOCKED_FPR_TERMS	100000.0

double
sbf_blocked_fpr(uint64 blocks, int hashes, double n)
{
	double		lambda = n / (double) blocks;
	double		spread = 12.0 * sqrt(lambda) + 12.0;
	double		lo = floor(fmax(0.0, lambda - spread));
	double		hi = ceil(lambda + spread);
	double		step = fmax(1.0, ceil((hi - lo) / SBF_BLOCKED_FPR_TERMS));
	double		sum = 0.0;
	double		i;

	/* a few milliseconds a call; sbf_blocked_bloom_pages makes dozens */
	CHECK_FOR_INTERRUPTS();
	if (lambda <= 0.0)
		return 0.0;
	for (i = lo; i <= hi; i += step)
	{
		double		pmf = exp(i * log(lambda) - lambda - lgamma(i + 1.0));

		sum += step * pmf * bloom_fpr_after(SBF_BLOCK_BITS, hashes, i);
	}
	return sum;
}

/*
 * The data pages (blocks) and hashes of a shared bloom filter for capacity
 * elements at false-positive rate fpr: the classic m and k, then the
 * fewest whole blocks that bring the blocked rate to fpr (by doubling,
 * then bisection: the rate falls as blocks are added).
 */
uint64
sbf_blocked_bloom_pages(int64 capacity, double fpr, int *hashes)
{
	double		bits;
	uint64		lo;
	uint64		hi;

	sbf_check_capacity(capacity);
	sbf_check_fpr(fpr);
	bits = ceil(-(double) capacity * log(fpr) / (M_LN2 * M_LN2));
	*hashes = (int) fmin(fmax(round(bits / (double) capacity * M_LN2), 1.0),
						 SBF_MAX_HASHES);

	lo = (uint64) fmin(fmax(1.0, ceil(bits / (double) SBF_BLOCK_BITS)),
					   (double) SBF_SHARED_MAX_PAGES + 1.0);
	hi = lo;
	while (hi > SBF_SHARED_MAX_PAGES ||
		   sbf_blocked_fpr(hi, *hashes, (double) capacity) > fpr)
	{
		if (hi >= SBF_SHARED_MAX_PAGES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a shared bloom filter for " INT64_FORMAT " elements at false-positive rate %g is too large",
							capacity, fpr),
					 errdetail("A shared filter has at most " UINT64_FORMAT " data pages of %d bytes.",
							   SBF_SHARED_MAX_PAGES, SBF_BLOCK_BYTES),
					 errhint("Split the elements over several filters, or accept a higher false-positive rate.")));
		lo = hi + 1;
		hi = Min(hi * 2, SBF_SHARED_MAX_PAGES);
	}
	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (sbf_blocked_fpr(mid, *hashes, (double) capacity) > fpr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return hi;
}

/* A bit count that a bloom value can hold: 1 .. BLOOM_MAX_BITS */
void
bloom_check_bits(int64 bits)
{
	sbf_check_bits(bits);
	if ((uint64) bits > BLOOM_MAX_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a bloom filter of " INT64_FORMAT " bits is too large", bits),
				 errdetail("A bloom value holds at most " UINT64_FORMAT " bits (1 GB).",
						   BLOOM_MAX_BITS)));
}

/* A bit count for the planning formulas: at least 1, no upper bound */
void
sbf_check_bits(int64 bits)
{
	if (bits < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of bits must be at least 1"),
				 errdetail("The number of bits given was " INT64_FORMAT ".", bits)));
}

void
sbf_check_hashes(int32 hashes)
{
	if (hashes < 1 || hashes > SBF_MAX_HASHES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of hashes must be between 1 and %d", SBF_MAX_HASHES),
				 errdetail("The number of hashes given was %d.", hashes)));
}

/* bloom_optimal_bits(capacity bigint, fpr float8) -> bigint */
Datum
bloom_optimal_bits(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) bloom_bits_for(PG_GETARG_INT64(0),
										   PG_GETARG_FLOAT8(1)));
}

/* bloom_optimal_hashes(bits bigint, capacity bigint) -> int */
Datum
bloom_optimal_hashes(PG_FUNCTION_ARGS)
{
	int64		bits = PG_GETARG_INT64(0);

	sbf_check_bits(bits);
	PG_RETURN_INT32(bloom_hashes_for((uint64) bits, PG_GETARG_INT64(1)));
}

/* bloom_expected_fpr(bits bigint, hashes int, n bigint) -> float8 */
Datum
bloom_expected_fpr(PG_FUNCTION_ARGS)
{
	int64		bits = PG_GETARG_INT64(0);
	int32		hashes = PG_GETARG_INT32(1);
	int64		n = PG_GETARG_INT64(2);

	sbf_check_bits(bits);
	sbf_check_hashes(hashes);
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of elements must not be negative"),
				 errdetail("The number of elements given was " INT64_FORMAT ".", n)));
	PG_RETURN_FLOAT8(bloom_fpr_after((uint64) bits, hashes, (double) n));
}

/*
 * Stable Bloom filter (Deng & Rafiei 2006, "Approximately Detecting
 * Duplicates for Streaming Data using Stable Bloom Filters", SIGMOD):
 *
 *	  with m cells of 0..Max, k probes and P decrements per insertion, the
 *	  expected fraction of zero cells converges to
 *		  stable_zeros = (1 / (1 + 1 / (P (1/k - 1/m))))^Max
 *	  and the false-positive rate to (1 - stable_zeros)^k.  Solving the
 *	  latter for P at a target rate fpr gives
 *		  P = 1 / ((1 / (1 - fpr^(1/k))^(1/Max) - 1) (1/k - 1/m)).
 *
 * P = 0 never forgets: the filter saturates like a Bloom filter, zeros -> 0.
 */
void
stablebloom_check_params(int64 cells, int32 hashes, int32 max)
{
	if (cells < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of cells must be at least 1"),
				 errdetail("The number of cells given was " INT64_FORMAT ".", cells)));
	sbf_check_hashes(hashes);
	if (max < 1 || max > STABLEBLOOM_MAX_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max must be between 1 and %d", STABLEBLOOM_MAX_MAX),
				 errdetail("The max given was %d.", max)));
	if (cells <= hashes)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of cells must exceed the number of hashes"),
				 errdetail("The filter has " INT64_FORMAT " cells and %d hashes.",
						   cells, hashes)));
}

/* P in 0..m; a fractional P (from stablebloom_p) is allowed in formulas */
void
stablebloom_check_decrements(int64 cells, double decrements)
{
	if (isnan(decrements) || decrements < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of decrements must not be negative"),
				 errdetail("The number of decrements given was %g.", decrements)));
	if (decrements > (double) cells)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of decrements must not exceed the number of cells"),
				 errdetail("The filter has " INT64_FORMAT " cells and %g decrements.",
						   cells, decrements)));
}

double
stablebloom_p_for(double fpr, int32 hashes, int64 cells, int32 max)
{
	double		x;

	sbf_check_fpr(fpr);
	stablebloom_check_params(cells, hashes, max);
	x = pow(fpr, 1.0 / hashes);
	return 1.0 / ((pow(1.0 / (1.0 - x), 1.0 / max) - 1.0) *
				  (1.0 / hashes - 1.0 / (double) cells));
}

double
stablebloom_stable_zeros_for(int64 cells, int32 hashes, double decrements, int32 max)
{
	stablebloom_check_params(cells, hashes, max);
	stablebloom_check_decrements(cells, decrements);
	if (decrements == 0)
		return 0.0;
	return pow(1.0 / (1.0 + 1.0 / (decrements *
									(1.0 / hashes - 1.0 / (double) cells))),
			   max);
}

double
stablebloom_fpr_for(int64 cells, int32 hashes, double decrements, int32 max)
{
	return pow(1.0 - stablebloom_stable_zeros_for(cells, hashes, decrements, max),
			   hashes);
}

/* P = round(stablebloom_p(...)), at least 1 */
int64
stablebloom_decrements_for(double fpr, int32 hashes, int64 cells, int32 max)
{
	double		p = round(stablebloom_p_for(fpr, hashes, cells, max));

	if (p < 1.0)
		return 1;
	if (p > (double) cells)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false-positive rate %g needs %.0f decrements per insertion, more than the " INT64_FORMAT " cells",
						fpr, p, cells),
				 errhint("Use more hashes or a higher false-positive rate.")));
	return (int64) p;
}

PG_FUNCTION_INFO_V1(stablebloom_p);
PG_FUNCTION_INFO_V1(stablebloom_stable_zeros);
PG_FUNCTION_INFO_V1(stablebloom_fpr_params);

/* stablebloom_p(fpr float8, hashes int, cells bigint, max int) -> float8 */
Datum
stablebloom_p(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(stablebloom_p_for(PG_GETARG_FLOAT8(0), PG_GETARG_INT32(1),
									   PG_GETARG_INT64(2), PG_GETARG_INT32(3)));
}

/* stablebloom_stable_zeros(cells bigint, hashes int, decrements float8, max int) */
Datum
stablebloom_stable_zeros(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(stablebloom_stable_zeros_for(PG_GETARG_INT64(0), PG_GETARG_INT32(1),
												  PG_GETARG_FLOAT8(2), PG_GETARG_INT32(3)));
}

/* stablebloom_fpr(cells bigint, hashes int, decrements float8, max int) */
Datum
stablebloom_fpr_params(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(stablebloom_fpr_for(PG_GETARG_INT64(0), PG_GETARG_INT32(1),
										 PG_GETARG_FLOAT8(2), PG_GETARG_INT32(3)));
}
