/*-------------------------------------------------------------------------
 *
 * slidingbloom.c
 *	  The slidingbloom type: duplicates among the last w arrivals of a
 *	  stream, with no false negative inside the window.  Its text and
 *	  binary I/O and the scalar SQL functions; the values themselves are
 *	  made and validated in slidingbloom_format.c.
 *
 * The structure is an age-partitioned Bloom filter (Shtul, Baquero &
 * Almeida 2020): k + l slices of m bits in a circular buffer.  A value is
 * stored in the k newest slices; every g arrivals the oldest slice is
 * cleared and becomes the newest; a value is present when k consecutive
 * slices all have its bit.  A value stored d <= l g arrivals ago still
 * has all k of its slices, so it is always found: with l g >= w, no false
 * negative inside the window, and the work per arrival is O(k + l) probes
 * at most, independent of w.  Beyond the window a value fades out over
 * about k more generations (the "stale" positives, sizing.c).
 *
 * The window counts arrivals: every value passed to slidingbloom_add,
 * slidingbloom_agg or is_duplicate, repeats included (NULLs are not
 * counted).  Without refresh a value is stored only when it is reported
 * new (the seed's w-duplicates: each value reported new at most once per
 * window); with refresh every sighting is stored, so a value is reported
 * new only after a whole window without it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"

#include "sizing.h"
#include "slidingbloom.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(slidingbloom_in);
PG_FUNCTION_INFO_V1(slidingbloom_out);
PG_FUNCTION_INFO_V1(slidingbloom_recv);
PG_FUNCTION_INFO_V1(slidingbloom_send);
PG_FUNCTION_INFO_V1(slidingbloom_empty);
PG_FUNCTION_INFO_V1(slidingbloom_sized);
PG_FUNCTION_INFO_V1(slidingbloom_add);
PG_FUNCTION_INFO_V1(slidingbloom_add_int8);
PG_FUNCTION_INFO_V1(slidingbloom_contains);
PG_FUNCTION_INFO_V1(slidingbloom_contains_int8);
PG_FUNCTION_INFO_V1(slidingbloom_contained_by);
PG_FUNCTION_INFO_V1(slidingbloom_contained_by_int8);
PG_FUNCTION_INFO_V1(slidingbloom_eq);
PG_FUNCTION_INFO_V1(slidingbloom_ne);
PG_FUNCTION_INFO_V1(slidingbloom_stale_rate);
PG_FUNCTION_INFO_V1(slidingbloom_info);

/* Bits set in the slice of the given age */
static uint64
slidingbloom_slice_bits_set(const SlidingBloomData *filter, uint32 age)
{
	const uint64 *words;
	uint64		set = 0;
	uint64		i;

	if (SLIDINGBLOOM_IS_EMPTY(filter))
		return 0;
	words = slidingbloom_slice(filter, slidingbloom_slice_of_age(filter, age));
	for (i = 0; i < SLIDINGBLOOM_SLICE_WORDS(filter->slice_bits); i++)
	{
		/* a slice may hold up to 1 GB: stay cancellable (8 MB steps) */
		if ((i & ((UINT64CONST(1) << 20) - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		set += pg_popcount64(words[i]);
	}
	return set;
}

/*
 * Type I/O
 */

Datum
slidingbloom_in(PG_FUNCTION_ARGS)
{
	SlidingBloom filter = (SlidingBloom)
		sbf_value_from_text(PG_GETARG_CSTRING(0), "slidingbloom");

	slidingbloom_validate(filter, ERRCODE_INVALID_TEXT_REPRESENTATION);
	PG_RETURN_POINTER(filter);
}

Datum
slidingbloom_out(PG_FUNCTION_ARGS)
{
	SlidingBloom filter = slidingbloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_CSTRING(sbf_value_to_text((struct varlena *) filter));
}

Datum
slidingbloom_recv(PG_FUNCTION_ARGS)
{
	SlidingBloom filter = (SlidingBloom)
		sbf_value_from_binary((StringInfo) PG_GETARG_POINTER(0), "slidingbloom");

	slidingbloom_validate(filter, ERRCODE_INVALID_BINARY_REPRESENTATION);
	PG_RETURN_POINTER(filter);
}

Datum
slidingbloom_send(PG_FUNCTION_ARGS)
{
	SlidingBloom filter = slidingbloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_BYTEA_P(sbf_value_to_binary((struct varlena *) filter));
}

/*
 * Constructors
 */

/*
 * slidingbloom_empty(slice_bits bigint, hashes int, slices int,
 *					  generation bigint, seed bigint DEFAULT 0,
 *					  refresh boolean DEFAULT false): window l g
 */
Datum
slidingbloom_empty(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(slidingbloom_new(PG_GETARG_INT64(0), PG_GETARG_INT32(1),
									   PG_GETARG_INT32(2), PG_GETARG_INT64(3), 0,
									   (uint64) PG_GETARG_INT64(4),
									   PG_GETARG_BOOL(5)));
}

/*
 * slidingbloom_sized(window bigint, fpr float8, seed bigint DEFAULT 0,
 *					  refresh boolean DEFAULT false): the fewest words
 *					  (sizing.c)
 */
Datum
slidingbloom_sized(PG_FUNCTION_ARGS)
{
	int64		window = PG_GETARG_INT64(0);
	int			hashes;
	int			slices;
	uint64		slice_bits;
	uint64		generation;

	slidingbloom_size_for(window, PG_GETARG_FLOAT8(1), &hashes, &slices,
						  &slice_bits, &generation);
	PG_RETURN_POINTER(slidingbloom_new((int64) slice_bits, hashes, slices,
									   (int64) generation, window,
									   (uint64) PG_GETARG_INT64(2),
									   PG_GETARG_BOOL(3)));
}

/*
 * Adding and testing.  slidingbloom_add is one arrival and returns a new
 * filter (NULL is no arrival: the filter is returned as it is); code that
 * handles many arrivals keeps one filter and mutates it
 * (slidingbloom_agg, is_duplicate).
 */
static Datum
slidingbloom_add_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	SlidingBloom filter;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	filter = slidingbloom_copy_datum(PG_GETARG_DATUM(0));
	slidingbloom_arrive_hash(filter, sbf_hash_element(PG_GETARG_DATUM(1), kind,
													  filter->seed));
	PG_RETURN_POINTER(filter);
}

Datum
slidingbloom_add(PG_FUNCTION_ARGS)
{
	return slidingbloom_add_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
slidingbloom_add_int8(PG_FUNCTION_ARGS)
{
	return slidingbloom_add_common(fcinfo, SBF_ELEMENT_INT8);
}

/* Detoasted once per query for a stored filter, as for bloom */
static bool
slidingbloom_contains_common(FunctionCallInfo fcinfo, int filter_arg,
							 int value_arg, SbfElementKind kind)
{
	SlidingBloom filter = (SlidingBloom) sbf_detoast_arg_cached(fcinfo, filter_arg);

	slidingbloom_validate_header(filter, ERRCODE_DATA_CORRUPTED);
	return slidingbloom_test_hash(filter,
								  sbf_hash_element(PG_GETARG_DATUM(value_arg),
												   kind, filter->seed));
}

Datum
slidingbloom_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_contains_common(fcinfo, 0, 1, sbf_varlena_kind(fcinfo, 1)));
}

Datum
slidingbloom_contains_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_contains_common(fcinfo, 0, 1, SBF_ELEMENT_INT8));
}

