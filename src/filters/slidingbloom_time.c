/*-------------------------------------------------------------------------
 *
 * slidingbloom_time.c
 *	  Sliding filters whose window is a time ("not seen in the last 7
 *	  days"), not a number of arrivals: an arrival and a test at a
 *	  timestamp, and the SQL functions that take one.  The layout's value
 *	  (its clock, its constructor, its validation) is in
 *	  slidingbloom_format.c.
 *
 * The layout is the stamped one (format.h) with a clock of ticks of time:
 * a window W is cut into at most SLIDINGBLOOM_TIME_TICKS ticks, a cell
 * holds the tick that last set it, and a cell is live for an arrival while
 * its tick is at most n ticks older.  Whatever arrived less than W before
 * is always found, and nothing is found once n + 1 ticks (under W plus two
 * ticks) have passed: the stale tail of generations is gone, and the work
 * an arrival is its k cells, plus a sweep of "step" cells each time the
 * clock moves on by a tick.
 *
 * Arrivals may come out of order by up to the tolerance: a late arrival is
 * tested against the cells live at its own time and stamps only the cells
 * older than it.  An arrival later than that is an ERROR, not a silent
 * miss: the sweep may already have cleared what it should find.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "common/int.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/timestamp.h"

#include "sizing.h"
#include "slidingbloom.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(slidingbloom_sized_time);
PG_FUNCTION_INFO_V1(slidingbloom_fit_time);
PG_FUNCTION_INFO_V1(slidingbloom_add_at);
PG_FUNCTION_INFO_V1(slidingbloom_add_at_int8);
PG_FUNCTION_INFO_V1(slidingbloom_contains_at);
PG_FUNCTION_INFO_V1(slidingbloom_contains_at_int8);

/* The most hashes a sized or fitted window of time is given */
#define TIME_MAX_HASHES		32

/*
 * An interval in microseconds, months of 30 days as interval comparison
 * counts them: an ERROR if it does not fit a bigint, or is not positive
 * (or negative, with allow_zero).
 */
static int64
interval_usec(const Interval *span, const char *what, bool allow_zero)
{
	int64		usec;
	int64		days;

	if (pg_mul_s64_overflow((int64) span->month, DAYS_PER_MONTH, &days) ||
		pg_add_s64_overflow(days, (int64) span->day, &days) ||
		pg_mul_s64_overflow(days, USECS_PER_DAY, &usec) ||
		pg_add_s64_overflow(usec, span->time, &usec))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s is out of range for a sliding filter", what),
				 errdetail("It must be finite and under about 292,000 years (months count 30 days).")));
	if (usec < 0 || (usec == 0 && !allow_zero))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be %s", what, allow_zero ? "zero or positive" : "positive"),
				 errdetail("It was " INT64_FORMAT " microseconds.", usec)));
	return usec;
}

/* The tick of a timestamp: floor(ts / unit), for negative ones too */
static int64
tick_of(int64 ts, int64 unit)
{
	int64		tick = ts / unit;

	if (ts % unit < 0)
		tick--;
	return tick;
}

/* A finite timestamp, or an ERROR */
static int64
check_timestamp(int64 ts)
{
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the time of an arrival must be finite")));
	return ts;
}

/* An arrival with a NULL time */
void
slidingbloom_time_is_null(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("the time of an arrival must not be null")));
}

/* An arrival or a test of a filter of time given no timestamp */
void
slidingbloom_time_needs_timestamp(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("this sliding filter's window is a time: each arrival needs its timestamp"),
			 errhint("Pass the time as the last argument, as in is_duplicate(url, filter, discovered_at) OVER (ORDER BY discovered_at).")));
}

/* A filter of arrivals given a timestamp */
void
slidingbloom_check_time(const SlidingBloomData *filter)
{
	if (!SLIDINGBLOOM_IS_TIME(filter))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("this sliding filter's window is a number of arrivals, not a time"),
				 errhint("Call it without a timestamp, or make a filter of time with slidingbloom_sized(interval, capacity, fpr).")));
}

/*
 * How late a timestamp is behind the clock, in ticks (0 when on time or
 * ahead); an ERROR past the tolerance.  *ahead gets how many ticks it is
 * ahead of the clock (0 when not), or UINT64_MAX when that overflows.
 */
