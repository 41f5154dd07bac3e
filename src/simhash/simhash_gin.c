/*-------------------------------------------------------------------------
 *
 * simhash_gin.c
 *	  simhash_ops: an exact GIN index for a % b (Hamming distance within
 *	  sbf.simhash_max_distance).
 *
 * The pigeonhole principle (Manku, Jain and Das Sarma 2007): split the 64
 * bits into B blocks; two fingerprints at distance d differ in at most d
 * bits, so at least one block holds at most floor(d / B) of them.  With
 * B >= d + 1 that is 0: some block is equal, and an index of the blocks
 * finds every candidate by exact lookups.
 *
 * The index stores B keys per row, one per block: block i covers bits
 * [floor(64 i / B), floor(64 (i + 1) / B)), and its key is the int8
 * (i << 32) | (those bits, shifted down); with B = 1 the key is the whole
 * fingerprint.  B is the opclass option "blocks" (1..64).
 *
 * The default B is what an index built without the option was built with,
 * so it can never change under an index.  1.1 bound the options function
 * simhash_gin_options (default 4); 1.2 measured another layout faster
 * (docs/simhash.md) and binds simhash_gin_options_1_2 (default
 * SIMHASH_GIN_DEFAULT_BLOCKS), after sbf--1.1--1.2.sql has written
 * blocks = 4 into the options of every index that had none.  A database
 * still at 1.1 keeps the old binding, whatever library it runs.
 *
 * A query q with distance d (the GUC, read when the scan starts) looks up,
 * for each block, the block of q with every choice of at most
 * t = floor(d / B) of its bits flipped.  With B >= d + 1, t = 0 and that
 * is B keys; a smaller B still gives an exact search, with more keys
 * (2 blocks and d = 3: 2 * (1 + 32) keys).  When the keys would exceed
 * SIMHASH_GIN_MAX_KEYS the scan reads the whole index instead
 * (GIN_SEARCH_MODE_ALL): slow, but never a missed row.  Every candidate is
 * rechecked with the operator, so the result is exactly the sequential
 * scan's.
 *
 * consistent prunes first: a row whose block i matched a key with e_i
 * flips is at least e_i bits from q in that block, and a block that
 * matched nothing at least t + 1; when those lower bounds add up to more
 * than d the row cannot match.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/gin.h"
#include "access/reloptions.h"
#include "access/stratnum.h"

#include "simhash.h"

/* The strategy of % in simhash_ops */
#define SIMHASH_NEAR_STRATEGY	1

/* The default of an index made at 1.2 or later, and of one made at 1.1 */
#define SIMHASH_GIN_DEFAULT_BLOCKS	2
#define SIMHASH_GIN_DEFAULT_BLOCKS_1_1	4
/*
 * Above this many lookups a scan reads the whole index instead.  A lookup
 * costs a descent of the entry tree and the merge of its posting list
 * (4 to 7 us measured at a million rows, bench/simhash.sh), so 2048 of
 * them cost about a tenth of a sequential scan of a million rows; past it
 * the count grows combinatorially (2 blocks: 1058 keys for d = 4 and 5,
 * 10978 for d = 6)
 */
#define SIMHASH_GIN_MAX_KEYS	2048

typedef struct SimhashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			blocks;			/* B */
} SimhashGinOptions;

/*
 * B of the index.  GIN always passes the parsed options, defaults filled in,
 * since both versions of the operator class have an options function.
 */
static int
simhash_gin_blocks(FunctionCallInfo fcinfo)
{
	if (!PG_HAS_OPCLASS_OPTIONS())
		elog(ERROR, "simhash_ops called without its options");
	return ((SimhashGinOptions *) PG_GET_OPCLASS_OPTIONS())->blocks;
}

static inline Datum
block_key(uint64 bits, int i, int blocks)
{
	if (blocks == 1)
		return Int64GetDatum((int64) bits);
	return Int64GetDatum(((int64) i << 32) | (int64) bits);
}

static void
define_options(local_relopts *relopts, int default_blocks)
{
	init_local_reloptions(relopts, sizeof(SimhashGinOptions));
	add_local_int_reloption(relopts, "blocks",
							"number of blocks the 64 bits are split into: an exact search within d bits needs d + 1, or flipped keys",
							default_blocks, 1, SIMHASH_BITS,
							offsetof(SimhashGinOptions, blocks));
}

/* The options as 1.1 bound them: kept for databases not yet updated */
PG_FUNCTION_INFO_V1(simhash_gin_options);

