/*-------------------------------------------------------------------------
 *
 * slidingbloom_format.c
 *	  The slidingbloom type's value: making the empty form of each layout
 *	  (generations, stamped, a window of time), validating a value of any
 *	  layout, and reading or copying one from a Datum.
 *
 * The layouts are declared in format.h.  Everything above this file (the
 * SQL functions, arrivals at a time, the aggregate, the window function)
 * gets its values from here, checked; this file calls nothing of theirs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "common/int.h"
#include "utils/memutils.h"

#include "sizing.h"
#include "slidingbloom.h"
#include "value_io.h"

/* Check the structure asked for: slices * generation must fit a bigint */
static void
slidingbloom_check_params(int64 slice_bits, int32 hashes, int32 slices,
						  int64 generation)
{
	if (slice_bits < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of bits per slice must be at least 1"),
				 errdetail("The number of bits per slice given was " INT64_FORMAT ".",
						   slice_bits)));
	sbf_check_hashes(hashes);
	if (slices <= hashes || slices > SLIDINGBLOOM_MAX_SLICES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of slices must exceed the number of hashes and be at most %d",
						SLIDINGBLOOM_MAX_SLICES),
				 errdetail("The filter has %d slices and %d hashes.", slices, hashes)));
	if (generation < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generation must be at least 1"),
				 errdetail("The generation given was " INT64_FORMAT ".", generation)));
	if ((uint64) generation > (uint64) PG_INT64_MAX / (uint64) slices)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d generations of " INT64_FORMAT " arrivals do not fit a bigint",
						slices, generation)));
	if (SLIDINGBLOOM_SLICE_WORDS(slice_bits) > SLIDINGBLOOM_MAX_WORDS / (uint64) slices)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a sliding bloom filter of %d slices of " INT64_FORMAT " bits is too large",
						slices, slice_bits),
				 errdetail("A slidingbloom value holds at most " UINT64_FORMAT " words of 64 bits (1 GB).",
						   SLIDINGBLOOM_MAX_WORDS)));
}

/* An empty filter's header, of either layout (format.h) */
static SlidingBloom
slidingbloom_header(uint16 flags, int32 hashes, int32 slices, uint64 slice_bits,
					uint64 generation, uint64 window, uint64 seed, bool refresh)
{
	SlidingBloom filter = (SlidingBloom) palloc0(SLIDINGBLOOM_HEADER_SIZE);

	SET_VARSIZE(filter, SLIDINGBLOOM_HEADER_SIZE);
	filter->magic = SBF_MAGIC_SLIDINGBLOOM;
	filter->version = SBF_SLIDINGBLOOM_VERSION;
	filter->hashes = (uint16) hashes;
	filter->slices = (uint16) slices;
	filter->flags = flags | SLIDINGBLOOM_FLAG_EMPTY | (refresh ? SLIDINGBLOOM_FLAG_REFRESH : 0);
	filter->slice_bits = slice_bits;
	filter->generation = generation;
	filter->window = window;
	filter->seed = seed;
	return filter;
}

/*
 * A new filter in the empty form (header only), in CurrentMemoryContext,
 * after checking every parameter.  window 0 means l g.
 */
SlidingBloom
slidingbloom_new(int64 slice_bits, int32 hashes, int32 slices, int64 generation,
				 int64 window, uint64 seed, bool refresh)
{
	slidingbloom_check_params(slice_bits, hashes, slices, generation);
	if (window == 0)
		window = (int64) (slices - hashes) * generation;
	Assert(window >= 1 && window <= (int64) (slices - hashes) * generation);
	return slidingbloom_header(0, hashes, slices, (uint64) slice_bits,
							   (uint64) generation, (uint64) window, seed, refresh);
}

/*
 * The stamped layout: the cells swept per arrival, so that every cell is
 * visited at least once every M - w arrivals
 */
uint64
slidingbloom_stamped_step(uint64 cells, int cell_bits, uint64 window)
{
	uint64		room = SLIDINGBLOOM_STAMP_MODULUS(cell_bits) - window;

	Assert(SLIDINGBLOOM_STAMP_MODULUS(cell_bits) > window);
	return cells / room + (cells % room != 0);
}