static uint64
time_lateness(const SlidingBloomData *filter, int64 tick, uint64 *ahead)
{
	const SlidingBloomClock *clock = slidingbloom_clock(filter);
	int64		late;

	*ahead = 0;
	if (filter->arrivals == 0)
		return 0;
	if (pg_sub_s64_overflow(clock->clock, tick, &late))
		late = clock->clock > tick ? PG_INT64_MAX : PG_INT64_MIN;
	if (late > clock->tolerance)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp is behind the sliding filter's newest arrival by more than its tolerance"),
				 late == PG_INT64_MAX ?
				 errdetail("It is more than 2^63 ticks of " INT64_FORMAT " microseconds behind the newest arrival, and the tolerance is " INT64_FORMAT " ticks.",
						   clock->unit, clock->tolerance) :
				 errdetail("It is " INT64_FORMAT " ticks of " INT64_FORMAT " microseconds behind the newest arrival, and the tolerance is " INT64_FORMAT " ticks.",
						   late, clock->unit, clock->tolerance),
				 errhint("Order the arrivals by time, or make the filter with a longer tolerance.")));
	if (late >= 0)
		return (uint64) late;
	*ahead = late == PG_INT64_MIN ? PG_UINT64_MAX : (uint64) -late;
	return 0;
}

/*
 * Move the clock on to a later tick: sweep "step" cells a tick, clearing
 * those older than the horizon, or clear every cell when the clock moves
 * by more than the horizon (or the filter had no arrival yet).
 */
