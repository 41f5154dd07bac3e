/*-------------------------------------------------------------------------
 *
 * shared_am.c
 *	  The table access method sbf_filter: a shared filter as a table.
 *
 * Making a shared filter a table (CREATE TABLE ... USING sbf_filter) gives
 * it everything a database object has: an owner, GRANT and REVOKE, DROP,
 * schemas, \d, dependencies, UNLOGGED, and pg_dump.  Its pages are the
 * filter's own (see format.h); this file only maps them to rows so that
 * COPY, and so pg_dump and pg_restore, can move a filter:
 *
 *	- a scan yields one row (page, data) per materialized page: page 0 with
 *	  the metapage's 64 bytes, then each data page that is not all zeros
 *	  with its PRNG state (8 bytes) and block (SBF_BLOCK_BYTES), in page
 *	  order (backwards too, for a SCROLL cursor);
 *	- inserting rows writes them back, after checking them: page 0 first,
 *	  into an empty filter, then data pages in any order.
 *
 * UPDATE, DELETE, indexes, TABLESAMPLE and row locks have no meaning here
 * and are refused; VACUUM folds a transactional filter's pending adds and
 * ANALYZE samples nothing.
 * The row of page n has the ctid (n,1), and can be fetched by it.  There
 * is one version of each row, but a transactional filter's rows hold the
 * pending adds its scan's snapshot sees committed, not the others
 * (shared_pending.c): a dump holds the values its snapshot saw added.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/multixact.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/vacuum.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "replication/logicalworker.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "shared.h"

PG_FUNCTION_INFO_V1(sbf_filter_handler);

static void
sbf_am_unsupported(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("shared filters do not support %s", what),
			 errdetail("A shared filter changes only through shared_test_and_add; its rows are its pages, for COPY and pg_dump.")));
}

/*
 * Scans
 */
typedef struct SbfScanDescData
{
	TableScanDescData base;
	BlockNumber nblocks;		/* blocks to look at (serial scan) */
	BlockNumber current;		/* block last looked at (serial scan) */
	bool		started;		/* serial scan: current is valid; parallel
								 * scan: has a start block */
	bool		empty;			/* no metapage: no rows */
	ParallelBlockTableScanWorkerData pbw;
	BufferAccessStrategy strategy;
	int			page_att;		/* the columns' indexes in the descriptor */
	int			data_att;
	bytea	   *row;			/* the data column, reused for every row */
} SbfScanDescData;

typedef SbfScanDescData *SbfScanDesc;

static const TupleTableSlotOps *
sbf_slot_callbacks(Relation rel)
{
	return &TTSOpsVirtual;
}

static TableScanDesc
sbf_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
			   struct ScanKeyData *key, ParallelTableScanDesc pscan,
			   uint32 flags)
{
	SbfScanDesc scan;

	if (flags & SO_TYPE_SAMPLESCAN)
		sbf_am_unsupported("TABLESAMPLE");
	if (flags & (SO_TYPE_BITMAPSCAN | SO_TYPE_TIDRANGESCAN))
		sbf_am_unsupported("bitmap or TID range scans");
	sbf_shared_check_recovery(rel);

	scan = palloc0(sizeof(SbfScanDescData));
	/*
	 * ANALYZE takes no row: neither a column added by mistake nor a damaged
	 * metapage stops it (and so a database-wide ANALYZE)
	 */
	if (flags & SO_TYPE_ANALYZE)
	{
		scan->data_att = 1;
		scan->empty = true;
	}
	else
	{
		sbf_shared_check_relation(rel, &scan->page_att, &scan->data_att);
		scan->empty = !sbf_shared_has_meta(rel);
	}
	scan->base.rs_rd = rel;
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_key = key;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = pscan;
	scan->nblocks = RelationGetNumberOfBlocks(rel);
	scan->strategy = GetAccessStrategy(BAS_BULKREAD);
	scan->row = palloc(VARHDRSZ + SBF_ROW_DATA_SIZE);
	return &scan->base;
}

static void
sbf_scan_end(TableScanDesc sscan)
{
	SbfScanDesc scan = (SbfScanDesc) sscan;

	/* a parallel scan's snapshot, restored and registered by tableam.c */
	if (scan->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->base.rs_snapshot);
	FreeAccessStrategy(scan->strategy);
	pfree(scan->row);
	pfree(scan);
}

static void
sbf_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key,
				bool set_params, bool allow_strat, bool allow_sync,
				bool allow_pagemode)
{
	SbfScanDesc scan = (SbfScanDesc) sscan;

	scan->started = false;
}

