/*-------------------------------------------------------------------------
 *
 * simhash.c
 *	  The simhash type: Charikar's 64-bit SimHash fingerprints of documents,
 *	  their Hamming distance, and the sbf.simhash_max_distance GUC of the
 *	  near-duplicate operator %.
 *
 * A simhash is a 64-bit value (format.h).  Its text form is the 16
 * lower-case hexadecimal digits of that value, most significant first; it
 * orders as an unsigned 64-bit integer (the order of the text form), and
 * casts to and from bigint keep the same 64 bits.
 *
 * The fingerprint of a list of features (Charikar 2002, "Similarity
 * estimation techniques from rounding algorithms"; Manku, Jain and Das
 * Sarma 2007, "Detecting near-duplicates for web crawling"): each feature
 * is hashed with XXH3-64, seed 0, of its UTF-8 bytes; bit b of the
 * fingerprint is set iff, over all features, the number of features whose
 * hash has bit b set exceeds the number whose hash has it clear.  A
 * feature that occurs n times counts n times (its weight is its count).
 * No features: every sum is 0, so the fingerprint is 0.
 *
 * The features of a document (simhash(text, shingle)), exactly, so that
 * any script can reproduce them: the document is taken as UTF-8 bytes;
 * a word is a maximal run of bytes that are ASCII letters, ASCII digits or
 * >= 0x80 (so every non-ASCII character belongs to words, and all ASCII
 * punctuation, whitespace and control characters separate them); ASCII
 * letters are lower-cased, nothing else changes.  The features are the
 * shingles: each run of "shingle" consecutive words joined by one space
 * (n - shingle + 1 of them for n words); a document of 1..shingle-1 words
 * has one feature, its words joined by spaces.  docs/simhash.md has worked
 * examples.
 *
 * The GIN operator class that searches for near-duplicates is in
 * simhash_gin.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "format.h"
#include "simhash.h"

/* sbf.simhash_max_distance: the distance within which a % b is true */
int			simhash_max_distance = SIMHASH_DEFAULT_DISTANCE;

