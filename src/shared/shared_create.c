/*-------------------------------------------------------------------------
 *
 * shared_create.c
 *	  Shared filters: shared_bloom_create, shared_stablebloom_create,
 *	  shared_slidingbloom_create and shared_reset: a new filter's parameters
 *	  (a sliding filter's sized here too), its table, and its storage
 *	  (shared_storage.c).
 *
 * A filter is made through SQL, CREATE TABLE name (page bigint, data
 * bytea) USING sbf_filter, run by the caller (so it owns the table) under
 * a safe search_path; then its storage is initialized:
 *
 *	- block 0, the metapage, WAL-logged as a new page (log_newpage);
 *	- the data pages 1..pages, by writing only the last one: the file gets
 *	  its full size with a hole before that block, which reads as zeros,
 *	  so creation is O(1) in the size of the filter (md.c writes the last
 *	  block of each 1 GB segment before it, so one write per segment);
 *	- for an unlogged filter, the metapage in the init fork too, logged,
 *	  as an index's ambuildempty does: crash recovery resets the filter to
 *	  its metapage, empty with its parameters (pg_upgrade does not carry
 *	  init forks: an upgraded filter has none until its first open writes
 *	  it, sbf_shared_repair_init_fork).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "common/file_utils.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/varlena.h"

#include "shared.h"
#include "sizing.h"

PG_FUNCTION_INFO_V1(shared_bloom_create);
PG_FUNCTION_INFO_V1(shared_stablebloom_create);
PG_FUNCTION_INFO_V1(shared_reset);
PG_FUNCTION_INFO_V1(shared_slidingbloom_create);
PG_FUNCTION_INFO_V1(shared_slidingbloom_create_time);

/* The most hashes sizing tries */
#define SBF_SLIDING_MAX_K		16

/*
 * Run a utility statement (CREATE TABLE, TRUNCATE) as the caller, through
 * SPI.  Every name in it is qualified; search_path set to pg_catalog and
 * pg_temp for its duration guards what the statement itself runs.
 */
static void
sbf_run_utility(const char *sql)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed: %s", sql);
	SPI_finish();
	AtEOXact_GUC(false, nestlevel);
}

/*
 * Creations of filters of one name in one schema wait for each other: an
 * advisory lock of the transaction on (database, schema, hash of the name),
 * with a fourth field no SQL-level advisory lock uses.  Two sessions
 * creating the same name at once then meet as if one ran after the other
 * committed or rolled back, instead of one failing on a catalog's unique
 * index.
 */
#define SBF_CREATE_LOCK_FIELD4	0x5342	/* "SB" */

static void
sbf_lock_creation(Oid nspid, const char *relname)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, nspid,
						 DatumGetUInt32(hash_any((const unsigned char *) relname,
												 strlen(relname))),
						 SBF_CREATE_LOCK_FIELD4);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	/* see what the creator this waited for committed */
	AcceptInvalidationMessages();
}

/*
 * The filter relid, which exists, for if_not_exists: it must be a shared
 * filter of the same kind made with the same parameters (those the caller
 * gives; a bloom filter's pages and hashes follow from them, and from the
 * layout of the release that made it) and the same persistence.
 */
