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
 * asked for at capacity.  In the line layout (format.h) the blocks are the
 * lines of 512 bits, where the gap is wider (about a fifth more bits at 1%)
 * and a k below the classic one can need fewer bits: the sizing tries the
 * classic k and the three below it and keeps the one needing the fewest
 * pages.
 *
 * The Stable Bloom filter's formulas are further down.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

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
 * the top of this file) with n elements in "blocks" blocks of block_bits
 * bits.  The Poisson terms are summed where they matter,
 * within 12 standard deviations of lambda, one by one up to
 * SBF_BLOCKED_FPR_TERMS of them.  Beyond that (more than 17 million
 * elements per block, where the rate is 1 for any useful filter) the sum
 * takes every h-th term times h: the pmf is then smooth over h, and the
 * loop stays short and cannot stall where i + 1 == i in a double.
 */
#define SBF_BLOCKED_FPR_TERMS	100000.0

double
sbf_blocked_fpr(uint64 blocks, uint64 block_bits, int hashes, double n)
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

		sum += step * pmf * bloom_fpr_after(block_bits, hashes, i);
	}
	return sum;
}

/* The expected false-positive rate of n elements in pages of a layout */
double
sbf_shared_bloom_fpr(int layout, uint64 pages, int hashes, double n)
{
	if (layout == SBF_SHARED_LAYOUT_LINES)
		return sbf_blocked_fpr(pages * SBF_BLOCK_LINES, SBF_LINE_BITS, hashes, n);
	if (layout == SBF_SHARED_LAYOUT_PENDING)
		return sbf_blocked_fpr(pages * SBF_PENDING_LINES, SBF_LINE_BITS, hashes, n);
	return sbf_blocked_fpr(pages, SBF_BLOCK_BITS, hashes, n);
}

/*
 * The fewest data pages of a layout that bring the rate of capacity
 * elements with these hashes to fpr (by doubling from the classic m, then
 * bisection: the rate falls as pages are added)
 */
static uint64
sbf_pages_for(int layout, int64 capacity, double fpr, int hashes)
{
	double		bits = ceil(-(double) capacity * log(fpr) / (M_LN2 * M_LN2));
	uint64		lo;
	uint64		hi;

	lo = (uint64) fmin(fmax(1.0, ceil(bits / (double) sbf_layout_block_bits(layout))),
					   (double) SBF_SHARED_MAX_PAGES + 1.0);
	hi = lo;
	while (hi > SBF_SHARED_MAX_PAGES ||
		   sbf_shared_bloom_fpr(layout, hi, hashes, (double) capacity) > fpr)
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

		if (sbf_shared_bloom_fpr(layout, mid, hashes, (double) capacity) > fpr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return hi;
}

/*
 * The data pages and hashes of a shared bloom filter of a layout for
 * capacity elements at false-positive rate fpr: the classic k for the pages
 * layout; for the line layout, of the classic k and the three below it,
 * the one needing the fewest pages (the fewer hashes on a tie).
 */
uint64
sbf_blocked_bloom_pages(int layout, int64 capacity, double fpr, int *hashes)
{
	double		bits;
	int			classic;
	int			k;
	uint64		best = 0;

	sbf_check_capacity(capacity);
	sbf_check_fpr(fpr);
	bits = ceil(-(double) capacity * log(fpr) / (M_LN2 * M_LN2));
	classic = (int) fmin(fmax(round(bits / (double) capacity * M_LN2), 1.0),
						 SBF_MAX_HASHES);
	*hashes = classic;
	if (layout == SBF_SHARED_LAYOUT_PAGES)
		return sbf_pages_for(layout, capacity, fpr, classic);
	for (k = Max(1, classic - 3); k <= classic; k++)
	{
		uint64		pages = sbf_pages_for(layout, capacity, fpr, k);

		if (best == 0 || pages < best)
		{
			best = pages;
			*hashes = k;
		}
	}
	return best;
}

/*
 * The largest capacity that the sizing above fits in at most "pages" data
 * pages of a layout at rate fpr (by bisection: the pages grow with it)
 */
int64
sbf_blocked_bloom_capacity(int layout, uint64 pages, double fpr)
{
	int64		lo = 1;
	int64		hi = (int64) (pages * sbf_layout_block_bits(layout));
	int			hashes;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo + 1) / 2;

		if (sbf_blocked_bloom_pages(layout, mid, fpr, &hashes) <= pages)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
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

/*
 * Age-partitioned Bloom filter (Shtul, Baquero & Almeida 2020, "Age-
 * Partitioned Bloom Filters", section 4): k + l slices of m bits, a value
 * stored in the k newest, present when k consecutive slices have its bit,
 * g arrivals per generation.
 *
 *	  At the steady state, just before a generation ends (the fullest the
 *	  filter gets), slice a (a = 0 newest) holds a g + g - 1 insertions for
 *	  a < k and k g for a >= k, so its fill is
 *		  f_a = 1 - (1 - 1/m)^(insertions)
 *	  and a value never stored is reported when some k consecutive of
 *	  S = k + l independent Bernoulli(f_a) bits are all 1.  The paper
 *	  computes that probability by dynamic programming over the slices
 *	  (its equation for the FPR of "k out of the last ones"); so does
 *	  slidingbloom_run_prob, with the state "length of the current run
 *	  of ones".  This is an upper bound on the rate; earlier in the
 *	  generation, and before the steady state, the slices are emptier.
 *
 * Sizing for (window w, fpr p): for each k from 1 to a few above
 * log2(1/p) and each l with k + l <= SLIDINGBLOOM_SIZED_MAX_SLICES, the
 * largest load r = g / m whose rate is at most p (with e^(-n/m) for the
 * fill; bisection, the rate grows with r), then g = ceil(w / l) and m the
 * fewest whole 64-bit words whose exact rate above is at most p, searched
 * from ceil(g / r) (the rate falls as m grows); the (k, l) of fewest words
 * wins.  The paper reports about 1.3 n log10(1/p) bytes at its optimum
 * (k, l); with at most 64 slices, this search gives about 2.5 bytes per
 * element at p = 0.01 (1.25 n log10(1/p)), docs/slidingbloom.md has the
 * table.
 */
void
sbf_check_window(int64 window)
{
	if (window < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window must be at least 1"),
				 errdetail("The window given was " INT64_FORMAT ".", window)));
}

