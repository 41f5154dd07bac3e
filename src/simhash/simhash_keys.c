/*-------------------------------------------------------------------------
 *
 * simhash_keys.c
 *	  simhash_keys(fp, distance, blocks): join keys that find every pair of
 *	  fingerprints within a Hamming distance by an equi-join.
 *
 * The pigeonhole principle once more (Manku, Jain and Das Sarma 2007):
 * split the 64 bits into B blocks (the layout of the GIN index,
 * simhash.h); two fingerprints that differ in at most d bits differ in at
 * most d blocks, so they agree on at least B - d of them, and so on every
 * block of at least one combination of B - d blocks.  simhash_keys
 * returns one key per combination: C(B, B - d) keys, and two fingerprints
 * within d share at least one.  Joining a table to itself on the keys
 * finds every pair within d (and some pairs farther apart, rarely when the
 * B - d blocks hold many bits): the join then keeps those with
 * a <~> b <= d.  With d = 3 and B = 5, each key covers 2 blocks (25 or 26
 * bits) and a fingerprint has 10 keys.
 *
 * A key: the combinations of B - d of the B blocks are numbered from 0 in
 * lexicographic order of their block numbers; the key of combination r is
 * XXH3-64, seeded with r, of the 8 bytes (little-endian) of the
 * fingerprint with every bit outside those blocks cleared.  Equal keys
 * come from equal blocks, except for a hash collision (2^-64), which only
 * adds a candidate that the distance check drops.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "funcapi.h"

#include "simhash.h"

/* At most this many keys a fingerprint: C(B, d) */
#define SIMHASH_MAX_JOIN_KEYS	4096

/* C(n, k), saturating at SIMHASH_MAX_JOIN_KEYS + 1 */
static int
join_keys_count(int n, int k)
{
	int64		result = 1;
	int			j;

	if (k > n - k)
		k = n - k;
	for (j = 1; j <= k; j++)
	{
		result = result * (n - k + j) / j;
		if (result > SIMHASH_MAX_JOIN_KEYS)
			return SIMHASH_MAX_JOIN_KEYS + 1;
	}
	return (int) result;
}

static uint64
join_key(uint64 value, uint64 mask, int combination)
{
	uint64		masked = value & mask;
	unsigned char bytes[SIMHASH_BYTES];
	int			i;

	for (i = 0; i < SIMHASH_BYTES; i++)
		bytes[i] = (unsigned char) (masked >> (8 * i));
	return (uint64) XXH3_64bits_withSeed(bytes, SIMHASH_BYTES,
										 (XXH64_hash_t) combination);
}

typedef struct JoinKeys
{
	uint64	   *keys;
	int			nkeys;
} JoinKeys;

/*
 * The keys of every combination of "chosen" of the B blocks, in
 * lexicographic order
 */
static void
join_keys_compute(JoinKeys *jk, uint64 value, int blocks, int chosen)
{
	int			pick[SIMHASH_BITS];
	int			i;

	for (i = 0; i < chosen; i++)
		pick[i] = i;
	for (;;)
	{
		uint64		mask = 0;

		for (i = 0; i < chosen; i++)
			mask |= simhash_block_mask(pick[i], blocks);
		jk->keys[jk->nkeys] = join_key(value, mask, jk->nkeys);
		jk->nkeys++;

		/* the next combination: advance the last pick that can move */
		for (i = chosen - 1; i >= 0 && pick[i] == blocks - chosen + i; i--)
			;
		if (i < 0)
			break;
		pick[i]++;
		for (i = i + 1; i < chosen; i++)
			pick[i] = pick[i - 1] + 1;
	}
}

PG_FUNCTION_INFO_V1(simhash_keys);

/* simhash_keys(fp simhash64, distance int, blocks int) -> setof bigint */
Datum
simhash_keys(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	JoinKeys   *jk;

	if (SRF_IS_FIRSTCALL())
	{
		uint64		value = PG_GETARG_SIMHASH(0);
		int32		distance = PG_GETARG_INT32(1);
		int32		blocks = PG_GETARG_INT32(2);
		int			count;
		MemoryContext oldcontext;

		if (blocks < 1 || blocks > SIMHASH_BITS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("blocks must be between 1 and %d, not %d",
							SIMHASH_BITS, blocks)));
		if (distance < 0 || distance >= blocks)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("distance must be between 0 and blocks - 1 (%d), not %d",
							blocks - 1, distance),
					 errhint("Pairs within distance d agree on at least blocks - d blocks: use at least d + 1 blocks.")));
		count = join_keys_count(blocks, distance);
		if (count > SIMHASH_MAX_JOIN_KEYS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%d blocks at distance %d give more than %d keys a fingerprint",
							blocks, distance, SIMHASH_MAX_JOIN_KEYS),
					 errhint("The keys are C(blocks, distance); d + 2 blocks give (d + 2)(d + 1)/2.")));

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		jk = palloc(sizeof(JoinKeys));
		jk->keys = palloc(sizeof(uint64) * count);
		jk->nkeys = 0;
		join_keys_compute(jk, value, blocks, blocks - distance);
		Assert(jk->nkeys == count);
		funcctx->user_fctx = jk;
		funcctx->max_calls = count;
		MemoryContextSwitchTo(oldcontext);
	}

	funcctx = SRF_PERCALL_SETUP();
	jk = (JoinKeys *) funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		/* (SRF_RETURN_NEXT counts the call before it evaluates its result) */
		Datum		key = Int64GetDatum((int64) jk->keys[funcctx->call_cntr]);

		SRF_RETURN_NEXT(funcctx, key);
	}
	SRF_RETURN_DONE(funcctx);
}