static void
sbf_check_existing(Oid relid, const SbfSharedMeta *meta,
				   const SbfSharedState *state, const SbfSlidingState *sliding,
				   bool unlogged)
{
	Relation	rel = sbf_shared_open(relid, AccessShareLock, ACL_SELECT);
	const SbfSharedMeta *old = sbf_shared_meta(rel);
	const SbfSharedState *old_state = sbf_shared_state(rel, false);
	const SbfSlidingState *old_sliding = sbf_shared_sliding(rel, false);
	double		growth = state ? state->growth : 0.0;
	bool		same = old->kind == meta->kind &&
		(old->kind != SBF_SHARED_SLIDINGBLOOM ||
		 (old_sliding->window == sliding->window &&
		  old_sliding->tolerance_us == sliding->tolerance_us &&
		  old_sliding->tolerance == sliding->tolerance &&
		  old_sliding->flags == sliding->flags)) &&
		old_state->growth == growth &&
		(growth == 0.0 || old_state->tightening == state->tightening) &&
		old->capacity == meta->capacity && old->fpr == meta->fpr &&
		old->seed == meta->seed &&
		(old->kind != SBF_SHARED_BLOOM ||
		 (old->version == SBF_SHARED_LAYOUT_PENDING) ==
		 (meta->version == SBF_SHARED_LAYOUT_PENDING)) &&
		(old->kind == SBF_SHARED_BLOOM ||
		 (old->hashes == meta->hashes && old->max == meta->max)) &&
		(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED) == unlogged;

	if (!same)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("shared filter \"%s\" already exists with other parameters",
						RelationGetRelationName(rel)),
				 old->kind == SBF_SHARED_SLIDINGBLOOM ?
				 errdetail("It is a %s slidingbloom filter of a window of " INT64_FORMAT " %s for " INT64_FORMAT " values at false-positive rate %g, seed " INT64_FORMAT ".",
						   rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED ?
						   "unlogged" : "logged", old_sliding->window,
						   (old_sliding->flags & SBF_SLIDING_TIME) ? "microseconds" : "arrivals",
						   old->capacity, old->fpr, (int64) old->seed) :
				 old->kind == SBF_SHARED_BLOOM ?
				 old_state->growth > 0.0 ?
				 errdetail("It is a %s transactional bloom filter for " INT64_FORMAT " values at false-positive rate %g, seed " INT64_FORMAT ", growing by %g with tightening %g.",
						   rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED ?
						   "unlogged" : "logged",
						   old->capacity, old->fpr, (int64) old->seed,
						   old_state->growth, old_state->tightening) :
				 errdetail("It is a %s%s bloom filter for " INT64_FORMAT " values at false-positive rate %g, seed " INT64_FORMAT ".",
						   rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED ?
						   "unlogged" : "logged",
						   old->version == SBF_SHARED_LAYOUT_PENDING ?
						   " transactional" : " non-transactional",
						   old->capacity, old->fpr, (int64) old->seed) :
				 errdetail("It is a %s stablebloom filter of " INT64_FORMAT " cells at false-positive rate %g, %u hashes, max %u, seed " INT64_FORMAT ".",
						   rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED ?
						   "unlogged" : "logged",
						   old->capacity, old->fpr, (unsigned) old->hashes,
						   (unsigned) old->max, (int64) old->seed),
				 errhint("Drop it, or create the filter under another name.")));
	ereport(NOTICE,
			(errcode(ERRCODE_DUPLICATE_TABLE),
			 errmsg("shared filter \"%s\" already exists, skipping",
					RelationGetRelationName(rel))));
	relation_close(rel, NoLock);
}

/*
 * CREATE TABLE the filter's relation as the caller, in the schema the name
 * gives or the first of search_path, and initialize it; with if_not_exists,
 * return the filter of that name instead when it exists with the same
 * parameters.
 */
Oid
sbf_shared_create(text *name, const SbfSharedMeta *meta,
				  const SbfSharedState *state, const SbfSlidingState *sliding,
				  bool unlogged, bool if_not_exists)
{
	RangeVar   *rv = makeRangeVarFromNameList(textToQualifiedNameList(name));
	Oid			nspid = RangeVarGetCreationNamespace(rv);
	char	   *sql;
	Oid			relid;
	Relation	rel;

	sbf_lock_creation(nspid, rv->relname);
	relid = get_relname_relid(rv->relname, nspid);
	if (OidIsValid(relid) && if_not_exists)
	{
		sbf_check_existing(relid, meta, state, sliding, unlogged);
		return relid;
	}

	sql = psprintf("CREATE %sTABLE %s.%s (page pg_catalog.int8, data pg_catalog.bytea) USING sbf_filter",
				   unlogged ? "UNLOGGED " : "",
				   quote_identifier(get_namespace_name(nspid)),
				   quote_identifier(rv->relname));

	sbf_run_utility(sql);

	relid = get_relname_relid(rv->relname, nspid);
	if (!OidIsValid(relid))
		elog(ERROR, "shared filter \"%s\" was not created", rv->relname);
	rel = table_open(relid, AccessExclusiveLock);
	sbf_shared_init_storage(rel, meta, state, sliding);
	table_close(rel, NoLock);
	return relid;
}

