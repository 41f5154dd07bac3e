/*-------------------------------------------------------------------------
 *
 * url.c
 *	  url_canonical() and url_host(): one spelling per URL, so that every
 *	  client of a shared filter or a sieve asks about the same key.
 *
 * The parsing and the syntax-based normalisation of RFC 3986 section 6.2.2
 * are uriparser's (Debian's liburiparser): scheme and host in lower case,
 * percent-encodings of unreserved characters decoded and the others in
 * upper case, dot segments removed.  Internationalised host names become
 * their ASCII (Punycode) form with libidn2 (UTS #46, non-transitional, as
 * browsers do).  What this file adds is the scheme-based normalisation of
 * section 6.2.3 and what crawlers need besides:
 *
 *	- the fragment is dropped (it never reaches the server);
 *	- the default port of http, https, ws, wss and ftp is dropped, and a
 *	  port is written without leading zeros;
 *	- an empty path of a URL with a host is "/";
 *	- an IPv6 address is written in its RFC 5952 form;
 *	- the query can be kept, sorted by parameter name (stably: repeated
 *	  names keep their order) or dropped, and parameters can be stripped
 *	  by name (a name ending in "*" strips every name with that prefix, as
 *	  in utm_*); an empty query ("?" alone) stays, as browsers send it.
 *
 * URLs as crawlers meet them in pages are not always RFC 3986: spaces,
 * raw UTF-8, "|" or "[]" in a query.  Before parsing, such bytes are
 * percent-encoded as a browser does when it sends the request (leading
 * and trailing whitespace and control characters are removed, tabs and
 * newlines inside are removed), so those URLs get the spelling the server
 * sees.  A "%" not followed by two hex digits stays as it is, as browsers
 * (WHATWG's URL standard) send it; uriparser is shown it marked (see
 * url_escape).
 *
 * A URL that still cannot be parsed, has no scheme (a relative reference:
 * resolve it against its page first), or names an http-like scheme
 * without a host, is invalid: an ERROR, or NULL when strict is false.
 *
 * uriparser allocates through a memory manager made of palloc, in a
 * context reset at every call, so an ERROR anywhere frees everything.
 * The SQL functions are in url_functions.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <arpa/inet.h>

#include <idn2.h>
#include <uriparser/Uri.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "pg_version_compat.h"
#include "url.h"

/* ---- uriparser's memory, in a context of our own ---- */

static void *
url_malloc(UriMemoryManager *mm, size_t size)
{
	if (size > MaxAllocSize)
		return NULL;
	return MemoryContextAllocExtended((MemoryContext) mm->userData,
									  size == 0 ? 1 : size, MCXT_ALLOC_NO_OOM);
}

static void *
url_calloc(UriMemoryManager *mm, size_t n, size_t size)
{
	if (size != 0 && n > MaxAllocSize / size)
		return NULL;
	return MemoryContextAllocExtended((MemoryContext) mm->userData,
									  n * size == 0 ? 1 : n * size,
									  MCXT_ALLOC_NO_OOM | MCXT_ALLOC_ZERO);
}

static void *
url_realloc(UriMemoryManager *mm, void *ptr, size_t size)
{
	if (ptr == NULL)
		return url_malloc(mm, size);
	if (size > MaxAllocSize)
		return NULL;
	return repalloc(ptr, size == 0 ? 1 : size);
}

static void *
url_reallocarray(UriMemoryManager *mm, void *ptr, size_t n, size_t size)
{
	if (size != 0 && n > MaxAllocSize / size)
		return NULL;
	return url_realloc(mm, ptr, n * size);
}

static void
url_free(UriMemoryManager *mm, void *ptr)
{
	if (ptr != NULL)
		pfree(ptr);
}

/* ---- before parsing: what a browser would percent-encode ---- */

static inline bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

static void
append_escaped(StringInfo out, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";

	appendStringInfoChar(out, '%');
	appendStringInfoChar(out, hex[c >> 4]);
	appendStringInfoChar(out, hex[c & 15]);
}

