/*-------------------------------------------------------------------------
 *
 * slidingbloom_fit.c
 *	  slidingbloom_fit(window, max_bytes, seed, refresh, distinct_values):
 *	  the sliding filter for a window that is expected to make the fewest
 *	  false duplicates within a memory budget.
 *
 * slidingbloom_sized answers "the fewest bytes for this false-positive
 * rate"; a crawler with "1 kB per stream" asks the converse, and what it
 * counts is false duplicates: arrivals reported seen that no value of the
 * window explains.  Those come from two sources, and the layout that
 * fewest bytes buy for the first can be the worst for the second:
 *
 *	  false positives: the bits of other values (the rate of sizing.c);
 *	  the stale tail: the filter expires a value by generations, so a value
 *		that returns just past the window is still found in the slices of
 *		its last generations.  With few distinct values recurring often,
 *		most legitimate re-forwards land there.
 *
 * The model (docs/slidingbloom.md, "Fitting a budget"): values arrive at
 * random among V equally likely ones, V derived from the expected number
 * of distinct values in a window, D = V (1 - (1 - 1/V)^w); unknown D means
 * every value is new (V infinite: no recurrence, false positives only).
 * A value that the exact forwarder forwards again was last stored
 * (refresh: last seen) d = w - 1 + X arrivals before, X geometric of mean
 * V.  If s generation ends separate the two, the value keeps the bits of
 * its slices of ages s..k+l-1: all k while s <= l (certainly reported),
 * fewer after, none from s = k + l (then only false positives).  The rate
 * of such an arrival is the chance of a run of k set bits in age order
 * with those bits set, by the forward dynamic programme of sizing.c over
 * the slices' fills.  The fills follow the load: without refresh, the
 * values forwarded, V / (V + w - 1) an arrival; with refresh, the distinct
 * values of each generation, V (1 - (1 - 1/V)^g).  Summed over s, with the
 * phase of the stored arrival in its generation uniform, that is the
 * expected false duplicate rate of the layout.
 *
 * The search: every layout of k + l <= SLIDINGBLOOM_MAX_SLICES slices of
 * whole words within the budget, k from 1 to 32, g = ceil(w / l), each
 * slice as many words as the budget allows (more bits never hurt);
 * O(slices k) a layout, so a few tens of milliseconds at most.
 *
 * The stamped layout (format.h) has no stale tail: its expiry is exact, so
 * its expected false duplicate rate is its false-positive rate with the
 * values stored within the window.  It wins when few values recur often.
 * The fit takes generations only when their model expects fewer than
 * half its false duplicates (FIT_GENERATIONS_MARGIN): a stale positive
 * delays the value's next forwarding, so that its later returns fall in
 * the filter's window and not the exact forwarder's, errors the model of
 * generations does not count.
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
#include "slidingbloom.h"

PG_FUNCTION_INFO_V1(slidingbloom_fit);

/* The most hashes the search tries */
#define FIT_MAX_HASHES		32
/* Phases of the stored arrival sampled in its generation */
#define FIT_PHASES			32
/* Generations must be expected this many times better than stamps */
#define FIT_GENERATIONS_MARGIN	2.0
/* The most cells a stamped layout may sweep an arrival */
#define FIT_MAX_SWEEP		256

/*
 * V from D, the expected distinct values among w arrivals drawn uniformly
 * from V: D = V (1 - (1 - 1/V)^w), increasing in V towards w.  Infinity
 * (no recurrence) when D is unknown (<= 0) or not below w.
 */