/*
 * shared_bloom_create(name text, capacity bigint, fpr float8,
 *					   seed bigint DEFAULT 0, unlogged boolean DEFAULT false,
 *					   if_not_exists boolean DEFAULT false,
 *					   transactional boolean DEFAULT true,
 *					   growth float8 DEFAULT 0,
 *					   tightening float8 DEFAULT 0.5) -> regclass
 *
 * A transactional filter has the pending layout (format.h): its adds are
 * undone by a rollback.  Without, the line layout: adds are immediate and
 * stay, as they always did.  With growth, a transactional filter grows by
 * sub-filters (shared_grow.c): capacity is then its first one's, sized for
 * the rate fpr * (1 - tightening), and raised to what
 * SBF_GROWING_MIN_PAGES pages hold.
 */
Datum
shared_bloom_create(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(1);
	double		fpr = PG_GETARG_FLOAT8(2);
	bool		transactional = PG_GETARG_BOOL(6);
	double		growth = PG_GETARG_FLOAT8(7);
	double		tightening = PG_GETARG_FLOAT8(8);
	SbfSharedMeta meta;
	SbfSharedState state;
	int			hashes;

	sbf_check_fpr(fpr);
	sbf_check_growth(growth, tightening, transactional);
	sbf_check_capacity(capacity);
	if (growth > 0.0)
		capacity = Max(capacity,
					   sbf_blocked_bloom_capacity(SBF_SHARED_LAYOUT_PENDING,
												  SBF_GROWING_MIN_PAGES,
												  sbf_first_fpr(fpr, growth, tightening)));
	sbf_shared_meta_common(&meta, SBF_SHARED_BLOOM, PG_GETARG_INT64(3));
	meta.version = transactional ? SBF_SHARED_LAYOUT_PENDING : SBF_SHARED_LAYOUT_LINES;
	meta.block_bits = (uint32) sbf_layout_block_bits(meta.version);
	meta.pages = sbf_blocked_bloom_pages(meta.version, capacity,
										 sbf_first_fpr(fpr, growth, tightening),
										 &hashes);
	meta.hashes = (uint16) hashes;
	meta.max = 1;
	meta.cell_bits = 1;
	meta.cells = meta.pages * meta.block_bits;
	meta.decrements = 0;
	meta.capacity = capacity;
	meta.fpr = fpr;
	sbf_state_init(&state, &meta, growth, tightening);
	PG_RETURN_OID(sbf_shared_create(PG_GETARG_TEXT_PP(0), &meta,
									transactional ? &state : NULL, NULL,
									PG_GETARG_BOOL(4), PG_GETARG_BOOL(5)));
}

/*
 * shared_stablebloom_create(name text, cells bigint, fpr float8, hashes int,
 *							 max int DEFAULT 1, seed bigint DEFAULT 0,
 *							 unlogged boolean DEFAULT false,
 *							 if_not_exists boolean DEFAULT false) -> regclass
 *
 * The cells are rounded up to whole pages; P is derived from the fpr as in
 * stablebloom_sized, for the rounded number of cells.  Each page is a small
 * Stable Bloom filter fed a uniform 1/pages share of the stream, so every
 * cell is decremented with probability P/m per insertion, as in one big
 * filter.
 */
Datum
shared_stablebloom_create(PG_FUNCTION_ARGS)
{
	int64		cells = PG_GETARG_INT64(1);
	double		fpr = PG_GETARG_FLOAT8(2);
	int32		hashes = PG_GETARG_INT32(3);
	int32		max = PG_GETARG_INT32(4);
	SbfSharedMeta meta;
	uint64		page_cells;

	stablebloom_check_params(cells, hashes, max);
	sbf_check_fpr(fpr);
	sbf_shared_meta_common(&meta, SBF_SHARED_STABLEBLOOM, PG_GETARG_INT64(5));
	meta.hashes = (uint16) hashes;
	meta.max = (uint8) max;
	meta.cell_bits = (uint8) stablebloom_cell_bits(max);
	page_cells = sbf_shared_page_cells(&meta);
	meta.pages = ((uint64) cells + page_cells - 1) / page_cells;
	if (meta.pages > SBF_SHARED_MAX_PAGES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a shared stable bloom filter of " INT64_FORMAT " cells is too large", cells),
				 errdetail("A shared filter has at most " UINT64_FORMAT " data pages of " UINT64_FORMAT " cells of %d bits.",
						   SBF_SHARED_MAX_PAGES, page_cells, meta.cell_bits)));
	meta.cells = meta.pages * page_cells;
	if (page_cells <= (uint64) hashes)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of hashes must be below the " UINT64_FORMAT " cells of a page", page_cells)));
	meta.decrements = (uint64) stablebloom_decrements_for(fpr, hashes,
														  (int64) meta.cells, max);
	if (meta.decrements >= page_cells)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false-positive rate %g needs " UINT64_FORMAT " decrements per insertion, more than a page's " UINT64_FORMAT " cells",
						fpr, meta.decrements, page_cells),
				 errhint("Use more hashes or a higher false-positive rate.")));
	meta.capacity = cells;
	meta.fpr = fpr;
	PG_RETURN_OID(sbf_shared_create(PG_GETARG_TEXT_PP(0), &meta, NULL, NULL,
									PG_GETARG_BOOL(6), PG_GETARG_BOOL(7)));
}

