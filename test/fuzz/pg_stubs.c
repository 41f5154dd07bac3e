/*
 * What the value-validation code needs from a backend, for the fuzzer:
 * allocation on malloc (freed after each input), and ereport(ERROR) as a
 * longjmp back to the fuzzer's entry point.  Nothing else of PostgreSQL
 * is linked in.
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <setjmp.h>

#include "fuzz.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

sigjmp_buf fuzz_error_jump;
int			fuzz_last_sqlstate;

static void **allocations;
static size_t nallocations;
static size_t maxallocations;

volatile sig_atomic_t InterruptPending = false;
MemoryContext CurrentMemoryContext = NULL;

void
ProcessInterrupts(void)
{
}

static void *
remember(void *p)
{
	if (p == NULL)
		abort();
	if (nallocations == maxallocations)
	{
		maxallocations = maxallocations ? maxallocations * 2 : 256;
		allocations = realloc(allocations, maxallocations * sizeof(void *));
	}
	allocations[nallocations++] = p;
	return p;
}

void
fuzz_free_all(void)
{
	for (size_t i = 0; i < nallocations; i++)
		free(allocations[i]);
	nallocations = 0;
}

void *
palloc(Size size)
{
	if (!AllocSizeIsValid(size))
		abort();				/* the code must refuse this before asking */
	return remember(malloc(size ? size : 1));
}

void *
palloc0(Size size)
{
	if (!AllocSizeIsValid(size))
		abort();
	return remember(calloc(1, size ? size : 1));
}

void
pfree(void *pointer)
{
	/* freed with the rest after the input */
}

struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	return datum;
}

struct varlena *
pg_detoast_datum_copy(struct varlena *datum)
{
	struct varlena *copy = palloc(VARSIZE(datum));

	memcpy(copy, datum, VARSIZE(datum));
	return copy;
}

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	return datum;
}

#if PG_VERSION_NUM < 190000
/* (PostgreSQL 19: pg_popcount64 is inline) */
static int
popcount64(uint64 word)
{
	return __builtin_popcountll(word);
}

int			(*pg_popcount64) (uint64 word) = popcount64;
#endif

static uint64
popcount_bytes(const char *buf, int bytes)
{
	uint64		count = 0;
	uint64		word;
	int			i = 0;

	for (; i + 8 <= bytes; i += 8)
	{
		memcpy(&word, buf + i, 8);
		count += __builtin_popcountll(word);
	}
	for (; i < bytes; i++)
		count += __builtin_popcount((unsigned char) buf[i]);
	return count;
}

#if PG_VERSION_NUM >= 170000
/*
 * From 17 on pg_popcount is inline: a table for a few bytes, an optimized
 * function (a pointer where the CPU is probed at run time) for more
 */
#define ONES2(n) n, n + 1, n + 1, n + 2
#define ONES4(n) ONES2(n), ONES2(n + 1), ONES2(n + 1), ONES2(n + 2)
#define ONES6(n) ONES4(n), ONES4(n + 1), ONES4(n + 1), ONES4(n + 2)
const uint8 pg_number_of_ones[256] = {ONES6(0), ONES6(1), ONES6(1), ONES6(2)};

/*
 * (the run-time probe's macro is TRY_POPCNT_FAST in 17, TRY_POPCNT_X86_64 in
 * 18; PostgreSQL 19 probes where the assembler has POPCNTQ, or for SVE)
 */
#if PG_VERSION_NUM >= 190000
#if defined(HAVE_X86_64_POPCNTQ) || defined(USE_SVE_POPCNT_WITH_RUNTIME_CHECK)
#define FUZZ_POPCOUNT_PROBED
#endif
#elif defined(TRY_POPCNT_X86_64) || defined(TRY_POPCNT_FAST)
#define FUZZ_POPCOUNT_PROBED
#endif
#ifdef FUZZ_POPCOUNT_PROBED
uint64		(*pg_popcount_optimized) (const char *buf, int bytes) = popcount_bytes;
#else
uint64
pg_popcount_optimized(const char *buf, int bytes)
{
	return popcount_bytes(buf, bytes);
}
#endif
#else
uint64
pg_popcount(const char *buf, int bytes)
{
	return popcount_bytes(buf, bytes);
}
#endif

bool
errstart(int elevel, const char *domain)
{
	return elevel >= ERROR;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

int
errcode(int sqlerrcode)
{
	fuzz_last_sqlstate = sqlerrcode;
	return 0;
}

int
errmsg(const char *fmt,...)
{
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	return 0;
}

int
errdetail(const char *fmt,...)
{
	return 0;
}

int
errhint(const char *fmt,...)
{
	return 0;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	siglongjmp(fuzz_error_jump, 1);
}

/*
 * Used by the SQL entry points linked in beside the validation code (info,
 * send, recv), which the fuzz target never calls
 */
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"

#define NOT_CALLED { abort(); }

#ifndef FUZZ_STRINGINFO
void		initStringInfo(StringInfo str) NOT_CALLED
void		appendStringInfo(StringInfo str, const char *fmt,...) NOT_CALLED
#endif
char	   *float8out_internal(double num) NOT_CALLED
Datum		jsonb_in(PG_FUNCTION_ARGS) NOT_CALLED
Datum		DirectFunctionCall1Coll(PGFunction func, Oid collation, Datum arg1) NOT_CALLED
void		pq_begintypsend(StringInfo buf) NOT_CALLED
#if PG_VERSION_NUM >= 180000
void		pq_copymsgbytes(StringInfo msg, void *buf, int datalen) NOT_CALLED
#else
void		pq_copymsgbytes(StringInfo msg, char *buf, int datalen) NOT_CALLED
#endif
bytea	   *pq_endtypsend(StringInfo buf) NOT_CALLED
#if PG_VERSION_NUM >= 160000
void		pq_sendbytes(StringInfo buf, const void *data, int datalen) NOT_CALLED
#else
void		pq_sendbytes(StringInfo buf, const char *data, int datalen) NOT_CALLED
#endif
#ifndef FUZZ_STRINGINFO
void		enlargeStringInfo(StringInfo str, int needed) NOT_CALLED
#endif

/* Used by the hashing of SQL elements, which the fuzz target never calls */
#include "catalog/namespace.h"
#include "mb/pg_wchar.h"

MemoryContext TopMemoryContext = NULL;

Oid			get_fn_expr_argtype(FmgrInfo *flinfo, int argnum) NOT_CALLED
Oid			getBaseType(Oid typid) NOT_CALLED
int			GetDatabaseEncoding(void) NOT_CALLED
const char *GetDatabaseEncodingName(void) NOT_CALLED
Oid			FindDefaultConversionProc(int32 for_encoding, int32 to_encoding) NOT_CALLED
void	   *MemoryContextAlloc(MemoryContext context, Size size) NOT_CALLED
void	   *MemoryContextAllocHuge(MemoryContext context, Size size) NOT_CALLED
void		fmgr_info_cxt(Oid functionId, FmgrInfo *finfo, MemoryContext mcxt) NOT_CALLED
Datum		FunctionCall6Coll(FmgrInfo *flinfo, Oid collation, Datum arg1,
							  Datum arg2, Datum arg3, Datum arg4, Datum arg5,
							  Datum arg6) NOT_CALLED