void
simhash_define_gucs(void)
{
	DefineCustomIntVariable("sbf.simhash_max_distance",
							"Largest Hamming distance at which two simhash fingerprints are near-duplicates (operator %).",
							"Manku et al. (2007) use 3 for 64-bit fingerprints.",
							&simhash_max_distance,
							SIMHASH_DEFAULT_DISTANCE, 0, SIMHASH_BITS,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
}

/*
 * Charikar's sums, one per bit, of +1 for each feature whose hash has the
 * bit set and -1 for each that has it clear
 */
typedef struct SimhashSums
{
	int64		sum[SIMHASH_BITS];
} SimhashSums;

static inline void
simhash_add_feature(SimhashSums *sums, const char *utf8, size_t len)
{
	uint64		h = (uint64) XXH3_64bits(utf8, len);
	int			b;

	for (b = 0; b < SIMHASH_BITS; b++)
		sums->sum[b] += ((h >> b) & 1) ? 1 : -1;
}

static uint64
simhash_finish(const SimhashSums *sums)
{
	uint64		result = 0;
	int			b;

	for (b = 0; b < SIMHASH_BITS; b++)
		if (sums->sum[b] > 0)
			result |= UINT64CONST(1) << b;
	return result;
}

/* The UTF-8 bytes of a text's payload: its own in a UTF8 or SQL_ASCII database */
static char *
simhash_text_utf8(text *t, int *len)
{
	char	   *data = VARDATA_ANY(t);
	char	   *utf8;

	*len = VARSIZE_ANY_EXHDR(t);
	utf8 = pg_server_to_any(data, *len, PG_UTF8);
	if (utf8 != data)
		*len = strlen(utf8);
	return utf8;
}

/* A word byte: ASCII letter or digit, or any byte of a non-ASCII character */
#define SIMHASH_WORD_BYTE(c) \
	(((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || \
	 ((c) >= '0' && (c) <= '9') || (c) >= 0x80)

/* ASCII lower-casing only, whatever the locale */
#define SIMHASH_LOWER(c) (((c) >= 'A' && (c) <= 'Z') ? (c) + ('a' - 'A') : (c))

/* Interrupts are checked every this many words (a few ms of work) */
#define SIMHASH_CHECK_EVERY 8192

PG_FUNCTION_INFO_V1(simhash_document);

/*
 * Add the feature of words ring[first .. first + n - 1] (indexes modulo
 * the ring's size): the words, lower-cased, joined by one space, built in
 * feature (room for the whole document)
 */
static void
simhash_add_shingle(SimhashSums *sums, const char *utf8, const int *start,
					const int *length, int ring, int first, int n, char *feature)
{
	int			flen = 0;
	int			w;

	for (w = 0; w < n; w++)
	{
		int			slot = (first + w) % ring;
		const char *word = utf8 + start[slot];
		int			i;

		if (w > 0)
			feature[flen++] = ' ';
		for (i = 0; i < length[slot]; i++)
			feature[flen++] = SIMHASH_LOWER((unsigned char) word[i]);
	}
	simhash_add_feature(sums, feature, flen);
}

/*
 * simhash(document text, shingle int) -> simhash64
 *
 * One pass over the document, remembering only the last "shingle" words
 * (where each starts and how long it is): besides the document, the memory
 * is one feature's buffer, so any text PostgreSQL can hold is fingerprinted
 * in about twice its size.
 */
Datum
simhash_document(PG_FUNCTION_ARGS)
{
	text	   *document = PG_GETARG_TEXT_PP(0);
	int32		shingle = PG_GETARG_INT32(1);
	int			len;
	char	   *utf8;
	int			start[SIMHASH_MAX_SHINGLE];
	int			length[SIMHASH_MAX_SHINGLE];
	int64		words = 0;
	char	   *feature;
	int			i;
	SimhashSums sums;

	if (shingle < 1 || shingle > SIMHASH_MAX_SHINGLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shingle must be between 1 and %d words, not %d",
						SIMHASH_MAX_SHINGLE, shingle)));

	utf8 = simhash_text_utf8(document, &len);
	/* a feature is at most the whole document */
	feature = palloc(len + 1);
	memset(&sums, 0, sizeof(sums));
	for (i = 0; i < len;)
	{
		int			slot;

		if (!SIMHASH_WORD_BYTE((unsigned char) utf8[i]))
		{
			i++;
			continue;
		}
		slot = words % shingle;
		start[slot] = i;
		while (i < len && SIMHASH_WORD_BYTE((unsigned char) utf8[i]))
			i++;
		length[slot] = i - start[slot];
		words++;
		/* the shingle that ends with this word */
		if (words >= shingle)
			simhash_add_shingle(&sums, utf8, start, length, shingle,
								(int) ((words - shingle) % shingle), shingle,
								feature);
		if (words % SIMHASH_CHECK_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
	}
	/* a document of 1 .. shingle - 1 words is one feature */
	if (words > 0 && words < shingle)
		simhash_add_shingle(&sums, utf8, start, length, shingle, 0, (int) words,
							feature);

	pfree(feature);
	if (utf8 != VARDATA_ANY(document))
		pfree(utf8);
	PG_RETURN_SIMHASH(simhash_finish(&sums));
}

PG_FUNCTION_INFO_V1(simhash_features);

/* simhash(features text[]) -> simhash64: NULL elements are skipped */
Datum
simhash_features(PG_FUNCTION_ARGS)
{
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;
	SimhashSums sums;

	deconstruct_array(features, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	memset(&sums, 0, sizeof(sums));
	for (i = 0; i < n; i++)
	{
		text	   *t;
		char	   *utf8;
		int			len;

		if (nulls[i])
			continue;
		t = DatumGetTextPP(elems[i]);
		utf8 = simhash_text_utf8(t, &len);
		simhash_add_feature(&sums, utf8, len);
		if (utf8 != VARDATA_ANY(t))
			pfree(utf8);
		if (i % SIMHASH_CHECK_EVERY == SIMHASH_CHECK_EVERY - 1)
			CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_SIMHASH(simhash_finish(&sums));
}

/* Input and output */

PG_FUNCTION_INFO_V1(simhash_in);

/* exactly 16 hexadecimal digits, either case */
Datum
simhash_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	uint64		result = 0;
	int			i;

	for (i = 0; i < 16; i++)
	{
		char		c = str[i];
		int			digit;

		if (c >= '0' && c <= '9')
			digit = c - '0';
		else if (c >= 'a' && c <= 'f')
			digit = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			digit = c - 'A' + 10;
		else
			break;				/* including the end of a short string */
		result = (result << 4) | digit;
	}
	if (i < 16 || str[16] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"",
						"simhash64", str),
				 errdetail("A simhash64 is exactly 16 hexadecimal digits.")));
	PG_RETURN_SIMHASH(result);
}

PG_FUNCTION_INFO_V1(simhash_out);

Datum
simhash_out(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH(0);

	PG_RETURN_CSTRING(psprintf("%016llx", (unsigned long long) value));
}

PG_FUNCTION_INFO_V1(simhash_recv);

/* 8 bytes, little-endian (format.h) */
Datum
simhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	const unsigned char *bytes;
	uint64		result = 0;
	int			i;

	bytes = (const unsigned char *) pq_getmsgbytes(buf, SIMHASH_BYTES);
	for (i = SIMHASH_BYTES - 1; i >= 0; i--)
		result = (result << 8) | bytes[i];
	PG_RETURN_SIMHASH(result);
}