/*
 * in[0..len) with its non-ASCII bytes percent-encoded, as url_escape writes
 * them: a strip_params name in the form the canonical query holds it.  A
 * name is the user's, of any length: a cancel stops the loop.
 */
void
url_escape_non_ascii(const char *in, int len, StringInfo out)
{
	int			i;

	for (i = 0; i < len; i++)
	{
		if (i % 65536 == 65535)
			CHECK_FOR_INTERRUPTS();
		if (IS_HIGHBIT_SET(in[i]))
			append_escaped(out, (unsigned char) in[i]);
		else
			appendStringInfoChar(out, in[i]);
	}
}

/*
 * The length of the scheme of in[0..len) ("http" of "http://"), or 0 when
 * it has none (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":").
 */
static int
scheme_length(const char *in, int len)
{
	int			i;

	if (len == 0 || !((in[0] | 0x20) >= 'a' && (in[0] | 0x20) <= 'z'))
		return 0;
	for (i = 1; i < len; i++)
	{
		char		c = in[i];

		if (c == ':')
			return i;
		if (!(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') ||
			  c == '+' || c == '-' || c == '.'))
			return 0;
	}
	return 0;
}

/*
 * Copy in[0..len) into out the way a browser sends it: without leading and
 * trailing whitespace and controls, without tabs and newlines, with bytes
 * a URL may not hold percent-encoded.  "[" and "]" stay only in the
 * authority (an IPv6 address), "#" only the first time.
 *
 * A "%" not followed by two hex digits stays as it is, as browsers send it
 * (WHATWG's URL standard), but RFC 3986, and so uriparser, has no place
 * for it.  When the URL holds one, it is written "!%25" for uriparser and
 * every "!" is doubled: "!" is allowed wherever "%25" is, normalisation
 * leaves both alone, and doubling it changes no component's bounds, so
 * unmark() can give each component back its stray "%" after parsing.
 * Returns whether it did (*marked), so that URLs without one (nearly all)
 * are parsed as they are.
 */
static void
url_escape(const char *in, int len, StringInfo out, bool *marked)
{
	StringInfoData kept;
	int			scheme;
	int			auth_start = -1;
	int			auth_end = -1;
	bool		seen_hash = false;
	int			i;

	while (len > 0 && (unsigned char) in[0] <= 0x20)
		in++, len--;
	while (len > 0 && (unsigned char) in[len - 1] <= 0x20)
		len--;

	/* tabs and newlines go first: "%\n41" is "%41", as for a browser */
	kept.data = NULL;
	for (i = 0; i < len; i++)
		if (in[i] == '\t' || in[i] == '\n' || in[i] == '\r')
			break;
	if (i < len)
	{
		initStringInfo(&kept);
		for (i = 0; i < len; i++)
			if (in[i] != '\t' && in[i] != '\n' && in[i] != '\r')
				appendStringInfoChar(&kept, in[i]);
		in = kept.data;
		len = kept.len;
	}

	*marked = false;
	for (i = 0; i < len; i++)
		if (in[i] == '%' && !(i + 2 < len && is_hex(in[i + 1]) && is_hex(in[i + 2])))
			*marked = true;

	scheme = scheme_length(in, len);
	if (scheme > 0 && scheme + 2 < len && in[scheme + 1] == '/' && in[scheme + 2] == '/')
	{
		auth_start = scheme + 3;
		for (auth_end = auth_start; auth_end < len; auth_end++)
			if (in[auth_end] == '/' || in[auth_end] == '?' || in[auth_end] == '#')
				break;
	}

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) in[i];

		if (c == '%' && !(i + 2 < len && is_hex(in[i + 1]) && is_hex(in[i + 2])))
			appendStringInfoString(out, "!%25");
		else if (c == '!' && *marked)
			appendStringInfoString(out, "!!");
		else if (c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' ||
				 c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}')
			append_escaped(out, c);
		else if ((c == '[' || c == ']') && !(i >= auth_start && i < auth_end))
			append_escaped(out, c);
		else if (c == '#' && seen_hash)
			append_escaped(out, c);
		else
		{
			if (c == '#')
				seen_hash = true;
			appendStringInfoChar(out, (char) c);
		}
	}
	if (kept.data != NULL)
		pfree(kept.data);
}

