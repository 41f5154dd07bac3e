/*-------------------------------------------------------------------------
 *
 * pg_version_compat.h
 *	  The differences between the PostgreSQL majors sbf supports (15 to 18,
 *	  and 19 compiled against its release candidate's headers),
 *	  smoothed over in one place so that the rest of the C reads as if there
 *	  were one PostgreSQL.
 *
 * Each shim is keyed by the release that introduced the difference (its
 * release notes and headers say so), so that a major sbf's matrix does
 * not build (16 and 17: no source of them is to be had here) compiles by
 * construction.  When the
 * oldest supported major passes a line below, that shim goes.
 *
 * Every file of sbf includes it right after postgres.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_PG_VERSION_COMPAT_H
#define SBF_PG_VERSION_COMPAT_H

/* 19 is compiled against its release candidate's headers, not yet run */
#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 200000
#error "sbf builds against PostgreSQL 15 to 19"
#endif

/*
 * 16: the varlena macros moved from postgres.h to
 * varatt.h, which postgres.h no longer includes.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 16: RelFileNode became RelFileLocator, and with it
 * the table AM's relation_set_new_filenode became
 * relation_set_new_filelocator and an SMgrRelation's smgr_rnode its
 * smgr_rlocator.  The older names are mapped to the newer ones; the macro
 * renames the member of TableAmRoutine in sbf's designated initializer.
 */
#if PG_VERSION_NUM < 160000
#include "storage/relfilenode.h"
typedef RelFileNode RelFileLocator;
#define relation_set_new_filelocator relation_set_new_filenode
#define SmgrRelFileLocator(srel) (&(srel)->smgr_rnode.node)
#define RelationFileLocator(rel) ((rel)->rd_node)
#else
#define SmgrRelFileLocator(srel) (&(srel)->smgr_rlocator.locator)
#define RelationFileLocator(rel) ((rel)->rd_locator)
#endif

/*
 * 16: tuple_update reports which indexes to update
 * as a TU_UpdateIndexes, no longer a bool.
 */
#if PG_VERSION_NUM < 160000
typedef bool TU_UpdateIndexes;
#endif

/*
 * 17: ANALYZE hands the table AM a ReadStream to take
 * its blocks from, not one block number and a strategy.
 */
#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#define SBF_ANALYZE_NEXT_BLOCK_ARGS TableScanDesc scan, ReadStream *stream
#else
#define SBF_ANALYZE_NEXT_BLOCK_ARGS TableScanDesc scan, BlockNumber blockno, \
	BufferAccessStrategy bstrategy
#endif

/*
 * 18: index_beginscan takes an
 * IndexScanInstrumentation for EXPLAIN ANALYZE; sbf's own scans pass none.
 * PostgreSQL 19: and ScanOptions flags for the table scan under it; sbf's
 * ask for no option (SO_NONE, as a plain index scan before 19).
 */
#if PG_VERSION_NUM >= 190000
#define index_beginscan_compat(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys), \
					SO_NONE)
#elif PG_VERSION_NUM >= 180000
#define index_beginscan_compat(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#else
#define index_beginscan_compat(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#endif

/*
 * 18: vac_update_relstats takes the count of all-frozen pages after the
 * all-visible ones; a shared filter has neither.
 */
#if PG_VERSION_NUM >= 180000
#define vac_update_relstats_compat(rel, pages, tuples, visible, hasindex, \
								   frozenxid, minmulti, xid_updated, \
								   multi_updated, in_outer_xact) \
	vac_update_relstats((rel), (pages), (tuples), (visible), 0, (hasindex), \
						(frozenxid), (minmulti), (xid_updated), \
						(multi_updated), (in_outer_xact))
#else
#define vac_update_relstats_compat vac_update_relstats
#endif

/*
 * 16: pg_class_ownercheck became object_ownercheck on any catalog.
 */
#if PG_VERSION_NUM >= 160000
#define relation_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define relation_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/*
 * 18: a relation file's path is a RelPathStr, no longer a palloc'd string.
 */
#if PG_VERSION_NUM >= 180000
#define relpathperm_copy(locator, forknum, dest) \
	snprintf((dest), MAXPGPATH, "%s", relpathperm((locator), (forknum)).str)
#else
#define relpathperm_copy(locator, forknum, dest) \
	do { \
		char	   *path_ = relpathperm((locator), (forknum)); \
		\
		snprintf((dest), MAXPGPATH, "%s", path_); \
		pfree(path_); \
	} while (0)