/*
 * A new stamped filter (format.h) in the empty form, after checking every
 * parameter
 */
SlidingBloom
slidingbloom_new_stamped(int64 cells, int32 cell_bits, int32 hashes, int64 window,
						 uint64 seed, bool refresh)
{
	sbf_check_hashes(hashes);
	if (cell_bits < 2 || cell_bits > SLIDINGBLOOM_STAMP_MAX_BITS ||
		window < 1 || (uint64) window >= SLIDINGBLOOM_STAMP_MODULUS(cell_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a stamped sliding filter needs cells of 2..%d bits whose stamps exceed the window",
						SLIDINGBLOOM_STAMP_MAX_BITS),
				 errdetail("The cells have %d bits and the window is " INT64_FORMAT ".",
						   cell_bits, window)));
	if (cells < 1 || (uint64) cells > SLIDINGBLOOM_MAX_WORDS * 64 / (uint64) cell_bits ||
		slidingbloom_stamped_step((uint64) cells, cell_bits, (uint64) window) > SLIDINGBLOOM_STAMP_MAX_SWEEP)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a stamped sliding filter of " INT64_FORMAT " cells of %d bits for a window of " INT64_FORMAT " is too large or empty",
						cells, cell_bits, window)));
	return slidingbloom_header(SLIDINGBLOOM_FLAG_STAMPED, hashes, cell_bits, (uint64) cells,
							   slidingbloom_stamped_step((uint64) cells, cell_bits,
														 (uint64) window),
							   (uint64) window, seed, refresh);
}

/* The sweep's room M - 2H - 1: it visits every cell within so many ticks */
static uint64
time_room(int cell_bits, uint64 horizon)
{
	uint64		modulus = SLIDINGBLOOM_STAMP_MODULUS(cell_bits);

	return modulus > 2 * horizon + 1 ? modulus - 2 * horizon - 1 : 0;
}

/*
 * The ticks of a window and its tolerance: unit = ceil(W / TICKS),
 * n = ceil(W / unit), L = ceil(tolerance / unit); and the cells' bits, the
 * fewest whose stamps leave a sweep room of at least 2H + 3 ticks (so a
 * sweep of about m / 2H cells a tick), or 0 when none of 32 bits does.
 */
int
slidingbloom_time_ticks(int64 window_usec, int64 tolerance_usec, int64 *unit,
						int64 *ticks, int64 *tolerance)
{
	uint64		horizon;

	*unit = window_usec / SLIDINGBLOOM_TIME_TICKS +
		(window_usec % SLIDINGBLOOM_TIME_TICKS != 0);
	*ticks = window_usec / *unit + (window_usec % *unit != 0);
	*tolerance = tolerance_usec / *unit + (tolerance_usec % *unit != 0);
	horizon = (uint64) *ticks + (uint64) *tolerance;
	for (int b = 2; b <= SLIDINGBLOOM_STAMP_MAX_BITS; b++)
		if (time_room(b, horizon) >= 2 * horizon + 3)
			return b;
	return 0;
}

/*
 * Whether the stale horizon (n + 1) unit or the tolerance L unit, in
 * microseconds, overflows a bigint: slidingbloom_info shows both
 */
static bool
time_out_of_range(int64 unit, int64 ticks, int64 tolerance)
{
	int64		usec;

	return pg_mul_s64_overflow(ticks + 1, unit, &usec) ||
		pg_mul_s64_overflow(tolerance, unit, &usec);
}

/*
 * A new filter of a window of time in the empty form (its header and its
 * clock), after checking every parameter
 */
