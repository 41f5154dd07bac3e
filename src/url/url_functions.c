/*-------------------------------------------------------------------------
 *
 * url_functions.c
 *	  url_canonical() and url_host(): the SQL face of url.c.
 *
 * A URL is canonicalised from its characters in UTF-8, whatever the
 * database encoding: browsers and RFC 3987 percent-encode a URL's
 * characters as UTF-8 and look up an internationalised host from them, and
 * a filter dumped from a UTF8 database into a LATIN1 one must be asked
 * about the same bytes there.  The conversion is the one the filters hash
 * a text with (sbf_text_as_utf8 in hash.c).  A SQL_ASCII database holds
 * bytes of no known encoding: a URL's are read as UTF-8.  Bytes that are
 * not UTF-8 there, or a character with no UTF-8 form in another encoding,
 * leave the URL without a canonical form: an ERROR, or NULL with strict =>
 * false, as an invalid URL.  MULE_INTERNAL is the one server encoding
 * PostgreSQL cannot convert to UTF-8: there only ASCII has a UTF-8 form.
 * The names of strip_params are read the same way (one with no UTF-8 form
 * is an ERROR whatever strict says: it is the caller's, not the data's),
 * and compared in the form the canonical query gives their characters.
 *
 * The canonical form is ASCII (every other byte percent-encoded, a host in
 * its ASCII form), which every server encoding writes alike, so it is
 * returned as it is.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "pg_version_compat.h"
#include "hash.h"
#include "url.h"

PG_FUNCTION_INFO_V1(sbf_url_canonical);
PG_FUNCTION_INFO_V1(sbf_url_host);

/*
 * What a call site keeps across its calls (fn_extra): the context uriparser
 * allocates in, reset at each call, and the strip list of url_canonical
 * with the strip_params array it was built from, reused while the next
 * call's array has the same bytes (usually a constant: converting and
 * escaping a thousand names at every row would cost more than the URL).
 */
typedef struct UrlCallCache
{
	MemoryContext workcxt;
	MemoryContext stripcxt;		/* strip_array and strip, or NULL */
	ArrayType  *strip_array;	/* a copy of the array, or NULL: none built */
	int			nstrip;
	char	  **strip;
} UrlCallCache;

/* An array larger than this is not kept: its strip list is built per call */
#define URL_STRIP_CACHE_MAX		(16 * 1024 * 1024)

static UrlCallCache *
url_call_cache(FunctionCallInfo fcinfo)
{
	UrlCallCache *cache = (UrlCallCache *) fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(UrlCallCache));
		cache->workcxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "sbf url",
											   ALLOCSET_SMALL_SIZES);
		fcinfo->flinfo->fn_extra = cache;
	}
	return cache;
}

static void
url_invalid(text *url, const char *why)
{
	char	   *s = text_to_cstring(url);

	/* name the URL, cut to a readable length at a character boundary */
	if (strlen(s) > 200)
		s[pg_mbcliplen(s, strlen(s), 200)] = '\0';
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid URL: \"%s\"", s),
			 errdetail("The URL is invalid because %s.", why),
			 errhint("Pass strict => false to get NULL for invalid URLs.")));
}

/*
 * Whether PostgreSQL converts the database encoding to UTF-8: every server
 * encoding but MULE_INTERNAL has a default conversion (checked once found,
 * as hash.c keeps the one it finds)
 */
static bool
url_has_conversion(void)
{
	static bool found = false;

	if (!found)
		found = OidIsValid(FindDefaultConversionProc(GetDatabaseEncoding(), PG_UTF8));
	return found;
}

/*
 * A URL or a strip_params name (what says which) given to function fname
 * has no UTF-8 form: the ERROR naming the character at byte bad and the
 * text up to it (the rest may not be writable to the client either).  The
 * hint about strict is for a URL: an unconvertible strip_params name is an
 * ERROR either way.
 */