/*
 * P(some k consecutive of the bits are 1), bit a being 1 with probability
 * fill[a], independently.  run[r] is the probability of no run of k so
 * far, ending in exactly r ones.
 */
double
slidingbloom_run_prob(const double *fill, int slices, int hashes)
{
	double		run[SLIDINGBLOOM_MAX_SLICES + 1];
	double		found = 0.0;
	int			a;
	int			r;

	Assert(hashes >= 1 && hashes <= slices && slices <= SLIDINGBLOOM_MAX_SLICES);
	run[0] = 1.0;
	for (r = 1; r < hashes; r++)
		run[r] = 0.0;
	for (a = 0; a < slices; a++)
	{
		double		zero = 0.0;

		found += run[hashes - 1] * fill[a];
		for (r = hashes - 1; r >= 1; r--)
		{
			zero += run[r] * (1.0 - fill[a]);
			run[r] = run[r - 1] * fill[a];
		}
		run[0] = zero + run[0] * (1.0 - fill[a]);
	}
	return found;
}

/*
 * The fill of each slice (in age order) just before the generation ends,
 * with "phase" (0..g - 1) arrivals of the current generation stored, or
 * with the continuous approximation when slice_bits is 0 (then generation
 * is the load g / m).
 */
static void
slidingbloom_fills(double *fill, int slices, int hashes, double slice_bits,
				   double generation, double phase)
{
	int			a;

	for (a = 0; a < slices; a++)
	{
		double		n = a < hashes ? a * generation + phase : hashes * generation;

		if (n <= 0.0)
			fill[a] = 0.0;
		else if (slice_bits == 0)
			fill[a] = -expm1(-n);
		else if (slice_bits == 1)
			fill[a] = 1.0;		/* log1p(-1) is -infinity */
		else
			fill[a] = -expm1(n * log1p(-1.0 / slice_bits));
	}
}

/* The false-positive rate at the fullest point of the steady state */
double
slidingbloom_fpr_for(int hashes, int slices, uint64 slice_bits, uint64 generation)
{
	double		fill[SLIDINGBLOOM_MAX_SLICES];

	slidingbloom_fills(fill, slices, hashes, (double) slice_bits,
					   (double) generation, (double) generation - 1.0);
	return slidingbloom_run_prob(fill, slices, hashes);
}

/*
 * The false-positive rate at the steady state averaged over the phase of
 * the generation: over every phase when g <= 64, else over 64 evenly
 * spaced ones (the rate is smooth in the phase).
 */