Datum
slidingbloom_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_contains_common(fcinfo, 1, 0, sbf_varlena_kind(fcinfo, 0)));
}

Datum
slidingbloom_contained_by_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_contains_common(fcinfo, 1, 0, SBF_ELEMENT_INT8));
}

/*
 * Equal: same parameters, arrivals, position and bits, whether all-zero
 * slices are stored in the empty form or not
 */
static bool
slidingbloom_equal(Datum a_datum, Datum b_datum)
{
	SlidingBloom a = slidingbloom_from_datum(a_datum);
	SlidingBloom b = slidingbloom_from_datum(b_datum);
	uint32		age;

	if (a->hashes != b->hashes || a->slices != b->slices ||
		a->slice_bits != b->slice_bits || a->generation != b->generation ||
		a->window != b->window || a->seed != b->seed ||
		a->arrivals != b->arrivals || a->generation_fill != b->generation_fill ||
		a->newest != b->newest ||
		SLIDINGBLOOM_REFRESH(a) != SLIDINGBLOOM_REFRESH(b) ||
		SLIDINGBLOOM_IS_STAMPED(a) != SLIDINGBLOOM_IS_STAMPED(b) ||
		SLIDINGBLOOM_IS_TIME(a) != SLIDINGBLOOM_IS_TIME(b))
		return false;
	if (SLIDINGBLOOM_IS_TIME(a) &&
		memcmp(slidingbloom_clock(a), slidingbloom_clock(b), sizeof(SlidingBloomClock)) != 0)
		return false;
	if (SLIDINGBLOOM_IS_STAMPED(a))
	{
		Size		words = SLIDINGBLOOM_STAMPED_WORDS(a->slice_bits, a->slices);

		if (SLIDINGBLOOM_IS_EMPTY(a) && SLIDINGBLOOM_IS_EMPTY(b))
			return true;
		if (SLIDINGBLOOM_IS_EMPTY(a) || SLIDINGBLOOM_IS_EMPTY(b))
		{
			const uint64 *full = SLIDINGBLOOM_IS_EMPTY(a) ? b->words : a->words;

			for (Size i = 0; i < words; i++)
				if (full[i] != 0)
					return false;
			return true;
		}
		return memcmp(a->words, b->words, words * sizeof(uint64)) == 0;
	}
	if (SLIDINGBLOOM_IS_EMPTY(a) || SLIDINGBLOOM_IS_EMPTY(b))
	{
		for (age = 0; age < a->slices; age++)
			if (slidingbloom_slice_bits_set(a, age) != 0 ||
				slidingbloom_slice_bits_set(b, age) != 0)
				return false;
		return true;
	}
	return memcmp(a->words, b->words,
				  (Size) a->slices * SLIDINGBLOOM_SLICE_WORDS(a->slice_bits) * sizeof(uint64)) == 0;
}