static void
time_advance(SlidingBloom filter, SlidingBloomClock *clock, int64 tick, uint64 ticks)
{
	uint64		horizon = slidingbloom_time_horizon(filter, clock);
	uint64		now;
	uint64		todo;

	clock->clock = tick;
	if (filter->arrivals == 0 || ticks > horizon)
	{
		memset(filter->words, 0,
			   SLIDINGBLOOM_STAMPED_WORDS(filter->slice_bits, filter->slices) * sizeof(uint64));
		return;
	}
	now = slidingbloom_stamp_now(filter);
	todo = ticks > filter->slice_bits / filter->generation ? filter->slice_bits :
		ticks * filter->generation;
	for (uint64 j = 0; j < todo; j++)
	{
		uint64		cell = slidingbloom_cell(filter, filter->newest);

		if ((j & ((UINT64CONST(1) << 22) - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		if (cell != 0 && slidingbloom_cell_age(filter, now, cell) > horizon)
			slidingbloom_set_cell(filter, filter->newest, 0);
		if (++filter->newest == filter->slice_bits)
			filter->newest = 0;
	}
}

/*
 * The oldest age (from the clock) of a cell live at a tick "late" ticks
 * behind the clock or "ahead" ticks ahead of it; -1 when none is
 */
static int64
time_live_age(const SlidingBloomData *filter, uint64 late, uint64 ahead)
{
	if (ahead > filter->window - 1)
		return -1;
	return (int64) (filter->window - 1 + late - ahead);
}

static bool
time_test(const SlidingBloomData *filter, SbfHash hash, uint64 now, int64 live_age)
{
	if (live_age < 0)
		return false;
	for (uint32 i = 0; i < filter->hashes; i++)
	{
		uint64		cell = slidingbloom_cell(filter,
											 slidingbloom_probe(hash, i, filter->slice_bits));

		if (cell == 0 || slidingbloom_cell_age(filter, now, cell) > (uint64) live_age)
			return false;
	}
	return true;
}

/*
 * One arrival at timestamp ts (microseconds): move the clock on if ts is
 * later; test against the cells live at ts; store (with REFRESH, or if it
 * was not present) by stamping each of its cells that is empty or older
 * than ts; count it.  Returns whether it was present.  The filter must be
 * materialized.
 */
bool
slidingbloom_arrive_at(SlidingBloom filter, SbfHash hash, int64 ts)
{
	SlidingBloomClock *clock;
	int64		tick;
	uint64		late;
	uint64		ahead;
	uint64		now;
	uint64		stamp;
	bool		present;

	Assert(!SLIDINGBLOOM_IS_EMPTY(filter));
	slidingbloom_check_time(filter);
	clock = slidingbloom_clock(filter);
	tick = tick_of(check_timestamp(ts), clock->unit);
	late = time_lateness(filter, tick, &ahead);
	if (filter->arrivals == 0 || ahead > 0)
		time_advance(filter, clock, tick, ahead);
	if (filter->arrivals == (uint64) PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a sliding filter counts at most " INT64_FORMAT " arrivals", PG_INT64_MAX)));

	now = slidingbloom_stamp_now(filter);
	stamp = slidingbloom_stamp_of_tick(filter, tick);
	present = time_test(filter, hash, now, time_live_age(filter, late, 0));
	if (!present || SLIDINGBLOOM_REFRESH(filter))
		for (uint32 i = 0; i < filter->hashes; i++)
		{
			uint64		cell_no = slidingbloom_probe(hash, i, filter->slice_bits);
			uint64		cell = slidingbloom_cell(filter, cell_no);

			if (cell == 0 || slidingbloom_cell_age(filter, now, cell) > late)
				slidingbloom_set_cell(filter, cell_no, stamp);
		}
	filter->arrivals++;
	return present;
}

/*
 * Whether a value is present at timestamp ts, without an arrival: ts may
 * be ahead of the clock (what will still be live then), or behind it by
 * up to the tolerance.
 */
bool
slidingbloom_test_at(const SlidingBloomData *filter, SbfHash hash, int64 ts)
{
	const SlidingBloomClock *clock;
	uint64		late;
	uint64		ahead;

	slidingbloom_check_time(filter);
	clock = slidingbloom_clock(filter);
	late = time_lateness(filter, tick_of(check_timestamp(ts), clock->unit), &ahead);
	if (SLIDINGBLOOM_IS_EMPTY(filter) || filter->arrivals == 0)
		return false;
	return time_test(filter, hash, slidingbloom_stamp_now(filter),
					 time_live_age(filter, late, ahead));
}

/*
 * An interval of so many microseconds as text, as IntervalStyle postgres
 * shows it ("7 days 02:37:30.5") whatever the session's style, so that
 * slidingbloom_info stays immutable
 */
static char *
usec_text(int64 usec)
{
	int64		days = usec / USECS_PER_DAY;
	int64		rest = usec % USECS_PER_DAY;
	StringInfoData buf;

	initStringInfo(&buf);
	if (days != 0)
		appendStringInfo(&buf, INT64_FORMAT " day%s", days, days == 1 ? "" : "s");
	if (rest != 0 || days == 0)
	{
		int			frac = (int) (rest % USECS_PER_SEC);

		appendStringInfo(&buf, "%s%02d:%02d:%02d", days != 0 ? " " : "",
						 (int) (rest / USECS_PER_HOUR),
						 (int) (rest / USECS_PER_MINUTE % 60),
						 (int) (rest / USECS_PER_SEC % 60));
		if (frac != 0)
		{
			int			digits = 6;

			/* the fraction's digits, without trailing zeros */
			for (; frac % 10 == 0; frac /= 10)
				digits--;
			appendStringInfo(&buf, ".%0*d", digits, frac);
		}
	}
	return buf.data;
}

/*
 * slidingbloom_info's fields of a window of time (after the common ones):
 * the window and tolerance as intervals, the ticks and the clock
 */
void
slidingbloom_time_info(StringInfo buf, const SlidingBloomData *filter)
{
	const SlidingBloomClock *clock = slidingbloom_clock(filter);
	uint64		ticks = filter->window - 1;

	appendStringInfo(buf, ", \"window\": \"%s\"", usec_text(clock->window_usec));
	appendStringInfo(buf, ", \"tick\": \"%s\"", usec_text(clock->unit));
	appendStringInfo(buf, ", \"window_ticks\": " UINT64_FORMAT, ticks);
	appendStringInfo(buf, ", \"tolerance\": \"%s\"",
					 usec_text(clock->tolerance * clock->unit));
	appendStringInfo(buf, ", \"capacity\": " INT64_FORMAT, clock->capacity);
	if (filter->arrivals > 0)
		appendStringInfo(buf, ", \"newest_tick\": " INT64_FORMAT, clock->clock);
	appendStringInfo(buf, ", \"guaranteed_window\": \"%s\"", usec_text(clock->window_usec));
	appendStringInfo(buf, ", \"stale_horizon\": \"%s\"",
					 usec_text((int64) (ticks + 1) * clock->unit));
}

/* The rate of a window of time at capacity: the cells live at a test */
static double
time_fpr(int hashes, uint64 cells, int64 capacity)
{
	/* a value stays live n + 1 ticks: its window, and the tick it ends in */
	double		live = (double) capacity * (SLIDINGBLOOM_TIME_TICKS + 1) /
		SLIDINGBLOOM_TIME_TICKS;

	return slidingbloom_stamped_fpr(hashes, cells, live);
}

/*
 * slidingbloom_sized(window interval, capacity bigint, fpr float8,
 *					  tolerance interval DEFAULT '0', seed bigint DEFAULT 0,
 *					  refresh boolean DEFAULT false): the fewest cells whose
 *					  rate with capacity values a window is at most fpr
 */
Datum
slidingbloom_sized_time(PG_FUNCTION_ARGS)
{
	int64		window_usec = interval_usec(PG_GETARG_INTERVAL_P(0), "window", false);
	int64		capacity = PG_GETARG_INT64(1);
	double		fpr = PG_GETARG_FLOAT8(2);
	int64		tolerance_usec = interval_usec(PG_GETARG_INTERVAL_P(3), "tolerance", true);
	uint64		best_cells = 0;
	int			best_hashes = 1;

	sbf_check_capacity(capacity);
	sbf_check_fpr(fpr);
	for (int k = 1; k <= TIME_MAX_HASHES; k++)
	{
		uint64		lo = 1;
		uint64		hi = UINT64CONST(1) << 40;

		if (time_fpr(k, hi, capacity) > fpr)
			continue;
		/* the fewest cells with the rate at most fpr: it falls with cells */
		while (lo < hi)
		{
			uint64		mid = lo + (hi - lo) / 2;

			if (time_fpr(k, mid, capacity) <= fpr)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (best_cells == 0 || lo < best_cells)
		{
			best_cells = lo;
			best_hashes = k;
		}
	}
	if (best_cells == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("no sliding filter holds " INT64_FORMAT " values a window at a rate of %g",
						capacity, fpr)));
	PG_RETURN_POINTER(slidingbloom_new_time(window_usec, tolerance_usec, capacity,
											(int64) best_cells, best_hashes,
											(uint64) PG_GETARG_INT64(4),
											PG_GETARG_BOOL(5)));
}

/*
 * slidingbloom_fit(window interval, max_bytes integer, capacity bigint,
 *					tolerance interval DEFAULT '0', seed bigint DEFAULT 0,
 *					refresh boolean DEFAULT false): the most cells within
 *					max_bytes, and the hashes of least rate at capacity
 */
Datum
slidingbloom_fit_time(PG_FUNCTION_ARGS)
{
	int64		window_usec = interval_usec(PG_GETARG_INTERVAL_P(0), "window", false);
	int64		max_bytes = PG_GETARG_INT32(1);
	int64		capacity = PG_GETARG_INT64(2);
	int64		tolerance_usec = interval_usec(PG_GETARG_INTERVAL_P(3), "tolerance", true);
	int64		unit;
	int64		ticks;
	int64		tolerance;
	int			b = slidingbloom_time_ticks(window_usec, tolerance_usec, &unit, &ticks, &tolerance);
	int64		room = max_bytes - (int64) (SLIDINGBLOOM_HEADER_SIZE + sizeof(SlidingBloomClock));
	uint64		cells;
	int			best_hashes = 1;

	sbf_check_capacity(capacity);
	if (room < (int64) sizeof(uint64))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_bytes must be at least %d",
						(int) (SLIDINGBLOOM_HEADER_SIZE + sizeof(SlidingBloomClock) + sizeof(uint64))),
				 errdetail("A sliding filter of time has %d bytes of header and clock, and at least one 8-byte word of cells.",
						   (int) (SLIDINGBLOOM_HEADER_SIZE + sizeof(SlidingBloomClock)))));
	/* b == 0 (a tolerance too long) is refused by slidingbloom_new_time */
	cells = b == 0 ? 1 : (uint64) (room / (int64) sizeof(uint64)) * 64 / (uint64) b;
	for (int k = 2; k <= TIME_MAX_HASHES; k++)
		if (time_fpr(k, cells, capacity) < time_fpr(best_hashes, cells, capacity))
			best_hashes = k;
	PG_RETURN_POINTER(slidingbloom_new_time(window_usec, tolerance_usec, capacity,
											(int64) Max(cells, 1), best_hashes,
											(uint64) PG_GETARG_INT64(4),
											PG_GETARG_BOOL(5)));
}

/*
 * slidingbloom_add(filter, value, at timestamptz | timestamp): one arrival
 * at that time.  NULL value is no arrival; a NULL time is an ERROR.
 */
static Datum
slidingbloom_add_at_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	SlidingBloom filter;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(2))
		slidingbloom_time_is_null();
	filter = slidingbloom_copy_datum(PG_GETARG_DATUM(0));
	slidingbloom_arrive_at(filter, sbf_hash_element(PG_GETARG_DATUM(1), kind, filter->seed),
						   PG_GETARG_INT64(2));
	PG_RETURN_POINTER(filter);
}

Datum
slidingbloom_add_at(PG_FUNCTION_ARGS)
{
	return slidingbloom_add_at_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
slidingbloom_add_at_int8(PG_FUNCTION_ARGS)
{
	return slidingbloom_add_at_common(fcinfo, SBF_ELEMENT_INT8);
}

/* slidingbloom_contains(filter, value, at): present at that time (strict) */
static bool
slidingbloom_contains_at_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	SlidingBloom filter = (SlidingBloom) sbf_detoast_arg_cached(fcinfo, 0);

	slidingbloom_validate_header(filter, ERRCODE_DATA_CORRUPTED);
	return slidingbloom_test_at(filter,
								sbf_hash_element(PG_GETARG_DATUM(1), kind, filter->seed),
								PG_GETARG_INT64(2));
}

Datum
slidingbloom_contains_at(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_contains_at_common(fcinfo, sbf_varlena_kind(fcinfo, 1)));
}

Datum
slidingbloom_contains_at_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_contains_at_common(fcinfo, SBF_ELEMENT_INT8));
}