static double
fit_values_for(int64 window, double distinct)
{
	double		lo;
	double		hi;

	if (distinct <= 0 || distinct >= (double) window)
		return INFINITY;
	lo = distinct;
	hi = distinct;
	while (hi * -expm1((double) window * log1p(-1.0 / hi)) < distinct)
	{
		hi *= 2;
		if (hi > 1e300)
			return INFINITY;
	}
	for (int i = 0; i < 100; i++)
	{
		double		mid = (lo + hi) / 2;

		if (mid * -expm1((double) window * log1p(-1.0 / mid)) < distinct)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* P(X >= a) for X geometric on 1, 2, ... with P(X > x) = q^x */
static inline double
fit_tail(double log_q, double a)
{
	return a <= 1.0 ? 1.0 : exp((a - 1.0) * log_q);
}

/*
 * The expected false duplicate rate of a layout, for V values (infinite:
 * none recurs).  See the file's header.
 */
static double
slidingbloom_false_duplicate_rate(int hashes, int slices, uint64 slice_bits,
								  uint64 generation, int64 window,
								  double values, bool refresh)
{
	int			k = hashes;
	int			l = slices - hashes;
	double		g = (double) generation;
	double		per_generation;
	double		log_q;
	double		fill[SLIDINGBLOOM_MAX_SLICES];
	double		run[FIT_MAX_HASHES];
	double		found_before[SLIDINGBLOOM_MAX_SLICES + 1];
	double		run_at[SLIDINGBLOOM_MAX_SLICES + 1][FIT_MAX_HASHES];
	double		rate_after[SLIDINGBLOOM_MAX_SLICES + 1];
	double		expected = 0.0;
	int			phases;

	Assert(k >= 1 && k < slices && slices <= SLIDINGBLOOM_MAX_SLICES &&
		   k <= FIT_MAX_HASHES);

	/* insertions a generation */
	if (isinf(values))
		per_generation = g;
	else if (refresh)
		per_generation = values * -expm1(g * log1p(-1.0 / values));
	else
		per_generation = g * values / (values + (double) window - 1.0);

	/* the fills half-way through a generation (the rate's mean phase) */
	for (int a = 0; a < slices; a++)
	{
		double		n = a < k ? ((double) a + 0.5) * per_generation :
			(double) k * per_generation;

		fill[a] = slice_bits == 1 ? 1.0 : -expm1(n * log1p(-1.0 / (double) slice_bits));
	}

	/*
	 * Forward over the ages: found_before[s], a run of k among ages < s;
	 * run_at[s][r], none yet and the last r ages (< s) set.
	 */
	memset(run, 0, sizeof(run));
	run[0] = 1.0;
	found_before[0] = 0.0;
	memcpy(run_at[0], run, sizeof(run));
	for (int a = 0; a < slices; a++)
	{
		double		zero = 0.0;

		found_before[a + 1] = found_before[a] + run[k - 1] * fill[a];
		for (int r = k - 1; r >= 1; r--)
		{
			zero += run[r] * (1.0 - fill[a]);
			run[r] = run[r - 1] * fill[a];
		}
		run[0] = zero + run[0] * (1.0 - fill[a]);
		memcpy(run_at[a + 1], run, sizeof(run));
	}

	/*
	 * rate_after[s]: reported after s generation ends.  s <= l: all k bits
	 * are there.  l < s < slices: its bits at ages s..slices-1 (j of them)
	 * complete a run if the k - j ages before s are set, or a run is found
	 * before s.  s >= slices: false positives alone.
	 */
	for (int s = 0; s <= slices; s++)
	{
		if (s <= l)
			rate_after[s] = 1.0;
		else
		{
			int			j = slices - s;
			double		p = found_before[s];

			for (int r = k - j; r < k && j > 0; r++)
				p += run_at[s][r];
			rate_after[s] = Min(p, 1.0);
		}
	}
	if (isinf(values))
		return rate_after[slices];

	/* over the phase c of the stored arrival and X, the arrival's distance */
	log_q = log1p(-1.0 / values);
	phases = generation < FIT_PHASES ? (int) generation : FIT_PHASES;
	for (int i = 0; i < phases; i++)
	{
		double		c = generation < FIT_PHASES ? (double) i :
			floor(((double) i + 0.5) * g / phases);
		double		left = 1.0;	/* P(not yet assigned to an s) */

		/* s = floor((c + w - 1 + X) / g), X >= 1 */
		for (int s = (int) floor((c + (double) window) / g); s < slices && left > 0; s++)
		{
			double		a = (double) s * g - c - (double) window + 1.0;
			double		p = fit_tail(log_q, a) - fit_tail(log_q, a + g);

			p = Min(p, left);
			expected += p * rate_after[s];
			left -= p;
		}
		expected += left * rate_after[slices];
	}
	return expected / phases;
}

/*
 * The best stamped layout within max_bytes: its cell bits, cells, hashes
 * and expected false duplicate rate; false if none fits.  Cells of the
 * fewest bits whose stamps exceed the window, or of up to three bits more:
 * fewer bits are more cells (a lower rate), but less room between the
 * window and the stamps' range, so a longer sweep an arrival.  The cells
 * are capped so that the sweep takes at most FIT_MAX_SWEEP an arrival: a
 * large budget then takes wider stamps rather than a long sweep.
 */
static bool
fit_stamped(int64 window, int64 max_bytes, double values, bool refresh,
			int *cell_bits, uint64 *cells, int *hashes, double *rate)
{
	int64		words = (max_bytes - (int64) SLIDINGBLOOM_HEADER_SIZE) / (int64) sizeof(uint64);
	double		w1 = (double) window - 1.0;
	double		live;
	int			b = 2;
	bool		found = false;

	if (words < 1)
		return false;
	while (b <= SLIDINGBLOOM_STAMP_MAX_BITS &&
		   SLIDINGBLOOM_STAMP_MODULUS(b) <= (uint64) window)
		b++;

	/* the values stored within the w - 1 arrivals before a test */
	if (isinf(values))
		live = w1;
	else if (refresh)
		live = values * -expm1(w1 * log1p(-1.0 / values));
	else
		live = w1 * values / (values + w1);

	for (int bits = b; bits <= b + 3 && bits <= SLIDINGBLOOM_STAMP_MAX_BITS; bits++)
	{
		uint64		room = SLIDINGBLOOM_STAMP_MODULUS(bits) - (uint64) window;
		uint64		m = (uint64) Min((uint64) words, SLIDINGBLOOM_MAX_WORDS) * 64 / (uint64) bits;

		/* no more cells than a sweep of FIT_MAX_SWEEP an arrival covers */
		if (room <= UINT64CONST(1) << 40)
			m = Min(m, FIT_MAX_SWEEP * room);
		if (m < 1)
			continue;
		for (int k = 1; k <= FIT_MAX_HASHES; k++)
		{
			double		r = slidingbloom_stamped_fpr(k, m, live);

			if (!found || r < *rate)
			{
				found = true;
				*rate = r;
				*hashes = k;
				*cell_bits = bits;
				*cells = m;
			}
		}
	}
	return found;
}

/*
 * The layout of least expected false duplicate rate within max_bytes (the
 * whole value), or false if no layout fits
 */
static bool
fit_layout(int64 window, int64 max_bytes, double values, bool refresh,
		   int *hashes, int *slices, uint64 *slice_bits, uint64 *generation,
		   double *rate)
{
	int64		words = (max_bytes - (int64) SLIDINGBLOOM_HEADER_SIZE) / (int64) sizeof(uint64);
	bool		found = false;

	for (int s = 2; s <= SLIDINGBLOOM_MAX_SLICES && s <= words; s++)
	{
		uint64		slice_words = (uint64) (words / s);

		if ((uint64) s * slice_words > SLIDINGBLOOM_MAX_WORDS)
			slice_words = SLIDINGBLOOM_MAX_WORDS / (uint64) s;
		for (int k = 1; k < s && k <= FIT_MAX_HASHES; k++)
		{
			int			l = s - k;
			uint64		g = ((uint64) window + (uint64) l - 1) / (uint64) l;
			double		r;

			CHECK_FOR_INTERRUPTS();
			/* s generations of g arrivals must fit a bigint */
			if (g > (uint64) PG_INT64_MAX / (uint64) s)
				continue;
			r = slidingbloom_false_duplicate_rate(k, s, slice_words * 64, g, window,
												  values, refresh);
			if (!found || r < *rate)
			{
				found = true;
				*rate = r;
				*hashes = k;
				*slices = s;
				*slice_bits = slice_words * 64;
				*generation = g;
			}
		}
	}
	return found;
}

/*
 * slidingbloom_fit(window bigint, max_bytes integer, seed bigint DEFAULT 0,
 *					refresh boolean DEFAULT true,
 *					distinct_values bigint DEFAULT NULL) -> slidingbloom
 *
 * Not strict: distinct_values may be NULL (unknown); NULL in another
 * argument gives NULL.
 */
Datum
slidingbloom_fit(PG_FUNCTION_ARGS)
{
	int64		window;
	int64		max_bytes;
	double		distinct = 0;
	int			hashes = 0;
	int			slices = 0;
	uint64		slice_bits = 0;
	uint64		generation = 0;
	double		rate = 0;
	double		values;
	bool		found;
	int			cell_bits;
	uint64		cells;
	int			stamped_hashes;
	double		stamped_rate;
	bool		stamped;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			PG_RETURN_NULL();
	window = PG_GETARG_INT64(0);
	max_bytes = PG_GETARG_INT32(1);
	sbf_check_window(window);
	if (!PG_ARGISNULL(4))
	{
		int64		d = PG_GETARG_INT64(4);

		if (d < 1 || d > window)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("distinct_values must be between 1 and the window"),
					 errdetail("The window is " INT64_FORMAT " and distinct_values was " INT64_FORMAT ".",
							   window, d)));
		distinct = (double) d;
	}
	if (max_bytes < (int64) SLIDINGBLOOM_HEADER_SIZE + 2 * (int64) sizeof(uint64))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_bytes must be at least %d",
						(int) (SLIDINGBLOOM_HEADER_SIZE + 2 * sizeof(uint64))),
				 errdetail("A sliding filter has a header of %d bytes and at least two slices of one 8-byte word.",
						   (int) SLIDINGBLOOM_HEADER_SIZE)));

	values = fit_values_for(window, distinct);
	found = fit_layout(window, max_bytes, values, PG_GETARG_BOOL(3), &hashes,
					   &slices, &slice_bits, &generation, &rate);
	stamped = fit_stamped(window, max_bytes, values, PG_GETARG_BOOL(3), &cell_bits,
						  &cells, &stamped_hashes, &stamped_rate);
	if (found)
		elog(DEBUG1, "slidingbloom_fit: generations: k = %d, %d slices of " UINT64_FORMAT " bits, g = " UINT64_FORMAT ": expected false duplicates %g",
			 hashes, slices, slice_bits, generation, rate);
	if (stamped)
		elog(DEBUG1, "slidingbloom_fit: stamped: k = %d, " UINT64_FORMAT " cells of %d bits: expected false duplicates %g",
			 stamped_hashes, cells, cell_bits, stamped_rate);
	/*
	 * Generations only when expected to make less than half the stamped
	 * layout's false duplicates: their model is the less reliable one.  A
	 * stale positive delays a value's next forwarding, so later returns
	 * of it fall inside the filter's window and not the exact
	 * forwarder's; the model counts the first error, not those that
	 * follow (bench/sliding_paper.sh, 320 bytes: 14% expected, 30%
	 * measured, against 20% expected for the stamped layout).
	 */
	if (stamped && (!found || stamped_rate < FIT_GENERATIONS_MARGIN * rate))
		PG_RETURN_POINTER(slidingbloom_new_stamped((int64) cells, cell_bits,
												   stamped_hashes, window,
												   (uint64) PG_GETARG_INT64(2),
												   PG_GETARG_BOOL(3)));
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("no sliding filter for a window of " INT64_FORMAT " fits %d bytes",
						window, (int) max_bytes),
				 errdetail("Its generations would not fit a bigint of arrivals.")));
	PG_RETURN_POINTER(slidingbloom_new((int64) slice_bits, hashes, slices,
									   (int64) generation, window,
									   (uint64) PG_GETARG_INT64(2),
									   PG_GETARG_BOOL(3)));
}
