/*-------------------------------------------------------------------------
 *
 * url_functions.c
 *	  url_canonical() and url_host(): the SQL face of url.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "pg_version_compat.h"
#include "url.h"

PG_FUNCTION_INFO_V1(sbf_url_canonical);
PG_FUNCTION_INFO_V1(sbf_url_host);

/*
 * The context uriparser allocates in, kept across the calls of one
 * expression and reset at each.
 */
static MemoryContext
url_work_context(FunctionCallInfo fcinfo)
{
	MemoryContext cxt = (MemoryContext) fcinfo->flinfo->fn_extra;

	if (cxt == NULL)
	{
		cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "sbf url",
									ALLOCSET_SMALL_SIZES);
		fcinfo->flinfo->fn_extra = cxt;
	}
	else
		MemoryContextReset(cxt);
	return cxt;
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
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("strip_params must not contain NULL")));
		opts->strip[opts->nstrip++] = TextDatumGetCString(elems[i]);
		if (i % 1024 == 1023)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The canonical form of the first argument into result: false when it has
 * none and strict is false (the caller returns NULL); an ERROR when strict.
 */
static bool
url_compute(FunctionCallInfo fcinfo, const UrlOptions *opts, bool strict,
			UrlResult *result)
{
	text	   *url = PG_GETARG_TEXT_PP(0);
	MemoryContext workcxt = url_work_context(fcinfo);
	MemoryContext oldcxt;

	oldcxt = MemoryContextSwitchTo(workcxt);
	url_canonicalize(VARDATA_ANY(url), VARSIZE_ANY_EXHDR(url), opts, workcxt, result);
	MemoryContextSwitchTo(oldcxt);

	if (result->invalid == NULL)
		return true;
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
	url_strip_list(PG_GETARG_ARRAYTYPE_P(2), &opts);
	if (!url_compute(fcinfo, &opts, PG_GETARG_BOOL(3), &result))
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

	if (!url_compute(fcinfo, &opts, PG_GETARG_BOOL(1), &result) || !result.has_host)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text_with_len(result.url.data + result.host_start,
											  result.host_len));
}
