/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  The bloom type: a classic Bloom filter (Bloom 1970) of m bits probed
 *	  k times per element.  Its layout, validation, text and binary I/O and
 *	  the scalar SQL functions.
 *
 * A filter never gives a false negative: once added, an element always
 * tests present.  It answers "present" for an absent element with
 * probability (1 - e^(-kn/m))^k after n distinct insertions, which grows
 * towards 1 as the filter fills; see sizing.c for choosing m and k.
 *
 * Scalar functions never write into their input: bloom_add returns a new
 * value.  Code that adds many elements (the aggregates, the window
 * function) keeps one filter in memory and mutates it in place instead.
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

#include "bloom.h"
#include "sizing.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(bloom_in);
PG_FUNCTION_INFO_V1(bloom_out);
PG_FUNCTION_INFO_V1(bloom_recv);
PG_FUNCTION_INFO_V1(bloom_send);
PG_FUNCTION_INFO_V1(bloom_empty);
PG_FUNCTION_INFO_V1(bloom_sized);
PG_FUNCTION_INFO_V1(bloom_add);
PG_FUNCTION_INFO_V1(bloom_add_int8);
PG_FUNCTION_INFO_V1(bloom_contains);
PG_FUNCTION_INFO_V1(bloom_contains_int8);
PG_FUNCTION_INFO_V1(bloom_contained_by);
PG_FUNCTION_INFO_V1(bloom_contained_by_int8);
PG_FUNCTION_INFO_V1(bloom_union);
PG_FUNCTION_INFO_V1(bloom_intersect);
PG_FUNCTION_INFO_V1(bloom_eq);
PG_FUNCTION_INFO_V1(bloom_ne);
PG_FUNCTION_INFO_V1(bloom_cardinality);
PG_FUNCTION_INFO_V1(bloom_fpr);
PG_FUNCTION_INFO_V1(bloom_info);

/*
 * Every loop over a filter's words checks for interrupts once per this many
 * words (8 MB, a few milliseconds of work), so that statement_timeout and
 * pg_cancel_backend stop a 1 GB filter's loop at once rather than when it
 * ends, at no measurable cost.
 */
#define BLOOM_WORDS_PER_INTERRUPT_CHECK	(UINT64CONST(1) << 20)

/*
 * Allocate an empty filter in CurrentMemoryContext: in the empty form
 * (header only), or materialized with its zeroed words, ready for
 * bloom_add_hash.  The parameters are checked before anything is
 * allocated.
 */
Bloom
bloom_new(int64 bits, int32 hashes, uint64 seed, bool materialized)
{
	Bloom		filter;
	Size		size;

	bloom_check_bits(bits);
	sbf_check_hashes(hashes);

	size = materialized ? BLOOM_SIZE(bits) : BLOOM_HEADER_SIZE;
	filter = (Bloom) sbf_palloc0(size);
	SET_VARSIZE(filter, size);
	filter->magic = SBF_MAGIC_BLOOM;
	filter->version = SBF_BLOOM_VERSION;
	filter->hashes = (uint16) hashes;
	filter->flags = materialized ? 0 : BLOOM_FLAG_EMPTY;
	filter->bits = (uint64) bits;
	filter->seed = seed;
	return filter;
}

/* The filter bloom_sized() describes: optimal m and k for (n, p) */
Bloom
bloom_new_sized(int64 capacity, double fpr, uint64 seed, bool materialized)
{
	uint64		bits = bloom_value_bits_for(capacity, fpr);

	return bloom_new((int64) bits, bloom_hashes_for(bits, capacity), seed,
					 materialized);
}

/*
 * Check every field of a value against its length.  Constant time: it is
 * run on every value read from a table, not only on input, so that a
 * corrupted stored value is an ERROR rather than a read past its end.
 */
