/*-------------------------------------------------------------------------
 *
 * stablebloom.c
 *	  The stablebloom type: a Stable Bloom filter (Deng & Rafiei 2006) for
 *	  endless streams.  Its layout, validation, text and binary I/O and the
 *	  scalar SQL functions.
 *
 * m cells hold 0..Max.  Each insertion first decrements P cells, then sets
 * the element's k cells to Max (stablebloom.h).  Old elements fade out, so
 * the fraction of zero cells converges to a stable point and the false-
 * positive rate stays bounded however long the stream, at the price of
 * false negatives: an element not seen for long enough is forgotten.  With
 * Max = 1 and P = 0 it is a Bloom filter.  The formulas are in sizing.c.
 *
 * The PRNG that picks the decremented cells is part of the value, so the
 * same inputs in the same order always give the same filter and verdicts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <math.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"

#include "sizing.h"
#include "stablebloom.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(stablebloom_in);
PG_FUNCTION_INFO_V1(stablebloom_out);
PG_FUNCTION_INFO_V1(stablebloom_recv);
PG_FUNCTION_INFO_V1(stablebloom_send);
PG_FUNCTION_INFO_V1(stablebloom_empty);
PG_FUNCTION_INFO_V1(stablebloom_sized);
PG_FUNCTION_INFO_V1(stablebloom_add);
PG_FUNCTION_INFO_V1(stablebloom_add_int8);
PG_FUNCTION_INFO_V1(stablebloom_contains);
PG_FUNCTION_INFO_V1(stablebloom_contains_int8);
PG_FUNCTION_INFO_V1(stablebloom_contained_by);
PG_FUNCTION_INFO_V1(stablebloom_contained_by_int8);
PG_FUNCTION_INFO_V1(stablebloom_eq);
PG_FUNCTION_INFO_V1(stablebloom_ne);
PG_FUNCTION_INFO_V1(stablebloom_fpr_current);
PG_FUNCTION_INFO_V1(stablebloom_info);

/*
 * Every loop over a filter's cells or words checks for interrupts once per
 * this many cells (at most 4 MB, a few milliseconds of work) or 8 MB, so
 * that statement_timeout and pg_cancel_backend stop the loops over a 1 GB
 * filter at once rather than when they end, at no measurable cost.
 */
#define STABLEBLOOM_CELLS_PER_INTERRUPT_CHECK	(UINT64CONST(1) << 22)
#define STABLEBLOOM_BYTES_PER_INTERRUPT_CHECK	((Size) 1 << 23)

/* The fewest bits that hold 0..max */
int
stablebloom_cell_bits(int max)
{
	int			bits = 1;

	while (((1 << bits) - 1) < max)
		bits++;
	return bits;
}

/*
 * Allocate an empty filter in CurrentMemoryContext, after checking every
 * parameter: in the empty form (header only) or materialized, with its
 * zeroed cells.  The PRNG starts from the seed.
 */
StableBloom
stablebloom_new(int64 cells, int32 hashes, int32 max, int64 decrements,
				uint64 seed, bool materialized)
{
	StableBloom filter;
	int			cell_bits;
	Size		size;

	stablebloom_check_params(cells, hashes, max);
	cell_bits = stablebloom_cell_bits(max);
	if ((uint64) cells > STABLEBLOOM_MAX_CELLS(cell_bits))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a stable bloom filter of " INT64_FORMAT " cells of %d bits is too large",
						cells, cell_bits),
				 errdetail("A stablebloom value holds at most " UINT64_FORMAT " cells of %d bits (1 GB).",
						   STABLEBLOOM_MAX_CELLS(cell_bits), cell_bits)));
	stablebloom_check_decrements(cells, (double) decrements);

	size = materialized ? STABLEBLOOM_SIZE(cells, cell_bits) : STABLEBLOOM_HEADER_SIZE;
	filter = (StableBloom) sbf_palloc0(size);
	SET_VARSIZE(filter, size);
	filter->magic = SBF_MAGIC_STABLEBLOOM;
	filter->version = SBF_STABLEBLOOM_VERSION;
	filter->hashes = (uint16) hashes;
	filter->max = (uint8) max;
	filter->cell_bits = (uint8) cell_bits;
	filter->flags = materialized ? 0 : STABLEBLOOM_FLAG_EMPTY;
	filter->decrements = (uint64) decrements;
	filter->cells = (uint64) cells;
	filter->seed = seed;
	filter->insertions = 0;
	filter->prng = seed;
	return filter;
}

