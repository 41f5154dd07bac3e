/*-------------------------------------------------------------------------
 *
 * shared_storage.c
 *	  Shared filters: a new filter's storage (its metapage, its sparse
 *	  size) and an unlogged filter's init fork, written at creation and
 *	  rewritten by the first open of a filter that lost it (pg_upgrade
 *	  carries no init fork).  Below the page layer, which calls the
 *	  repair; above the metapage's structures (shared_meta.c).
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
	PageSetChecksum((Page) page, SBF_METAPAGE_BLKNO);
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