/*
 * The next block to look at in the given direction, or InvalidBlockNumber
 * at the end.  As heapam does, a serial scan that ran off either end
 * starts again from that end: after a cursor has fetched every row
 * forwards, FETCH BACKWARD returns the last row.
 */
static BlockNumber
sbf_scan_next_block(SbfScanDesc scan, ScanDirection direction)
{
	Relation	rel = scan->base.rs_rd;
	ParallelBlockTableScanDesc pbscan =
	(ParallelBlockTableScanDesc) scan->base.rs_parallel;

	if (pbscan == NULL)
	{
		if (ScanDirectionIsForward(direction))
		{
			BlockNumber next = scan->started ? scan->current + 1 : 0;

			if (next >= scan->nblocks)
			{
				scan->started = false;
				return InvalidBlockNumber;
			}
			scan->current = next;
		}
		else if (ScanDirectionIsBackward(direction))
		{
			if (scan->started ? scan->current == 0 : scan->nblocks == 0)
			{
				scan->started = false;
				return InvalidBlockNumber;
			}
			scan->current = scan->started ? scan->current - 1 : scan->nblocks - 1;
		}
		else
			return InvalidBlockNumber;
		scan->started = true;
		return scan->current;
	}

	if (!ScanDirectionIsForward(direction))
		elog(ERROR, "a parallel scan of a shared filter only goes forwards");
	if (!scan->started)
	{
		table_block_parallelscan_startblock_init_compat(rel, &scan->pbw, pbscan);
		scan->started = true;
	}
	return table_block_parallelscan_nextpage(rel, &scan->pbw, pbscan);
}

/*
 * A transactional filter's page whose bits hold adds a scan's snapshot does
 * not see: the scan cannot leave them out, and would give a row holding
 * values added after the snapshot (in pg_dump's, values whose batch the
 * dumped frontier does not hold).
 */
static void
sbf_scan_refuse_page(Relation rel, BlockNumber blkno)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not read page %u of shared filter \"%s\" as of this snapshot",
					blkno, RelationGetRelationName(rel)),
			 errdetail("The page folded into its bits adds of transactions that committed after the snapshot was taken: on a standby, the primary folded them, or VACUUM FULL did."),
			 errhint("Scan (or dump) again. Fewer adds while a scan runs, or hot_standby_feedback on a standby, avoid this.")));
}

/*
 * Put page blkno's data column into row (allocated for the largest), as of
 * snapshot, or return false when the page has no row (a data page never
 * written or all zeros, a block past the filter's data pages).
 */
static bool
sbf_read_row(Relation rel, BlockNumber blkno, BufferAccessStrategy strategy,
			 Snapshot snapshot, bytea *row)
{
	char	   *data = VARDATA(row);
	Buffer		buf;
	Page		page;
	bool		found;
	bool		consistent = true;

	SbfSharedMeta meta;
	const SbfSharedState *state;

	/* the metapage's row has the state the data pages' rows then follow */
	state = sbf_shared_state(rel, blkno == SBF_METAPAGE_BLKNO);
	/* (past the data pages, or between sub-filters: overflow pages) */
	if (blkno != SBF_METAPAGE_BLKNO &&
		(blkno > sbf_state_pages(state) || sbf_sub_of_block(state, blkno) < 0))
		return false;
	if (blkno != SBF_METAPAGE_BLKNO)
		sbf_sub_meta(sbf_shared_meta(rel), &state->sub[sbf_sub_of_block(state, blkno)],
					 &meta);

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	found = !PageIsNew(page);
	if (found)
		sbf_shared_check_page(rel, blkno == SBF_METAPAGE_BLKNO ? NULL : &meta,
							  page, blkno);
	if (found && blkno == SBF_METAPAGE_BLKNO)
	{
		Size		len = ((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData);

		memcpy(data, PageGetContents(page), len);
		SET_VARSIZE(row, VARHDRSZ + len);
	}
	else if (found)
	{
		uint64		prng = sbf_page_opaque(page)->prng;
		SbfChain	chain = {0};

		/* (the pending layout's folded xid is this cluster's, not the row's) */
		if (meta.version == SBF_SHARED_LAYOUT_PENDING)
		{
			prng = 0;
			sbf_chain_read(rel, page, blkno, false, &chain);
		}
		memcpy(data, &prng, sizeof(uint64));
		consistent = sbf_page_snapshot_block(&meta, page, &chain, snapshot,
											 (uint8 *) data + sizeof(uint64));
		sbf_chain_release(&chain);
		SET_VARSIZE(row, VARHDRSZ + SBF_ROW_DATA_SIZE);
		found = !sbf_block_is_zero((uint8 *) data + sizeof(uint64));
	}
	UnlockReleaseBuffer(buf);
	if (!consistent)
		sbf_scan_refuse_page(rel, blkno);

	/* a metapage scanned is a metapage checked: a dump is never garbage */
	if (blkno == SBF_METAPAGE_BLKNO)
		(void) sbf_shared_meta(rel);
	return found;
}

/* Store page blkno's row in a virtual slot; dropped columns are NULL */
static void
sbf_store_row(TupleTableSlot *slot, Relation rel, BlockNumber blkno,
			  bytea *row, int page_att, int data_att)
{
	int			i;

	for (i = 0; i < slot->tts_tupleDescriptor->natts; i++)
		slot->tts_isnull[i] = true;
	slot->tts_values[page_att] = Int64GetDatum((int64) blkno);
	slot->tts_isnull[page_att] = false;
	slot->tts_values[data_att] = PointerGetDatum(row);
	slot->tts_isnull[data_att] = false;
	ExecStoreVirtualTuple(slot);
	ItemPointerSet(&slot->tts_tid, blkno, FirstOffsetNumber);
	slot->tts_tableOid = RelationGetRelid(rel);
}

static bool
sbf_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
					 TupleTableSlot *slot)
{
	SbfScanDesc scan = (SbfScanDesc) sscan;
	BlockNumber blkno;

	ExecClearTuple(slot);
	if (scan->empty)
		return false;
	while ((blkno = sbf_scan_next_block(scan, direction)) != InvalidBlockNumber)
	{
		CHECK_FOR_INTERRUPTS();
		if (!sbf_read_row(scan->base.rs_rd, blkno, scan->strategy,
						  scan->base.rs_snapshot, scan->row))
			continue;
		sbf_store_row(slot, scan->base.rs_rd, blkno, scan->row,
					  scan->page_att, scan->data_att);
		return true;
	}
	return false;
}

