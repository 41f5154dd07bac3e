/*-------------------------------------------------------------------------
 *
 * slidingbloom.h
 *	  The slidingbloom type's operations, for the SQL functions, the
 *	  aggregate and the window function.
 *
 * The structure (an age-partitioned Bloom filter, Shtul, Baquero & Almeida
 * 2020) and its layout are described in format.h; slidingbloom_format.c
 * makes and validates its values, the formulas that size it are in
 * sizing.c, and docs/slidingbloom.md has the guarantee.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SLIDINGBLOOM_H
#define SBF_SLIDINGBLOOM_H

#include "postgres.h"

#include "lib/stringinfo.h"

#include "format.h"
#include "hash.h"
#include "prng.h"

#define SLIDINGBLOOM_SIZE(slices, slice_bits) \
	(SLIDINGBLOOM_HEADER_SIZE + \
	 (uint64) (slices) * SLIDINGBLOOM_SLICE_WORDS(slice_bits) * sizeof(uint64))

#define SLIDINGBLOOM_IS_EMPTY(filter)	(((filter)->flags & SLIDINGBLOOM_FLAG_EMPTY) != 0)
#define SLIDINGBLOOM_REFRESH(filter)	(((filter)->flags & SLIDINGBLOOM_FLAG_REFRESH) != 0)
#define SLIDINGBLOOM_IS_STAMPED(filter)	(((filter)->flags & SLIDINGBLOOM_FLAG_STAMPED) != 0)
#define SLIDINGBLOOM_IS_TIME(filter)	(((filter)->flags & SLIDINGBLOOM_FLAG_TIME) != 0)

/* The stamped layout (format.h): m cells of b bits */
#define SLIDINGBLOOM_STAMPED_WORDS(cells, cell_bits) \
	(((uint64) (cells) * (uint64) (cell_bits) + 63) / 64)
#define SLIDINGBLOOM_STAMPED_SIZE(cells, cell_bits) \
	(SLIDINGBLOOM_HEADER_SIZE + SLIDINGBLOOM_STAMPED_WORDS(cells, cell_bits) * sizeof(uint64))
/* M: stamps are arrivals mod M, plus 1 */
#define SLIDINGBLOOM_STAMP_MODULUS(cell_bits)	((UINT64CONST(1) << (cell_bits)) - 1)

/* The clock of a window of time: the value's last bytes (format.h) */
static inline SlidingBloomClock *
slidingbloom_clock(const SlidingBloomData *filter)
{
	Assert(SLIDINGBLOOM_IS_TIME(filter));
	return (SlidingBloomClock *) ((char *) filter + VARSIZE(filter) -
								  sizeof(SlidingBloomClock));
}

/* The horizon H = n + L in ticks: older cells are dead for every arrival */
static inline uint64
slidingbloom_time_horizon(const SlidingBloomData *filter, const SlidingBloomClock *clock)
{
	return filter->window - 1 + (uint64) clock->tolerance;
}

/* The size of the value once materialized, of any layout */
static inline Size
slidingbloom_full_size(const SlidingBloomData *filter)
{
	if (SLIDINGBLOOM_IS_TIME(filter))
		return SLIDINGBLOOM_STAMPED_SIZE(filter->slice_bits, filter->slices) +
			sizeof(SlidingBloomClock);
	if (SLIDINGBLOOM_IS_STAMPED(filter))
		return SLIDINGBLOOM_STAMPED_SIZE(filter->slice_bits, filter->slices);
	return SLIDINGBLOOM_SIZE(filter->slices, filter->slice_bits);
}

/* slidingbloom_format.c: the value of each layout, its validation */
extern SlidingBloom slidingbloom_new(int64 slice_bits, int32 hashes, int32 slices,
									 int64 generation, int64 window, uint64 seed,
									 bool refresh);
extern SlidingBloom slidingbloom_new_stamped(int64 cells, int32 cell_bits,
											 int32 hashes, int64 window,
											 uint64 seed, bool refresh);
extern uint64 slidingbloom_stamped_step(uint64 cells, int cell_bits, uint64 window);
extern int	slidingbloom_time_ticks(int64 window_usec, int64 tolerance_usec,
									int64 *unit, int64 *ticks, int64 *tolerance);
extern SlidingBloom slidingbloom_new_time(int64 window_usec, int64 tolerance_usec,
										  int64 capacity, int64 cells, int32 hashes,
										  uint64 seed, bool refresh);
extern void slidingbloom_validate_header(const SlidingBloomData *filter, int sqlstate);
extern void slidingbloom_validate(const SlidingBloomData *filter, int sqlstate);
extern SlidingBloom slidingbloom_from_datum(Datum datum);
extern void slidingbloom_validate_time(const SlidingBloomData *filter, int sqlstate);
extern SlidingBloom slidingbloom_copy_datum(Datum datum);