static void
url_not_utf8(text *value, size_t bad, const char *what, const char *fname)
{
	const char *data = VARDATA_ANY(value);
	size_t		len = VARSIZE_ANY_EXHDR(value);
	int			encoding = GetDatabaseEncoding();
	bool		is_url = strcmp(what, "URL") == 0;
	int			charlen;
	int			shown;
	char		bytes[8 * 5 + 1];
	char	   *p = bytes;
	int			i;

	charlen = (encoding == PG_SQL_ASCII) ?
		pg_utf_mblen((const unsigned char *) data + bad) :
		pg_encoding_mblen(encoding, data + bad);
	charlen = Min(charlen, Min((int) (len - bad), 8));
	for (i = 0; i < charlen; i++)
		p += sprintf(p, i == 0 ? "0x%02x" : " 0x%02x", (unsigned char) data[bad + i]);
	shown = (bad > 200) ? pg_mbcliplen(data, (int) bad, 200) : (int) bad;

	if (encoding == PG_SQL_ASCII)
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("invalid byte sequence for encoding \"UTF8\": %s", bytes),
				 errdetail("It is at byte %zu of the %s \"%.*s%s\"; in a SQL_ASCII database the bytes of a URL are read as UTF-8, the encoding URLs are canonicalised in.",
						   bad + 1, what, shown, data, shown < (int) bad ? "..." : ""),
				 is_url ? errhint("Pass strict => false to get NULL for URLs that cannot be canonicalised.") : 0));
	if (!url_has_conversion())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot convert the %s \"%.*s...\" from encoding \"%s\" to \"UTF8\"",
						fname, what, shown, data, GetDatabaseEncodingName()),
				 errdetail("Its character with byte sequence %s at byte %zu is not ASCII, and PostgreSQL has no conversion from \"%s\" to \"UTF8\", the encoding URLs are canonicalised in: in this database only URLs and strip_params names of ASCII characters can be canonicalised.",
						   bytes, bad + 1, GetDatabaseEncodingName()),
				 is_url ? errhint("Pass strict => false to get NULL for URLs that cannot be canonicalised.") : 0));
	ereport(ERROR,
			(errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
			 errmsg("character with byte sequence %s in encoding \"%s\" has no equivalent in encoding \"UTF8\"",
					bytes, GetDatabaseEncodingName()),
			 errdetail("It is at byte %zu of the %s \"%.*s%s\"; URLs are canonicalised in UTF-8, whatever the database encoding.",
					   bad + 1, what, shown, data, shown < (int) bad ? "..." : ""),
			 is_url ? errhint("Pass strict => false to get NULL for URLs that cannot be canonicalised.") : 0));
}

/*
 * The characters of a text in UTF-8 (see the top of this file): its own
 * bytes, or a palloc'd copy in the current context; NULL when it has none,
 * *bad the offset of the first character that has none
 */
static const char *
url_text_as_utf8(text *value, int *len, size_t *bad)
{
	const char *data = VARDATA_ANY(value);
	size_t		n = VARSIZE_ANY_EXHDR(value);
	int			encoding = GetDatabaseEncoding();
	const char *utf8;
	size_t		i;

	if (encoding == PG_SQL_ASCII)
	{
		*bad = (size_t) pg_encoding_verifymbstr(PG_UTF8, data, (int) n);
		if (*bad < n)
			return NULL;
		*len = (int) n;
		return data;
	}
	if (encoding != PG_UTF8 && !url_has_conversion())
	{
		/* MULE_INTERNAL: only ASCII has a UTF-8 form we know */
		for (i = 0; i < n; i++)
			if (IS_HIGHBIT_SET(data[i]))
			{
				*bad = i;
				return NULL;
			}
		*len = (int) n;
		return data;
	}
	CHECK_FOR_INTERRUPTS();
	utf8 = sbf_text_as_utf8(data, &n, bad);
	if (utf8 != NULL)
		*len = (int) n;
	return utf8;
}

/* the bytes of a URL to canonicalise, or NULL when it has none in UTF-8 */
static const char *
url_as_utf8(text *url, int *len, size_t *bad)
{
	/*
	 * Longer than URL_MAX_LENGTH in UTF-8 too (a character is at most this
	 * many bytes here and at least one there): url_canonicalize refuses it
	 * by its length, without a conversion of up to a gigabyte first
	 */
	if (VARSIZE_ANY_EXHDR(url) > (Size) URL_MAX_LENGTH * pg_database_encoding_max_length())
	{
		*len = VARSIZE_ANY_EXHDR(url);
		return VARDATA_ANY(url);
	}
	return url_text_as_utf8(url, len, bad);
}

static UrlQueryMode
url_query_mode(text *mode)
{
	char	   *s = text_to_cstring(mode);

	if (strcmp(s, "keep") == 0)
		return URL_QUERY_KEEP;
	if (strcmp(s, "sort") == 0)
		return URL_QUERY_SORT;
	if (strcmp(s, "drop") == 0)
		return URL_QUERY_DROP;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("query must be 'keep', 'sort' or 'drop', not \"%s\"", s)));
	return URL_QUERY_KEEP;		/* keep compiler quiet */
}

/*
 * A strip_params name as the canonical query spells it: its characters in
 * UTF-8, the non-ASCII bytes percent-encoded, so that 'straße' strips
 * straße=1 in a database of any encoding.  NULL for a name longer than any
 * parameter name can be (URL_MAX_NAME_LENGTH): it never matches, and is
 * skipped before a conversion or an escape of up to a gigabyte.  A name
 * with no UTF-8 form is the caller's error, an ERROR whatever strict says.
 */
static char *
url_strip_name(text *name)
{
	const Size	longest = URL_MAX_NAME_LENGTH + 1;	/* and a trailing '*' */
	int			len;
	size_t		bad;
	const char *utf8;
	StringInfoData buf;

	/* a character is at least one byte in UTF-8 */
	if (VARSIZE_ANY_EXHDR(name) > longest * pg_database_encoding_max_length())
		return NULL;
	utf8 = url_text_as_utf8(name, &len, &bad);
	if (utf8 == NULL)
		url_not_utf8(name, bad, "strip_params name", "url_canonical");
	if ((Size) len > longest)
		return NULL;
	initStringInfo(&buf);
	url_escape_non_ascii(utf8, len, &buf);
	if ((Size) buf.len > longest)
	{
		pfree(buf.data);
		return NULL;
	}
	return buf.data;
}