Datum
slidingbloom_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slidingbloom_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

Datum
slidingbloom_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!slidingbloom_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

/*
 * Statistics
 */

/*
 * slidingbloom_stale_rate(slidingbloom, distance bigint) -> float8: the
 * probability that a value last stored "distance" arrivals ago is
 * reported, for this filter's structure at its fullest (sizing.c): 1 up to
 * l g, then decaying to the false-positive rate.
 */
Datum
slidingbloom_stale_rate(PG_FUNCTION_ARGS)
{
	SlidingBloom filter = slidingbloom_from_datum(PG_GETARG_DATUM(0));
	int64		distance = PG_GETARG_INT64(1);

	if (distance < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distance must be at least 1"),
				 errdetail("The distance given was " INT64_FORMAT ".", distance)));
	if (SLIDINGBLOOM_IS_TIME(filter))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slidingbloom_stale_rate counts arrivals, and this filter's window is a time"),
				 errdetail("A filter of time finds nothing once n + 1 ticks have passed (slidingbloom_info's stale_horizon).")));
	if (SLIDINGBLOOM_IS_STAMPED(filter))
		PG_RETURN_FLOAT8((uint64) distance <= filter->window - 1 ? 1.0 :
						 slidingbloom_stamped_fpr(filter->hashes, filter->slice_bits,
												  (double) (filter->window - 1)));
	PG_RETURN_FLOAT8(slidingbloom_stale_rate_for(filter->hashes, filter->slices,
												 filter->slice_bits,
												 filter->generation,
												 (uint64) distance));
}

/* The start of slidingbloom_info's object: the fields both layouts have */
static void
slidingbloom_info_begin(StringInfo buf, const SlidingBloomData *filter,
						const char *layout)
{
	initStringInfo(buf);
	appendStringInfo(buf, "{\"type\": \"slidingbloom\", \"format_version\": %u",
					 (unsigned) filter->version);
	appendStringInfo(buf, ", \"layout\": \"%s\"", layout);
	if (!SLIDINGBLOOM_IS_TIME(filter))
		appendStringInfo(buf, ", \"window\": " UINT64_FORMAT, filter->window);
	appendStringInfo(buf, ", \"refresh\": %s",
					 SLIDINGBLOOM_REFRESH(filter) ? "true" : "false");
	appendStringInfo(buf, ", \"hashes\": %u", (unsigned) filter->hashes);
	appendStringInfo(buf, ", \"seed\": " INT64_FORMAT, (int64) filter->seed);
	appendStringInfo(buf, ", \"arrivals\": " UINT64_FORMAT, filter->arrivals);
}

/*
 * The stamped layout's statistics: cells live at the next arrival, and the
 * false-positive rate at full load (every one of the w - 1 arrivals before
 * a different value)
 */
