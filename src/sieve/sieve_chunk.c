/*-------------------------------------------------------------------------
 *
 * sieve_chunk.c
 *	  The sieve_chunk type: its text and binary input and output, and
 *	  sieve_chunk_count.  Every chunk that comes in is decoded whole and
 *	  checked (sieve_codes.c); the layout is SieveChunkData in format.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "fmgr.h"
#include "lib/stringinfo.h"

#include "sieve.h"
#include "sieve_codes.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(sieve_chunk_in);
PG_FUNCTION_INFO_V1(sieve_chunk_out);
PG_FUNCTION_INFO_V1(sieve_chunk_recv);
PG_FUNCTION_INFO_V1(sieve_chunk_send);
PG_FUNCTION_INFO_V1(sieve_chunk_count);

/* A chunk that comes in as text or binary is checked whole */
static void
check_chunk(SieveChunk chunk, int sqlstate)
{
	int64	   *signatures;
	uint32		decoded;
	const char *what;

	if (VARSIZE(chunk) < SIEVE_CHUNK_HEADER_SIZE ||
		VARSIZE(chunk) > SIEVE_CHUNK_HEADER_SIZE + SIEVE_CHUNK_MAX_CODE_BYTES)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid sieve_chunk"),
				 errdetail("A sieve_chunk takes %zu to %zu bytes, not %zu.",
						   (Size) SIEVE_CHUNK_HEADER_SIZE - VARHDRSZ,
						   (Size) SIEVE_CHUNK_HEADER_SIZE - VARHDRSZ + SIEVE_CHUNK_MAX_CODE_BYTES,
						   (Size) VARSIZE(chunk) - VARHDRSZ)));
	signatures = palloc(sizeof(int64) * (chunk->count <= SIEVE_CHUNK_MAX_COUNT ? Max(chunk->count, 1) : 1));
	what = sieve_chunk_decode(chunk, VARSIZE(chunk), signatures, &decoded);
	if (what != NULL)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid sieve_chunk"),
				 errdetail_internal("%s", what)));
	pfree(signatures);
}

Datum
sieve_chunk_in(PG_FUNCTION_ARGS)
{
	SieveChunk	chunk = (SieveChunk) sbf_value_from_text(PG_GETARG_CSTRING(0), "sieve_chunk");

	check_chunk(chunk, ERRCODE_INVALID_TEXT_REPRESENTATION);
	PG_RETURN_POINTER(chunk);
}

Datum
sieve_chunk_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_CSTRING(sbf_value_to_text(PG_DETOAST_DATUM(PG_GETARG_DATUM(0))));
}

Datum
sieve_chunk_recv(PG_FUNCTION_ARGS)
{
	SieveChunk	chunk = (SieveChunk)
		sbf_value_from_binary((StringInfo) PG_GETARG_POINTER(0), "sieve_chunk");

	check_chunk(chunk, ERRCODE_INVALID_BINARY_REPRESENTATION);
	PG_RETURN_POINTER(chunk);
}

Datum
sieve_chunk_send(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(sbf_value_to_binary(PG_DETOAST_DATUM(PG_GETARG_DATUM(0))));
}

/*
 * sieve_chunk_count(sieve_chunk) -> integer: the signatures it holds, once
 * the chunk (read from a table, maybe damaged there) is checked whole
 */
Datum
sieve_chunk_count(PG_FUNCTION_ARGS)
{
	SieveChunk	chunk = (SieveChunk) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));

	check_chunk(chunk, ERRCODE_DATA_CORRUPTED);
	PG_RETURN_INT64((int64) chunk->count);
}