/*
 * Fetching a row by ctid (a Tid Scan, an AFTER ROW trigger, UPDATE and
 * DELETE before they are refused): the row of page blkno is (blkno, 1).
 * There is one version of a row, the page as it is now.
 */
static bool
sbf_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
							TupleTableSlot *slot)
{
	BlockNumber blkno = ItemPointerGetBlockNumberNoCheck(tid);
	int			page_att;
	int			data_att;
	bytea	   *row;
	bool		found;

	sbf_shared_check_relation(rel, &page_att, &data_att);
	sbf_shared_check_recovery(rel);
	ExecClearTuple(slot);
	if (ItemPointerGetOffsetNumberNoCheck(tid) != FirstOffsetNumber ||
		blkno >= RelationGetNumberOfBlocks(rel))
		return false;

	row = palloc(VARHDRSZ + SBF_ROW_DATA_SIZE);
	found = sbf_read_row(rel, blkno, NULL, snapshot, row);
	if (found)
	{
		sbf_store_row(slot, rel, blkno, row, page_att, data_att);
		/* the slot keeps a copy of the row in its own memory */
		ExecMaterializeSlot(slot);
	}
	pfree(row);
	return found;
}

static bool
sbf_tuple_tid_valid(TableScanDesc sscan, ItemPointer tid)
{
	SbfScanDesc scan = (SbfScanDesc) sscan;

	return ItemPointerGetOffsetNumberNoCheck(tid) == FirstOffsetNumber &&
		ItemPointerGetBlockNumberNoCheck(tid) < scan->nblocks;
}

/* A row has one version: the latest is the one asked for */
static void
sbf_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
}

/* ... and it is visible to every snapshot (a foreign key's check asks) */
static bool
sbf_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
							 Snapshot snapshot)
{
	return true;
}

/*
 * Inserting rows: restoring pages
 */

/* Check a data row's cells: none above max */
static void
sbf_check_row_cells(Relation rel, const SbfSharedMeta *meta,
					int64 pageno, const uint8 *block)
{
	uint64		cells = sbf_shared_page_cells(meta);
	uint64		i;

	/* with the fewest bits for max, only a non-power-of-two max can overflow */
	if (((meta->max + 1) & meta->max) == 0)
		return;
	for (i = 0; i < cells; i++)
		if (sbf_cell_get(block, meta->cell_bits, i) > meta->max)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("invalid page " INT64_FORMAT " for shared filter \"%s\"",
							pageno, RelationGetRelationName(rel)),
					 errdetail("Cell " UINT64_FORMAT " holds %u, more than the max %u.",
							   i, sbf_cell_get(block, meta->cell_bits, i),
							   (unsigned) meta->max)));
}