#endif

/*
 * PostgreSQL 19: table_block_parallelscan_startblock_init takes the block a
 * parallel scan starts at and how many blocks it covers (for parallel TID
 * range scans); InvalidBlockNumber for both is a whole scan, started where
 * a synchronized scan is or at block 0, as before 19.
 */
#if PG_VERSION_NUM >= 190000
#define table_block_parallelscan_startblock_init_compat(rel, pbscanwork, pbscan) \
	table_block_parallelscan_startblock_init((rel), (pbscanwork), (pbscan), \
											 InvalidBlockNumber, \
											 InvalidBlockNumber)
#else
#define table_block_parallelscan_startblock_init_compat \
	table_block_parallelscan_startblock_init
#endif

/*
 * PostgreSQL 19: the table AM's tuple_insert, tuple_insert_speculative and
 * multi_insert take their TABLE_INSERT_* options as a uint32, no longer an
 * int.
 */
#if PG_VERSION_NUM >= 190000
typedef uint32 SbfTableInsertOptions;
#else
typedef int SbfTableInsertOptions;
#endif

/*
 * PostgreSQL 19: tuple_delete takes uint32 options after the command id,
 * its changingPart bool becoming the option TABLE_DELETE_CHANGING_PARTITION,
 * and tuple_update takes uint32 options there too (TABLE_UPDATE_*).
 */
#if PG_VERSION_NUM >= 190000
#define SBF_TUPLE_DELETE_ARGS Relation rel, ItemPointer tid, CommandId cid, \
	uint32 options, Snapshot snapshot, Snapshot crosscheck, bool wait, \
	TM_FailureData *tmfd
#define SBF_TUPLE_UPDATE_ARGS Relation rel, ItemPointer otid, \
	TupleTableSlot *slot, CommandId cid, uint32 options, Snapshot snapshot, \
	Snapshot crosscheck, bool wait, TM_FailureData *tmfd, \
	LockTupleMode *lockmode, TU_UpdateIndexes *update_indexes
#else
#define SBF_TUPLE_DELETE_ARGS Relation rel, ItemPointer tid, CommandId cid, \
	Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd, \
	bool changingPart
#define SBF_TUPLE_UPDATE_ARGS Relation rel, ItemPointer otid, \
	TupleTableSlot *slot, CommandId cid, Snapshot snapshot, \
	Snapshot crosscheck, bool wait, TM_FailureData *tmfd, \
	LockTupleMode *lockmode, TU_UpdateIndexes *update_indexes
#endif

/*
 * PostgreSQL 19: index_fetch_begin takes the ScanOptions flags of the
 * index scan's table fetches.
 */
#if PG_VERSION_NUM >= 190000
#define SBF_INDEX_FETCH_BEGIN_ARGS Relation rel, uint32 flags
#else
#define SBF_INDEX_FETCH_BEGIN_ARGS Relation rel
#endif

/*
 * PostgreSQL 19: scan_analyze_next_tuple no longer takes OldestXmin.
 */
#if PG_VERSION_NUM >= 190000
#define SBF_ANALYZE_NEXT_TUPLE_ARGS TableScanDesc scan, double *liverows, \
	double *deadrows, TupleTableSlot *slot
#else
#define SBF_ANALYZE_NEXT_TUPLE_ARGS TableScanDesc scan, \
	TransactionId OldestXmin, double *liverows, double *deadrows, \
	TupleTableSlot *slot
#endif

/*
 * PostgreSQL 19: relation_vacuum's VacuumParams are const.
 */
#if PG_VERSION_NUM >= 190000
#define SBF_VACUUM_PARAMS const struct VacuumParams
#else
#define SBF_VACUUM_PARAMS struct VacuumParams
#endif

/*
 * PostgreSQL 19: relation_copy_for_cluster takes, after OldestXmin, the
 * snapshot of REPACK (CONCURRENTLY), NULL for VACUUM FULL, CLUSTER and a
 * plain REPACK: with one, the copy leaves out the changes of transactions
 * the snapshot does not see, which logical decoding then replays.  Before
 * 19 there is none (sbf_cluster_snapshot is NULL).
 */
#if PG_VERSION_NUM >= 190000
#define SBF_CLUSTER_SNAPSHOT_ARG , Snapshot snapshot
#define sbf_cluster_snapshot snapshot
#else
#define SBF_CLUSTER_SNAPSHOT_ARG
#define sbf_cluster_snapshot ((Snapshot) NULL)
#endif

