/*
 * What url.c needs from a backend besides pg_stubs.c (built with
 * -DFUZZ_STRINGINFO): string buffers, psprintf and the allocation calls of
 * uriparser's memory manager, all on pg_stubs.c's palloc (freed after each
 * input).
 */
#include "postgres.h"

#include <malloc.h>
#include <stdarg.h>

#include "lib/stringinfo.h"
#include "utils/memutils.h"

/* the C library's, not libpgport's (not linked in) */
#undef vsnprintf

void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	void	   *p = palloc(size);

	if (flags & MCXT_ALLOC_ZERO)
		memset(p, 0, size);
	return p;
}

/* a copy: pg_stubs.c remembers every block to free it after the input */
void *
repalloc(void *pointer, Size size)
{
	void	   *p = palloc(size);
	size_t		old = malloc_usable_size(pointer);

	memcpy(p, pointer, Min(old, size));
	return p;
}

void
initStringInfo(StringInfo str)
{
	str->maxlen = 64;
	str->data = palloc(str->maxlen);
	str->len = 0;
	str->data[0] = '\0';
	str->cursor = 0;
}

void
enlargeStringInfo(StringInfo str, int needed)
{
	if (needed < 0 || (Size) str->len + needed >= MaxAllocSize)
		abort();
	if (str->len + needed + 1 <= str->maxlen)
		return;
	while (str->len + needed + 1 > str->maxlen)
		str->maxlen *= 2;
	str->data = repalloc(str->data, str->maxlen);
}

void
#if PG_VERSION_NUM >= 160000
appendBinaryStringInfo(StringInfo str, const void *data, int datalen)
#else
appendBinaryStringInfo(StringInfo str, const char *data, int datalen)
#endif
{
	enlargeStringInfo(str, datalen);
	memcpy(str->data + str->len, data, datalen);
	str->len += datalen;
	str->data[str->len] = '\0';
}

void
appendStringInfoChar(StringInfo str, char ch)
{
	appendBinaryStringInfo(str, &ch, 1);
}

void
appendStringInfoString(StringInfo str, const char *s)
{
	appendBinaryStringInfo(str, s, strlen(s));
}

static char *
vformat(const char *fmt, va_list args)
{
	va_list		copy;
	int			n;
	char	   *s;

	va_copy(copy, args);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		abort();
	s = palloc(n + 1);
	vsnprintf(s, n + 1, fmt, args);
	return s;
}

void
appendStringInfo(StringInfo str, const char *fmt,...)
{
	va_list		args;
	char	   *s;

	va_start(args, fmt);
	s = vformat(fmt, args);
	va_end(args);
	appendStringInfoString(str, s);
}

char *
psprintf(const char *fmt,...)
{
	va_list		args;
	char	   *s;

	va_start(args, fmt);
	s = vformat(fmt, args);
	va_end(args);
	return s;
}

#if PG_VERSION_NUM < 190000
/* (PostgreSQL 19: inline in port.h) */
unsigned char
pg_ascii_tolower(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') ? ch + ('a' - 'A') : ch;
}
#endif

/* the C library's sort (libpgport's is not linked in) */
#undef qsort
void
pg_qsort(void *base, size_t nel, size_t elsize,
		 int (*cmp) (const void *, const void *))
{
	qsort(base, nel, elsize, cmp);
}
