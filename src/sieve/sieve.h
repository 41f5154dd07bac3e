/*-------------------------------------------------------------------------
 *
 * sieve.h
 *	  What the files of the sieve share: sieve_flush (sieve_flush.c) and its
 *	  Citus side (sieve_citus.c), the compressed seen (sieve_store.c) and
 *	  its SQL functions (sieve_seen.c), the checks of a seen's index
 *	  (sieve_index.c), the sieve_chunk type (sieve_chunk.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SIEVE_H
#define SBF_SIEVE_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/relcache.h"

/*
 * Are seen, discovered and frontier Citus tables?  False when Citus is not
 * installed in the database or none of the three is in its metadata; true
 * when all three are hash-distributed by sig and colocated, the one layout
 * of Citus tables sieve_flush and sieve_flush_shards support; an ERROR
 * naming the table and the problem for any other layout.  The caller is
 * connected to SPI.
 */
extern bool sieve_citus_layout(Oid seen, Oid discovered, Oid frontier,
							   const char *caller);

/*
 * LOCK TABLE seen IN lockmode MODE, through SPI: Citus takes the lock on
 * every node with metadata, in one order
 */
extern void sieve_citus_lock(Oid seen, const char *lockmode);

/*
 * sieve_index.c: the valid, immediate, non-partial unique btree index on
 * rel (column) alone, with bigint's default operator class, or an ERROR
 * naming caller; the ascending one, for a lookup that scans the index
 * backwards from a signature (the compressed seen's head); a table's
 * quoted, schema-qualified name
 */
extern Oid	sieve_unique_index(Relation rel, const char *column, const char *caller);
extern Oid	sieve_ascending_index(Relation rel, const char *column, const char *caller);
extern char *sieve_qualified_name(Relation rel);
extern Oid	sieve_chunk_index(Relation rel);

/* The sieve_chunk type's input function (sieve_chunk.c) tells the type */
extern Datum sieve_chunk_in(PG_FUNCTION_ARGS);

/* The compressed seen (sieve_store.c) */
extern bool sieve_store_is_compressed(Oid seen);
extern Oid	sieve_store_check(Relation seen, const char *caller);
extern void sieve_store_check_rewrite(Oid seen, const char *caller);
extern void sieve_store_check_rewritable(Relation seen, const char *caller);
extern void sieve_store_check_unpublished(Relation seen);
extern void sieve_store_check_unwritten(Relation seen, const char *caller);
extern void sieve_store_contains(Relation seen, Oid index, AttrNumber head_att,
								 AttrNumber chunk_att, const int64 *signatures,
								 int n, bool *found);

/*
 * Merging ascending signatures into a compressed seen: begin (after
 * sieve_store_check_unwritten), add each
 * (true if it was new), finish (the new Z is written; returns how many
 * were new), swap (the new Z replaces seen, ACCESS EXCLUSIVE until the
 * end of the transaction, after sieve_store_check_rewritable again).
 * read_begin, next and finish read seen in order.
 */
typedef struct SieveStoreMerge SieveStoreMerge;
extern SieveStoreMerge *sieve_store_merge_begin(Relation seen, Oid index,
												const char *caller);
extern bool sieve_store_merge_add(SieveStoreMerge *merge, int64 signature);
extern SieveStoreMerge *sieve_store_read_begin(Relation seen, Oid index);
extern bool sieve_store_next(SieveStoreMerge *merge, int64 *signature);
extern void sieve_store_merge_rewrite(SieveStoreMerge *merge);
extern uint64 sieve_store_merge_online_adds(SieveStoreMerge *merge);
extern uint64 sieve_store_merge_finish(SieveStoreMerge *merge);
extern void sieve_store_merge_swap(SieveStoreMerge *merge, const char *caller);

/*
 * What every reader of a seen checks once it holds its lock, and a
 * batch's signatures with their places, sorted (sieve_seen.c)
 */
extern void sieve_seen_check_readable(Relation seen, const char *caller);

typedef struct SieveBatchItem
{
	int64		signature;
	int			index;			/* the element's place in the array */
} SieveBatchItem;

extern SieveBatchItem *sieve_batch_items(ArrayType *values, int *nitems,
										 int *nnulls);

/*
 * A flush's temporary files (sieve_spill.c).  The URLs: write returns the
 * offset that read takes; what read returns is valid until its next call.
 * The rows found new: appended, then read back in the same order.
 */
typedef struct SieveSpill SieveSpill;
extern SieveSpill *sieve_spill_begin(void);
extern int64 sieve_spill_write(SieveSpill *spill, struct varlena *url);
extern struct varlena *sieve_spill_read(SieveSpill *spill, int64 offset);
extern void sieve_spill_row(SieveSpill *spill, int64 pos, int64 offset, int64 sig);
extern bool sieve_spill_next_row(SieveSpill *spill, int64 *pos, int64 *offset,
								 int64 *sig);
extern void sieve_spill_end(SieveSpill *spill);

#endif							/* SBF_SIEVE_H */