/* slidingbloom_time.c: arrivals and tests at a time */
extern void slidingbloom_time_needs_timestamp(void);
extern void slidingbloom_time_is_null(void);
extern void slidingbloom_check_time(const SlidingBloomData *filter);
extern bool slidingbloom_arrive_at(SlidingBloom filter, SbfHash hash, int64 ts);
extern bool slidingbloom_test_at(const SlidingBloomData *filter, SbfHash hash, int64 ts);
extern void slidingbloom_time_info(StringInfo buf, const SlidingBloomData *filter);

/*
 * The bit of physical slice q: the q-th value of the enhanced double
 * hashing sequence of hash.h, taken before its reduction mod m.  Unrolling
 * that recurrence (x += y; y += i) gives it in closed form,
 *
 *		x_q = h1 + q h2 + q (q - 1) (q - 2) / 6		(mod 2^64),
 *
 * so a query probes the slices in any order, each in O(1).  x_q is then
 * mixed with SplitMix64's output function (prng.h) and reduced by
 * multiply-high: each slice gets an independent position.  Reducing x_q
 * mod m directly would make the element's positions in all slices a
 * function of (h1 mod m, h2 mod m), one of only m^2 patterns; slices are
 * small (m is the filter's size over the number of slices), and a new
 * value sharing the pattern of any stored one is a false positive in
 * every slice: 3% instead of 1% at a window of 100, measured.
 */
static inline uint64
slidingbloom_probe(SbfHash hash, uint32 q, uint64 slice_bits)
{
	uint64		x = hash.h1 + (uint64) q * hash.h2 +
		(uint64) q * (q - 1) * (q - 2) / 6;

	return prng_below(splitmix64_next(&x), slice_bits);
}

/* The words of physical slice q */
static inline uint64 *
slidingbloom_slice(const SlidingBloomData *filter, uint32 q)
{
	return (uint64 *) filter->words + (uint64) q * SLIDINGBLOOM_SLICE_WORDS(filter->slice_bits);
}

/* The physical slice of age a (0 = newest) */
static inline uint32
slidingbloom_slice_of_age(const SlidingBloomData *filter, uint32 age)
{
	return (uint32) ((filter->newest + age) % filter->slices);
}

/* Whether the slice of the given age has the element's bit set */
static inline bool
slidingbloom_bit_at_age(const SlidingBloomData *filter, SbfHash hash, uint32 age)
{
	uint32		q = slidingbloom_slice_of_age(filter, age);
	uint64		bit = slidingbloom_probe(hash, q, filter->slice_bits);

	return (slidingbloom_slice(filter, q)[bit / 64] >> (bit % 64)) & 1;
}

/*
 * Present: some k consecutive slices, in age order, all have the element's
 * bit.  The search tests the last slice of a candidate run first and walks
 * back; a clear bit at age j rules out every run through j, so the next
 * candidate ends at j + k, and the slices already seen set are not tested
 * again.  A value never stored is rejected after about slices / k tests
 * when the slices are half full.
 */
/* Cell i of a stamped filter */
static inline uint64
slidingbloom_cell(const SlidingBloomData *filter, uint64 i)
{
	int			b = filter->slices;
	uint64		bit = i * (uint64) b;
	uint64		word = bit / 64;
	int			offset = (int) (bit % 64);
	uint64		v = filter->words[word] >> offset;

	if (offset + b > 64)
		v |= filter->words[word + 1] << (64 - offset);
	return v & SLIDINGBLOOM_STAMP_MODULUS(b);
}

static inline void
slidingbloom_set_cell(SlidingBloom filter, uint64 i, uint64 value)
{
	int			b = filter->slices;
	uint64		mask = SLIDINGBLOOM_STAMP_MODULUS(b);
	uint64		bit = i * (uint64) b;
	uint64		word = bit / 64;
	int			offset = (int) (bit % 64);

	filter->words[word] = (filter->words[word] & ~(mask << offset)) | (value << offset);
	if (offset + b > 64)
		filter->words[word + 1] = (filter->words[word + 1] & ~(mask >> (64 - offset))) |
			(value >> (64 - offset));
}

/* The stamp of a tick of time (negative too), 1..M */
static inline uint64
slidingbloom_stamp_of_tick(const SlidingBloomData *filter, int64 tick)
{
	int64		modulus = (int64) SLIDINGBLOOM_STAMP_MODULUS(filter->slices);
	int64		r = tick % modulus;

	return (uint64) (r < 0 ? r + modulus : r) + 1;
}

/*
 * The stamp of the current arrival, 1..M: computed once an arrival.  For a
 * window of time, the clock's (the newest arrival's tick).
 */
static inline uint64
slidingbloom_stamp_now(const SlidingBloomData *filter)
{
	if (SLIDINGBLOOM_IS_TIME(filter))
		return slidingbloom_stamp_of_tick(filter, slidingbloom_clock(filter)->clock);
	return filter->arrivals % SLIDINGBLOOM_STAMP_MODULUS(filter->slices) + 1;
}