static void
sbf_insert_row(Relation rel, int64 pageno, bytea *data)
{
	Size		len = VARSIZE_ANY_EXHDR(data);
	const char *bytes = VARDATA_ANY(data);
	SbfSharedMeta meta;
	const SbfSharedState *state;
	uint64		prng;

	if (pageno == SBF_METAPAGE_BLKNO)
	{
		SbfSharedState restored;
		SbfSlidingState sliding;
		Size		with_state = sizeof(SbfSharedMeta) + sizeof(SbfSharedState);
		Size		with_clock = with_state + sizeof(SbfSlidingState);

		if (len != sizeof(SbfSharedMeta) && len != with_state && len != with_clock)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("invalid page 0 for shared filter \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("Page 0 holds %zu bytes, not %zu (a filter's parameters), %zu (a transactional filter's, and its state) or %zu (a sliding filter's, its state and its clock).",
							   len, sizeof(SbfSharedMeta), with_state, with_clock)));
		memcpy(&meta, bytes, sizeof(meta));
		sbf_shared_validate_meta(&meta, ERRCODE_INVALID_BINARY_REPRESENTATION,
								 RelationGetRelationName(rel));
		if (len != sbf_meta_contents_size(&meta))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("invalid page 0 for shared filter \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("Page 0 of a filter of format version %u holds %zu bytes.",
							   (unsigned) meta.version, sbf_meta_contents_size(&meta))));
		if (sbf_meta_has_state(&meta))
		{
			memcpy(&restored, bytes + sizeof(SbfSharedMeta), sizeof(restored));
			sbf_shared_validate_state(&meta, &restored,
									  ERRCODE_INVALID_BINARY_REPRESENTATION,
									  RelationGetRelationName(rel));
		}
		if (meta.version == SBF_SHARED_LAYOUT_STAMPED)
		{
			memcpy(&sliding, bytes + with_state, sizeof(sliding));
			sbf_sliding_validate(&meta, &sliding,
								 ERRCODE_INVALID_BINARY_REPRESENTATION,
								 RelationGetRelationName(rel));
		}
		sbf_shared_init_storage(rel, &meta,
								sbf_meta_has_state(&meta) ? &restored : NULL,
								meta.version == SBF_SHARED_LAYOUT_STAMPED ? &sliding : NULL);
		return;
	}

	if (RelationGetNumberOfBlocks(rel) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("page 0 of shared filter \"%s\" must be inserted first",
						RelationGetRelationName(rel)),
				 errdetail("Page 0 holds the filter's parameters.")));
	meta = *sbf_shared_meta(rel);
	state = sbf_shared_state(rel, false);
	if (pageno < 1 || (uint64) pageno > sbf_state_pages(state) ||
		sbf_sub_of_block(state, (BlockNumber) pageno) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid page " INT64_FORMAT " for shared filter \"%s\"",
						pageno, RelationGetRelationName(rel)),
				 errdetail("The filter has data pages 1.." UINT64_FORMAT ".",
						   sbf_state_pages(state))));
	if (len != SBF_ROW_DATA_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid page " INT64_FORMAT " for shared filter \"%s\"",
						pageno, RelationGetRelationName(rel)),
				 errdetail("A data page holds %zu bytes, not %zu.",
						   len, (Size) SBF_ROW_DATA_SIZE)));
	sbf_check_row_cells(rel, &meta, pageno, (const uint8 *) bytes + sizeof(uint64));
	if (meta.version == SBF_SHARED_LAYOUT_PENDING &&
		!sbf_block_is_zero_from((const uint8 *) bytes + sizeof(uint64),
								SBF_PENDING_LINES * SBF_LINE_BYTES))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid page " INT64_FORMAT " for shared filter \"%s\"",
						pageno, RelationGetRelationName(rel)),
				 errdetail("A transactional filter's page has bits in its first %d lines only; the rest of its data is zero.",
						   SBF_PENDING_LINES)));
	memcpy(&prng, bytes, sizeof(uint64));
	if (meta.version == SBF_SHARED_LAYOUT_PENDING && prng != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid page " INT64_FORMAT " for shared filter \"%s\"",
						pageno, RelationGetRelationName(rel)),
				 errdetail("A transactional filter's page starts with 8 zero bytes.")));
	sbf_shared_write_page(rel, (BlockNumber) pageno, prng,
						  (const uint8 *) bytes + sizeof(uint64));
}

/*
 * Restoring a page can set any of its cells, and so make chosen values look
 * seen: it needs UPDATE, which adding values needs, besides the INSERT the
 * executor has checked.  pg_restore and COPY FROM run as the filter's
 * owner, who has both.
 */
