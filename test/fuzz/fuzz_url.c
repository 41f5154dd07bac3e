/*
 * libFuzzer target: the canonical form of URLs (src/url/url.c, on uriparser
 * and libidn2), under AddressSanitizer and UBSan.
 *
 * The first input byte picks the options (the query kept, sorted or
 * dropped; parameters stripped or not); the rest is the URL.  Whatever
 * the input, url_canonicalize must return: a canonical form, or the reason
 * it has none.  A canonical form is printable ASCII, without a fragment,
 * holds its host, keeps no parameter it was asked to strip (a non-ASCII
 * name among them, in the form url_functions.c gives it), and is its own
 * canonical form (canonical twice is canonical once).  A crash, an ERROR,
 * an out-of-bounds access, undefined behaviour or a form that changes when
 * canonicalised again is a finding.
 */
#include "postgres.h"

#include "fuzz.h"
#include "url.h"

static void
check_canonical(const UrlResult *r)
{
	for (int i = 0; i < r->url.len; i++)
	{
		unsigned char c = (unsigned char) r->url.data[i];

		if (c <= 0x20 || c >= 0x7f || c == '#')
			abort();			/* not printable ASCII, or a fragment */
	}
	if (r->has_host &&
		(r->host_start < 0 || r->host_len < 0 || r->host_start + r->host_len > r->url.len))
		abort();
}

/* no parameter of the query is one of the names to strip */
static void
check_stripped(const UrlResult *r, const UrlOptions *opts)
{
	const char *q = memchr(r->url.data, '?', r->url.len);
	const char *end = r->url.data + r->url.len;

	while (q != NULL && q < end)
	{
		const char *name = q + 1;
		const char *amp = memchr(name, '&', end - name);
		const char *stop = amp ? amp : end;
		const char *eq = memchr(name, '=', stop - name);
		int			len = (int) ((eq ? eq : stop) - name);

		for (int i = 0; i < opts->nstrip; i++)
		{
			const char *s = opts->strip[i];
			int			slen = strlen(s);

			if (slen > 0 && s[slen - 1] == '*' ?
				len >= slen - 1 && memcmp(name, s, slen - 1) == 0 :
				len == slen && memcmp(name, s, len) == 0)
				abort();		/* a stripped parameter stayed */
		}
		q = amp;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char name_utf8[] = "stra\xc3\x9f" "e";
	char	   *strip[3] = {"utm_*", "id", NULL};
	StringInfoData escaped;
	UrlOptions	opts;
	UrlResult	once;
	UrlResult	twice;

	if (size < 1)
		return 0;
	opts.query = (UrlQueryMode) (data[0] % 3);
	opts.nstrip = (data[0] & 4) ? 3 : 0;
	opts.strip = strip;
	data++;
	size--;

	fuzz_last_sqlstate = 0;
	if (sigsetjmp(fuzz_error_jump, 0) == 0)
	{
		initStringInfo(&escaped);
		url_escape_non_ascii(name_utf8, strlen(name_utf8), &escaped);
		strip[2] = escaped.data;
		url_canonicalize((const char *) data, (int) size, &opts, NULL, &once);
		if (once.invalid == NULL)
		{
			check_canonical(&once);
			if (opts.query != URL_QUERY_DROP)
				check_stripped(&once, &opts);
			url_canonicalize(once.url.data, once.url.len, &opts, NULL, &twice);
			if (twice.invalid != NULL || twice.url.len != once.url.len ||
				memcmp(twice.url.data, once.url.data, once.url.len) != 0)
				abort();		/* canonical twice differs from once */
		}
	}
	else
		abort();				/* url_canonicalize raises no ERROR */
	fuzz_free_all();
	return 0;
}