/*
 * shared_reset(filter regclass) -> regclass
 *
 * Empty the filter, keeping its parameters: TRUNCATE it as the caller
 * (who needs TRUNCATE on it, and whose transaction it is part of, so a
 * rollback keeps what it held), then give the new storage the metapage it
 * had, as creation does (a growing one with its first sub-filter only).
 * A filter of the pages layout stays one: its parameters are its
 * metapage's.
 */
Datum
shared_reset(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = sbf_shared_open(relid, AccessExclusiveLock, ACL_TRUNCATE);
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfSharedState state;
	SbfSlidingState sliding = *sbf_shared_sliding(rel, true);
	char	   *sql = psprintf("TRUNCATE TABLE %s",
							   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
														  RelationGetRelationName(rel)));

	/* back to its first sub-filter, with a count of zero */
	sbf_state_init(&state, &meta, sbf_shared_state(rel, false)->growth,
				   sbf_shared_state(rel, false)->tightening);
	relation_close(rel, NoLock);
	sbf_run_utility(sql);

	rel = table_open(relid, AccessExclusiveLock);

	/*
	 * An empty sliding filter's clock starts again, as when it was made: so
	 * a filter whose clock a mistaken time moved into the future can be
	 * used again (with no page left, nothing is decoded against the old)
	 */
	sliding.clock = (sliding.flags & SBF_SLIDING_TIME) ? PG_INT64_MIN : 0;
	sbf_shared_init_storage(rel, &meta, &state,
							meta.version == SBF_SHARED_LAYOUT_STAMPED ? &sliding : NULL);
	table_close(rel, NoLock);
	PG_RETURN_OID(relid);
}

/*
 * An interval in microseconds, a month being 30 days as in EXTRACT(epoch);
 * false if it does not fit (or is infinite)
 */
static bool
sbf_interval_usecs(const Interval *span, int64 *usecs)
{
	int64		months;
	int64		days;

#ifdef INTERVAL_NOT_FINITE
	if (INTERVAL_NOT_FINITE(span))
		return false;
#endif
	if (pg_mul_s64_overflow((int64) span->month, (int64) DAYS_PER_MONTH * USECS_PER_DAY, &months) ||
		pg_mul_s64_overflow((int64) span->day, USECS_PER_DAY, &days) ||
		pg_add_s64_overflow(months, days, usecs) ||
		pg_add_s64_overflow(*usecs, span->time, usecs))
		return false;
	return true;
}

/*
 * The fewest pages (and the k that needs them) whose rate at "live" values
 * is at most fpr
 */
static uint64
sbf_sliding_pages(uint64 cells, double live, double fpr, int *hashes)
{
	uint64		best = 0;
	int			k;

	for (k = 1; k <= SBF_SLIDING_MAX_K && (uint64) k < cells; k++)
	{
		uint64		lo = 1;
		uint64		hi = 1;

		while (sbf_sliding_blocked_fpr(k, cells, (double) hi, live) > fpr)
		{
			if (hi >= SBF_SHARED_MAX_PAGES)
				break;
			lo = hi + 1;
			hi = Min(hi * 2, SBF_SHARED_MAX_PAGES);
		}
		if (sbf_sliding_blocked_fpr(k, cells, (double) hi, live) > fpr)
			continue;
		while (lo < hi)
		{
			uint64		mid = lo + (hi - lo) / 2;

			if (sbf_sliding_blocked_fpr(k, cells, (double) mid, live) <= fpr)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (best == 0 || hi < best)
		{
			best = hi;
			*hashes = k;
		}
	}
	if (best == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a shared sliding filter for %.0f values at false-positive rate %g is too large",
						live, fpr),
				 errdetail("A shared filter has at most " UINT64_FORMAT " data pages.",
						   SBF_SHARED_MAX_PAGES)));
	return best;
}