static void
sbf_check_restore_privilege(Relation rel)
{
	if (pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_UPDATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", RelationGetRelationName(rel)),
				 errdetail("Inserting the pages of a shared filter needs UPDATE on it, as adding values does.")));
}

/*
 * Logical replication would copy a filter's pages once, at the initial sync
 * of its table, and never after: its changes are generic WAL, which logical
 * decoding does not see, so the subscriber's copy would drift from the
 * publisher's without a word.  A subscriber refuses the copy instead.
 */
static void
sbf_check_not_replicated(Relation rel)
{
	if (IsLogicalWorker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("logical replication does not carry shared filter \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("A shared filter changes through generic WAL, which logical decoding does not see: only its pages at the initial sync would be copied."),
				 errhint("Leave shared filters out of publications, or copy a filter with COPY or pg_dump; a physical standby replays it.")));
}

static void
sbf_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
				 SbfTableInsertOptions options,
				 struct BulkInsertStateData *bistate)
{
	int			page_att;
	int			data_att;

	sbf_check_not_replicated(rel);
	sbf_check_restore_privilege(rel);
	sbf_shared_check_relation(rel, &page_att, &data_att);
	slot_getallattrs(slot);
	if (slot->tts_isnull[page_att] || slot->tts_isnull[data_att])
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a row of shared filter \"%s\" must have a page and its data",
						RelationGetRelationName(rel))));
	sbf_insert_row(rel, DatumGetInt64(slot->tts_values[page_att]),
				   DatumGetByteaPP(slot->tts_values[data_att]));
	ItemPointerSet(&slot->tts_tid, (BlockNumber) DatumGetInt64(slot->tts_values[page_att]),
				   FirstOffsetNumber);
	slot->tts_tableOid = RelationGetRelid(rel);
}

static void
sbf_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				 CommandId cid, SbfTableInsertOptions options,
				 struct BulkInsertStateData *bistate)
{
	int			i;

	for (i = 0; i < nslots; i++)
		sbf_tuple_insert(rel, slots[i], cid, options, bistate);
}

/*
 * Storage
 */

/*
 * Empty storage, with an (empty) init fork for an unlogged table, which
 * writing the metapage fills (sbf_shared_init_storage).  Not in binary
 * upgrade: pg_upgrade's restore of the schema makes the table, then puts
 * the old cluster's main fork in place of this one, metapage and all, and
 * carries no init fork; an empty one made here would be what crash
 * recovery resets the filter to, its parameters gone.  With none, recovery
 * leaves the main fork as pg_upgrade brought it until the filter's first
 * open creates the init fork (sbf_shared_repair_init_fork).
 */
static void
sbf_relation_set_new_filelocator(Relation rel,
								 const RelFileLocator *newrlocator,
								 char persistence, TransactionId *freezeXid,
							  MultiXactId *minmulti)
{
	SMgrRelation srel;

	sbf_shared_check_relation(rel, NULL, NULL);
	/* the oldest id a page can hold (see sbf_relation_vacuum) */
	*freezeXid = RecentXmin;
	*minmulti = InvalidMultiXactId;

	srel = RelationCreateStorage(*newrlocator, persistence, true);
	if (persistence == RELPERSISTENCE_UNLOGGED && !IsBinaryUpgrade)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrlocator, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);
}

/*
 * TRUNCATE of a filter made (or given new storage) in the same transaction:
 * no metapage left, in the init fork of an unlogged one either, as a
 * TRUNCATE in another transaction leaves it (new storage, empty forks).
 */
static void
sbf_relation_nontransactional_truncate(Relation rel)
{
	RelationTruncate(rel, 0);
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		smgrexists(RelationGetSmgr(rel), INIT_FORKNUM) &&
		smgrnblocks(RelationGetSmgr(rel), INIT_FORKNUM) > 0)
		sbf_shared_write_init_fork(rel, NULL, NULL, NULL);
	if (rel->rd_amcache != NULL)
		pfree(rel->rd_amcache);
	rel->rd_amcache = NULL;
}

/*
 * ALTER TABLE SET TABLESPACE: copy every fork block by block (the holes of
 * a sparse filter are written out in the copy).
 */
