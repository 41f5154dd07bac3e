/*-------------------------------------------------------------------------
 *
 * shared_create.c
 *	  Shared filters: shared_bloom_create and shared_stablebloom_create,
 *	  and the metapage, sparse extension and init fork of a new filter.
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

/*
 * Write the metapage and give the relation its full, sparse size; for an
 * unlogged relation write the metapage into the init fork too.  The
 * relation must have no metapage: be empty, or have a block 0 never
 * written (a restore of page 0 that a crash interrupted after extending
 * the relation; what follows block 0 is then zeros too, since no data page
 * reaches the disk before the WAL that came after the metapage's).  Also
 * used to restore a dump (the row of page 0) and to copy a filter.
 *
 * Restoring holds only the RowExclusiveLock of INSERT, so two sessions may
 * insert a page 0 into the same empty table at once: the relation
 * extension lock, held from the check that the relation is empty to its
 * extension, lets one of them write block 0 and tells the other that the
 * filter already has its metapage (rather than letting it write its
 * metapage as block 1, a data page).
 */
void
sbf_shared_init_storage(Relation rel, const SbfSharedMeta *meta,
						const SbfSharedState *state,
						const SbfSlidingState *sliding)
{
	PGAlignedBlock block;
	Buffer		buf;

	/* as for any logged change: COMMIT then flushes the WAL */
	if (RelationNeedsWAL(rel))
		(void) GetTopTransactionId();

	LockRelationForExtension(rel, ExclusiveLock);
	if (RelationGetNumberOfBlocks(rel) == 0)
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	else
		buf = ReadBuffer(rel, SBF_METAPAGE_BLKNO);
	Assert(BufferGetBlockNumber(buf) == SBF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (!PageIsNew(BufferGetPage(buf)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared filter \"%s\" already has a metapage",
						RelationGetRelationName(rel)),
				 errdetail("Page 0 can only be written into an empty filter.")));

	START_CRIT_SECTION();
	sbf_shared_meta_page_init(BufferGetPage(buf), meta, state, sliding);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);

	/* the data pages: a hole up to the last one */
	memset(block.data, 0, BLCKSZ);
	if (meta->pages >= RelationGetNumberOfBlocks(rel))
		smgrextend(RelationGetSmgr(rel), MAIN_FORKNUM, (BlockNumber) meta->pages,
				   block.data, false);
	/* (under the lock, which sbf_shared_repair_init_fork takes too) */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED)
		sbf_shared_write_init_fork(rel, meta, state, sliding);
	UnlockRelationForExtension(rel, ExclusiveLock);
}

/*
 * The page an unlogged filter's init fork holds: its metapage as the filter
 * was made (a growing one with its first sub-filter only, and a count of
 * zero: its state as it was made, whatever state is given), or with meta
 * NULL an all-zero page (no metapage, as after TRUNCATE)
 */
static void
sbf_init_fork_page(char *page, const SbfSharedMeta *meta,
				   const SbfSharedState *state, const SbfSlidingState *sliding)
{
	SbfSharedState initial;
	SbfSlidingState initial_sliding;

	memset(page, 0, BLCKSZ);
	if (meta == NULL)
		return;
	if (sbf_meta_has_state(meta))
		sbf_state_init(&initial, meta, state->growth, state->tightening);
	/* a sliding filter comes back with its clock as when it was made */
	if (sliding != NULL)
	{
		initial_sliding = *sliding;
		initial_sliding.clock = (sliding->flags & SBF_SLIDING_TIME) ?
			PG_INT64_MIN : 0;
	}
	sbf_shared_meta_page_init((Page) page, meta, &initial,
							  sliding ? &initial_sliding : NULL);
	PageSetChecksumInplace((Page) page, SBF_METAPAGE_BLKNO);
}

/*
 * Write the metapage (or, with meta NULL, an all-zero page: no metapage, as
 * after TRUNCATE) as block 0 of the init fork of an unlogged filter,
 * logged, as an index's ambuildempty does: crash recovery copies the init
 * fork over the main fork, and the filter comes back empty with its
 * parameters (sbf_init_fork_page).
 *
 * The page is written past shared buffers, so a checkpoint that began
 * after its WAL record and ended before the sync would leave it only in
 * the kernel's cache, with replay starting past the record: checkpoints
 * wait for this backend (DELAY_CHKPT_START) from before the write until
 * the page is synced.
 */
void
sbf_shared_write_init_fork(Relation rel, const SbfSharedMeta *meta,
						   const SbfSharedState *state,
						   const SbfSlidingState *sliding)
{
	PGAlignedBlock block;
	bool		delaying = (MyProc->delayChkptFlags & DELAY_CHKPT_START) == 0;

	sbf_init_fork_page(block.data, meta, state, sliding);
	if (delaying)
		MyProc->delayChkptFlags |= DELAY_CHKPT_START;
	PG_TRY();
	{
		if (smgrnblocks(RelationGetSmgr(rel), INIT_FORKNUM) == 0)
			smgrextend(RelationGetSmgr(rel), INIT_FORKNUM, SBF_METAPAGE_BLKNO,
					   block.data, true);
		else
			smgrwrite(RelationGetSmgr(rel), INIT_FORKNUM, SBF_METAPAGE_BLKNO,
					  block.data, true);
		log_newpage(SmgrRelFileLocator(RelationGetSmgr(rel)), INIT_FORKNUM,
					SBF_METAPAGE_BLKNO, (Page) block.data, meta != NULL);
		smgrimmedsync(RelationGetSmgr(rel), INIT_FORKNUM);
	}
	PG_FINALLY();
	{
		if (delaying)
			MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
	}
	PG_END_TRY();
}