double
slidingbloom_expected_fpr_for(int hashes, int slices, uint64 slice_bits,
							  uint64 generation)
{
	double		fill[SLIDINGBLOOM_MAX_SLICES];
	int			points = generation <= 64 ? (int) generation : 64;
	double		sum = 0.0;
	int			i;

	for (i = 0; i < points; i++)
	{
		double		phase = generation <= 64 ? (double) i :
			((double) i + 0.5) * (double) generation / points;

		slidingbloom_fills(fill, slices, hashes, (double) slice_bits,
						   (double) generation, phase);
		sum += slidingbloom_run_prob(fill, slices, hashes);
	}
	return sum / points;
}

/*
 * The probability that a value last stored "distance" arrivals ago is
 * reported, at the fullest point of the steady state: the stale-positive
 * rate once the distance exceeds the window.
 *
 * A value stored when c arrivals of its generation had gone before
 * (c uniform in 0..g - 1) has seen s = floor((c + 1 + d) / g) generations
 * end d arrivals later, so its bits are in the slices of ages s..s+k-1
 * that still exist; the other slices are Bernoulli(fill) as for a false
 * positive.  s <= l gives 1: the guarantee.  s >= k + l leaves no bit, and
 * the rate is the false-positive rate.  In between it decays by about the
 * fill of a slice per generation.
 */
double
slidingbloom_stale_rate_for(int hashes, int slices, uint64 slice_bits,
							uint64 generation, uint64 distance)
{
	double		base[SLIDINGBLOOM_MAX_SLICES];
	double		rate[2];
	uint64		s_low;
	uint64		s_high;
	uint64		high_phases;
	int			i;

	slidingbloom_fills(base, slices, hashes, (double) slice_bits,
					   (double) generation, (double) generation - 1.0);

	/* the generations ended, for c = 0 and for c = g - 1 */
	s_low = distance / generation + ((distance % generation) + 1 == generation ? 1 : 0);
	s_high = distance / generation + 1;
	/* how many of the g phases see s_high: c >= s_high g - 1 - d */
	high_phases = s_high == s_low ? generation :
		generation - (s_high * generation - 1 - distance);

	for (i = 0; i < 2; i++)
	{
		uint64		s = i == 0 ? s_low : s_high;
		double		fill[SLIDINGBLOOM_MAX_SLICES] = {0};
		int			a;

		for (a = 0; a < slices; a++)
			fill[a] = ((uint64) a >= s && (uint64) a < s + hashes) ? 1.0 : base[a];
		rate[i] = slidingbloom_run_prob(fill, slices, hashes);
	}
	return ((double) (generation - high_phases) * rate[0] +
			(double) high_phases * rate[1]) / (double) generation;
}

/*
 * The false-positive rate of a stamped filter (format.h) of "cells" cells
 * and k hashes with "live" values stored within the window: a cell is live
 * when one of their k live probes hit it.  Its expiry is exact, so this is
 * also its false duplicate rate: no stale positive.
 */
double
slidingbloom_stamped_fpr(int hashes, uint64 cells, double live)
{
	double		fill;

	if (live <= 0)
		return 0.0;
	fill = cells == 1 ? 1.0 :
		-expm1((double) hashes * live * log1p(-1.0 / (double) cells));
	return pow(fill, hashes);
}