static void
sbf_relation_copy_data(Relation rel, const RelFileLocator *newrlocator)
{
	SMgrRelation dstrel;
	ForkNumber	fork;

	/*
	 * an upgraded unlogged filter's init fork first (its first open writes
	 * it), to be copied and logged: the copy's main fork is not logged
	 */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		!smgrexists(RelationGetSmgr(rel), INIT_FORKNUM) &&
		sbf_shared_has_meta(rel))
		(void) sbf_shared_meta(rel);
	dstrel = smgropen(*newrlocator, rel->rd_backend);

	FlushRelationBuffers(rel);
	RelationCreateStorage(*newrlocator, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	for (fork = MAIN_FORKNUM + 1; fork <= MAX_FORKNUM; fork++)
	{
		if (!smgrexists(RelationGetSmgr(rel), fork))
			continue;
		smgrcreate(dstrel, fork, false);
		if (RelationIsPermanent(rel) ||
			(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
			 fork == INIT_FORKNUM))
			log_smgrcreate(newrlocator, fork);
		RelationCopyStorage(RelationGetSmgr(rel), dstrel, fork,
							rel->rd_rel->relpersistence);
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

/*
 * VACUUM FULL and CLUSTER: the new relation gets the metapage and every
 * written data page, and stays sparse.
 */
static void
sbf_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
							  Relation OldIndex, bool use_sort,
							  TransactionId OldestXmin SBF_CLUSTER_SNAPSHOT_ARG,
							  TransactionId *xid_cutoff,
							  MultiXactId *multi_cutoff,
							  double *num_tuples, double *tups_vacuumed,
							  double *tups_recently_dead)
{
	SbfSharedMeta meta;
	SbfSharedState state;
	BufferAccessStrategy strategy;
	uint64		blkno;

	/*
	 * REPACK (CONCURRENTLY) would copy the pages as of its snapshot and then
	 * replay what logical decoding saw change since: a filter changes
	 * through generic WAL, which decoding does not see, so the adds made
	 * during the copy would be lost
	 */
	if (sbf_cluster_snapshot != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shared filters do not support REPACK (CONCURRENTLY)"),
				 errdetail("A shared filter changes through generic WAL, which logical decoding does not see: values added during the copy would be lost."),
				 errhint("Use REPACK without CONCURRENTLY, or VACUUM FULL.")));

	*num_tuples = 0;
	*tups_vacuumed = 0;
	*tups_recently_dead = 0;
	/* a table without metapage (truncated, or never given one) is empty */
	if (!sbf_shared_has_meta(OldTable))
		return;
	state = *sbf_shared_state(OldTable, true);
	sbf_shared_init_storage(NewTable, sbf_shared_meta(OldTable), &state,
							sbf_shared_meta(OldTable)->version == SBF_SHARED_LAYOUT_STAMPED ?
							sbf_shared_sliding(OldTable, false) : NULL);
	strategy = GetAccessStrategy(BAS_BULKREAD);
	for (blkno = 1; blkno <= sbf_state_pages(&state); blkno++)
	{
		Buffer		buf;
		uint8		block[SBF_BLOCK_BYTES];
		uint64		prng;
		bool		isnew;
		int			sub = sbf_sub_of_block(&state, (BlockNumber) blkno);

		CHECK_FOR_INTERRUPTS();
		/* (overflow pages are left behind, their adds folded in) */
		if (sub < 0)
			continue;
		buf = sbf_shared_read(OldTable, (BlockNumber) blkno, strategy);
		if (!BufferIsValid(buf))
			break;
		sbf_sub_meta(sbf_shared_meta(OldTable), &state.sub[sub], &meta);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		isnew = PageIsNew(BufferGetPage(buf));
		if (!isnew)
		{
			Page		page = BufferGetPage(buf);
			SbfChain	chain = {0};

			sbf_shared_check_page(OldTable, &meta, page, (BlockNumber) blkno);
			if (meta.version == SBF_SHARED_LAYOUT_PENDING)
				sbf_chain_read(OldTable, page, (BlockNumber) blkno, false, &chain);
			/* committed pending adds are folded in, aborted ones left out */
			sbf_page_visible_block(&meta, page, &chain, block);
			prng = sbf_page_opaque(page)->prng;
			/* and the copy's folded xid is the newest of theirs */
			if (meta.version == SBF_SHARED_LAYOUT_PENDING)
				prng = sbf_page_newest_committed(&meta, page, &chain);
			sbf_chain_release(&chain);
		}
		UnlockReleaseBuffer(buf);
		if (isnew)
			continue;
		sbf_shared_write_page(NewTable, (BlockNumber) blkno, prng, block);
		*num_tuples += 1;
	}
	FreeAccessStrategy(strategy);
}