/*
 * Create the init fork of an unlogged filter that has none, holding its
 * metapage, in one step a crash cannot split: the page is written and
 * synced in a temporary file, which is then renamed to the init fork's
 * name (durable_rename).  Crash recovery resets a relation to its init
 * fork when it has one and leaves it alone when it has none, so an init
 * fork that existed empty for a moment would reset the filter to no
 * metapage.  (A leftover temporary file goes at the next start.)
 *
 * Not WAL-logged: a standby or backup copied while the filter had no
 * init fork holds its main fork, and an init fork replayed beside it would
 * make the end of recovery fail (ResetUnloggedRelations copies an init
 * fork onto a main fork that must not exist).  Such a copy keeps the
 * filter as pg_upgrade brought it until its own first open writes the
 * init fork; a copy taken after this has the init fork, not the main one.
 */
static void
sbf_shared_create_init_fork(Relation rel, const SbfSharedMeta *meta,
							const SbfSharedState *state,
							const SbfSlidingState *sliding)
{
	PGAlignedBlock block;
	char		tmpdir[MAXPGPATH];
	char		tmppath[MAXPGPATH];
	char		path[MAXPGPATH];
	Oid			spc = OidIsValid(rel->rd_rel->reltablespace) ?
		rel->rd_rel->reltablespace : MyDatabaseTableSpace;
	int			fd;

	sbf_init_fork_page(block.data, meta, state, sliding);
	relpathperm_copy(RelationFileLocator(rel), INIT_FORKNUM, path);
	/* in the tablespace's directory of temporary files: the same file system */
	TempTablespacePath(tmpdir, spc);
	if (MakePGDirectory(tmpdir) < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", tmpdir)));
	snprintf(tmppath, sizeof(tmppath), "%s/%s%d.sbf_init_fork",
			 tmpdir, PG_TEMP_FILE_PREFIX, MyProcPid);
	fd = OpenTransientFile(tmppath, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmppath)));
	errno = 0;
	if (write(fd, block.data, BLCKSZ) != BLCKSZ)
	{
		/* a short write with no error set is a full disk */
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmppath)));
	}
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmppath)));
	/* syncs the file, renames it, syncs it and its new directory */
	(void) durable_rename(tmppath, path, ERROR);
}

/*
 * pg_upgrade carries the main fork of a table, not its init fork, and the
 * filter's CREATE TABLE in the new cluster makes none (shared_am.c): an
 * unlogged filter arrives with no init fork, which crash recovery leaves
 * as it is (nothing writes a filter before it is opened).  The first time
 * a backend opens such a filter, it creates the init fork with the
 * metapage (under the relation extension lock, so once).  A filter
 * upgraded by an earlier build of 1.1 has an empty init fork instead: the
 * metapage is written into it, logged.
 */
void
sbf_shared_repair_init_fork(Relation rel, const SbfSharedMeta *meta,
							const SbfSharedState *state,
							const SbfSlidingState *sliding)
{
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_UNLOGGED ||
		RecoveryInProgress() ||
		(smgrexists(RelationGetSmgr(rel), INIT_FORKNUM) &&
		 smgrnblocks(RelationGetSmgr(rel), INIT_FORKNUM) > 0))
		return;
	if (meta->version != SBF_SHARED_LAYOUT_STAMPED)
		sliding = NULL;
	LockRelationForExtension(rel, ExclusiveLock);
	if (!smgrexists(RelationGetSmgr(rel), INIT_FORKNUM))
	{
		ereport(LOG,
				(errmsg("writing the metapage of unlogged shared filter \"%s\" into its init fork",
						RelationGetRelationName(rel)),
				 errdetail("It had no init fork, as after pg_upgrade.")));
		sbf_shared_create_init_fork(rel, meta, state, sliding);
	}
	else if (smgrnblocks(RelationGetSmgr(rel), INIT_FORKNUM) == 0)
	{
		ereport(LOG,
				(errmsg("writing the metapage of unlogged shared filter \"%s\" into its init fork",
						RelationGetRelationName(rel)),
				 errdetail("Its init fork was empty.")));
		sbf_shared_write_init_fork(rel, meta, state, sliding);
	}
	UnlockRelationForExtension(rel, ExclusiveLock);
}

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

void
sbf_shared_meta_common(SbfSharedMeta *meta, int kind, int64 seed)
{
	memset(meta, 0, sizeof(SbfSharedMeta));
	meta->magic = SBF_MAGIC_SHARED;
	meta->version = SBF_SHARED_LAYOUT_PAGES;
	meta->kind = (uint16) kind;
	meta->block_bits = (uint32) SBF_BLOCK_BITS;
	meta->seed = (uint64) seed;
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