/* The largest load g / m with the continuous rate at most fpr */
static double
slidingbloom_max_load(int hashes, int slices, double fpr)
{
	double		fill[SLIDINGBLOOM_MAX_SLICES];
	double		lo = 1e-12;
	double		hi = 16.0;
	int			i;

	slidingbloom_fills(fill, slices, hashes, 0, lo, lo);
	if (slidingbloom_run_prob(fill, slices, hashes) > fpr)
		return 0.0;
	for (i = 0; i < 40; i++)
	{
		double		mid = sqrt(lo * hi);

		slidingbloom_fills(fill, slices, hashes, 0, mid, mid);
		if (slidingbloom_run_prob(fill, slices, hashes) <= fpr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The structure for a window and a false-positive rate (see above).  The
 * largest loads depend on the rate only: they are kept for the last rate
 * asked (a few milliseconds to compute), so planning many windows at one
 * rate costs little; the last answer is kept too.
 */
void
slidingbloom_size_for(int64 window, double fpr, int *hashes, int *slices,
					  uint64 *slice_bits, uint64 *generation)
{
	static int64 last_window = 0;
	static double last_fpr = 0;
	static int	last_hashes,
				last_slices;
	static uint64 last_slice_bits,
				last_generation;
	static double loads_fpr = 0;
	static double loads[SLIDINGBLOOM_SIZED_MAX_SLICES][SLIDINGBLOOM_SIZED_MAX_SLICES];
	double		bits_per_element = -log2(fpr);
	int			k_low;
	int			k_high;
	double		best_words = -1;
	int			k;

	sbf_check_window(window);
	sbf_check_fpr(fpr);
	if (window == last_window && fpr == last_fpr)
	{
		*hashes = last_hashes;
		*slices = last_slices;
		*slice_bits = last_slice_bits;
		*generation = last_generation;
		return;
	}

	k_low = 1;				/* a few slices of one word: few hashes win */
	k_high = (int) fmin(SLIDINGBLOOM_SIZED_MAX_SLICES - 1, ceil(bits_per_element) + 8.0);
	k_low = Min(k_low, k_high);
	if (fpr != loads_fpr)
	{
		loads_fpr = 0;			/* incomplete until the loop ends */
		for (k = k_low; k <= k_high; k++)
		{
			int			l;

			for (l = 1; k + l <= SLIDINGBLOOM_SIZED_MAX_SLICES; l++)
				loads[k][l] = slidingbloom_max_load(k, k + l, fpr);
		}
		loads_fpr = fpr;
	}
	for (k = k_low; k <= k_high; k++)
	{
		int			l;

		for (l = 1; k + l <= SLIDINGBLOOM_SIZED_MAX_SLICES; l++)
		{
			double		load = loads[k][l];
			uint64		g;
			uint64		slice_words;
			double		words;

			if (load <= 0.0)
				continue;
			g = (uint64) ceil((double) window / l);

			/*
			 * The continuous load is a first guess of the words a slice
			 * needs; the exact rate, which falls as slices grow, settles
			 * it: the fewest words that meet the rate.  Without this
			 * step, small windows (a few slices of one or two words) were
			 * sized by the guess, up to twice the bytes they need.
			 */
			slice_words = (uint64) Max(1.0, ceil(ceil((double) g / load) / 64.0));
			if (slice_words > SLIDINGBLOOM_MAX_WORDS / (uint64) (k + l))
				continue;
			while (slice_words > 1 &&
				   slidingbloom_fpr_for(k, k + l, (slice_words - 1) * 64, g) <= fpr)
				slice_words--;
			while (slidingbloom_fpr_for(k, k + l, slice_words * 64, g) > fpr &&
				   slice_words <= SLIDINGBLOOM_MAX_WORDS / (uint64) (k + l))
				slice_words++;
			words = (double) (k + l) * (double) slice_words;
			if (best_words < 0 || words < best_words)
			{
				best_words = words;
				*hashes = k;
				*slices = k + l;
				*generation = g;
			}
		}
	}
	if (best_words < 0 || best_words > (double) SLIDINGBLOOM_MAX_WORDS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a sliding bloom filter for a window of " INT64_FORMAT " at false-positive rate %g is too large",
						window, fpr),
				 errdetail("A slidingbloom value holds at most " UINT64_FORMAT " words of 64 bits (1 GB).",
						   SLIDINGBLOOM_MAX_WORDS),
				 errhint("Use a smaller window or accept a higher false-positive rate.")));

	/* whole words per slice, and enough of them for the exact rate */
	*slice_bits = (uint64) (best_words / *slices) * 64;
	while (slidingbloom_fpr_for(*hashes, *slices, *slice_bits, *generation) > fpr)
	{
		*slice_bits += 64;
		if (SLIDINGBLOOM_SLICE_WORDS(*slice_bits) > SLIDINGBLOOM_MAX_WORDS / (uint64) *slices)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a sliding bloom filter for a window of " INT64_FORMAT " at false-positive rate %g is too large",
							window, fpr)));
	}

	last_window = window;
	last_fpr = fpr;
	last_hashes = *hashes;
	last_slices = *slices;
	last_slice_bits = *slice_bits;
	last_generation = *generation;
}

PG_FUNCTION_INFO_V1(slidingbloom_bytes);

/* slidingbloom_bytes(window bigint, fpr float8) -> bigint */
Datum
slidingbloom_bytes(PG_FUNCTION_ARGS)
{
	int			hashes;
	int			slices;
	uint64		slice_bits;
	uint64		generation;

	slidingbloom_size_for(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1), &hashes,
						  &slices, &slice_bits, &generation);
	PG_RETURN_INT64((int64) (SLIDINGBLOOM_HEADER_SIZE +
							 (uint64) slices * SLIDINGBLOOM_SLICE_WORDS(slice_bits) * sizeof(uint64)));
}