/*
 * Check the header against the value's length, in constant time: run on
 * every value read from a table.  Any value that passes can be used
 * without reading or writing outside it.
 */
static void
stablebloom_validate_header(const StableBloomData *filter, int sqlstate)
{
	Size		size = VARSIZE(filter);

	sbf_check_magic((const struct varlena *) filter, SBF_MAGIC_STABLEBLOOM,
					SBF_STABLEBLOOM_VERSION, "stablebloom", sqlstate);

#define STABLEBLOOM_INVALID(...) \
	ereport(ERROR, \
			(errcode(sqlstate), \
			 errmsg("invalid stablebloom value"), \
			 errdetail(__VA_ARGS__)))

	if (size < STABLEBLOOM_HEADER_SIZE)
		STABLEBLOOM_INVALID("The value is %zu bytes long, shorter than the %zu-byte header.",
							size - VARHDRSZ, STABLEBLOOM_HEADER_SIZE - VARHDRSZ);
	if (filter->hashes < 1 || filter->hashes > SBF_MAX_HASHES)
		STABLEBLOOM_INVALID("The number of hashes is %u, outside 1..%d.",
							(unsigned) filter->hashes, SBF_MAX_HASHES);
	if (filter->max < 1)
		STABLEBLOOM_INVALID("The max is 0, outside 1..%d.", STABLEBLOOM_MAX_MAX);
	if (filter->cell_bits != stablebloom_cell_bits(filter->max))
		STABLEBLOOM_INVALID("Cells of max %u take %d bits, but the value says %u.",
							(unsigned) filter->max, stablebloom_cell_bits(filter->max),
							(unsigned) filter->cell_bits);
	if ((filter->flags & ~(STABLEBLOOM_FLAG_EMPTY | STABLEBLOOM_FLAG_BLOCKED)) != 0)
		STABLEBLOOM_INVALID("Unknown flags 0x%x are set.",
							(unsigned) (filter->flags & ~(STABLEBLOOM_FLAG_EMPTY | STABLEBLOOM_FLAG_BLOCKED)));
	if (filter->cells <= filter->hashes ||
		filter->cells > STABLEBLOOM_MAX_CELLS(filter->cell_bits))
		STABLEBLOOM_INVALID("The number of cells is " UINT64_FORMAT ", outside %u.." UINT64_FORMAT ".",
							filter->cells, (unsigned) filter->hashes + 1,
							STABLEBLOOM_MAX_CELLS(filter->cell_bits));
	if (filter->decrements > filter->cells)
		STABLEBLOOM_INVALID("The number of decrements is " UINT64_FORMAT ", more than the " UINT64_FORMAT " cells.",
							filter->decrements, filter->cells);
	if ((filter->flags & STABLEBLOOM_FLAG_BLOCKED) != 0 &&
		(filter->cells % STABLEBLOOM_BLOCK_CELLS(filter) != 0 ||
		 filter->decrements > STABLEBLOOM_BLOCK_CELLS(filter)))
		STABLEBLOOM_INVALID("A blocked filter has a whole number of blocks of " UINT64_FORMAT " cells and at most that many decrements, but it has " UINT64_FORMAT " cells and " UINT64_FORMAT " decrements.",
							STABLEBLOOM_BLOCK_CELLS(filter), filter->cells,
							filter->decrements);
	if (STABLEBLOOM_IS_EMPTY(filter))
	{
		if (size != STABLEBLOOM_HEADER_SIZE)
			STABLEBLOOM_INVALID("An empty filter takes %zu bytes, but the value has %zu.",
								STABLEBLOOM_HEADER_SIZE - VARHDRSZ, size - VARHDRSZ);
	}
	else if (size != STABLEBLOOM_SIZE(filter->cells, filter->cell_bits))
		STABLEBLOOM_INVALID("A filter of " UINT64_FORMAT " cells of %u bits takes %zu bytes, but the value has %zu.",
							filter->cells, (unsigned) filter->cell_bits,
							STABLEBLOOM_SIZE(filter->cells, filter->cell_bits) - VARHDRSZ,
							size - VARHDRSZ);
}