/*
 * PostgreSQL 19: GlobalVisTestIsRemovableXid says whether it may recompute
 * the horizon when the xid is between its bounds; before 19 it always
 * might, as sbf lets it.
 */
#if PG_VERSION_NUM >= 190000
#define GlobalVisTestIsRemovableXid_compat(state, xid) \
	GlobalVisTestIsRemovableXid((state), (xid), true)
#else
#define GlobalVisTestIsRemovableXid_compat(state, xid) \
	GlobalVisTestIsRemovableXid((state), (xid))
#endif

/*
 * PostgreSQL 19: PageSetChecksumInplace became PageSetChecksum (the copying
 * variant is gone); the older name is mapped to the newer one.
 */
#if PG_VERSION_NUM < 190000
#define PageSetChecksum PageSetChecksumInplace
#endif

/*
 * PostgreSQL 19: CLUSTER and VACUUM FULL became REPACK, and make_new_heap
 * and finish_heap_swap moved from commands/cluster.h to commands/repack.h
 * (sbf includes SBF_REPACK_H where it uses them); finish_heap_swap rebuilds
 * the indexes only when asked (REPACK (CONCURRENTLY) builds its own), as it
 * always did before 19.
 */
#if PG_VERSION_NUM >= 190000
#define SBF_REPACK_H "commands/repack.h"
#define finish_heap_swap_compat(oldheap, newheap, is_system_catalog, \
								swap_toast_by_content, check_constraints, \
								is_internal, frozenxid, cutoffmulti, \
								persistence) \
	finish_heap_swap((oldheap), (newheap), (is_system_catalog), \
					 (swap_toast_by_content), (check_constraints), \
					 (is_internal), true, (frozenxid), (cutoffmulti), \
					 (persistence))
#else
#define SBF_REPACK_H "commands/cluster.h"
#define finish_heap_swap_compat finish_heap_swap
#endif

/*
 * PostgreSQL 19: a FOR ALL TABLES publication can leave tables out (EXCEPT
 * TABLE).  GetRelationPublications became GetRelationIncludedPublications
 * (the older name is mapped to the newer one), and
 * GetRelationExcludedPublications gives the publications that leave a table
 * out: sbf_all_tables_publications(relid) is the FOR ALL TABLES ones that
 * publish relid, for a partition to be asked of its top-most ancestor, the
 * only one EXCEPT can name (as the relcache's publication descriptor does).
 */
#if PG_VERSION_NUM >= 190000
#define sbf_all_tables_publications(relid) \
	list_difference_oid(GetAllTablesPublications(), \
						GetRelationExcludedPublications(relid))
#else
#define GetRelationIncludedPublications GetRelationPublications
#define sbf_all_tables_publications(relid) \
	((void) (relid), GetAllTablesPublications())
#endif

/*
 * The executor's speculative insertion (ON CONFLICT), as sieve_online.c
 * calls it: 16 gives ExecInsertIndexTuples onlySummarizing, 18 gives
 * ExecCheckIndexConstraints the tuple being updated (none for an insert),
 * 19 gives ExecInsertIndexTuples flags for its booleans.
 */
#if PG_VERSION_NUM >= 190000
#define ExecInsertIndexTuples_compat(rri, slot, estate, noDupErr, specConflict, arbiters) \
	ExecInsertIndexTuples((rri), (estate), (noDupErr) ? EIIT_NO_DUPE_ERROR : 0, \
						  (slot), (arbiters), (specConflict))
#elif PG_VERSION_NUM >= 160000
#define ExecInsertIndexTuples_compat(rri, slot, estate, noDupErr, specConflict, arbiters) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, (noDupErr), \
						  (specConflict), (arbiters), false)
#else
#define ExecInsertIndexTuples_compat(rri, slot, estate, noDupErr, specConflict, arbiters) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, (noDupErr), \
						  (specConflict), (arbiters))
#endif
#if PG_VERSION_NUM >= 180000
#define ExecCheckIndexConstraints_compat(rri, slot, estate, conflictTid, arbiters) \
	ExecCheckIndexConstraints((rri), (slot), (estate), (conflictTid), NULL, (arbiters))
#else
#define ExecCheckIndexConstraints_compat ExecCheckIndexConstraints
#endif

#endif							/* SBF_PG_VERSION_COMPAT_H */