PG_FUNCTION_INFO_V1(simhash_send);

Datum
simhash_send(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH(0);
	StringInfoData buf;
	int			i;

	pq_begintypsend(&buf);
	for (i = 0; i < SIMHASH_BYTES; i++)
		pq_sendbyte(&buf, (uint8) (value >> (8 * i)));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* Distance */

PG_FUNCTION_INFO_V1(hamming_distance);

/* hamming_distance(a, b) and a <~> b: the number of bits that differ */
Datum
hamming_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)));
}

PG_FUNCTION_INFO_V1(simhash_near);

/* a % b: within sbf.simhash_max_distance */
Datum
simhash_near(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1))
				   <= simhash_max_distance);
}

/* Ordering: as unsigned 64-bit integers, the order of the text form */

#define SIMHASH_COMPARISON(name, op) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(PG_GETARG_SIMHASH(0) op PG_GETARG_SIMHASH(1)); \
}

SIMHASH_COMPARISON(simhash_eq, ==)
SIMHASH_COMPARISON(simhash_ne, !=)
SIMHASH_COMPARISON(simhash_lt, <)
SIMHASH_COMPARISON(simhash_le, <=)
SIMHASH_COMPARISON(simhash_gt, >)
SIMHASH_COMPARISON(simhash_ge, >=)

PG_FUNCTION_INFO_V1(simhash_cmp);

Datum
simhash_cmp(PG_FUNCTION_ARGS)
{
	uint64		a = PG_GETARG_SIMHASH(0);
	uint64		b = PG_GETARG_SIMHASH(1);

	PG_RETURN_INT32(a < b ? -1 : (a > b ? 1 : 0));
}

PG_FUNCTION_INFO_V1(simhash_hash);

/* the hash opclass: bigint's hash of the same 64 bits */
Datum
simhash_hash(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(hashint8, PG_GETARG_DATUM(0));
}

PG_FUNCTION_INFO_V1(simhash_hash_extended);

Datum
simhash_hash_extended(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall2(hashint8extended, PG_GETARG_DATUM(0),
							   PG_GETARG_DATUM(1));
}