static Datum
slidingbloom_stamped_info(SlidingBloom filter)
{
	uint64		live = 0;
	double		fpr = SLIDINGBLOOM_IS_TIME(filter) ?
		slidingbloom_stamped_fpr(filter->hashes, filter->slice_bits,
								 (double) slidingbloom_clock(filter)->capacity *
								 (SLIDINGBLOOM_TIME_TICKS + 1) / SLIDINGBLOOM_TIME_TICKS) :
		slidingbloom_stamped_fpr(filter->hashes, filter->slice_bits,
								 (double) (filter->window - 1));
	StringInfoData buf;

	if (!SLIDINGBLOOM_IS_EMPTY(filter))
	{
		uint64		now = slidingbloom_stamp_now(filter);

		for (uint64 i = 0; i < filter->slice_bits; i++)
		{
			uint64		cell = slidingbloom_cell(filter, i);

			if ((i & ((UINT64CONST(1) << 22) - 1)) == 0)
				CHECK_FOR_INTERRUPTS();
			if (cell != 0 && slidingbloom_cell_age(filter, now, cell) <= filter->window - 1)
				live++;
		}
	}

	slidingbloom_info_begin(&buf, filter, "stamped");
	appendStringInfo(&buf, ", \"cells\": " UINT64_FORMAT, filter->slice_bits);
	appendStringInfo(&buf, ", \"cell_bits\": %u", (unsigned) filter->slices);
	appendStringInfo(&buf, ", \"sweep_step\": " UINT64_FORMAT, filter->generation);
	appendStringInfo(&buf, ", \"sweep\": " UINT64_FORMAT, filter->newest);
	if (SLIDINGBLOOM_IS_TIME(filter))
		slidingbloom_time_info(&buf, filter);
	else
	{
		appendStringInfo(&buf, ", \"guaranteed_window\": " UINT64_FORMAT, filter->window - 1);
		appendStringInfo(&buf, ", \"stale_horizon\": " UINT64_FORMAT, filter->window - 1);
	}
	appendStringInfo(&buf, ", \"fpr_bound\": %s", float8out_internal(fpr));
	appendStringInfo(&buf, ", \"expected_fpr\": %s", float8out_internal(fpr));
	appendStringInfo(&buf, ", \"fill\": %s",
					 float8out_internal((double) live / (double) filter->slice_bits));
	appendStringInfo(&buf, ", \"size_bytes\": %u}", (unsigned) VARSIZE(filter));
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

Datum
slidingbloom_info(PG_FUNCTION_ARGS)
{
	SlidingBloom filter = slidingbloom_from_datum(PG_GETARG_DATUM(0));
	uint64		set = 0;
	uint32		age;
	StringInfoData buf;
	StringInfoData fills;

	if (SLIDINGBLOOM_IS_STAMPED(filter))
		PG_RETURN_DATUM(slidingbloom_stamped_info(filter));
	initStringInfo(&fills);
	for (age = 0; age < filter->slices; age++)
	{
		uint64		slice_set = slidingbloom_slice_bits_set(filter, age);

		set += slice_set;
		appendStringInfo(&fills, "%s%s", age == 0 ? "" : ", ",
						 float8out_internal((double) slice_set / (double) filter->slice_bits));
	}

	slidingbloom_info_begin(&buf, filter, "generations");
	appendStringInfo(&buf, ", \"slices\": %u", (unsigned) filter->slices);
	appendStringInfo(&buf, ", \"slice_bits\": " UINT64_FORMAT, filter->slice_bits);
	appendStringInfo(&buf, ", \"generation\": " UINT64_FORMAT, filter->generation);
	appendStringInfo(&buf, ", \"generation_fill\": " UINT64_FORMAT, filter->generation_fill);
	appendStringInfo(&buf, ", \"newest\": " UINT64_FORMAT, filter->newest);
	appendStringInfo(&buf, ", \"guaranteed_window\": " UINT64_FORMAT,
					 (uint64) (filter->slices - filter->hashes) * filter->generation);
	appendStringInfo(&buf, ", \"stale_horizon\": " UINT64_FORMAT,
					 (uint64) filter->slices * filter->generation - 1);
	appendStringInfo(&buf, ", \"fpr_bound\": %s",
					 float8out_internal(slidingbloom_fpr_for(filter->hashes, filter->slices,
															 filter->slice_bits,
															 filter->generation)));
	appendStringInfo(&buf, ", \"expected_fpr\": %s",
					 float8out_internal(slidingbloom_expected_fpr_for(filter->hashes,
																	  filter->slices,
																	  filter->slice_bits,
																	  filter->generation)));
	appendStringInfo(&buf, ", \"fill\": %s",
					 float8out_internal((double) set /
										((double) filter->slice_bits * filter->slices)));
	appendStringInfo(&buf, ", \"slice_fill\": [%s]", fills.data);
	appendStringInfo(&buf, ", \"size_bytes\": %u}", (unsigned) VARSIZE(filter));

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}
