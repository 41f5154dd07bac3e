/*-------------------------------------------------------------------------
 *
 * pg_version_compat.h
 *	  The differences between the PostgreSQL majors sbf supports (15 to 18),
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

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "sbf supports PostgreSQL 15 to 18"
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
 */
#if PG_VERSION_NUM >= 180000
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

#endif							/* SBF_PG_VERSION_COMPAT_H */