void
bloom_validate(const BloomData *filter, int sqlstate)
{
	Size		size = VARSIZE(filter);

	sbf_check_magic((const struct varlena *) filter, SBF_MAGIC_BLOOM,
					SBF_BLOOM_VERSION, "bloom", sqlstate);

	if (size < BLOOM_HEADER_SIZE)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("The value is %zu bytes long, shorter than the %zu-byte header.",
						   size - VARHDRSZ, BLOOM_HEADER_SIZE - VARHDRSZ)));
	if (filter->hashes < 1 || filter->hashes > SBF_MAX_HASHES)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("The number of hashes is %u, outside 1..%d.",
						   (unsigned) filter->hashes, SBF_MAX_HASHES)));
	if ((filter->flags & ~BLOOM_LAYOUT_FLAGS_EMPTY) != 0)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("Unknown flags 0x%x are set.",
						   (unsigned) (filter->flags & ~BLOOM_LAYOUT_FLAGS_EMPTY))));
	if ((filter->flags & (BLOOM_FLAG_LINES | BLOOM_FLAG_BLOCKED)) == BLOOM_FLAG_LINES)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("The line layout (flag 0x%x) is set without the blocked layout (flag 0x%x).",
						   BLOOM_FLAG_LINES, BLOOM_FLAG_BLOCKED)));
	if ((filter->flags & (BLOOM_FLAG_PENDING_LINES | BLOOM_FLAG_LINES)) == BLOOM_FLAG_PENDING_LINES)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("The pending line layout (flag 0x%x) is set without the line layout (flag 0x%x).",
						   BLOOM_FLAG_PENDING_LINES, BLOOM_FLAG_LINES)));
	if (filter->bits < 1 || filter->bits > BLOOM_MAX_BITS)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("The number of bits is " UINT64_FORMAT ", outside 1.." UINT64_FORMAT ".",
						   filter->bits, BLOOM_MAX_BITS)));
	if ((filter->flags & BLOOM_FLAG_BLOCKED) != 0 &&
		filter->bits % SBF_BLOCK_BITS != 0)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("A blocked filter has a whole number of blocks of " UINT64_FORMAT " bits, but it has " UINT64_FORMAT " bits.",
						   SBF_BLOCK_BITS, filter->bits)));
	if (BLOOM_IS_EMPTY(filter))
	{
		if (size != BLOOM_HEADER_SIZE)
			ereport(ERROR,
					(errcode(sqlstate),
					 errmsg("invalid bloom value"),
					 errdetail("An empty filter takes %zu bytes, but the value has %zu.",
							   BLOOM_HEADER_SIZE - VARHDRSZ, size - VARHDRSZ)));
		return;
	}
	if (size != BLOOM_SIZE(filter->bits))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("A filter of " UINT64_FORMAT " bits takes %zu bytes, but the value has %zu.",
						   filter->bits, BLOOM_SIZE(filter->bits) - VARHDRSZ,
						   size - VARHDRSZ)));
	if (filter->bits % 64 != 0 &&
		(filter->words[filter->bits / 64] >> (filter->bits % 64)) != 0)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloom value"),
				 errdetail("Bits past the end of the filter are set.")));
}

/* Detoast a bloom argument for reading, and check it */
Bloom
bloom_from_datum(Datum datum)
{
	Bloom		filter = (Bloom) PG_DETOAST_DATUM(datum);

	bloom_validate(filter, ERRCODE_DATA_CORRUPTED);
	return filter;
}

/*
 * A private, writable, materialized copy of a bloom argument in
 * CurrentMemoryContext: one allocation of the filter's full size.
 */
Bloom
bloom_copy_datum(Datum datum)
{
	Bloom		filter = bloom_from_datum(datum);

	if (BLOOM_IS_EMPTY(filter))
	{
		Bloom		copy = bloom_new((int64) filter->bits, filter->hashes,
									 filter->seed, true);

		copy->flags |= filter->flags & BLOOM_LAYOUT_FLAGS;
		return copy;
	}
	/* detoasting already made a private copy, or the value is in memory */
	if ((Pointer) filter != DatumGetPointer(datum))
		return filter;
	return (Bloom) sbf_value_copy((struct varlena *) filter);
}