/*
 * The cell width: the fewest bits of 8, 16 and 32 whose M holds a period
 * of at least H besides the 2 H decoding needs (so a page is swept at
 * most once every H clock values), and the period that leaves
 */
static void
sbf_sliding_cells(SbfSlidingState *sliding, int *cell_bits)
{
	int64		horizon = sbf_sliding_horizon(sliding);
	static const int widths[] = {8, 16, 32};
	int			i;

	for (i = 0; i < (int) lengthof(widths); i++)
	{
		int64		modulus = sbf_stamp_modulus(widths[i]);

		if (horizon <= modulus / 3)
		{
			*cell_bits = widths[i];
			sliding->period = modulus - 2 * horizon;
			return;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("a shared sliding filter's window and tolerance span at most " INT64_FORMAT " %s",
					sbf_stamp_modulus(32) / 3,
					(sliding->flags & SBF_SLIDING_TIME) ? "ticks" : "arrivals"),
			 errdetail("They span " INT64_FORMAT "; a cell of 32 bits tells apart " INT64_FORMAT " clock values, and must tell three horizons apart.",
					   horizon, sbf_stamp_modulus(32))));
}

/*
 * Make the filter: size it for "live" values in its window, choose its
 * cells, and create it as the other kinds are
 */
static Oid
sbf_sliding_create(FunctionCallInfo fcinfo, SbfSlidingState *sliding,
				   int64 capacity, double live)
{
	double		fpr = PG_GETARG_FLOAT8(2);
	SbfSharedMeta meta;
	SbfSharedState state;
	int			cell_bits;
	int			hashes = 1;

	sbf_check_fpr(fpr);
	sbf_sliding_cells(sliding, &cell_bits);
	sbf_shared_meta_common(&meta, SBF_SHARED_SLIDINGBLOOM,
						   PG_ARGISNULL(5) ? 0 : PG_GETARG_INT64(5));
	meta.version = SBF_SHARED_LAYOUT_STAMPED;
	meta.block_bits = (uint32) sbf_layout_block_bits(meta.version);
	meta.max = 0;
	meta.cell_bits = (uint8) cell_bits;
	meta.pages = sbf_sliding_pages(sbf_shared_page_cells(&meta), Max(live, 1.0),
								   fpr, &hashes);
	meta.hashes = (uint16) hashes;
	meta.cells = meta.pages * sbf_shared_page_cells(&meta);
	meta.decrements = 0;
	meta.capacity = capacity;
	meta.fpr = fpr;
	sbf_state_init(&state, &meta, 0.0, 0.0);
	if (!PG_ARGISNULL(6) && PG_GETARG_BOOL(6))
		sliding->flags |= SBF_SLIDING_REFRESH;
	return sbf_shared_create(PG_GETARG_TEXT_PP(0), &meta, &state, sliding,
							 !PG_ARGISNULL(7) && PG_GETARG_BOOL(7),
							 !PG_ARGISNULL(8) && PG_GETARG_BOOL(8));
}

static void
sbf_sliding_require(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of a shared sliding filter must not be NULL", name)));
}

/*
 * shared_slidingbloom_create(name text, window bigint, fpr float8,
 *							  capacity bigint DEFAULT NULL,
 *							  tolerance bigint DEFAULT NULL,
 *							  seed bigint DEFAULT 0,
 *							  refresh boolean DEFAULT false,
 *							  unlogged boolean DEFAULT false,
 *							  if_not_exists boolean DEFAULT false) -> regclass
 *
 * A window of w arrivals: a value is seen when it arrived among the w - 1
 * arrivals before.  capacity: the distinct values stored within a window
 * (w - 1, every arrival new, when NULL).  tolerance: how many arrivals a
 * concurrent call may lag behind the others on a page and still be
 * answered exactly (w when NULL).
 */