SlidingBloom
slidingbloom_new_time(int64 window_usec, int64 tolerance_usec, int64 capacity,
					  int64 cells, int32 hashes, uint64 seed, bool refresh)
{
	int64		unit;
	int64		ticks;
	int64		tolerance;
	int			b = slidingbloom_time_ticks(window_usec, tolerance_usec, &unit, &ticks, &tolerance);
	Size		size = SLIDINGBLOOM_HEADER_SIZE + sizeof(SlidingBloomClock);
	SlidingBloom filter;
	SlidingBloomClock *clock;
	uint64		room;

	sbf_check_hashes(hashes);
	sbf_check_capacity(capacity);
	if (b == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the tolerance is too long for the window"),
				 errdetail("The tolerance is " INT64_FORMAT " ticks of " INT64_FORMAT " microseconds, %d to a window.",
						   tolerance, unit, SLIDINGBLOOM_TIME_TICKS),
				 errhint("A tolerance of up to about 16 million windows fits.")));
	if (time_out_of_range(unit, ticks, tolerance))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the window and its tolerance are out of range for a sliding filter"),
				 errdetail("A window must stay under about 287,000 years (its stale horizon is 65/64 of it), and its tolerance under about 292,000.")));
	if (cells < 1 || (uint64) cells > SLIDINGBLOOM_MAX_WORDS * 64 / (uint64) b ||
		SLIDINGBLOOM_STAMPED_SIZE(cells, b) + sizeof(SlidingBloomClock) > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a sliding filter of " INT64_FORMAT " cells of %d bits is too large or empty",
						cells, b),
				 errdetail("A slidingbloom value holds at most 1 GB.")));
	room = time_room(b, (uint64) ticks + (uint64) tolerance);

	filter = (SlidingBloom) palloc0(size);
	SET_VARSIZE(filter, size);
	filter->magic = SBF_MAGIC_SLIDINGBLOOM;
	filter->version = SBF_SLIDINGBLOOM_VERSION;
	filter->hashes = (uint16) hashes;
	filter->slices = (uint16) b;
	filter->flags = SLIDINGBLOOM_FLAG_STAMPED | SLIDINGBLOOM_FLAG_TIME |
		SLIDINGBLOOM_FLAG_EMPTY | (refresh ? SLIDINGBLOOM_FLAG_REFRESH : 0);
	filter->slice_bits = (uint64) cells;
	filter->generation = (uint64) cells / room + ((uint64) cells % room != 0);
	filter->window = (uint64) ticks + 1;
	filter->seed = seed;
	clock = slidingbloom_clock(filter);
	clock->window_usec = window_usec;
	clock->unit = unit;
	clock->tolerance = tolerance;
	clock->capacity = capacity;
	return filter;
}

/* A value that fails validation: an ERROR of the caller's sqlstate */
#define SLIDINGBLOOM_INVALID(...) \
	ereport(ERROR, \
			(errcode(sqlstate), \
			 errmsg("invalid slidingbloom value"), \
			 errdetail(__VA_ARGS__)))

