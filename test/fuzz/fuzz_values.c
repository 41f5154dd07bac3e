/*
 * libFuzzer target: the text input, the binary input and the value
 * validation of bloom, stablebloom and slidingbloom, then every read and
 * write path on whatever validation accepts, under AddressSanitizer and
 * UBSan.
 *
 * The first input byte picks the type and the form (text or binary); the
 * rest is the input.  A refused input must end in ereport(ERROR) with an
 * input or corruption SQLSTATE; an accepted one must survive contains,
 * add (on a materialized copy) and the statistics.  A crash, an
 * out-of-bounds access or undefined behaviour is a finding.
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "common/int.h"

#include "bloom.h"
#include "fuzz.h"
#include "sizing.h"
#include "slidingbloom.h"
#include "stablebloom.h"
#include "utils/elog.h"
#include "value_io.h"

static struct varlena *
binary_value(const uint8_t *data, size_t size)
{
	struct varlena *v = palloc(size + VARHDRSZ);

	SET_VARSIZE(v, size + VARHDRSZ);
	memcpy(VARDATA(v), data, size);
	return v;
}

static char *
text_value(const uint8_t *data, size_t size)
{
	char	   *s = palloc(size + 1);

	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * An empty form may ask for up to 1 GB when materialized: stay small.  The
 * loops over a value check for interrupts every 8 MB or 4 million cells, so
 * a larger value reaches new coverage, and the fuzzer would then favour
 * ever larger values (a third of the inputs in the same time at 64 MB).
 */
#define FUZZ_MAX_MATERIALIZED	(8 * 1024 * 1024)

static void
exercise_bloom(Bloom filter)
{
	SbfHash		h = sbf_hash_bytes("https://example.org/", 20, filter->seed);
	Bloom		copy;

	(void) bloom_test_hash(filter, h);
	if (BLOOM_SIZE(filter->bits) > FUZZ_MAX_MATERIALIZED)
		return;
	copy = bloom_copy_datum(PointerGetDatum(filter));

	(void) bloom_bits_set(filter);
	bloom_add_hash(copy, h);
	if (!bloom_test_hash(copy, h))
		abort();				/* a Bloom filter never forgets */
	bloom_union_into(copy, filter);
	(void) sbf_value_to_text((struct varlena *) copy);
}

static void
exercise_stablebloom(StableBloom filter)
{
	SbfHash		h = sbf_hash_bytes("https://example.org/", 20, filter->seed);
	StableBloom copy;

	(void) stablebloom_test_hash(filter, h);
	if (STABLEBLOOM_SIZE(filter->cells, filter->cell_bits) > FUZZ_MAX_MATERIALIZED)
		return;
	copy = stablebloom_copy_datum(PointerGetDatum(filter));
	/* P up to m decrements per insertion: keep the input's work bounded */
	if (copy->decrements <= 100000)
	{
		stablebloom_add_hash(copy, h);
		if (!stablebloom_test_hash(copy, h))
			abort();			/* just inserted: all k cells are Max */
	}
	(void) sbf_value_to_text((struct varlena *) copy);
}

/*
 * A window of time: an arrival one tick ahead of the clock (or at 0 before
 * any), then 40 more a microsecond apart; the first is found by the last
 * when the window is at least 41 microseconds
 */
static void
exercise_slidingbloom_time(SlidingBloom filter, SbfHash h)
{
	const SlidingBloomClock *clock = slidingbloom_clock(filter);
	SlidingBloom copy;
	int64		ts = 0;
	bool		stored;
	int			i;

	if (filter->arrivals > 0 &&
		(pg_add_s64_overflow(clock->clock, 1, &ts) ||
		 pg_mul_s64_overflow(ts, clock->unit, &ts) ||
		 ts > PG_INT64_MAX / 2 || ts < PG_INT64_MIN / 2))
		return;					/* a clock no real timestamp reaches */
	(void) slidingbloom_test_at(filter, h, ts);
	if (slidingbloom_full_size(filter) > FUZZ_MAX_MATERIALIZED / 16)
		return;
	copy = slidingbloom_copy_datum(PointerGetDatum(filter));
	stored = !slidingbloom_arrive_at(copy, h, ts) || SLIDINGBLOOM_REFRESH(copy);
	if (stored && !slidingbloom_test_at(copy, h, ts))
		abort();				/* just stored, at its own time */
	for (i = 1; i <= 40; i++)
	{
		SbfHash		other = sbf_hash_bytes(&i, sizeof(i), copy->seed);

		(void) slidingbloom_arrive_at(copy, other, ts + i);
	}
	if (stored && !slidingbloom_test_hash(copy, h) &&
		slidingbloom_clock(copy)->window_usec >= 41)
		abort();				/* stored 40 microseconds ago, inside the window */
	(void) sbf_value_to_text((struct varlena *) copy);
}