/* the length of what url_escape wrote for p[i] of p[0..len): a mark, or 1 */
static inline int
mark_length(const char *p, int len, int i)
{
	if (p[i] == '!' && i + 1 < len && p[i + 1] == '!')
		return 2;
	if (p[i] == '!' && i + 3 < len && memcmp(p + i + 1, "%25", 3) == 0)
		return 4;
	return 1;
}

/*
 * p[0..len), a part of a URL url_escape marked, with its "!!" back to "!"
 * and its "!%25" back to a stray "%".  The digits that follow a stray "%"
 * may have been escapes that normalisation decoded ("%%34%31" is "%" "4"
 * "1"): with fix_hex, a hex digit that would make the stray "%" an escape
 * is written "%3X" again (the equivalent spelling), so that "%41" in the
 * result is not read as "A" once canonicalised again.
 */
static void
unmark(const char *p, int len, StringInfo out, bool fix_hex)
{
	int			i;

	for (i = 0; i < len; i++)
	{
		int			mark = mark_length(p, len, i);

		if (mark == 1)
			appendStringInfoChar(out, p[i]);
		else if (mark == 2)
			appendStringInfoChar(out, '!');
		else
		{
			appendStringInfoChar(out, '%');
			if (fix_hex && i + 5 < len && is_hex(p[i + 4]) && is_hex(p[i + 5]))
			{
				append_escaped(out, (unsigned char) p[i + 4]);
				i++;
			}
		}
		i += mark - 1;
	}
}

/* a range of a parsed URL, unmarked, in a copy of its own */
static void
unmark_range(UriTextRangeA *r)
{
	StringInfoData buf;
	int			len = (r->first == NULL) ? 0 : (int) (r->afterLast - r->first);

	if (len == 0 || memchr(r->first, '!', len) == NULL)
		return;
	initStringInfo(&buf);
	unmark(r->first, len, &buf, true);
	r->first = buf.data;
	r->afterLast = buf.data + buf.len;
}

/* ---- after parsing: the parts of the canonical URL ---- */

static inline int
range_length(const UriTextRangeA *r)
{
	return (r->first == NULL) ? 0 : (int) (r->afterLast - r->first);
}

static void
append_range(StringInfo out, const UriTextRangeA *r)
{
	if (range_length(r) > 0)
		appendBinaryStringInfo(out, r->first, range_length(r));
}

static bool
range_equals(const UriTextRangeA *r, const char *s)
{
	int			len = strlen(s);

	return range_length(r) == len && memcmp(r->first, s, len) == 0;
}

/* the default port of a scheme whose URLs have a host, or -1 */
static int
default_port(const UriTextRangeA *scheme)
{
	if (range_equals(scheme, "http") || range_equals(scheme, "ws"))
		return 80;
	if (range_equals(scheme, "https") || range_equals(scheme, "wss"))
		return 443;
	if (range_equals(scheme, "ftp"))
		return 21;
	return -1;
}

/*
 * Append a registered name, normalised by uriparser (lower case, percent
 * escapes fixed).  One whose percent-decoded bytes are not ASCII is an
 * internationalised name: it is decoded and written in its ASCII form.
 * The host of an http-like ("special") scheme is a DNS name: its escapes
 * are decoded, and a byte no host name holds makes the URL invalid.
 */