Datum
shared_slidingbloom_create(PG_FUNCTION_ARGS)
{
	SbfSlidingState sliding;
	int64		window;
	int64		capacity;

	sbf_sliding_require(fcinfo, 0, "the name");
	sbf_sliding_require(fcinfo, 1, "the window");
	sbf_sliding_require(fcinfo, 2, "the false-positive rate");
	window = PG_GETARG_INT64(1);
	if (window < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window must be at least 1 arrival"),
				 errdetail("The window given was " INT64_FORMAT ".", window)));
	memset(&sliding, 0, sizeof(sliding));
	sliding.window = window;
	sliding.reach = window - 1;
	sliding.tolerance = PG_ARGISNULL(4) ? window : PG_GETARG_INT64(4);
	if (sliding.tolerance < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must not be negative"),
				 errdetail("The tolerance given was " INT64_FORMAT ".", sliding.tolerance)));
	if (window > PG_INT32_MAX || sliding.tolerance > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a shared sliding filter's window and tolerance are at most %d arrivals",
						PG_INT32_MAX)));
	capacity = PG_ARGISNULL(3) ? Max(window - 1, 1) : PG_GETARG_INT64(3);
	sbf_check_capacity(capacity);
	PG_RETURN_OID(sbf_sliding_create(fcinfo, &sliding, capacity, (double) capacity));
}

/*
 * shared_slidingbloom_create(name text, window interval, fpr float8,
 *							  capacity bigint, tolerance interval DEFAULT NULL,
 *							  seed bigint DEFAULT 0,
 *							  refresh boolean DEFAULT false,
 *							  unlogged boolean DEFAULT false,
 *							  if_not_exists boolean DEFAULT false) -> regclass
 *
 * A window of time W, in ticks of ceil(W / 64) microseconds: a value added
 * at tick s is seen at tick t when t - s <= n = ceil(W / unit), so nothing
 * added less than W before is missed, and what is reported seen was added
 * less than W plus a tick before.  capacity: the distinct values stored
 * within a window, which sizes the filter.  tolerance: how late an arrival
 * may come after the latest one (W / 8 when NULL).
 */
Datum
shared_slidingbloom_create_time(PG_FUNCTION_ARGS)
{
	SbfSlidingState sliding;
	int64		window;
	int64		tolerance;
	int64		capacity;

	sbf_sliding_require(fcinfo, 0, "the name");
	sbf_sliding_require(fcinfo, 1, "the window");
	sbf_sliding_require(fcinfo, 2, "the false-positive rate");
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("a shared sliding filter with a window of time needs a capacity"),
				 errdetail("The capacity, the distinct values added within one window, sizes the filter.")));
	if (!sbf_interval_usecs(PG_GETARG_INTERVAL_P(1), &window) || window <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window must be a positive, finite interval"),
				 errdetail("The window given was %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   PG_GETARG_DATUM(1))))));
	if (PG_ARGISNULL(4))
		tolerance = (window - 1) / 8 + 1;
	else if (!sbf_interval_usecs(PG_GETARG_INTERVAL_P(4), &tolerance) || tolerance < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must be a finite interval, not negative"),
				 errdetail("The tolerance given was %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   PG_GETARG_DATUM(4))))));
	capacity = PG_GETARG_INT64(3);
	sbf_check_capacity(capacity);
	memset(&sliding, 0, sizeof(sliding));
	sliding.flags = SBF_SLIDING_TIME;
	sliding.window = window;
	sliding.unit = (window - 1) / SBF_SLIDING_TICKS + 1;
	sliding.reach = (window - 1) / sliding.unit + 1;
	sliding.tolerance_us = tolerance;
	sliding.tolerance = (tolerance == 0) ? 0 : (tolerance - 1) / sliding.unit + 1;
	sliding.clock = SBF_SLIDING_NO_CLOCK;
	/* the values stamped in the last n + 1 ticks are live at once */
	PG_RETURN_OID(sbf_sliding_create(fcinfo, &sliding, capacity,
									 (double) capacity * (double) (sliding.reach + 1) /
									 (double) sliding.reach));
}
