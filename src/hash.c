/*-------------------------------------------------------------------------
 *
 * hash.c
 *	  Element hashing: turning a SQL value into the 128-bit hash that every
 *	  filter probes with.
 *
 * Every element is hashed exactly once, with XXH3-128 seeded by the
 * filter's 64-bit seed; the k probe positions are derived from the two
 * halves (see sbf_probe_next in hash.h).  The element's bytes are fixed by
 * the SQL contract: a text is its bytes in the database encoding (no
 * collation, no normalisation), a bytea its raw bytes, a bigint its 8 bytes
 * little-endian.  Hence 'abc'::text and 'abc'::bytea hash alike, which is
 * what a user storing URLs in either form expects.
 *
 * The offline sieve's 64-bit URL signature (XXH3-64, seed 0) is here too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

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
		SbfHash		result;

		result = sbf_hash_bytes(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), seed);
		if (v != raw)
			pfree(v);
		return result;
	}
}

/* url_signature and the offline sieve: XXH3-64, seed 0 */
int64
sbf_signature(const void *data, size_t len)
{
	return (int64) XXH3_64bits(data, len);
}

PG_FUNCTION_INFO_V1(url_signature);

/* url_signature(text) -> bigint */
Datum
url_signature(PG_FUNCTION_ARGS)
{
	text	   *url = PG_GETARG_TEXT_PP(0);

	PG_RETURN_INT64(sbf_signature(VARDATA_ANY(url), VARSIZE_ANY_EXHDR(url)));
}
