/*-------------------------------------------------------------------------
 *
 * sieve_codes.c
 *	  Rice codes of the gaps between sorted signatures: the compressed Z of
 *	  the offline sieve.
 *
 * The sorted signatures of n URLs, uniform over 2^64, have gaps that are
 * close to geometric with mean 2^64 / n.  Golomb's code (Golomb 1966) is
 * optimal for geometric integers; its power-of-two case, Rice's code
 * (Rice 1979), writes g as the unary code of g >> b and the b low bits of
 * g, and costs about b + 2 bits a gap with b = log2(mean): about
 * log2(2^64 / n) + 2 bits, 5.3 bytes a URL at 20 million and 4.8 at a
 * billion, against 8 for the raw signature (Vigna's notes on crawling,
 * "instantaneous codes"; Witten, Moffat & Bell, "Managing Gigabytes",
 * ch. 3).  Elias-Fano would take the same room and allow random access
 * inside a chunk, which a chunk of a few hundred gaps does not need.
 *
 * Decoding takes no branch per bit: the unary part is the count of
 * trailing zeros of the next 64 bits of the stream (one instruction), and
 * the escape for quotients past SIEVE_RICE_ESCAPE is a branch the
 * processor always predicts.  The layout is SieveChunkData in format.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "port/pg_bitutils.h"

#include "sieve_codes.h"

#define SIGN_BIT		(UINT64CONST(1) << 63)

static inline uint64
to_unsigned(int64 signature)
{
	return (uint64) signature ^ SIGN_BIT;
}

static inline int64
to_signature(uint64 u)
{
	return (int64) (u ^ SIGN_BIT);
}

/* The bits of the Rice code of gap with parameter b */
static inline uint64
code_bits(uint64 gap, int b)
{
	uint64		q = gap >> b;

	return q < SIEVE_RICE_ESCAPE ? q + 1 + b : SIEVE_RICE_ESCAPE + 64;
}

/*
 * The b that codes the gaps after ahead[0] in the fewest bits.  For
 * geometric gaps of mean m it is near log2(m) (Gallager & van Voorhis
 * 1975); the three around floor(log2(mean)) are tried, and the least
 * total wins.
 */
static int
choose_rice(const uint64 *ahead, int first, int n)
{
	uint64		span;
	uint64		mean;
	int			guess;
	int			best = 0;
	uint64		best_bits = PG_UINT64_MAX;

	if (n < 2)
		return 0;
	span = ahead[(first + n - 1) % SIEVE_LOOKAHEAD] - ahead[first];
	mean = span / (n - 1);
	guess = mean == 0 ? 0 : pg_leftmost_one_pos64(mean);
	for (int b = Max(guess - 1, 0); b <= Min(guess + 1, SIEVE_RICE_MAX); b++)
	{
		uint64		bits = 0;

		for (int i = 1; i < n; i++)
		{
			uint64		prev = ahead[(first + i - 1) % SIEVE_LOOKAHEAD];
			uint64		u = ahead[(first + i) % SIEVE_LOOKAHEAD];

			bits += code_bits(u - prev - 1, b);
		}
		if (bits < best_bits)
		{
			best_bits = bits;
			best = b;
		}
	}
	return best;
}

void
sieve_chunk_writer_init(SieveChunkWriter *writer, Size max_code_bytes,
						SieveChunkEmit emit, void *arg)
{
	Assert(max_code_bytes > 0 && max_code_bytes <= SIEVE_CHUNK_MAX_CODE_BYTES);
	memset(writer, 0, sizeof(SieveChunkWriter));
	writer->emit = emit;
	writer->arg = arg;
	writer->max_code_bytes = max_code_bytes;
	writer->buffer = palloc(SIEVE_CHUNK_HEADER_SIZE + max_code_bytes + 1);
	writer->chunk = NULL;
}

/* Appends n <= 56 bits (the low bits of value) to the chunk's codes */
static inline void
put_bits(SieveChunkWriter *writer, uint64 value, int n)
{
	Assert(n <= 56 && writer->nbits < 8);
	value &= (UINT64CONST(1) << n) - 1;
	writer->bits |= value << writer->nbits;
	writer->nbits += n;
	while (writer->nbits >= 8)
	{
		writer->chunk->codes[writer->bytes++] = (uint8) writer->bits;
		writer->bits >>= 8;
		writer->nbits -= 8;
	}
}

static void
close_chunk(SieveChunkWriter *writer)
{
	SieveChunk	chunk = writer->chunk;

	if (writer->nbits > 0)
		chunk->codes[writer->bytes++] = (uint8) writer->bits;
	chunk->last = to_signature(writer->previous);
	SET_VARSIZE(chunk, SIEVE_CHUNK_HEADER_SIZE + writer->bytes);
	writer->chunks++;
	writer->signatures += chunk->count;
	writer->emit(writer->arg, chunk);
	writer->chunk = NULL;
}