/* The stamped layout's header (format.h); the common part is checked */
static void
slidingbloom_validate_stamped(const SlidingBloomData *filter, int sqlstate)
{
	Size		size = VARSIZE(filter);
	int			b = filter->slices;

	if (b < 2 || b > SLIDINGBLOOM_STAMP_MAX_BITS)
		SLIDINGBLOOM_INVALID("A stamped filter's cells have %d bits, outside 2..%d.",
							 b, SLIDINGBLOOM_STAMP_MAX_BITS);
	if (filter->window < 1 || filter->window >= SLIDINGBLOOM_STAMP_MODULUS(b))
		SLIDINGBLOOM_INVALID("The window is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT " for stamps of %d bits.",
							 filter->window, SLIDINGBLOOM_STAMP_MODULUS(b) - 1, b);
	if (filter->slice_bits < 1 ||
		filter->slice_bits > SLIDINGBLOOM_MAX_WORDS * 64 / (uint64) b)
		SLIDINGBLOOM_INVALID("The number of cells is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT " for cells of %d bits.",
							 filter->slice_bits, SLIDINGBLOOM_MAX_WORDS * 64 / (uint64) b, b);
	if (filter->arrivals > (uint64) PG_INT64_MAX)
		SLIDINGBLOOM_INVALID("A stamped filter counts at most " INT64_FORMAT " arrivals, not " UINT64_FORMAT ".",
							 PG_INT64_MAX, filter->arrivals);
	if (filter->generation_fill != 0)
		SLIDINGBLOOM_INVALID("A stamped filter has no generations, but its generation fill is " UINT64_FORMAT ".",
							 filter->generation_fill);
	if (filter->newest >= filter->slice_bits)
		SLIDINGBLOOM_INVALID("The sweep is at cell " UINT64_FORMAT ", not one of the " UINT64_FORMAT " cells.",
							 filter->newest, filter->slice_bits);
	if (SLIDINGBLOOM_IS_TIME(filter))
	{
		slidingbloom_validate_time(filter, sqlstate);
		return;
	}
	if (filter->generation != slidingbloom_stamped_step(filter->slice_bits, b, filter->window))
		SLIDINGBLOOM_INVALID("The sweep step is " UINT64_FORMAT ", not the " UINT64_FORMAT " of its cells, stamps and window.",
							 filter->generation,
							 slidingbloom_stamped_step(filter->slice_bits, b, filter->window));
	if (filter->generation > SLIDINGBLOOM_STAMP_MAX_SWEEP)
		SLIDINGBLOOM_INVALID("The sweep step is " UINT64_FORMAT ", more than %d cells an arrival.",
							 filter->generation, SLIDINGBLOOM_STAMP_MAX_SWEEP);
	if (SLIDINGBLOOM_IS_EMPTY(filter))
	{
		if (size != SLIDINGBLOOM_HEADER_SIZE)
			SLIDINGBLOOM_INVALID("An empty filter takes %zu bytes, but the value has %zu.",
								 SLIDINGBLOOM_HEADER_SIZE - VARHDRSZ, size - VARHDRSZ);
	}
	else if (size != SLIDINGBLOOM_STAMPED_SIZE(filter->slice_bits, b))
		SLIDINGBLOOM_INVALID("A stamped filter of " UINT64_FORMAT " cells of %d bits takes %zu bytes, but the value has %zu.",
							 filter->slice_bits, b,
							 (Size) SLIDINGBLOOM_STAMPED_SIZE(filter->slice_bits, b) - VARHDRSZ,
							 size - VARHDRSZ);
}

/*
 * A window of time's own header fields, its length and its clock
 * (format.h); slidingbloom_validate_stamped checks the rest of the stamped
 * layout's
 */
void
slidingbloom_validate_time(const SlidingBloomData *filter, int sqlstate)
{
	Size		size = VARSIZE(filter);
	Size		expected = sizeof(SlidingBloomClock) +
		(SLIDINGBLOOM_IS_EMPTY(filter) ? SLIDINGBLOOM_HEADER_SIZE :
		 SLIDINGBLOOM_STAMPED_SIZE(filter->slice_bits, filter->slices));
	const SlidingBloomClock *clock;
	int64		unit;
	int64		ticks;
	int64		tolerance;
	uint64		room;

	if (size != expected)
		SLIDINGBLOOM_INVALID("A sliding filter of time of " UINT64_FORMAT " cells of %d bits takes %zu bytes, but the value has %zu.",
							 filter->slice_bits, (int) filter->slices,
							 expected - VARHDRSZ, size - VARHDRSZ);
	clock = slidingbloom_clock(filter);
	if (clock->window_usec < 1 || clock->tolerance < 0 || clock->capacity < 1)
		SLIDINGBLOOM_INVALID("The window is " INT64_FORMAT " microseconds, the tolerance " INT64_FORMAT " ticks and the capacity " INT64_FORMAT ".",
							 clock->window_usec, clock->tolerance, clock->capacity);
	(void) slidingbloom_time_ticks(clock->window_usec, 0, &unit, &ticks, &tolerance);
	if (clock->unit != unit || filter->window != (uint64) ticks + 1)
		SLIDINGBLOOM_INVALID("A window of " INT64_FORMAT " microseconds has ticks of " INT64_FORMAT " and " INT64_FORMAT " of them, not " INT64_FORMAT " and " UINT64_FORMAT ".",
							 clock->window_usec, unit, ticks, clock->unit, filter->window - 1);
	if (time_out_of_range(unit, ticks, clock->tolerance))
		SLIDINGBLOOM_INVALID("The window's ticks or its tolerance of " INT64_FORMAT " ticks overflow a bigint of microseconds.",
							 clock->tolerance);
	/* below 2^32 ticks of tolerance, H cannot wrap around */
	room = clock->tolerance >= (INT64CONST(1) << 32) ? 0 :
		time_room(filter->slices, slidingbloom_time_horizon(filter, clock));
	if (room == 0)
		SLIDINGBLOOM_INVALID("Stamps of %d bits cannot hold a window of " INT64_FORMAT " ticks and a tolerance of " INT64_FORMAT ".",
							 (int) filter->slices, ticks, clock->tolerance);
	if (filter->generation != filter->slice_bits / room + (filter->slice_bits % room != 0))
		SLIDINGBLOOM_INVALID("The sweep step is " UINT64_FORMAT ", not the " UINT64_FORMAT " of its cells, stamps and horizon.",
							 filter->generation,
							 filter->slice_bits / room + (filter->slice_bits % room != 0));
}