static void
exercise_slidingbloom(SlidingBloom filter)
{
	SbfHash		h = sbf_hash_bytes("https://example.org/", 20, filter->seed);
	SlidingBloom copy;
	bool		stored;
	int			i;

	(void) slidingbloom_test_hash(filter, h);
	if (SLIDINGBLOOM_IS_TIME(filter))
	{
		exercise_slidingbloom_time(filter, h);
		return;
	}
	if (SLIDINGBLOOM_IS_STAMPED(filter))
		(void) slidingbloom_stamped_fpr(filter->hashes, filter->slice_bits,
										(double) (filter->window - 1));
	else
	{
		(void) slidingbloom_fpr_for(filter->hashes, filter->slices,
									filter->slice_bits, filter->generation);
		(void) slidingbloom_stale_rate_for(filter->hashes, filter->slices,
										   filter->slice_bits, filter->generation,
										   filter->window);
	}
	/* smaller than for the others: up to 256 slices are cleared and probed */
	if (slidingbloom_full_size(filter) > FUZZ_MAX_MATERIALIZED / 16)
		return;
	copy = slidingbloom_copy_datum(PointerGetDatum(filter));
	stored = !slidingbloom_arrive_hash(copy, h) || SLIDINGBLOOM_REFRESH(copy);
	/*
	 * just stored: in the k newest slices; a stamped value is found by the
	 * next w - 1 arrivals, none when w = 1
	 */
	if (stored && !slidingbloom_test_hash(copy, h) &&
		!(SLIDINGBLOOM_IS_STAMPED(copy) && copy->window <= 1))
		abort();

	/* enough arrivals to end a few generations when they are short */
	for (i = 0; i < 40; i++)
	{
		SbfHash		other = sbf_hash_bytes(&i, sizeof(i), copy->seed);

		(void) slidingbloom_arrive_hash(copy, other);
	}
	if (stored && !slidingbloom_test_hash(copy, h) &&
		(SLIDINGBLOOM_IS_STAMPED(copy) ? copy->window - 1 >= 41 :
		 (uint64) (copy->slices - copy->hashes) * copy->generation >= 41))
		abort();				/* stored 41 arrivals ago, inside the window */
	(void) sbf_value_to_text((struct varlena *) copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		mode;

	if (size < 1)
		return 0;
	mode = data[0] % 6;
	data++;
	size--;

	fuzz_last_sqlstate = 0;
	if (sigsetjmp(fuzz_error_jump, 0) == 0)
	{
		switch (mode)
		{
			case 0:
				{
					Bloom		f = (Bloom) sbf_value_from_text(text_value(data, size), "bloom");

					bloom_validate(f, ERRCODE_INVALID_TEXT_REPRESENTATION);
					exercise_bloom(f);
					break;
				}
			case 1:
				{
					Bloom		f = (Bloom) binary_value(data, size);

					bloom_validate(f, ERRCODE_INVALID_BINARY_REPRESENTATION);
					exercise_bloom(f);
					break;
				}
			case 2:
				{
					StableBloom f = (StableBloom)
						sbf_value_from_text(text_value(data, size), "stablebloom");

					stablebloom_validate(f, ERRCODE_INVALID_TEXT_REPRESENTATION);
					exercise_stablebloom(f);
					break;
				}
			case 3:
				{
					StableBloom f = (StableBloom) binary_value(data, size);

					stablebloom_validate(f, ERRCODE_INVALID_BINARY_REPRESENTATION);
					exercise_stablebloom(f);
					break;
				}
			case 4:
				{
					SlidingBloom f = (SlidingBloom)
						sbf_value_from_text(text_value(data, size), "slidingbloom");

					slidingbloom_validate(f, ERRCODE_INVALID_TEXT_REPRESENTATION);
					exercise_slidingbloom(f);
					break;
				}
			case 5:
				{
					SlidingBloom f = (SlidingBloom) binary_value(data, size);

					slidingbloom_validate(f, ERRCODE_INVALID_BINARY_REPRESENTATION);
					exercise_slidingbloom(f);
					break;
				}
		}
	}
	else
	{
		/* refused: only with an input or corruption error */
		if (fuzz_last_sqlstate != ERRCODE_INVALID_TEXT_REPRESENTATION &&
			fuzz_last_sqlstate != ERRCODE_INVALID_BINARY_REPRESENTATION &&
			fuzz_last_sqlstate != ERRCODE_DATA_CORRUPTED &&
			fuzz_last_sqlstate != ERRCODE_PROGRAM_LIMIT_EXCEEDED &&
			fuzz_last_sqlstate != ERRCODE_INVALID_PARAMETER_VALUE)
			abort();
	}
	fuzz_free_all();
	return 0;
}
