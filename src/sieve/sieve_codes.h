/*-------------------------------------------------------------------------
 *
 * sieve_codes.h
 *	  Rice-coded chunks of sorted signatures (sieve_codes.c): the writer
 *	  that cuts a sorted stream of signatures into chunks, and the decoder
 *	  that checks one.  The layout is SieveChunkData in format.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SIEVE_CODES_H
#define SBF_SIEVE_CODES_H

#include "postgres.h"

#include "format.h"

/* The signatures that follow a chunk's first one, read to choose its b */
#define SIEVE_LOOKAHEAD			256

/*
 * Called with each chunk the writer completes; the chunk is the writer's
 * buffer, overwritten by the next one
 */
typedef void (*SieveChunkEmit) (void *arg, SieveChunk chunk);

/*
 * Cuts a strictly ascending stream of signatures into chunks.  It holds
 * the next SIEVE_LOOKAHEAD signatures back, to choose a chunk's b from the
 * gaps that follow the chunk's first signature.
 */
typedef struct SieveChunkWriter
{
	SieveChunkEmit emit;
	void	   *arg;
	Size		max_code_bytes; /* close a chunk before its codes pass this */
	uint64		ahead[SIEVE_LOOKAHEAD]; /* held back, as unsigned */
	int			ahead_first;
	int			ahead_n;
	bool		have_last;		/* a signature was pushed */
	uint64		last;			/* the last pushed, to check the order */
	SieveChunk	buffer;			/* room for the largest chunk */
	SieveChunk	chunk;			/* buffer while a chunk is open, else NULL */
	uint64		previous;		/* the chunk's last signature, unsigned */
	uint64		bits;			/* bits not yet stored in codes */
	int			nbits;
	Size		bytes;			/* bytes of codes stored */
	uint64		chunks;			/* chunks emitted */
	uint64		signatures;		/* signatures emitted */
} SieveChunkWriter;

extern void sieve_chunk_writer_init(SieveChunkWriter *writer, Size max_code_bytes,
									SieveChunkEmit emit, void *arg);
extern void sieve_chunk_writer_push(SieveChunkWriter *writer, int64 signature);
extern void sieve_chunk_writer_finish(SieveChunkWriter *writer);

/*
 * Decodes a chunk's signatures into out (room for chunk->count), checking
 * everything a stored chunk must satisfy: it is decoded whole, whoever
 * asks, since a chunk that fails at its end cannot be trusted at its start.
 * Returns NULL if it does, else what is wrong, for an errdetail; *decoded
 * says how many signatures were written.
 */
extern const char *sieve_chunk_decode(const SieveChunkData *chunk, Size varsize,
									  int64 *out, uint32 *decoded);

#endif							/* SBF_SIEVE_CODES_H */