Datum
simhash_gin_options(PG_FUNCTION_ARGS)
{
	define_options((local_relopts *) PG_GETARG_POINTER(0),
				   SIMHASH_GIN_DEFAULT_BLOCKS_1_1);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(simhash_gin_options_1_2);

Datum
simhash_gin_options_1_2(PG_FUNCTION_ARGS)
{
	define_options((local_relopts *) PG_GETARG_POINTER(0),
				   SIMHASH_GIN_DEFAULT_BLOCKS);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(simhash_gin_extract_value);

Datum
simhash_gin_extract_value(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	int			blocks = simhash_gin_blocks(fcinfo);
	Datum	   *keys = palloc(sizeof(Datum) * blocks);
	int			i;

	for (i = 0; i < blocks; i++)
		keys[i] = block_key(simhash_block_bits(value, i, blocks), i, blocks);
	*nkeys = blocks;
	PG_RETURN_POINTER(keys);
}

/* C(n, k), saturating at SIMHASH_GIN_MAX_KEYS + 1 */
static int64
choose_capped(int n, int k)
{
	int64		result = 1;
	int			j;

	for (j = 1; j <= k; j++)
	{
		result = result * (n - k + j) / j;
		if (result > SIMHASH_GIN_MAX_KEYS)
			return SIMHASH_GIN_MAX_KEYS + 1;
	}
	return result;
}

/* What consistent needs to know about one key: its block and flips */
typedef struct SimhashKeyInfo
{
	int16		block;
	int16		flips;
	int16		distance;		/* d of the scan, as extractQuery read it */
} SimhashKeyInfo;

typedef struct KeyBuilder
{
	Datum	   *keys;
	SimhashKeyInfo *info;
	int			nkeys;
} KeyBuilder;

/*
 * Add the keys of block i: bits with every set of at most "left" more of
 * its bit positions >= from flipped
 */
static void
add_flips(KeyBuilder *kb, uint64 bits, int width, int from, int flips,
		  int left, int i, int blocks, int d)
{
	int			p;

	kb->keys[kb->nkeys] = block_key(bits, i, blocks);
	kb->info[kb->nkeys].block = i;
	kb->info[kb->nkeys].flips = flips;
	kb->info[kb->nkeys].distance = d;
	kb->nkeys++;
	if (left == 0)
		return;
	for (p = from; p < width; p++)
		add_flips(kb, bits ^ (UINT64CONST(1) << p), width, p + 1, flips + 1,
				  left - 1, i, blocks, d);
}

PG_FUNCTION_INFO_V1(simhash_gin_extract_query);

Datum
simhash_gin_extract_query(PG_FUNCTION_ARGS)
{
	uint64		query = PG_GETARG_SIMHASH(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	int32	   *searchMode = (int32 *) PG_GETARG_POINTER(6);
	int			blocks = simhash_gin_blocks(fcinfo);
	int			d = simhash_max_distance;
	int			t = d / blocks;
	int64		total = 0;
	KeyBuilder	kb;
	int			i;

	if (strategy != SIMHASH_NEAR_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);

	for (i = 0; i < blocks && total <= SIMHASH_GIN_MAX_KEYS; i++)
	{
		int			width = simhash_block_start(i + 1, blocks) -
			simhash_block_start(i, blocks);
		int			k;

		for (k = 0; k <= Min(t, width) && total <= SIMHASH_GIN_MAX_KEYS; k++)
			total += choose_capped(width, k);
	}
	if (total > SIMHASH_GIN_MAX_KEYS)
	{
		/* too many lookups: every row is a candidate, rechecked */
		*nkeys = 0;
		*searchMode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}

	kb.keys = palloc(sizeof(Datum) * total);
	kb.info = palloc(sizeof(SimhashKeyInfo) * total);
	kb.nkeys = 0;
	for (i = 0; i < blocks; i++)
	{
		int			width = simhash_block_start(i + 1, blocks) -
			simhash_block_start(i, blocks);

		add_flips(&kb, simhash_block_bits(query, i, blocks), width, 0, 0,
				  Min(t, width), i, blocks, d);
	}
	Assert(kb.nkeys == total);

	*extra_data = palloc(sizeof(Pointer) * kb.nkeys);
	for (i = 0; i < kb.nkeys; i++)
		(*extra_data)[i] = (Pointer) &kb.info[i];
	*nkeys = kb.nkeys;
	*searchMode = GIN_SEARCH_MODE_DEFAULT;
	PG_RETURN_POINTER(kb.keys);
}

/*
 * Whether a row whose keys matched as check[] says (a key that is not
 * false counts as matched) can be within d of the query: see the top of
 * the file
 */
static bool
simhash_gin_possible(const GinTernaryValue *check, const bool *bcheck,
					 int32 nkeys, Pointer *extra_data, int blocks)
{
	int			d;
	int			t;
	int			lower[SIMHASH_BITS];
	int			sum = 0;
	int			i;

	if (nkeys == 0)				/* GIN_SEARCH_MODE_ALL */
		return true;
	d = ((SimhashKeyInfo *) extra_data[0])->distance;
	t = d / blocks;
	for (i = 0; i < blocks; i++)
		lower[i] = t + 1;
	for (i = 0; i < nkeys; i++)
	{
		SimhashKeyInfo *info = (SimhashKeyInfo *) extra_data[i];
		bool		matched = check ? check[i] != GIN_FALSE : bcheck[i];

		if (matched && info->flips < lower[info->block])
			lower[info->block] = info->flips;
	}
	for (i = 0; i < blocks; i++)
		sum += lower[i];
	return sum <= d;
}

PG_FUNCTION_INFO_V1(simhash_gin_consistent);

Datum
simhash_gin_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);

	*recheck = true;
	PG_RETURN_BOOL(simhash_gin_possible(NULL, check, nkeys, extra_data,
										simhash_gin_blocks(fcinfo)));
}

PG_FUNCTION_INFO_V1(simhash_gin_triconsistent);

Datum
simhash_gin_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);

	if (!simhash_gin_possible(check, NULL, nkeys, extra_data,
							  simhash_gin_blocks(fcinfo)))
		PG_RETURN_GIN_TERNARY_VALUE(GIN_FALSE);
	PG_RETURN_GIN_TERNARY_VALUE(GIN_MAYBE);
}