/*
 * VACUUM: no dead rows, pages are changed in place; but a transactional
 * filter's pages keep transaction ids in their pending adds and folded
 * xids, so the table has a relfrozenxid, and VACUUM folds or drops every
 * pending add whose transaction has ended (and every snapshot sees),
 * clears the folded xids older than the freeze limit and advances it to
 * the oldest that stays.  The commit log can then be truncated past it: an
 * anti-wraparound VACUUM (autovacuum runs it whatever its settings) keeps
 * every id a page holds readable.
 *
 * The freeze limit is vacuum_freeze_min_age before the horizon, the
 * setting's value whatever VACUUM's FREEZE option or the table's
 * autovacuum_freeze_min_age say: a standby's snapshot is not in the
 * horizon without hot_standby_feedback, and generic WAL raises no recovery
 * conflict, so a folded xid is what keeps a standby's scan whose snapshot
 * is older from reading adds it never saw; VACUUM FREEZE (freeze_min_age
 * 0) clearing it at once would let that scan read them.  It is clamped to
 * half autovacuum_freeze_max_age, as PostgreSQL clamps freeze_min_age: a
 * folded xid kept is at most that old (plus the horizon's lag), so after
 * an anti-wraparound VACUUM the table's relfrozenxid is at most about
 * half autovacuum_freeze_max_age old, and the next is that far away.
 */
static void
sbf_relation_vacuum(Relation rel, SBF_VACUUM_PARAMS *params,
					BufferAccessStrategy bstrategy)
{
	TransactionId frozen = GetOldestNonRemovableTransactionId(rel);
	int			freeze_min_age = Min(vacuum_freeze_min_age,
									 autovacuum_freeze_max_age / 2);
	TransactionId forget = frozen - (TransactionId) freeze_min_age;
	bool		frozenxid_updated;
	bool		minmulti_updated;

	if (!TransactionIdIsNormal(forget))
		forget = FirstNormalTransactionId;
	if (sbf_shared_has_meta(rel) &&
		sbf_shared_meta(rel)->version == SBF_SHARED_LAYOUT_PENDING)
	{
		SbfSharedState state = *sbf_shared_state(rel, true);
		uint64		blkno;

		/* (a sub-filter made meanwhile is new: it holds no older xid) */
		for (blkno = 1; blkno <= sbf_state_pages(&state); blkno++)
		{
			TransactionId oldest;
			SbfSharedMeta meta;
			int			sub = sbf_sub_of_block(&state, (BlockNumber) blkno);

			CHECK_FOR_INTERRUPTS();
			/* (an overflow page is folded with its data page) */
			if (sub < 0)
				continue;
			sbf_sub_meta(sbf_shared_meta(rel), &state.sub[sub], &meta);
			oldest = sbf_pending_fold_page(rel, &meta, (BlockNumber) blkno,
										   bstrategy, forget);
			if (TransactionIdIsValid(oldest) && TransactionIdPrecedes(oldest, frozen))
				frozen = oldest;
		}
	}
	vac_update_relstats_compat(rel, RelationGetNumberOfBlocks(rel), -1, 0, false,
							   frozen, InvalidMultiXactId,
							   &frozenxid_updated, &minmulti_updated, false);
}

static uint64
sbf_relation_size(Relation rel, ForkNumber forkNumber)
{
	return table_block_relation_size(rel, forkNumber);
}

static bool
sbf_relation_needs_toast_table(Relation rel)
{
	return false;
}

/* One row per block at most */
static void
sbf_relation_estimate_size(Relation rel, int32 *attr_widths,
						   BlockNumber *pages, double *tuples,
						   double *allvisfrac)
{
	*pages = RelationGetNumberOfBlocks(rel);
	*tuples = *pages;
	*allvisfrac = 0;
}

/* ANALYZE: no sample */
static bool
sbf_scan_analyze_next_block(SBF_ANALYZE_NEXT_BLOCK_ARGS)
{
	return false;
}

static bool
sbf_scan_analyze_next_tuple(SBF_ANALYZE_NEXT_TUPLE_ARGS)
{
	return false;
}

/*
 * What has no meaning for a shared filter
 */
static struct IndexFetchTableData *
sbf_index_fetch_begin(SBF_INDEX_FETCH_BEGIN_ARGS)
{
	sbf_am_unsupported("indexes");
	return NULL;
}

static void
sbf_index_fetch_reset(struct IndexFetchTableData *data)
{
}

static void
sbf_index_fetch_end(struct IndexFetchTableData *data)
{
}

static bool
sbf_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
					  Snapshot snapshot, TupleTableSlot *slot,
					  bool *call_again, bool *all_dead)
{
	sbf_am_unsupported("indexes");
	return false;
}

static TransactionId
sbf_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	sbf_am_unsupported("indexes");
	return InvalidTransactionId;
}