/* For messages: the layout of a value */
static const char *
bloom_layout_name(const BloomData *filter)
{
	if ((filter->flags & BLOOM_FLAG_PENDING_LINES) != 0)
		return "pending line";
	if ((filter->flags & BLOOM_FLAG_LINES) != 0)
		return "line";
	if ((filter->flags & BLOOM_FLAG_BLOCKED) != 0)
		return "blocked";
	return "classic";
}

void
bloom_check_compatible(const BloomData *a, const BloomData *b,
					   const char *operation)
{
	if ((a->flags & BLOOM_LAYOUT_FLAGS) != (b->flags & BLOOM_LAYOUT_FLAGS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot %s bloom filters with different parameters", operation),
				 errdetail("One has the %s layout, the other the %s layout.",
						   bloom_layout_name(a), bloom_layout_name(b)),
				 errhint("Only filters made with the same bits, hashes, seed and layout can be combined.")));
	if (a->bits != b->bits || a->hashes != b->hashes || a->seed != b->seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot %s bloom filters with different parameters", operation),
				 errdetail("One has bits " UINT64_FORMAT ", hashes %u, seed " INT64_FORMAT "; the other bits " UINT64_FORMAT ", hashes %u, seed " INT64_FORMAT ".",
						   a->bits, (unsigned) a->hashes, (int64) a->seed,
						   b->bits, (unsigned) b->hashes, (int64) b->seed),
				 errhint("Only filters made with the same bits, hashes and seed can be combined.")));
}

/* target |= source; the caller has checked compatibility */
void
bloom_union_into(Bloom target, const BloomData *source)
{
	uint64		nwords = BLOOM_WORDS(target->bits);
	uint64		start;
	uint64		i;

	if (BLOOM_IS_EMPTY(source))
		return;
	for (start = 0; start < nwords; start += BLOOM_WORDS_PER_INTERRUPT_CHECK)
	{
		uint64		end = Min(nwords, start + BLOOM_WORDS_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		for (i = start; i < end; i++)
			target->words[i] |= source->words[i];
	}
}

/* Intersect SOURCE into TARGET: same parameters, checked by the caller */
void
bloom_intersect_into(Bloom target, const BloomData *source)
{
	uint64		nwords = BLOOM_WORDS(target->bits);
	uint64		start;
	uint64		i;

	Assert(target->bits == source->bits && target->hashes == source->hashes &&
		   target->seed == source->seed);
	Assert(!BLOOM_IS_EMPTY(target));
	for (start = 0; start < nwords; start += BLOOM_WORDS_PER_INTERRUPT_CHECK)
	{
		uint64		end = Min(nwords, start + BLOOM_WORDS_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		if (BLOOM_IS_EMPTY(source))
			memset(&target->words[start], 0, (end - start) * sizeof(uint64));
		else
			for (i = start; i < end; i++)
				target->words[i] &= source->words[i];
	}
}

uint64
bloom_bits_set(const BloomData *filter)
{
	uint64		nwords = BLOOM_WORDS(filter->bits);
	uint64		count = 0;
	uint64		start;

	if (BLOOM_IS_EMPTY(filter))
		return 0;
	for (start = 0; start < nwords; start += BLOOM_WORDS_PER_INTERRUPT_CHECK)
	{
		uint64		n = Min(nwords - start, BLOOM_WORDS_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		/* a filter's words are aligned, so pg_popcount reads them whole */
		count += pg_popcount((const char *) &filter->words[start],
							 (int) (n * sizeof(uint64)));
	}
	return count;
}

/*
 * Swamidass & Baldi 2007: after n distinct insertions the expected number
 * of set bits X satisfies n = -(m / k) ln(1 - X / m).  A full filter gives
 * infinity: it can no longer tell how much was added.
 */
static double
bloom_estimate_cardinality(const BloomData *filter, uint64 bits_set)
{
	double		m = (double) bloom_usable_bits(filter);
	double		x = (double) bits_set;

	if (x >= m)
		return get_float8_infinity();
	return -(m / filter->hashes) * log1p(-x / m);
}

/* The probability that an absent element tests present now: fill^k */
static double
bloom_current_fpr(const BloomData *filter, uint64 bits_set)
{
	double		fill = (double) bits_set / (double) bloom_usable_bits(filter);

	return pow(fill, filter->hashes);
}

/*
 * Type I/O
 */

Datum
bloom_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	Bloom		filter = (Bloom) sbf_value_from_text(str, "bloom");

	bloom_validate(filter, ERRCODE_INVALID_TEXT_REPRESENTATION);
	PG_RETURN_POINTER(filter);
}

Datum
bloom_out(PG_FUNCTION_ARGS)
{
	Bloom		filter = bloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_CSTRING(sbf_value_to_text((struct varlena *) filter));
}

Datum
bloom_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	Bloom		filter = (Bloom) sbf_value_from_binary(buf, "bloom");

	bloom_validate(filter, ERRCODE_INVALID_BINARY_REPRESENTATION);
	PG_RETURN_POINTER(filter);
}

Datum
bloom_send(PG_FUNCTION_ARGS)
{
	Bloom		filter = bloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_BYTEA_P(sbf_value_to_binary((struct varlena *) filter));
}

/*
 * Constructors
 */

/* bloom_empty(bits bigint, hashes int, seed bigint DEFAULT 0), in the empty form */
Datum
bloom_empty(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(bloom_new(PG_GETARG_INT64(0), PG_GETARG_INT32(1),
								(uint64) PG_GETARG_INT64(2), false));
}

/* bloom_sized(capacity bigint, fpr float8, seed bigint DEFAULT 0), likewise */
Datum
bloom_sized(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(bloom_new_sized(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1),
									  (uint64) PG_GETARG_INT64(2), false));
}

