/*-------------------------------------------------------------------------
 *
 * value_io.c
 *	  Text and binary framing shared by the sbf types, and the bool[]
 *	  answers of the functions taking arrays (shared_test_and_add,
 *	  sieve_contains).
 *
 * The binary form (send/recv, binary COPY) of a value is its payload: the
 * bytes after the varlena header, laid out as format.h declares.  The text
 * form is the same bytes in hexadecimal behind "\x", as bytea prints, so
 * text and binary round trips give identical values and one validation
 * routine per type serves both.  Only the framing lives here; each type
 * checks its own fields.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/detoast.h"
#include "catalog/pg_type_d.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "format.h"
#include "value_io.h"

static const char hexdigits[] = "0123456789abcdef";

/*
 * A value may be 1 GB: every loop and copy over its bytes checks for
 * interrupts once per this many bytes (a few milliseconds of work), so that
 * statement_timeout and pg_cancel_backend stop it at once.
 */
#define SBF_BYTES_PER_INTERRUPT_CHECK	((Size) 1 << 23)

static inline int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse "\x<hex digits>" into a new varlena.  Only the framing is checked
 * here; the caller validates the payload.
 */
struct varlena *
sbf_value_from_text(const char *str, const char *typname)
{
	size_t		len = 0;
	size_t		ndigits;
	size_t		nbytes;
	struct varlena *result;
	uint8	   *out;
	size_t		start;
	size_t		i;

	/* strlen, interruptible: the text of a 512 MB value is 1 GB */
	for (;;)
	{
		size_t		n = strnlen(str + len, SBF_BYTES_PER_INTERRUPT_CHECK);

		len += n;
		if (n < SBF_BYTES_PER_INTERRUPT_CHECK)
			break;
		CHECK_FOR_INTERRUPTS();
	}

	if (len < 2 || str[0] != '\\' || str[1] != 'x')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", typname),
				 errdetail("A %s value must start with \"\\x\" followed by hexadecimal digits.",
						   typname)));

	ndigits = len - 2;
	if (ndigits % 2 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", typname),
				 errdetail("The value has an odd number of hexadecimal digits.")));

	nbytes = ndigits / 2;
	if (nbytes > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s value is too large", typname)));

	result = (struct varlena *) palloc(nbytes + VARHDRSZ);
	SET_VARSIZE(result, nbytes + VARHDRSZ);
	out = (uint8 *) VARDATA(result);

	for (start = 0; start < nbytes; start += SBF_BYTES_PER_INTERRUPT_CHECK)
	{
		size_t		end = Min(nbytes, start + SBF_BYTES_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		for (i = start; i < end; i++)
		{
			const char *pair = str + 2 + 2 * i;
			int			hi = hex_value(pair[0]);
			int			lo = hex_value(pair[1]);

			if (hi < 0 || lo < 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						 errmsg("invalid input syntax for type %s", typname),
						 errdetail("Character %zu is not a hexadecimal digit.",
								   (size_t) (pair - str) + (hi < 0 ? 1 : 2))));
			out[i] = (uint8) ((hi << 4) | lo);
		}
	}

	return result;
}

char *
sbf_value_to_text(const struct varlena *value)
{
	size_t		nbytes = VARSIZE_ANY_EXHDR(value);
	const uint8 *in = (const uint8 *) VARDATA_ANY(value);
	char	   *result;
	char	   *out;
	size_t		start;
	size_t		i;

	/* the hex form of a filter over 512 MB does not fit a 1 GB string */
	if (2 + 2 * nbytes + 1 > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("value of %zu bytes is too large for its text form",
						nbytes),
				 errhint("Use binary COPY for filters over 512 MB.")));
	result = palloc(2 + 2 * nbytes + 1);
	out = result;
	*out++ = '\\';
	*out++ = 'x';
	for (start = 0; start < nbytes; start += SBF_BYTES_PER_INTERRUPT_CHECK)
	{
		size_t		end = Min(nbytes, start + SBF_BYTES_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		for (i = start; i < end; i++)
		{
			*out++ = hexdigits[in[i] >> 4];
			*out++ = hexdigits[in[i] & 0x0f];
		}
	}
	*out = '\0';
	return result;
}

/* The rest of the message is the payload */
struct varlena *
sbf_value_from_binary(StringInfo buf, const char *typname)
{
	Size		nbytes = buf->len - buf->cursor;
	struct varlena *result;
	Size		done;

	result = (struct varlena *) palloc(nbytes + VARHDRSZ);
	SET_VARSIZE(result, nbytes + VARHDRSZ);
	for (done = 0; done < nbytes; done += SBF_BYTES_PER_INTERRUPT_CHECK)
	{
		CHECK_FOR_INTERRUPTS();
		pq_copymsgbytes(buf, VARDATA(result) + done,
						(int) Min(SBF_BYTES_PER_INTERRUPT_CHECK, nbytes - done));
	}
	return result;
}

bytea *
sbf_value_to_binary(const struct varlena *value)
{
	const char *data = VARDATA_ANY(value);
	Size		nbytes = VARSIZE_ANY_EXHDR(value);
	StringInfoData buf;
	Size		done;

	pq_begintypsend(&buf);
	enlargeStringInfo(&buf, (int) nbytes);
	for (done = 0; done < nbytes; done += SBF_BYTES_PER_INTERRUPT_CHECK)
	{
		CHECK_FOR_INTERRUPTS();
		pq_sendbytes(&buf, data + done,
					 (int) Min(SBF_BYTES_PER_INTERRUPT_CHECK, nbytes - done));
	}
	return pq_endtypsend(&buf);
}