static bool
append_reg_name(StringInfo out, const UriTextRangeA *host, bool special,
				const char **invalid)
{
	int			len = range_length(host);
	const char *p = host->first;
	StringInfoData decoded;
	bool		ascii = true;
	bool		ldh = true;		/* letters, digits, '-', '.', '_' only */
	char	   *ace = NULL;
	int			rc;
	int			i;

	if (len == 0 || memchr(p, '%', len) == NULL)
	{
		if (len > 0)
			appendBinaryStringInfo(out, p, len);
		return true;
	}

	initStringInfo(&decoded);
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) p[i];

		if (c == '%' && i + 2 < len && is_hex(p[i + 1]) && is_hex(p[i + 2]))
		{
			c = (unsigned char) (hex_value(p[i + 1]) * 16 + hex_value(p[i + 2]));
			i += 2;
		}
		if (c >= 0x80)
			ascii = false;
		else if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') &&
				 c != '-' && c != '.' && c != '_')
		{
			ldh = false;
			/* a DNS name holds at most RFC 3986's unreserved and sub-delims */
			if (special && (c == 0 || strchr("~!$&'()*+,;=", c) == NULL))
				break;
		}
		appendStringInfoChar(&decoded, (char) pg_ascii_tolower(c));
	}
	if (i < len)
	{
		*invalid = "its host holds a character no host name may hold";
		return false;
	}
	if (ascii)
	{
		if (special)
			appendBinaryStringInfo(out, decoded.data, decoded.len);
		else					/* escapes stay as uriparser wrote them */
			appendBinaryStringInfo(out, p, len);
		return true;
	}
	if (!ldh)
	{
		*invalid = "its internationalised host holds an ASCII character no domain name may hold";
		return false;
	}

	rc = idn2_to_ascii_8z(decoded.data, &ace, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
	if (rc == IDN2_DISALLOWED)
		rc = idn2_to_ascii_8z(decoded.data, &ace, IDN2_NFC_INPUT | IDN2_TRANSITIONAL);
	if (rc != IDN2_OK)
	{
		*invalid = psprintf("its host is not a valid internationalised domain name (%s)",
							idn2_strerror(rc));
		return false;
	}
	appendStringInfoString(out, ace);
	idn2_free(ace);
	return true;
}

/* the host of a parsed URL, in canonical form; false when it is invalid */
static bool
append_host(StringInfo out, const UriUriA *uri, bool special, const char **invalid)
{
	if (uri->hostData.ip6 != NULL)
	{
		char		buf[INET6_ADDRSTRLEN];

		if (inet_ntop(AF_INET6, uri->hostData.ip6->data, buf, sizeof(buf)) == NULL)
		{
			*invalid = "its IPv6 address cannot be written";
			return false;
		}
		appendStringInfo(out, "[%s]", buf);
		return true;
	}
	if (range_length(&uri->hostData.ipFuture) > 0)
	{
		int			start = out->len;
		int			i;

		appendStringInfoChar(out, '[');
		append_range(out, &uri->hostText);
		appendStringInfoChar(out, ']');
		for (i = start; i < out->len; i++)
			out->data[i] = pg_ascii_tolower((unsigned char) out->data[i]);
		return true;
	}
	return append_reg_name(out, &uri->hostText, special, invalid);
}

/* the port, without leading zeros, unless it is the scheme's default */
static bool
append_port(StringInfo out, const UriUriA *uri, const char **invalid)
{
	const char *p = uri->portText.first;
	int			len = range_length(&uri->portText);
	long		port = 0;
	int			i;

	if (len == 0)
		return true;
	for (i = 0; i < len; i++)
	{
		if (p[i] < '0' || p[i] > '9')
		{
			*invalid = "its port is not a number";
			return false;
		}
		port = port * 10 + (p[i] - '0');
		if (port > 65535)
		{
			*invalid = "its port is beyond 65535";
			return false;
		}
	}
	if (port != default_port(&uri->scheme))
		appendStringInfo(out, ":%ld", port);
	return true;
}

/*
 * Does the query parameter name[0..len) match one to strip?  The names are
 * the user's, and so are their number and the query's: a long list
 * against a long query is a long loop, which a cancel must stop.
 */
static bool
strip_param(const UrlOptions *opts, const int *strip_len, const char *name, int len)
{
	int			i;

	for (i = 0; i < opts->nstrip; i++)
	{
		const char *s = opts->strip[i];
		int			slen = strip_len[i];

		if (i % 1024 == 0)
			CHECK_FOR_INTERRUPTS();
		if (slen > 0 && s[slen - 1] == '*')
		{
			if (len >= slen - 1 && memcmp(name, s, slen - 1) == 0)
				return true;
		}
		else if (len == slen && memcmp(name, s, len) == 0)
			return true;
	}
	return false;
}