/*
 * Check the header against the value's length, in constant time: run on
 * every value read from a table.  Any value that passes can be used
 * without reading or writing outside it.
 */
void
slidingbloom_validate_header(const SlidingBloomData *filter, int sqlstate)
{
	Size		size = VARSIZE(filter);
	const uint16 known = SLIDINGBLOOM_FLAG_EMPTY | SLIDINGBLOOM_FLAG_REFRESH |
		SLIDINGBLOOM_FLAG_STAMPED | SLIDINGBLOOM_FLAG_TIME;

	sbf_check_magic((const struct varlena *) filter, SBF_MAGIC_SLIDINGBLOOM,
					SBF_SLIDINGBLOOM_VERSION, "slidingbloom", sqlstate);

	if (size < SLIDINGBLOOM_HEADER_SIZE)
		SLIDINGBLOOM_INVALID("The value is %zu bytes long, shorter than the %zu-byte header.",
							 size - VARHDRSZ, SLIDINGBLOOM_HEADER_SIZE - VARHDRSZ);
	if (filter->hashes < 1 || filter->hashes > SBF_MAX_HASHES)
		SLIDINGBLOOM_INVALID("The number of hashes is %u, outside 1..%d.",
							 (unsigned) filter->hashes, SBF_MAX_HASHES);
	if ((filter->flags & ~known) != 0)
		SLIDINGBLOOM_INVALID("Unknown flags 0x%x are set.",
							 (unsigned) (filter->flags & ~known));
	if (SLIDINGBLOOM_IS_TIME(filter) && !SLIDINGBLOOM_IS_STAMPED(filter))
		SLIDINGBLOOM_INVALID("A window of time is a flag of the stamped layout only.");
	if (SLIDINGBLOOM_IS_STAMPED(filter))
	{
		slidingbloom_validate_stamped(filter, sqlstate);
		return;
	}
	if (filter->slices <= filter->hashes || filter->slices > SLIDINGBLOOM_MAX_SLICES)
		SLIDINGBLOOM_INVALID("The number of slices is %u, outside %u..%d.",
							 (unsigned) filter->slices, (unsigned) filter->hashes + 1,
							 SLIDINGBLOOM_MAX_SLICES);
	/* divided, not multiplied: slices * words could wrap around */
	if (filter->slice_bits < 1 ||
		filter->slice_bits > SLIDINGBLOOM_MAX_WORDS * 64 ||
		SLIDINGBLOOM_SLICE_WORDS(filter->slice_bits) > SLIDINGBLOOM_MAX_WORDS / filter->slices)
		SLIDINGBLOOM_INVALID("The number of bits per slice is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT " for %u slices.",
							 filter->slice_bits,
							 SLIDINGBLOOM_MAX_WORDS / filter->slices * 64,
							 (unsigned) filter->slices);
	if (filter->generation < 1 ||
		filter->generation > (uint64) PG_INT64_MAX / filter->slices)
		SLIDINGBLOOM_INVALID("The generation is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT ".",
							 filter->generation, (uint64) PG_INT64_MAX / filter->slices);
	if (filter->window < 1 ||
		filter->window > (uint64) (filter->slices - filter->hashes) * filter->generation)
		SLIDINGBLOOM_INVALID("The window is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT " (l * g).",
							 filter->window,
							 (uint64) (filter->slices - filter->hashes) * filter->generation);
	if (filter->generation_fill >= filter->generation)
		SLIDINGBLOOM_INVALID("The current generation has " UINT64_FORMAT " arrivals, not fewer than its " UINT64_FORMAT ".",
							 filter->generation_fill, filter->generation);
	if (filter->newest >= filter->slices)
		SLIDINGBLOOM_INVALID("The newest slice is " UINT64_FORMAT ", not one of the %u slices.",
							 filter->newest, (unsigned) filter->slices);
	if (SLIDINGBLOOM_IS_EMPTY(filter))
	{
		if (size != SLIDINGBLOOM_HEADER_SIZE)
			SLIDINGBLOOM_INVALID("An empty filter takes %zu bytes, but the value has %zu.",
								 SLIDINGBLOOM_HEADER_SIZE - VARHDRSZ, size - VARHDRSZ);
	}
	else if (size != SLIDINGBLOOM_SIZE(filter->slices, filter->slice_bits))
		SLIDINGBLOOM_INVALID("A filter of %u slices of " UINT64_FORMAT " bits takes %zu bytes, but the value has %zu.",
							 (unsigned) filter->slices, filter->slice_bits,
							 (Size) SLIDINGBLOOM_SIZE(filter->slices, filter->slice_bits) - VARHDRSZ,
							 size - VARHDRSZ);
}