/*
 * Check that a value is long enough for the common header, is of the
 * expected type and has a format version this build reads.
 */
void
sbf_check_magic(const struct varlena *value, uint32 magic, uint16 version,
				const char *typname, int sqlstate)
{
	const SbfHeader *hdr = (const SbfHeader *) value;

	if (VARSIZE(value) < sizeof(SbfHeader))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid %s value", typname),
				 errdetail("The value is %u bytes long, too short for a header.",
						   (unsigned) (VARSIZE(value) - VARHDRSZ))));
	if (hdr->magic != magic)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid %s value", typname),
				 errdetail("The value does not start with the %s magic number.",
						   typname)));
	if (hdr->version != version)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("unsupported %s format version %u", typname,
						(unsigned) hdr->version),
				 errdetail("This build of sbf reads %s format version %u.",
						   typname, (unsigned) version)));
}

/*
 * A read-only argument, detoasted at most once per query for each stored
 * value.
 *
 * A filter read from a table arrives as a pointer into its TOAST table.
 * Detoasting it on every call would copy the whole filter per row ("WHERE
 * bloom_contains(f.filter, c.url)" over a join), so the detoasted copy is
 * kept in the function's fn_extra, keyed by the TOAST pointer, whose value
 * is immutable.  Values not stored out of line are detoasted as usual,
 * which costs nothing for the in-memory values built within a query.
 */
typedef struct DetoastCache
{
	Oid			toastrelid;
	Oid			valueid;
	struct varlena *value;		/* in fn_mcxt */
} DetoastCache;

struct varlena *
sbf_detoast_arg_cached(FunctionCallInfo fcinfo, int argno)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	struct varatt_external pointer;
	DetoastCache *cache;
	MemoryContext old;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return PG_DETOAST_DATUM(PointerGetDatum(raw));

	VARATT_EXTERNAL_GET_POINTER(pointer, raw);
	cache = (DetoastCache *) fcinfo->flinfo->fn_extra;
	if (cache != NULL && cache->value != NULL &&
		cache->toastrelid == pointer.va_toastrelid &&
		cache->valueid == pointer.va_valueid)
		return cache->value;

	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (cache == NULL)
	{
		cache = (DetoastCache *) palloc0(sizeof(DetoastCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	else if (cache->value != NULL)
	{
		pfree(cache->value);
		cache->value = NULL;
	}
	cache->value = PG_DETOAST_DATUM(PointerGetDatum(raw));
	cache->toastrelid = pointer.va_toastrelid;
	cache->valueid = pointer.va_valueid;
	MemoryContextSwitchTo(old);
	return cache->value;
}

/* A copy of a (detoasted) value in CurrentMemoryContext */
struct varlena *
sbf_value_copy(const struct varlena *value)
{
	Size		size = VARSIZE(value);
	struct varlena *copy = (struct varlena *) palloc(size);
	Size		done;

	for (done = 0; done < size; done += SBF_BYTES_PER_INTERRUPT_CHECK)
	{
		CHECK_FOR_INTERRUPTS();
		memcpy((char *) copy + done, (const char *) value + done,
			   Min(SBF_BYTES_PER_INTERRUPT_CHECK, size - done));
	}
	return copy;
}

/*
 * palloc0 for a filter's words: zeroes in 8 MB steps, checking for
 * interrupts between them, so that statement_timeout and pg_cancel_backend
 * stop a 1 GB allocation at once rather than when it ends.
 */
void *
sbf_palloc0(Size size)
{
	const Size	step = (Size) 1 << 23;
	char	   *result = palloc(size);
	Size		done;

	for (done = 0; done < size; done += step)
	{
		CHECK_FOR_INTERRUPTS();
		memset(result + done, 0, Min(step, size - done));
	}
	return result;
}

/*
 * The answers as a bool[] of the shape of the input, whose NULL elements
 * (and so whose null bitmap) it shares: answers[i] for each non-NULL
 * element i.  Built directly rather than through a Datum per element, so
 * that any array PostgreSQL can hold gets its answer.
 */
ArrayType *
sbf_answers_array(const ArrayType *values, const bool *answers, int n, int nnulls)
{
	int			ndim = ARR_NDIM(values);
	const uint8 *nulls = ARR_NULLBITMAP((ArrayType *) values);
	Size		overhead = nulls ? ARR_OVERHEAD_WITHNULLS(ndim, n) : ARR_OVERHEAD_NONULLS(ndim);
	ArrayType  *result = (ArrayType *) palloc0(overhead + (n - nnulls));
	char	   *data = (char *) result + overhead;	/* after header and bitmap */
	int			i;

	SET_VARSIZE(result, overhead + (n - nnulls));
	result->ndim = ndim;
	result->dataoffset = nulls ? (int32) overhead : 0;
	result->elemtype = BOOLOID;
	memcpy(ARR_DIMS(result), ARR_DIMS((ArrayType *) values), ndim * sizeof(int));
	memcpy(ARR_LBOUND(result), ARR_LBOUND((ArrayType *) values), ndim * sizeof(int));
	if (nulls)
		memcpy(ARR_LBOUND(result) + ndim, nulls, (n + 7) / 8);	/* its bitmap */
	for (i = 0; i < n; i++)
		if (nulls == NULL || (nulls[i / 8] & (1 << (i % 8))))
			*data++ = answers[i];
	return result;
}
