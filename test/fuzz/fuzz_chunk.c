/*
 * libFuzzer target: the Rice-coded chunks of a compressed seen
 * (src/sieve/sieve_codes.c), under AddressSanitizer and UBSan.
 *
 * The first input byte picks what the rest is.
 *
 * Even: a stored chunk, as sieve_chunk's input and recv functions and a
 * read of the table pass it to sieve_chunk_decode.  The decoder must
 * refuse it with a reason or accept it; the signatures of an accepted
 * chunk must go strictly up from its first to its last, the writer must
 * code them again into chunks that decode to the same signatures.
 *
 * Odd: a sorted stream of signatures, three bytes a gap (a shift and 16
 * bits: gaps from 1 to past 2^32, so escapes too), cut into chunks by the
 * writer with a code budget from the first byte (small budgets, many
 * chunks).  Every chunk must be accepted and decode to its part of the
 * stream.
 *
 * A crash, an out-of-bounds access, undefined behaviour, or a chunk that
 * decodes to other signatures than it was written from is a finding.
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include <stdarg.h>
#include <stdio.h>

#include "fuzz.h"
#include "sieve_codes.h"

#define SIGN_BIT		(UINT64CONST(1) << 63)

/* the decoder's reasons; PostgreSQL's own vsnprintf is not linked in */
#undef vsnprintf

char *
psprintf(const char *fmt,...)
{
	va_list		args;
	char	   *s = palloc(256);

	va_start(args, fmt);
	vsnprintf(s, 256, fmt, args);
	va_end(args);
	return s;
}

/* What the writer emitted, decoded and appended */
typedef struct Collected
{
	int64	   *sigs;
	uint32		n;
	uint32		max;
	uint64		chunks;
} Collected;

static void
collect(void *arg, SieveChunk chunk)
{
	Collected  *c = (Collected *) arg;
	uint32		decoded;

	if (c->n + chunk->count > c->max)
		abort();				/* more signatures than were pushed */
	if (sieve_chunk_decode(chunk, VARSIZE(chunk), c->sigs + c->n,
						   &decoded) != NULL || decoded != chunk->count)
		abort();				/* the writer wrote a chunk its decoder refuses */
	c->n += decoded;
	c->chunks++;
}

/* Codes sigs[0..n) into chunks of at most budget bytes of codes, decodes them */
static void
round_trip(const int64 *sigs, uint32 n, Size budget)
{
	SieveChunkWriter writer;
	Collected	c;

	c.sigs = palloc(sizeof(int64) * (n + 1));
	c.n = 0;
	c.max = n;
	c.chunks = 0;
	sieve_chunk_writer_init(&writer, budget, collect, &c);
	for (uint32 i = 0; i < n; i++)
		sieve_chunk_writer_push(&writer, sigs[i]);
	sieve_chunk_writer_finish(&writer);
	if (c.n != n || writer.signatures != n || writer.chunks != c.chunks ||
		memcmp(c.sigs, sigs, sizeof(int64) * n) != 0)
		abort();				/* decoded other signatures than were written */
}

static void
stored_chunk(const uint8_t *data, size_t size)
{
	SieveChunk	chunk;
	int64	   *out;
	uint32		decoded;

	if (size > SIEVE_CHUNK_HEADER_SIZE + SIEVE_CHUNK_MAX_CODE_BYTES + 64)
		return;
	/* the varlena header is the datum's own; the rest is the input */
	chunk = palloc(VARHDRSZ + size + 1);
	memcpy((char *) chunk + VARHDRSZ, data, size);
	SET_VARSIZE(chunk, VARHDRSZ + size);
	if (VARSIZE(chunk) < SIEVE_CHUNK_HEADER_SIZE)
	{
		if (sieve_chunk_decode(chunk, VARSIZE(chunk), NULL, &decoded) == NULL)
			abort();			/* a chunk shorter than its header accepted */
		return;
	}
	/* the decoder writes no more than count signatures */
	out = palloc(sizeof(int64) * Min(chunk->count, SIEVE_CHUNK_MAX_COUNT));
	if (sieve_chunk_decode(chunk, VARSIZE(chunk), out, &decoded) != NULL)
		return;

	if (decoded != chunk->count || out[0] != chunk->first ||
		out[decoded - 1] != chunk->last)
		abort();
	for (uint32 i = 1; i < decoded; i++)
		if (out[i] <= out[i - 1])
			abort();			/* not strictly ascending */

	round_trip(out, decoded, SIEVE_CHUNK_CODE_BYTES);
}

static void
stream(const uint8_t *data, size_t size, Size budget)
{
	uint32		max = size / 3 + 1;
	int64	   *sigs = palloc(sizeof(int64) * max);
	uint32		n = 0;
	uint64		u = 0;

	for (size_t i = 0; i + 3 <= size; i += 3)
	{
		int			shift = data[i] % 48;
		uint64		gap = ((uint64) (data[i + 1] | (data[i + 2] << 8)) << shift) + 1;

		if (n > 0 && gap > PG_UINT64_MAX - u)
			break;				/* past 2^64 */
		u = n == 0 ? gap - 1 : u + gap;
		sigs[n++] = (int64) (u ^ SIGN_BIT);
	}
	round_trip(sigs, n, budget);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;

	fuzz_last_sqlstate = 0;
	if (sigsetjmp(fuzz_error_jump, 0) == 0)
	{
		if ((data[0] & 1) == 0)
			stored_chunk(data + 1, size - 1);
		else
			stream(data + 1, size - 1, 9 + (data[0] >> 1) * 16);
	}
	else
		abort();				/* neither the decoder nor the writer raises an ERROR here */
	fuzz_free_all();
	return 0;
}