typedef struct QueryParam
{
	const char *start;
	int			len;			/* of name=value */
	int			namelen;
	int			pos;			/* in the query, for a stable sort */
} QueryParam;

static int
param_cmp(const void *a, const void *b)
{
	const QueryParam *pa = a;
	const QueryParam *pb = b;
	int			c = memcmp(pa->start, pb->start, Min(pa->namelen, pb->namelen));

	if (c != 0)
		return c;
	if (pa->namelen != pb->namelen)
		return pa->namelen < pb->namelen ? -1 : 1;
	return pa->pos - pb->pos;
}

/*
 * "?" and the query, as the options want it.  A URL without a query gets
 * none, an empty query ("?" alone) stays, as browsers send it, and 'sort'
 * keeps it with no parameter when it had only empty ones; 'drop' drops it.
 * A query whose every parameter but empty ones strip_params removed is
 * dropped with its "?": without them, it is the URL without a query.
 */
static void
append_query(StringInfo out, const UriUriA *uri, const UrlOptions *opts)
{
	const char *q = uri->query.first;
	int			len = range_length(&uri->query);
	QueryParam *params;
	int		   *strip_len;
	int			nparams = 0;
	bool		stripped = false;
	int			start = 0;
	int			i;

	if (q == NULL || opts->query == URL_QUERY_DROP)
		return;
	if (opts->query == URL_QUERY_KEEP && opts->nstrip == 0)
	{
		appendStringInfoChar(out, '?');
		append_range(out, &uri->query);
		return;
	}

	/* the names' lengths once, not once a parameter */
	strip_len = palloc(Max(opts->nstrip, 1) * sizeof(int));
	for (i = 0; i < opts->nstrip; i++)
		strip_len[i] = strlen(opts->strip[i]);

	/* split at '&'; empty parameters go when the query is sorted */
	params = palloc((len + 1) * sizeof(QueryParam));
	for (i = 0; i <= len; i++)
	{
		if (i == len || q[i] == '&')
		{
			const char *eq = memchr(q + start, '=', i - start);
			QueryParam *p = &params[nparams];

			p->start = q + start;
			p->len = i - start;
			p->namelen = eq ? (int) (eq - (q + start)) : p->len;
			p->pos = nparams;
			if (p->len > 0 || opts->query != URL_QUERY_SORT)
			{
				if (strip_param(opts, strip_len, p->start, p->namelen))
					stripped = true;
				else
					nparams++;
			}
			start = i + 1;
		}
	}
	if (opts->query == URL_QUERY_SORT && nparams > 1)
		qsort(params, nparams, sizeof(QueryParam), param_cmp);
	/* what stripping left nothing but empty parameters in is no query */
	if (stripped)
	{
		for (i = 0; i < nparams; i++)
			if (params[i].len > 0)
				break;
		if (i == nparams)
			return;
	}
	appendStringInfoChar(out, '?');
	for (i = 0; i < nparams; i++)
	{
		if (i > 0)
			appendStringInfoChar(out, '&');
		appendBinaryStringInfo(out, params[i].start, params[i].len);
	}
}

/*
 * The canonical form of in[0..len) into result; result->invalid says why
 * when it has none.
 */