static void
sbf_tuple_insert_speculative(Relation rel, TupleTableSlot *slot,
							 CommandId cid, SbfTableInsertOptions options,
							 struct BulkInsertStateData *bistate,
							 uint32 specToken)
{
	sbf_am_unsupported("INSERT ... ON CONFLICT");
}

static void
sbf_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
							   uint32 specToken, bool succeeded)
{
	sbf_am_unsupported("INSERT ... ON CONFLICT");
}

static TM_Result
sbf_tuple_delete(SBF_TUPLE_DELETE_ARGS)
{
	sbf_am_unsupported("DELETE");
	return TM_Invisible;
}

static TM_Result
sbf_tuple_update(SBF_TUPLE_UPDATE_ARGS)
{
	sbf_am_unsupported("UPDATE");
	return TM_Invisible;
}

static TM_Result
sbf_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
			   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			   LockWaitPolicy wait_policy, uint8 flags,
			   TM_FailureData *tmfd)
{
	sbf_am_unsupported("row locks");
	return TM_Invisible;
}

static double
sbf_index_build_range_scan(Relation table_rel, Relation index_rel,
						   struct IndexInfo *index_info, bool allow_sync,
						   bool anyvisible, bool progress,
						   BlockNumber start_blockno, BlockNumber numblocks,
						   IndexBuildCallback callback, void *callback_state,
						   TableScanDesc scan)
{
	sbf_am_unsupported("indexes");
	return 0;
}

static void
sbf_index_validate_scan(Relation table_rel, Relation index_rel,
						struct IndexInfo *index_info, Snapshot snapshot,
						struct ValidateIndexState *state)
{
	sbf_am_unsupported("indexes");
}

static bool
sbf_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate)
{
	sbf_am_unsupported("TABLESAMPLE");
	return false;
}

static bool
sbf_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
						   TupleTableSlot *slot)
{
	sbf_am_unsupported("TABLESAMPLE");
	return false;
}

const TableAmRoutine sbf_filter_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = sbf_slot_callbacks,

	.scan_begin = sbf_scan_begin,
	.scan_end = sbf_scan_end,
	.scan_rescan = sbf_scan_rescan,
	.scan_getnextslot = sbf_scan_getnextslot,

	.parallelscan_estimate = table_block_parallelscan_estimate,
	.parallelscan_initialize = table_block_parallelscan_initialize,
	.parallelscan_reinitialize = table_block_parallelscan_reinitialize,

	.index_fetch_begin = sbf_index_fetch_begin,
	.index_fetch_reset = sbf_index_fetch_reset,
	.index_fetch_end = sbf_index_fetch_end,
	.index_fetch_tuple = sbf_index_fetch_tuple,

	.tuple_fetch_row_version = sbf_tuple_fetch_row_version,
	.tuple_tid_valid = sbf_tuple_tid_valid,
	.tuple_get_latest_tid = sbf_tuple_get_latest_tid,
	.tuple_satisfies_snapshot = sbf_tuple_satisfies_snapshot,
	.index_delete_tuples = sbf_index_delete_tuples,

	.tuple_insert = sbf_tuple_insert,
	.tuple_insert_speculative = sbf_tuple_insert_speculative,
	.tuple_complete_speculative = sbf_tuple_complete_speculative,
	.multi_insert = sbf_multi_insert,
	.tuple_delete = sbf_tuple_delete,
	.tuple_update = sbf_tuple_update,
	.tuple_lock = sbf_tuple_lock,

	.relation_set_new_filelocator = sbf_relation_set_new_filelocator,
	.relation_nontransactional_truncate = sbf_relation_nontransactional_truncate,
	.relation_copy_data = sbf_relation_copy_data,
	.relation_copy_for_cluster = sbf_relation_copy_for_cluster,
	.relation_vacuum = sbf_relation_vacuum,
	.scan_analyze_next_block = sbf_scan_analyze_next_block,
	.scan_analyze_next_tuple = sbf_scan_analyze_next_tuple,
	.index_build_range_scan = sbf_index_build_range_scan,
	.index_validate_scan = sbf_index_validate_scan,

	.relation_size = sbf_relation_size,
	.relation_needs_toast_table = sbf_relation_needs_toast_table,

	.relation_estimate_size = sbf_relation_estimate_size,

	.scan_sample_next_block = sbf_scan_sample_next_block,
	.scan_sample_next_tuple = sbf_scan_sample_next_tuple
};

/* sbf_filter_handler(internal) -> table_am_handler */
Datum
sbf_filter_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&sbf_filter_methods);
}
