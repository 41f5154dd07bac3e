/*-------------------------------------------------------------------------
 *
 * hash.c
 *	  Element hashing: turning a SQL value into the 128-bit hash that every
 *	  filter probes with.
 *
 * Every element is hashed exactly once, with XXH3-128 seeded by the
 * filter's 64-bit seed; the k probe positions are derived from the two
 * halves (see sbf_probe_next in hash.h).  The element's bytes are fixed by
 * the SQL contract: a text is its characters encoded in UTF-8 (no
 * collation, no normalisation), a bytea its raw bytes, a bigint its 8 bytes
 * little-endian.  Hence a text and the bytea of its UTF-8 bytes hash alike,
 * which is what a user storing URLs in either form expects.
 *
 * A text is hashed as UTF-8 whatever the database encoding, so that a
 * filter answers alike in every database it is copied, dumped or restored
 * into.  In a UTF8 database that is the text's own bytes, with no
 * conversion and no cost; in a SQL_ASCII database, whose bytes have no
 * known encoding, the bytes as they are; in any other, the bytes of the
 * text converted to UTF-8 (only when it has a non-ASCII character: every
 * server encoding writes ASCII as ASCII).
 *
 * The offline sieve's 64-bit URL signature (XXH3-64, seed 0) is here too,
 * of the same UTF-8 bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "hash.h"

#if !defined(XXH_VERSION_NUMBER) || XXH_VERSION_NUMBER < 800
#error "sbf needs libxxhash 0.8 or later for XXH3-128"
#endif

SbfHash
sbf_hash_bytes(const void *data, size_t len, uint64 seed)
{
	XXH128_hash_t h = XXH3_128bits_withSeed(data, len, (XXH64_hash_t) seed);
	SbfHash		result;

	result.h1 = h.low64;
	result.h2 = h.high64;
	return result;
}

/*
 * Whether argument argno of a function declared for both text and bytea
 * (bloom_add(bloom, text) and bloom_add(bloom, bytea) are one C function)
 * is a text or a bytea in this call.  A domain or a varchar arrives
 * relabelled as its base type.
 */
SbfElementKind
sbf_varlena_kind(FunctionCallInfo fcinfo, int argno)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	if (!OidIsValid(type))
		elog(ERROR, "could not determine whether argument %d is text or bytea",
			 argno + 1);
	/* a domain over bytea is bytes too */
	return getBaseType(type) == BYTEAOID ? SBF_ELEMENT_BYTEA : SBF_ELEMENT_TEXT;
}

/* The conversion from the database encoding to UTF-8, looked up once */
static FmgrInfo *sbf_to_utf8 = NULL;

/*
 * The UTF-8 bytes of a text's payload (data, *len), in place or in a new
 * palloc'd string whose length replaces *len.  See the top of this file.
 * A character that has no UTF-8 form is PostgreSQL's ERROR, unless bad is
 * not NULL: then the answer is NULL and *bad the offset of that character
 * in data.  (url_canonical shares this, so that a URL is canonicalised from
 * the same bytes as it is hashed.)
 */
const char *
sbf_text_as_utf8(const char *data, size_t *len, size_t *bad)
{
	int			encoding = GetDatabaseEncoding();
	char	   *result;
	int			converted;
	size_t		i;

	if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII)
		return data;
	for (i = 0; i < *len; i++)
		if (IS_HIGHBIT_SET(data[i]))
			break;
	if (i == *len)
		return data;

	if (sbf_to_utf8 == NULL)
	{
		Oid			proc = FindDefaultConversionProc(encoding, PG_UTF8);
		FmgrInfo   *flinfo;

		if (!OidIsValid(proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("cannot hash text of encoding \"%s\"",
							GetDatabaseEncodingName()),
					 errdetail("sbf hashes a text as its UTF-8 bytes, and there is no default conversion from \"%s\" to \"UTF8\".",
							   GetDatabaseEncodingName())));
		flinfo = MemoryContextAlloc(TopMemoryContext, sizeof(FmgrInfo));
		fmgr_info_cxt(proc, flinfo, TopMemoryContext);
		sbf_to_utf8 = flinfo;
	}

	/* a text is under 1 GB, so this is under 4 GB: as pg_do_encoding_conversion */
	result = MemoryContextAllocHuge(CurrentMemoryContext,
									*len * MAX_CONVERSION_GROWTH + 1);
	converted = DatumGetInt32(FunctionCall6(sbf_to_utf8,
											Int32GetDatum(encoding),
											Int32GetDatum(PG_UTF8),
											CStringGetDatum(data),
											CStringGetDatum(result),
											Int32GetDatum((int32) *len),
											BoolGetDatum(bad != NULL)));
	if ((size_t) converted < *len)
	{
		/* only with bad: without it, the conversion raised the ERROR */
		pfree(result);
		*bad = (size_t) converted;
		return NULL;
	}
	*len = strlen(result);
	return result;
}

SbfHash
sbf_hash_element(Datum value, SbfElementKind kind, uint64 seed)
{
	if (kind == SBF_ELEMENT_INT8)
	{
		uint64		v = (uint64) DatumGetInt64(value);
		uint8		bytes[8];
		int			i;

		for (i = 0; i < 8; i++)
			bytes[i] = (uint8) (v >> (8 * i));
		return sbf_hash_bytes(bytes, sizeof(bytes), seed);
	}
	else
	{
		struct varlena *raw = (struct varlena *) DatumGetPointer(value);
		struct varlena *v = pg_detoast_datum_packed(raw);
		const char *data = VARDATA_ANY(v);
		size_t		len = VARSIZE_ANY_EXHDR(v);
		SbfHash		result;

		if (kind != SBF_ELEMENT_BYTEA)
			data = sbf_text_as_utf8(data, &len, NULL);
		result = sbf_hash_bytes(data, len, seed);
		if (data != VARDATA_ANY(v))
			pfree(unconstify(char *, data));
		if (v != raw)
			pfree(v);
		return result;
	}
}

/*
 * url_signature and the offline sieve: XXH3-64, seed 0, of a text's UTF-8
 * bytes; data and len are the text's payload, in the database encoding
 */
int64
sbf_signature(const void *data, size_t len)
{
	const char *utf8 = sbf_text_as_utf8(data, &len, NULL);
	int64		result = (int64) XXH3_64bits(utf8, len);

	if (utf8 != data)
		pfree(unconstify(char *, utf8));
	return result;
}

PG_FUNCTION_INFO_V1(url_signature);

/* url_signature(text) -> bigint */
Datum
url_signature(PG_FUNCTION_ARGS)
{
	text	   *url = PG_GETARG_TEXT_PP(0);

	PG_RETURN_INT64(sbf_signature(VARDATA_ANY(url), VARSIZE_ANY_EXHDR(url)));
}