void
url_canonicalize(const char *in, int len, const UrlOptions *opts,
				 MemoryContext workcxt, UrlResult *result)
{
	UriMemoryManager mm = {url_malloc, url_calloc, url_realloc,
	url_reallocarray, url_free, workcxt};
	StringInfoData escaped;
	UriUriA		uri;
	const char *error_pos = NULL;
	UriPathSegmentA *seg;
	bool		marked;
	int			special;
	int			rc;

	initStringInfo(&result->url);
	result->has_host = false;
	result->invalid = NULL;

	if (len > URL_MAX_LENGTH)
	{
		result->invalid = "it is longer than 1 MB";
		return;
	}
	initStringInfo(&escaped);
	url_escape(in, len, &escaped, &marked);
	if (scheme_length(escaped.data, escaped.len) == 0)
	{
		result->invalid = "it has no scheme (a relative URL: resolve it against its page first)";
		return;
	}

	rc = uriParseSingleUriExMmA(&uri, escaped.data, escaped.data + escaped.len,
								&error_pos, &mm);
	if (rc == URI_ERROR_SYNTAX)
	{
		int			pos = (int) (error_pos - escaped.data);

		if (marked)
		{
			StringInfoData shown;
			int			i = 0;

			/* the escaped form without its marks, and the byte in it */
			while (i + mark_length(escaped.data, escaped.len, i) <= pos)
				i += mark_length(escaped.data, escaped.len, i);
			initStringInfo(&shown);
			unmark(escaped.data, i, &shown, false);
			pos = shown.len;
			unmark(escaped.data + i, escaped.len - i, &shown, false);
			escaped = shown;
		}
		result->invalid = psprintf("it is not RFC 3986 syntax at byte %d of its escaped form \"%s\"",
								   pos + 1, escaped.data);
		return;
	}
	if (rc != URI_SUCCESS)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory while parsing a URL")));
	rc = uriNormalizeSyntaxExMmA(&uri, URI_NORMALIZE_SCHEME | URI_NORMALIZE_USER_INFO |
								 URI_NORMALIZE_HOST | URI_NORMALIZE_PATH |
								 URI_NORMALIZE_QUERY, &mm);
	if (rc != URI_SUCCESS)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory while normalising a URL")));
	if (marked)
	{
		unmark_range(&uri.userInfo);
		unmark_range(&uri.hostText);
		for (seg = uri.pathHead; seg != NULL; seg = seg->next)
			unmark_range(&seg->text);
		unmark_range(&uri.query);
	}

	special = default_port(&uri.scheme) > 0;
	append_range(&result->url, &uri.scheme);
	appendStringInfoChar(&result->url, ':');

	if (uri.hostText.first != NULL)
	{
		appendStringInfoString(&result->url, "//");
		if (uri.userInfo.first != NULL)
		{
			append_range(&result->url, &uri.userInfo);
			appendStringInfoChar(&result->url, '@');
		}
		result->has_host = true;
		result->host_start = result->url.len;
		if (!append_host(&result->url, &uri, special, &result->invalid))
			return;
		result->host_len = result->url.len - result->host_start;
		if (special && result->host_len == 0)
		{
			result->invalid = "its scheme needs a host and it has none";
			return;
		}
		if (!append_port(&result->url, &uri, &result->invalid))
			return;
		/* every segment after the host follows a "/"; no path is "/" */
		if (uri.pathHead == NULL)
			appendStringInfoChar(&result->url, '/');
		for (seg = uri.pathHead; seg != NULL; seg = seg->next)
		{
			appendStringInfoChar(&result->url, '/');
			append_range(&result->url, &seg->text);
		}
	}
	else
	{
		int			path_start = result->url.len;

		if (special)
		{
			result->invalid = "its scheme needs a host and it has none";
			return;
		}
		if (uri.absolutePath)
			appendStringInfoChar(&result->url, '/');
		for (seg = uri.pathHead; seg != NULL; seg = seg->next)
		{
			if (seg != uri.pathHead)
				appendStringInfoChar(&result->url, '/');
			append_range(&result->url, &seg->text);
		}

		/*
		 * A path that removing dot segments made begin with "//" would be
		 * read again as an authority: write it "/.//" (as WHATWG does)
		 */
		if (result->url.len - path_start >= 2 &&
			result->url.data[path_start] == '/' && result->url.data[path_start + 1] == '/')
		{
			StringInfoData path;

			initStringInfo(&path);
			appendBinaryStringInfo(&path, result->url.data + path_start,
								   result->url.len - path_start);
			result->url.len = path_start;
			appendStringInfoString(&result->url, "/.");
			appendBinaryStringInfo(&result->url, path.data, path.len);
		}
	}
	append_query(&result->url, &uri, opts);
}