/* the strip list of arr into opts, in the current context */
static void
url_strip_list(ArrayType *arr, UrlOptions *opts)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("strip_params must be a one-dimensional array")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	opts->strip = palloc(Max(n, 1) * sizeof(char *));
	opts->nstrip = 0;
	for (i = 0; i < n; i++)
	{
		char	   *name;

		CHECK_FOR_INTERRUPTS();
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("strip_params must not contain NULL")));
		name = url_strip_name(DatumGetTextPP(elems[i]));
		if (name != NULL)
			opts->strip[opts->nstrip++] = name;
	}
}

/*
 * The strip list of arr into opts: the one this call site built for the
 * same array, or a new one, kept for the next call when arr is not large
 */
static void
url_strip_list_cached(FunctionCallInfo fcinfo, ArrayType *arr, UrlOptions *opts)
{
	UrlCallCache *cache = url_call_cache(fcinfo);
	MemoryContext oldcxt;

	if (cache->strip_array != NULL &&
		VARSIZE(arr) == VARSIZE(cache->strip_array) &&
		memcmp(arr, cache->strip_array, VARSIZE(arr)) == 0)
	{
		opts->nstrip = cache->nstrip;
		opts->strip = cache->strip;
		return;
	}
	if (VARSIZE(arr) > URL_STRIP_CACHE_MAX)
	{
		url_strip_list(arr, opts);
		return;
	}

	/* forget the old list first: an ERROR below leaves none */
	cache->strip_array = NULL;
	if (cache->stripcxt == NULL)
		cache->stripcxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
												"sbf url strip_params",
												ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(cache->stripcxt);
	oldcxt = MemoryContextSwitchTo(cache->stripcxt);
	url_strip_list(arr, opts);
	cache->nstrip = opts->nstrip;
	cache->strip = opts->strip;
	cache->strip_array = (ArrayType *) palloc(VARSIZE(arr));
	memcpy(cache->strip_array, arr, VARSIZE(arr));
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The canonical form of the first argument into result: false when it has
 * none and strict is false (the caller returns NULL); an ERROR when strict.
 * A URL with no UTF-8 form has none.
 */
static bool
url_compute(FunctionCallInfo fcinfo, const UrlOptions *opts, bool strict,
			const char *fname, UrlResult *result)
{
	text	   *url = PG_GETARG_TEXT_PP(0);
	MemoryContext workcxt = url_call_cache(fcinfo)->workcxt;
	MemoryContext oldcxt;
	const char *utf8;
	int			len;
	size_t		bad;

	MemoryContextReset(workcxt);
	oldcxt = MemoryContextSwitchTo(workcxt);
	utf8 = url_as_utf8(url, &len, &bad);
	if (utf8 == NULL)
	{
		MemoryContextSwitchTo(oldcxt);
		if (strict)
			url_not_utf8(url, bad, "URL", fname);
		return false;
	}
	url_canonicalize(utf8, len, opts, workcxt, result);
	MemoryContextSwitchTo(oldcxt);

	if (result->invalid == NULL)
		return true;
	/* what is longer than 1 MB: the URL, or the UTF-8 it was converted to */
	if (len > URL_MAX_LENGTH && VARSIZE_ANY_EXHDR(url) <= URL_MAX_LENGTH)
		result->invalid = "its UTF-8 form is longer than 1 MB";
	if (strict)
		url_invalid(url, result->invalid);
	return false;
}

/*
 * url_canonical(url text, query text DEFAULT 'keep', strip_params text[]
 * DEFAULT '{}', strict boolean DEFAULT true) -> text
 */
Datum
sbf_url_canonical(PG_FUNCTION_ARGS)
{
	UrlOptions	opts;
	UrlResult	result;

	opts.query = url_query_mode(PG_GETARG_TEXT_PP(1));
	url_strip_list_cached(fcinfo, PG_GETARG_ARRAYTYPE_P(2), &opts);
	if (!url_compute(fcinfo, &opts, PG_GETARG_BOOL(3), "url_canonical", &result))
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text_with_len(result.url.data, result.url.len));
}

/*
 * url_host(url text, strict boolean DEFAULT true) -> text: the host of the
 * canonical URL (an IPv6 address in brackets), NULL when it has none.
 */
Datum
sbf_url_host(PG_FUNCTION_ARGS)
{
	UrlOptions	opts = {URL_QUERY_DROP, 0, NULL};
	UrlResult	result;

	if (!url_compute(fcinfo, &opts, PG_GETARG_BOOL(1), "url_host", &result) ||
		!result.has_host)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text_with_len(result.url.data + result.host_start,
											  result.host_len));
}