/* Writes the oldest held-back signature */
static void
write_next(SieveChunkWriter *writer)
{
	uint64		u = writer->ahead[writer->ahead_first];
	SieveChunk	chunk = writer->chunk;

	if (chunk != NULL)
	{
		uint64		gap = u - writer->previous - 1;
		uint64		bits = code_bits(gap, chunk->rice);

		if ((writer->bytes * 8 + writer->nbits + bits + 7) / 8 > writer->max_code_bytes)
		{
			close_chunk(writer);
			chunk = NULL;
		}
		else
		{
			uint64		q = gap >> chunk->rice;

			if (q < SIEVE_RICE_ESCAPE)
			{
				/* q zeros and a one, then the b low bits */
				put_bits(writer, UINT64CONST(1) << q, q + 1);
				if (chunk->rice > 0)
					put_bits(writer, gap, chunk->rice);
			}
			else
			{
				put_bits(writer, 0, SIEVE_RICE_ESCAPE);
				put_bits(writer, gap, 32);
				put_bits(writer, gap >> 32, 32);
			}
			chunk->count++;
		}
	}
	if (chunk == NULL)
	{
		/* a new chunk starts with u, its b chosen from what follows u */
		chunk = writer->chunk = writer->buffer;
		memset(chunk, 0, SIEVE_CHUNK_HEADER_SIZE);
		chunk->magic = SBF_MAGIC_SIEVE_CHUNK;
		chunk->version = SBF_SIEVE_CHUNK_VERSION;
		chunk->rice = choose_rice(writer->ahead, writer->ahead_first, writer->ahead_n);
		chunk->count = 1;
		chunk->first = to_signature(u);
		writer->bits = 0;
		writer->nbits = 0;
		writer->bytes = 0;
	}
	writer->previous = u;
	writer->ahead_first = (writer->ahead_first + 1) % SIEVE_LOOKAHEAD;
	writer->ahead_n--;
}

void
sieve_chunk_writer_push(SieveChunkWriter *writer, int64 signature)
{
	uint64		u = to_unsigned(signature);

	if (writer->have_last && u <= writer->last)
		elog(ERROR, "sieve chunk writer: signature " INT64_FORMAT " after " INT64_FORMAT,
			 signature, to_signature(writer->last));
	writer->have_last = true;
	writer->last = u;
	if (writer->ahead_n == SIEVE_LOOKAHEAD)
		write_next(writer);
	writer->ahead[(writer->ahead_first + writer->ahead_n) % SIEVE_LOOKAHEAD] = u;
	writer->ahead_n++;
}

void
sieve_chunk_writer_finish(SieveChunkWriter *writer)
{
	while (writer->ahead_n > 0)
		write_next(writer);
	if (writer->chunk != NULL)
		close_chunk(writer);
}

/* The 64 bits of the stream from bit pos, in a buffer padded with zeros */
static inline uint64
peek(const uint8 *codes, uint64 pos)
{
	uint64		word;

	memcpy(&word, codes + (pos >> 3), sizeof(word));
	return word >> (pos & 7);
}

const char *
sieve_chunk_decode(const SieveChunkData *chunk, Size varsize,
				   int64 *out, uint32 *decoded)
{
	uint8		padded[SIEVE_CHUNK_MAX_CODE_BYTES + 16];
	Size		len;
	uint64		limit;
	uint64		pos = 0;
	uint64		u;
	int			b;
	uint32		count;

	*decoded = 0;
	if (varsize < SIEVE_CHUNK_HEADER_SIZE)
		return "The chunk is shorter than its header.";
	if (chunk->magic != SBF_MAGIC_SIEVE_CHUNK)
		return "The chunk does not start with the magic number of a sieve_chunk.";
	if (chunk->version != SBF_SIEVE_CHUNK_VERSION)
		return psprintf("The chunk has format version %u; this sbf reads version %u.",
						chunk->version, SBF_SIEVE_CHUNK_VERSION);
	if (chunk->rice > SIEVE_RICE_MAX)
		return psprintf("The chunk's Rice parameter is %u, more than %d.",
						chunk->rice, SIEVE_RICE_MAX);
	if (chunk->flags != 0)
		return "The chunk has unknown flags.";
	len = varsize - SIEVE_CHUNK_HEADER_SIZE;
	if (len > SIEVE_CHUNK_MAX_CODE_BYTES)
		return psprintf("The chunk's codes take %zu bytes, more than %d.",
						len, SIEVE_CHUNK_MAX_CODE_BYTES);
	count = chunk->count;
	if (count < 1 || count > len * 8 + 1)
		return psprintf("The chunk says it holds %u signatures in %zu bytes of codes.",
						count, len);
	if (count == 1 && chunk->last != chunk->first)
		return "The chunk holds one signature but its first and last differ.";

	memcpy(padded, chunk->codes, len);
	memset(padded + len, 0, 16);
	limit = (uint64) len * 8;
	b = chunk->rice;
	u = to_unsigned(chunk->first);
	out[0] = chunk->first;
	*decoded = 1;

	for (uint32 i = 1; i < count; i++)
	{
		uint64		word = peek(padded, pos);
		int			q = pg_rightmost_one_pos64(word | (UINT64CONST(1) << SIEVE_RICE_ESCAPE));
		uint64		gap;
		uint64		next;

		if (likely(q < SIEVE_RICE_ESCAPE))
		{
			pos += q + 1;
			gap = ((uint64) q << b) |
				(b == 0 ? 0 : peek(padded, pos) & ((UINT64CONST(1) << b) - 1));
			pos += b;
		}
		else
		{
			pos += SIEVE_RICE_ESCAPE;
			gap = (peek(padded, pos) & 0xFFFFFFFF) |
				(peek(padded, pos + 32) << 32);
			pos += 64;
		}
		if (pos > limit)
			return psprintf("The codes end after %u of the chunk's %u signatures.",
							i, count);
		next = u + gap + 1;
		if (next <= u)
			return "The chunk's signatures pass 2^64.";
		u = next;
		out[i] = to_signature(u);
		*decoded = i + 1;
	}
	if (to_signature(u) != chunk->last)
		return psprintf("The chunk's signatures end at " INT64_FORMAT ", not at its last, " INT64_FORMAT ".",
						to_signature(u), chunk->last);
	if ((pos + 7) / 8 != len)
		return psprintf("The chunk's codes take %zu bytes, %zu more than its signatures need.",
						len, len - (Size) ((pos + 7) / 8));
	if ((pos & 7) != 0 && (padded[pos >> 3] >> (pos & 7)) != 0)
		return "The unused bits of the chunk's last byte are not zero.";
	return NULL;
}