/*
 * Full validation, for input: the header, then every cell within 0..max
 * and no bit set past the last cell.  Linear in the size of the filter.
 */
void
stablebloom_validate(const StableBloomData *filter, int sqlstate)
{
	uint64		used_bits;
	uint64		start;
	uint64		i;

	stablebloom_validate_header(filter, sqlstate);
	if (STABLEBLOOM_IS_EMPTY(filter))
		return;

	used_bits = filter->cells * filter->cell_bits;
	if (used_bits % 64 != 0 &&
		(filter->words[used_bits / 64] >> (used_bits % 64)) != 0)
		STABLEBLOOM_INVALID("Bits past the last cell are set.");

	/* with cell_bits fewest for max, only a non-power-of-two max can overflow */
	if (((filter->max + 1) & filter->max) != 0)
	{
		for (start = 0; start < filter->cells; start += STABLEBLOOM_CELLS_PER_INTERRUPT_CHECK)
		{
			uint64		end = Min(filter->cells, start + STABLEBLOOM_CELLS_PER_INTERRUPT_CHECK);

			CHECK_FOR_INTERRUPTS();
			for (i = start; i < end; i++)
			{
				uint32		v = stablebloom_get(filter, i);

				if (v > filter->max)
					STABLEBLOOM_INVALID("Cell " UINT64_FORMAT " holds %u, more than the max %u.",
										i, v, (unsigned) filter->max);
			}
		}
	}
}

/* Detoast a stablebloom argument for reading, and check its header */
StableBloom
stablebloom_from_datum(Datum datum)
{
	StableBloom filter = (StableBloom) PG_DETOAST_DATUM(datum);

	stablebloom_validate_header(filter, ERRCODE_DATA_CORRUPTED);
	return filter;
}

/*
 * A private, writable, materialized copy of a stablebloom argument in
 * CurrentMemoryContext: one allocation of the filter's full size, which
 * keeps the insertion count and the PRNG state of the argument.
 */
StableBloom
stablebloom_copy_datum(Datum datum)
{
	StableBloom filter = stablebloom_from_datum(datum);

	if (STABLEBLOOM_IS_EMPTY(filter))
	{
		Size		size = STABLEBLOOM_SIZE(filter->cells, filter->cell_bits);
		StableBloom copy = (StableBloom) sbf_palloc0(size);

		memcpy(copy, filter, STABLEBLOOM_HEADER_SIZE);
		SET_VARSIZE(copy, size);
		copy->flags &= ~STABLEBLOOM_FLAG_EMPTY;
		return copy;
	}
	/* detoasting already made a private copy, or the value is in memory */
	if ((Pointer) filter != DatumGetPointer(datum))
		return filter;
	return (StableBloom) sbf_value_copy((struct varlena *) filter);
}