/*
 * Full validation, for input: the header, then no bit set past the end of
 * any slice.  Linear in the number of slices.
 */
void
slidingbloom_validate(const SlidingBloomData *filter, int sqlstate)
{
	uint32		q;

	slidingbloom_validate_header(filter, sqlstate);
	if (SLIDINGBLOOM_IS_EMPTY(filter))
		return;
	if (SLIDINGBLOOM_IS_STAMPED(filter))
	{
		uint64		bits = filter->slice_bits * (uint64) filter->slices;

		if (bits % 64 != 0 && (filter->words[bits / 64] >> (bits % 64)) != 0)
			SLIDINGBLOOM_INVALID("Bits past the last cell are set.");
		return;
	}
	if (filter->slice_bits % 64 == 0)
		return;
	for (q = 0; q < filter->slices; q++)
	{
		uint64		last = slidingbloom_slice(filter, q)[filter->slice_bits / 64];

		if ((last >> (filter->slice_bits % 64)) != 0)
			SLIDINGBLOOM_INVALID("Bits past the end of slice %u are set.", q);
	}
}

/* Detoast a slidingbloom argument for reading, and check its header */
SlidingBloom
slidingbloom_from_datum(Datum datum)
{
	SlidingBloom filter = (SlidingBloom) PG_DETOAST_DATUM(datum);

	slidingbloom_validate_header(filter, ERRCODE_DATA_CORRUPTED);
	return filter;
}

/*
 * A private, writable, materialized copy of a slidingbloom argument in
 * CurrentMemoryContext, with the argument's arrivals and position.
 */
SlidingBloom
slidingbloom_copy_datum(Datum datum)
{
	SlidingBloom filter = slidingbloom_from_datum(datum);

	if (SLIDINGBLOOM_IS_EMPTY(filter))
	{
		Size		size = slidingbloom_full_size(filter);
		SlidingBloom copy = (SlidingBloom) sbf_palloc0(size);

		memcpy(copy, filter, SLIDINGBLOOM_HEADER_SIZE);
		SET_VARSIZE(copy, size);
		copy->flags &= ~SLIDINGBLOOM_FLAG_EMPTY;
		if (SLIDINGBLOOM_IS_TIME(filter))
			*slidingbloom_clock(copy) = *slidingbloom_clock(filter);
		return copy;
	}
	/* detoasting already made a private copy, or the value is in memory */
	if ((Pointer) filter != DatumGetPointer(datum))
		return filter;
	return (SlidingBloom) sbf_value_copy((struct varlena *) filter);
}