/*
 * Adding and testing elements.  Each SQL function has a text/bytea entry
 * (both are varlena bytes) and a bigint entry.
 *
 * bloom_add is not strict: adding NULL returns the filter unchanged, so
 * that "UPDATE ... SET f = bloom_add(f, url)" never loses a filter to a
 * NULL url.
 */
static Datum
bloom_add_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	Bloom		filter;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	filter = bloom_copy_datum(PG_GETARG_DATUM(0));
	bloom_add_hash(filter, sbf_hash_element(PG_GETARG_DATUM(1), kind,
											filter->seed));
	PG_RETURN_POINTER(filter);
}

Datum
bloom_add(PG_FUNCTION_ARGS)
{
	return bloom_add_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
bloom_add_int8(PG_FUNCTION_ARGS)
{
	return bloom_add_common(fcinfo, SBF_ELEMENT_INT8);
}

/*
 * The filter is typically the same stored value on every row, so it is
 * detoasted once per query (sbf_detoast_arg_cached), not once per row.
 */
static bool
bloom_contains_common(FunctionCallInfo fcinfo, int filter_arg, int value_arg,
					  SbfElementKind kind)
{
	Bloom		filter = (Bloom) sbf_detoast_arg_cached(fcinfo, filter_arg);

	bloom_validate(filter, ERRCODE_DATA_CORRUPTED);
	return bloom_test_hash(filter, sbf_hash_element(PG_GETARG_DATUM(value_arg),
													kind, filter->seed));
}

Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bloom_contains_common(fcinfo, 0, 1, sbf_varlena_kind(fcinfo, 1)));
}

Datum
bloom_contains_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bloom_contains_common(fcinfo, 0, 1, SBF_ELEMENT_INT8));
}

/* element <@ filter: the commutator of filter @> element */
Datum
bloom_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bloom_contains_common(fcinfo, 1, 0, sbf_varlena_kind(fcinfo, 0)));
}

Datum
bloom_contained_by_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bloom_contains_common(fcinfo, 1, 0, SBF_ELEMENT_INT8));
}