static uint64
stablebloom_zero_cells(const StableBloomData *filter)
{
	uint64		zeros = 0;
	uint64		start;
	uint64		i;

	if (STABLEBLOOM_IS_EMPTY(filter))
		return filter->cells;
	for (start = 0; start < filter->cells; start += STABLEBLOOM_CELLS_PER_INTERRUPT_CHECK)
	{
		uint64		end = Min(filter->cells, start + STABLEBLOOM_CELLS_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		for (i = start; i < end; i++)
			zeros += (stablebloom_get(filter, i) == 0);
	}
	return zeros;
}

/*
 * Type I/O
 */

Datum
stablebloom_in(PG_FUNCTION_ARGS)
{
	StableBloom filter = (StableBloom)
		sbf_value_from_text(PG_GETARG_CSTRING(0), "stablebloom");

	stablebloom_validate(filter, ERRCODE_INVALID_TEXT_REPRESENTATION);
	PG_RETURN_POINTER(filter);
}

Datum
stablebloom_out(PG_FUNCTION_ARGS)
{
	StableBloom filter = stablebloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_CSTRING(sbf_value_to_text((struct varlena *) filter));
}

Datum
stablebloom_recv(PG_FUNCTION_ARGS)
{
	StableBloom filter = (StableBloom)
		sbf_value_from_binary((StringInfo) PG_GETARG_POINTER(0), "stablebloom");

	stablebloom_validate(filter, ERRCODE_INVALID_BINARY_REPRESENTATION);
	PG_RETURN_POINTER(filter);
}

Datum
stablebloom_send(PG_FUNCTION_ARGS)
{
	StableBloom filter = stablebloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_BYTEA_P(sbf_value_to_binary((struct varlena *) filter));
}

/*
 * Constructors
 */

/* stablebloom_empty(cells bigint, hashes int, max int, decrements int, seed bigint DEFAULT 0) */
Datum
stablebloom_empty(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(stablebloom_new(PG_GETARG_INT64(0), PG_GETARG_INT32(1),
									  PG_GETARG_INT32(2), PG_GETARG_INT32(3),
									  (uint64) PG_GETARG_INT64(4), false));
}

/*
 * stablebloom_sized(cells bigint, fpr float8, hashes int, max int DEFAULT 1,
 *					 seed bigint DEFAULT 0): P from the target fpr
 */
Datum
stablebloom_sized(PG_FUNCTION_ARGS)
{
	int64		cells = PG_GETARG_INT64(0);
	double		fpr = PG_GETARG_FLOAT8(1);
	int32		hashes = PG_GETARG_INT32(2);
	int32		max = PG_GETARG_INT32(3);

	PG_RETURN_POINTER(stablebloom_new(cells, hashes, max,
									  stablebloom_decrements_for(fpr, hashes, cells, max),
									  (uint64) PG_GETARG_INT64(4), false));
}

/*
 * Adding and testing.  stablebloom_add returns a new filter (NULL adds
 * nothing, and does not advance the PRNG); code that inserts many elements
 * keeps one filter and mutates it (stablebloom_agg, is_duplicate).
 */
static Datum
stablebloom_add_common(FunctionCallInfo fcinfo, SbfElementKind kind)
{
	StableBloom filter;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	filter = stablebloom_copy_datum(PG_GETARG_DATUM(0));
	stablebloom_add_hash(filter, sbf_hash_element(PG_GETARG_DATUM(1), kind,
												  filter->seed));
	PG_RETURN_POINTER(filter);
}

Datum
stablebloom_add(PG_FUNCTION_ARGS)
{
	return stablebloom_add_common(fcinfo, sbf_varlena_kind(fcinfo, 1));
}

Datum
stablebloom_add_int8(PG_FUNCTION_ARGS)
{
	return stablebloom_add_common(fcinfo, SBF_ELEMENT_INT8);
}

/* Detoasted once per query for a stored filter, as for bloom */
static bool
stablebloom_contains_common(FunctionCallInfo fcinfo, int filter_arg,
							int value_arg, SbfElementKind kind)
{
	StableBloom filter = (StableBloom) sbf_detoast_arg_cached(fcinfo, filter_arg);

	stablebloom_validate_header(filter, ERRCODE_DATA_CORRUPTED);
	return stablebloom_test_hash(filter,
								 sbf_hash_element(PG_GETARG_DATUM(value_arg),
												  kind, filter->seed));
}

Datum
stablebloom_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(stablebloom_contains_common(fcinfo, 0, 1, sbf_varlena_kind(fcinfo, 1)));
}

Datum
stablebloom_contains_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(stablebloom_contains_common(fcinfo, 0, 1, SBF_ELEMENT_INT8));
}

Datum
stablebloom_contained_by(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(stablebloom_contains_common(fcinfo, 1, 0, sbf_varlena_kind(fcinfo, 0)));
}

Datum
stablebloom_contained_by_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(stablebloom_contains_common(fcinfo, 1, 0, SBF_ELEMENT_INT8));
}

/*
 * Equal: same parameters and layout, insertion count, PRNG state and cells, whether
 * all-zero cells are stored in the empty form or not
 */