/*
 * The age of a set cell (1..M) at the arrival whose stamp is "now": the
 * arrivals since the one that set it, mod M (the sweep keeps it below M),
 * without a division.  Cells set by the w - 1 arrivals before are live.
 */
static inline uint64
slidingbloom_cell_age(const SlidingBloomData *filter, uint64 now, uint64 cell)
{
	return now >= cell ? now - cell :
		now + SLIDINGBLOOM_STAMP_MODULUS(filter->slices) - cell;
}

static inline bool
slidingbloom_stamped_test(const SlidingBloomData *filter, SbfHash hash)
{
	uint64		now = slidingbloom_stamp_now(filter);

	for (uint32 i = 0; i < filter->hashes; i++)
	{
		uint64		cell = slidingbloom_cell(filter,
											 slidingbloom_probe(hash, i, filter->slice_bits));

		if (cell == 0 || slidingbloom_cell_age(filter, now, cell) > filter->window - 1)
			return false;
	}
	return true;
}

static inline bool
slidingbloom_test_hash(const SlidingBloomData *filter, SbfHash hash)
{
	int			k = filter->hashes;
	int			slices = filter->slices;
	int			end = k - 1;	/* the candidate run is [end - k + 1, end] */
	int			known = -1;		/* ages [end - k + 1, known] are set */

	if (SLIDINGBLOOM_IS_EMPTY(filter))
		return false;
	if (SLIDINGBLOOM_IS_STAMPED(filter))
		return slidingbloom_stamped_test(filter, hash);
	while (end < slices)
	{
		int			low = Max(end - k + 1, known + 1);
		int			j;

		for (j = end; j >= low; j--)
			if (!slidingbloom_bit_at_age(filter, hash, (uint32) j))
				break;
		if (j < low)
			return true;
		known = end;
		end = j + k;
	}
	return false;
}

/*
 * One arrival at a stamped filter: test; store (its k cells take this
 * arrival's stamp); sweep "step" cells, clearing those that no later
 * arrival can find live; count it.
 */
static inline bool
slidingbloom_stamped_arrive(SlidingBloom filter, SbfHash hash)
{
	bool		present = slidingbloom_stamped_test(filter, hash);
	uint64		now = slidingbloom_stamp_now(filter);

	if (!present || SLIDINGBLOOM_REFRESH(filter))
		for (uint32 i = 0; i < filter->hashes; i++)
			slidingbloom_set_cell(filter, slidingbloom_probe(hash, i, filter->slice_bits),
								  now);
	for (uint64 j = 0; j < filter->generation; j++)
	{
		uint64		cell = slidingbloom_cell(filter, filter->newest);

		if (cell != 0 && slidingbloom_cell_age(filter, now, cell) >= filter->window - 1)
			slidingbloom_set_cell(filter, filter->newest, 0);
		if (++filter->newest == filter->slice_bits)
			filter->newest = 0;
	}
	filter->arrivals++;
	return present;
}

/*
 * One arrival: the verdict is whether the value was present; it is then
 * stored in the k newest slices (always with REFRESH, otherwise only when
 * it was not present), and counted.  The g-th arrival of a generation ends
 * it: the oldest slice is cleared and becomes the newest.  A stamped
 * filter has its own arrival, above.
 *
 * The filter must be materialized (slidingbloom_copy_datum).
 */
static inline bool
slidingbloom_arrive_hash(SlidingBloom filter, SbfHash hash)
{
	bool		present;

	Assert(!SLIDINGBLOOM_IS_EMPTY(filter));
	if (SLIDINGBLOOM_IS_TIME(filter))
		slidingbloom_time_needs_timestamp();
	if (SLIDINGBLOOM_IS_STAMPED(filter))
		return slidingbloom_stamped_arrive(filter, hash);
	present = slidingbloom_test_hash(filter, hash);
	if (!present || SLIDINGBLOOM_REFRESH(filter))
	{
		uint32		age;

		for (age = 0; age < filter->hashes; age++)
		{
			uint32		q = slidingbloom_slice_of_age(filter, age);
			uint64		bit = slidingbloom_probe(hash, q, filter->slice_bits);

			slidingbloom_slice(filter, q)[bit / 64] |= UINT64CONST(1) << (bit % 64);
		}
	}

	filter->arrivals++;
	if (++filter->generation_fill == filter->generation)
	{
		filter->generation_fill = 0;
		filter->newest = (filter->newest + filter->slices - 1) % filter->slices;
		memset(slidingbloom_slice(filter, (uint32) filter->newest), 0,
			   SLIDINGBLOOM_SLICE_WORDS(filter->slice_bits) * sizeof(uint64));
	}
	return present;
}

#endif							/* SBF_SLIDINGBLOOM_H */
