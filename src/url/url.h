/*-------------------------------------------------------------------------
 *
 * url.h
 *	  The canonical form of a URL (url.c), for url_canonical() and
 *	  url_host() (url_functions.c) and the fuzz target.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_URL_H
#define SBF_URL_H

#include "lib/stringinfo.h"
#include "utils/palloc.h"

/* what url_canonical does with the query */
typedef enum UrlQueryMode
{
	URL_QUERY_KEEP,
	URL_QUERY_SORT,
	URL_QUERY_DROP
} UrlQueryMode;

typedef struct UrlOptions
{
	UrlQueryMode query;
	int			nstrip;
	char	  **strip;			/* parameter names, as the canonical query
								 * spells them; a trailing '*' is a prefix */
} UrlOptions;

/* a canonical URL, or why there is none */
typedef struct UrlResult
{
	StringInfoData url;
	bool		has_host;
	int			host_start;		/* the host's bytes within url */
	int			host_len;
	const char *invalid;		/* why the URL is invalid, or NULL */
} UrlResult;

/* URLs longer than this are refused (browsers and servers stop far below) */
#define URL_MAX_LENGTH	(1024 * 1024)

/*
 * The longest a parameter name of a canonical query can be: each byte of
 * the longest URL percent-encoded (the normalisation only shortens).  A
 * strip_params name longer than this and a trailing '*' never matches.
 */
#define URL_MAX_NAME_LENGTH	(3 * URL_MAX_LENGTH)

/*
 * The canonical form of in[0..len) into result (result->invalid says why
 * when there is none), allocating in workcxt, the current context.
 */
extern void url_canonicalize(const char *in, int len, const UrlOptions *opts,
							 MemoryContext workcxt, UrlResult *result);

/* in[0..len) with its non-ASCII bytes percent-encoded, as in a canonical URL */
extern void url_escape_non_ascii(const char *in, int len, StringInfo out);

#endif							/* SBF_URL_H */