/*
 * Set operations.  The union of two filters is exactly the filter of the
 * union of their elements; the intersection contains every element of the
 * intersection but may have more bits set than a filter built from it.
 */
Datum
bloom_union(PG_FUNCTION_ARGS)
{
	Bloom		a = bloom_copy_datum(PG_GETARG_DATUM(0));
	Bloom		b = bloom_from_datum(PG_GETARG_DATUM(1));

	bloom_check_compatible(a, b, "union");
	bloom_union_into(a, b);
	PG_RETURN_POINTER(a);
}

Datum
bloom_intersect(PG_FUNCTION_ARGS)
{
	Bloom		a = bloom_copy_datum(PG_GETARG_DATUM(0));
	Bloom		b = bloom_from_datum(PG_GETARG_DATUM(1));

	bloom_check_compatible(a, b, "intersect");
	bloom_intersect_into(a, b);
	PG_RETURN_POINTER(a);
}

/*
 * Two filters are equal when they have the same parameters and bits,
 * whether an empty one is stored in the empty form or not.
 */
static bool
bloom_equal(Datum a_datum, Datum b_datum)
{
	Bloom		a = bloom_from_datum(a_datum);
	Bloom		b = bloom_from_datum(b_datum);
	uint64		nwords;
	uint64		start;

	if (a->bits != b->bits || a->hashes != b->hashes || a->seed != b->seed ||
		(a->flags & BLOOM_LAYOUT_FLAGS) != (b->flags & BLOOM_LAYOUT_FLAGS))
		return false;
	if (BLOOM_IS_EMPTY(a) || BLOOM_IS_EMPTY(b))
		return bloom_bits_set(a) == 0 && bloom_bits_set(b) == 0;
	nwords = BLOOM_WORDS(a->bits);
	for (start = 0; start < nwords; start += BLOOM_WORDS_PER_INTERRUPT_CHECK)
	{
		uint64		n = Min(nwords - start, BLOOM_WORDS_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		if (memcmp(&a->words[start], &b->words[start], n * sizeof(uint64)) != 0)
			return false;
	}
	return true;
}

Datum
bloom_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bloom_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

Datum
bloom_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!bloom_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

/*
 * Statistics
 */

Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	Bloom		filter = bloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_FLOAT8(bloom_estimate_cardinality(filter, bloom_bits_set(filter)));
}

Datum
bloom_fpr(PG_FUNCTION_ARGS)
{
	Bloom		filter = bloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_FLOAT8(bloom_current_fpr(filter, bloom_bits_set(filter)));
}

Datum
bloom_info(PG_FUNCTION_ARGS)
{
	Bloom		filter = bloom_from_datum(PG_GETARG_DATUM(0));
	uint64		bits_set = bloom_bits_set(filter);
	double		cardinality = bloom_estimate_cardinality(filter, bits_set);
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"type\": \"bloom\", \"format_version\": %u",
					 (unsigned) filter->version);
	appendStringInfo(&buf, ", \"bits\": " UINT64_FORMAT, filter->bits);
	appendStringInfo(&buf, ", \"hashes\": %u", (unsigned) filter->hashes);
	appendStringInfo(&buf, ", \"seed\": " INT64_FORMAT, (int64) filter->seed);
	appendStringInfo(&buf, ", \"bits_set\": " UINT64_FORMAT, bits_set);
	appendStringInfo(&buf, ", \"fill\": %s",
					 float8out_internal((double) bits_set / (double) bloom_usable_bits(filter)));
	/* JSON has no infinity: a saturated filter has no estimate */
	appendStringInfo(&buf, ", \"estimated_cardinality\": %s",
					 isinf(cardinality) ? "null" : float8out_internal(cardinality));
	appendStringInfo(&buf, ", \"estimated_fpr\": %s",
					 float8out_internal(bloom_current_fpr(filter, bits_set)));
	appendStringInfo(&buf, ", \"size_bytes\": %u}", (unsigned) VARSIZE(filter));

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}