static bool
stablebloom_equal(Datum a_datum, Datum b_datum)
{
	StableBloom a = stablebloom_from_datum(a_datum);
	StableBloom b = stablebloom_from_datum(b_datum);
	Size		size;
	Size		done;

	if (a->hashes != b->hashes || a->max != b->max || a->decrements != b->decrements ||
		a->cells != b->cells || a->seed != b->seed || a->insertions != b->insertions ||
		a->prng != b->prng ||
		(a->flags & STABLEBLOOM_FLAG_BLOCKED) != (b->flags & STABLEBLOOM_FLAG_BLOCKED))
		return false;
	if (STABLEBLOOM_IS_EMPTY(a) || STABLEBLOOM_IS_EMPTY(b))
		return stablebloom_zero_cells(a) == a->cells && stablebloom_zero_cells(b) == b->cells;
	size = STABLEBLOOM_WORDS(a->cells, a->cell_bits) * sizeof(uint64);
	for (done = 0; done < size; done += STABLEBLOOM_BYTES_PER_INTERRUPT_CHECK)
	{
		CHECK_FOR_INTERRUPTS();
		if (memcmp((const char *) a->words + done, (const char *) b->words + done,
				   Min(STABLEBLOOM_BYTES_PER_INTERRUPT_CHECK, size - done)) != 0)
			return false;
	}
	return true;
}

Datum
stablebloom_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(stablebloom_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

Datum
stablebloom_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!stablebloom_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

/*
 * Statistics
 */

/* The current false-positive rate: (1 - zero fraction)^k */
static double
stablebloom_current_fpr(const StableBloomData *filter, uint64 zeros)
{
	return pow(1.0 - (double) zeros / (double) filter->cells, filter->hashes);
}

/* stablebloom_fpr(stablebloom): the rate now, not at the stable point */
Datum
stablebloom_fpr_current(PG_FUNCTION_ARGS)
{
	StableBloom filter = stablebloom_from_datum(PG_GETARG_DATUM(0));

	PG_RETURN_FLOAT8(stablebloom_current_fpr(filter, stablebloom_zero_cells(filter)));
}

Datum
stablebloom_info(PG_FUNCTION_ARGS)
{
	StableBloom filter = stablebloom_from_datum(PG_GETARG_DATUM(0));
	uint64		zeros = stablebloom_zero_cells(filter);
	double		stable_zeros;
	StringInfoData buf;

	stable_zeros = stablebloom_stable_zeros_for((int64) filter->cells, filter->hashes,
												(double) filter->decrements,
												filter->max);

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"type\": \"stablebloom\", \"format_version\": %u",
					 (unsigned) filter->version);
	appendStringInfo(&buf, ", \"cells\": " UINT64_FORMAT, filter->cells);
	appendStringInfo(&buf, ", \"hashes\": %u", (unsigned) filter->hashes);
	appendStringInfo(&buf, ", \"max\": %u", (unsigned) filter->max);
	appendStringInfo(&buf, ", \"decrements\": " UINT64_FORMAT, filter->decrements);
	appendStringInfo(&buf, ", \"seed\": " INT64_FORMAT, (int64) filter->seed);
	appendStringInfo(&buf, ", \"cell_bits\": %u", (unsigned) filter->cell_bits);
	appendStringInfo(&buf, ", \"insertions\": " UINT64_FORMAT, filter->insertions);
	appendStringInfo(&buf, ", \"zero_cells\": " UINT64_FORMAT, zeros);
	appendStringInfo(&buf, ", \"zero_fraction\": %s",
					 float8out_internal((double) zeros / (double) filter->cells));
	appendStringInfo(&buf, ", \"estimated_fpr\": %s",
					 float8out_internal(stablebloom_current_fpr(filter, zeros)));
	appendStringInfo(&buf, ", \"stable_zeros\": %s", float8out_internal(stable_zeros));
	appendStringInfo(&buf, ", \"stable_fpr\": %s",
					 float8out_internal(pow(1.0 - stable_zeros, filter->hashes)));
	appendStringInfo(&buf, ", \"size_bytes\": %u}", (unsigned) VARSIZE(filter));

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}
