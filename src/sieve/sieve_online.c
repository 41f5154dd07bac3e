/*-------------------------------------------------------------------------
 *
 * sieve_online.c
 *	  The exact online store: seen_test_and_add on a compressed seen.
 *
 * An online compressed seen (sieve_seen_create, sieve_seen_online) is an
 * LSM of two levels in one table:
 *
 *	  head bigint PRIMARY KEY, chunk sieve_chunk (NULL for an online add)
 *	  UNIQUE (head) WHERE chunk IS NOT NULL
 *
 * Its chunks are the compressed Z that a flush writes (sieve_store.c),
 * found through the partial index of chunks; an online add is a row of its
 * own, (signature, NULL), found through the primary key.  A later flush, or
 * sieve_seen_compact, reads both in order and writes them all as chunks
 * into the new heap it swaps in (the adds vanish with the old heap).
 *
 * A batch is tested against the chunks first, in one walk in signature
 * order (sieve_store_contains).  Each signature that no chunk holds is
 * inserted as INSERT ... ON CONFLICT DO NOTHING inserts a row, through the
 * executor's own speculative insertion on the primary key: a committed or
 * our own row of that signature answers seen; another transaction's
 * uncommitted one is waited for, and answers seen if it commits; a
 * conflict found after our insertion undoes it and tries again.  So the
 * guarantees are those of a unique index: of sessions adding a signature
 * at once exactly one is answered new, a rolled-back add is forgotten, and
 * crash recovery, standbys, pg_dump and pg_upgrade carry the rows as any
 * other.  The signatures are inserted in ascending order, so that two
 * batches wait for each other in one direction only.
 *
 * Adders take ROW EXCLUSIVE on the seen, which a flush's SHARE ROW
 * EXCLUSIVE excludes: a flush sees every add committed before it, waits
 * for those in progress, and the adds after it find its chunks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "hash.h"
#include "misread.h"
#include "sieve.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(seen_test_and_add);
PG_FUNCTION_INFO_V1(seen_test_and_add_int8);
PG_FUNCTION_INFO_V1(seen_test_and_add_array);

/*
 * Opens seen for adding: where nextval() is refused (read-only, standby,
 * parallel) this is too; SELECT and INSERT on it; an online compressed
 * seen (its chunk index returned) whose rows the inserts below SQL may
 * write: no trigger or rule, which they would not fire, no constraint they
 * would not check (but the primary key, which they do)
 */
static Relation
online_open(Oid seen_oid, Oid *chunk_index)
{
	Relation	seen;
	AclResult	aclresult;
	AttrNumber	chunk_att;

	PreventCommandIfReadOnly("seen_test_and_add()");
	PreventCommandIfParallelMode("seen_test_and_add()");
	aclresult = pg_class_aclcheck(seen_oid, GetUserId(), ACL_SELECT);
	if (aclresult == ACLCHECK_OK)
		aclresult = pg_class_aclcheck(seen_oid, GetUserId(), ACL_INSERT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(get_rel_relkind(seen_oid)),
					   get_rel_name(seen_oid));
	seen = table_open(seen_oid, RowExclusiveLock);
	if (!sieve_store_is_compressed(seen_oid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("seen relation \"%s\" is not a compressed seen",
						RelationGetRelationName(seen)),
				 errhint("seen_test_and_add adds to a compressed seen made by sieve_seen_create.")));
	/* its primary key, every unique index an arbiter (test_and_add) */
	(void) sieve_store_check(seen, "seen_test_and_add");
	chunk_att = get_attnum(seen_oid, "chunk");
	*chunk_index = sieve_chunk_index(seen);
	if (!OidIsValid(*chunk_index))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("compressed seen relation \"%s\" does not take online adds",
						RelationGetRelationName(seen)),
				 errdetail("An online compressed seen has a unique index on (head) WHERE chunk IS NOT NULL, and its column chunk may be NULL."),
				 errhint("SELECT sieve_seen_online('%s'); makes it one (a compressed seen made before sbf 1.2 is not).",
						 sieve_qualified_name(seen))));
	sieve_seen_check_readable(seen, "seen_test_and_add");
	if (seen->trigdesc != NULL || seen->rd_rules != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("seen_test_and_add does not support triggers or rules on seen relation \"%s\"",
						RelationGetRelationName(seen)),
				 errdetail("seen_test_and_add inserts its rows below SQL, where neither would fire.")));
	if (seen->rd_rel->relispartition ||
		(seen->rd_att->constr != NULL && seen->rd_att->constr->num_check > 0) ||
		TupleDescAttr(RelationGetDescr(seen), chunk_att - 1)->attnotnull)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("seen_test_and_add does not support constraints on seen relation \"%s\" beyond its primary key",
						RelationGetRelationName(seen)),
				 errdetail("seen_test_and_add inserts its rows below SQL, where a CHECK constraint, a NOT NULL on chunk or a partition bound would not be checked."),
				 errhint("Add online to a compressed seen that is not a partition and has no constraint but its primary key.")));
	return seen;
}

/*
 * The row of the signature that an insertion met (at tid): under
 * REPEATABLE READ or SERIALIZABLE, one that the transaction's snapshot
 * does not see, another transaction's add committed after the snapshot
 * was taken, is a serialization failure, as for ON CONFLICT DO NOTHING
 * (ExecCheckTIDVisible).  Answered seen, the transaction would hold a
 * "seen" that its own reads (sieve_contains, SELECT) deny, and a
 * SERIALIZABLE one could commit what no serial order gives.  Our own row
 * is no conflict, even one of this very command, which the snapshot does
 * not see yet.
 */
static void
check_conflict_visible(Relation seen, ItemPointer tid, TupleTableSlot *slot)
{
	bool		isnull;
	TransactionId xmin;

	if (!IsolationUsesXactSnapshot())
		return;
	ExecClearTuple(slot);
	if (!table_tuple_fetch_row_version(seen, tid, SnapshotAny, slot))
		elog(ERROR, "seen_test_and_add: failed to fetch the conflicting row");
	if (table_tuple_satisfies_snapshot(seen, slot, GetTransactionSnapshot()))
		return;
	xmin = DatumGetTransactionId(slot_getsysattr(slot, MinTransactionIdAttributeNumber,
												 &isnull));
	if (!TransactionIdIsCurrentTransactionId(xmin))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent update"),
				 errdetail("Another transaction added a signature of the batch to seen relation \"%s\" after this transaction's snapshot was taken.",
						   RelationGetRelationName(seen))));
}

/*
 * Inserts (signature, NULL) unless a row of that signature is there or
 * comes, as ON CONFLICT DO NOTHING does (ExecInsert's speculative
 * insertion); true if it inserted, false if the signature was seen
 */
static bool
insert_signature(Relation seen, ResultRelInfo *rri, EState *estate,
				 TupleTableSlot *slot, List *arbiters, AttrNumber head_att,
				 int64 signature)
{
	for (;;)
	{
		ItemPointerData conflict;
		uint32		token;
		bool		speculative_conflict = false;
		List	   *recheck;
		int			natts = slot->tts_tupleDescriptor->natts;

		CHECK_FOR_INTERRUPTS();
		ResetPerTupleExprContext(estate);
		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * natts);
		slot->tts_values[head_att - 1] = Int64GetDatum(signature);
		slot->tts_isnull[head_att - 1] = false;
		ExecStoreVirtualTuple(slot);

		/* waits for an uncommitted row of the signature, then looks again */
		if (!ExecCheckIndexConstraints_compat(rri, slot, estate, &conflict, arbiters))
		{
			check_conflict_visible(seen, &conflict, slot);
			return false;
		}

		token = SpeculativeInsertionLockAcquire(GetCurrentTransactionId());
		table_tuple_insert_speculative(seen, slot, estate->es_output_cid, 0,
									   NULL, token);
		recheck = ExecInsertIndexTuples_compat(rri, slot, estate, true,
											   &speculative_conflict, arbiters);
		table_tuple_complete_speculative(seen, slot, token, !speculative_conflict);
		SpeculativeInsertionLockRelease(GetCurrentTransactionId());
		list_free(recheck);
		if (!speculative_conflict)
			return true;
		/* another session's row came between the check and ours: again */
	}
}

/*
 * Tests and adds the signatures of items[0 .. n-1], sorted by signature
 * then place: answers[item's index] is true when it was seen, by an
 * earlier add or an earlier item of the batch
 */
static void
test_and_add(Oid seen_oid, SieveBatchItem *items, int n, bool *answers)
{
	Oid			chunk_index;
	Relation	seen = online_open(seen_oid, &chunk_index);
	AttrNumber	head_att = get_attnum(seen_oid, "head");
	AttrNumber	chunk_att = get_attnum(seen_oid, "chunk");
	int64	   *distinct;
	bool	   *found;
	int			ndistinct = 0;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	List	   *arbiters;
	int			i;
	int			d;

	if (n == 0)
	{
		table_close(seen, NoLock);
		return;
	}
	distinct = palloc(sizeof(int64) * n);
	for (i = 0; i < n; i++)
		if (ndistinct == 0 || distinct[ndistinct - 1] != items[i].signature)
			distinct[ndistinct++] = items[i].signature;
	found = palloc(sizeof(bool) * ndistinct);

	/* the chunks, in one walk */
	sieve_store_contains(seen, chunk_index, head_att, chunk_att, distinct,
						 ndistinct, found);

	/* the rest, inserted in ascending order */
	estate = CreateExecutorState();
	estate->es_output_cid = GetCurrentCommandId(true);
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, seen, 1, NULL, 0);
	ExecOpenIndices(rri, true);
	slot = table_slot_create(seen, NULL);
	/*
	 * Every unique index is an arbiter, as for ON CONFLICT DO NOTHING with
	 * no target: a second unique index on head (or one being built by
	 * REINDEX CONCURRENTLY) makes a concurrent add wait and answer seen,
	 * not fail on a duplicate key.  The index of chunks takes no add (its
	 * predicate is false for them).
	 */
	arbiters = NIL;
	for (d = 0; d < ndistinct; d++)
		if (!found[d])
			found[d] = !insert_signature(seen, rri, estate, slot, arbiters,
										 head_att, distinct[d]);
	ExecDropSingleTupleTableSlot(slot);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	table_close(seen, NoLock);

	/* back to the input's places: a repeat is seen */
	d = -1;
	for (i = 0; i < n; i++)
	{
		bool		first = i == 0 || items[i].signature != items[i - 1].signature;

		if (first)
			d++;
		answers[items[i].index] = first ? found[d] : true;
	}
	pfree(distinct);
	pfree(found);
}

/* seen_test_and_add(seen regclass, url text|bytea) -> boolean */
Datum
seen_test_and_add(PG_FUNCTION_ARGS)
{
	SbfElementKind kind = sbf_varlena_kind(fcinfo, 1);
	struct varlena *value = (struct varlena *)
		DatumGetPointer(sbf_refuse_misread_text(PG_GETARG_DATUM(1), kind));
	SieveBatchItem	item;
	bool		answer;

	value = pg_detoast_datum_packed(value);
	item.signature = sbf_signature(VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
	item.index = 0;
	test_and_add(PG_GETARG_OID(0), &item, 1, &answer);
	PG_RETURN_BOOL(answer);
}

/* seen_test_and_add(seen regclass, signature bigint) -> boolean */
Datum
seen_test_and_add_int8(PG_FUNCTION_ARGS)
{
	SieveBatchItem	item;
	bool		answer;

	item.signature = PG_GETARG_INT64(1);
	item.index = 0;
	test_and_add(PG_GETARG_OID(0), &item, 1, &answer);
	PG_RETURN_BOOL(answer);
}

/*
 * seen_test_and_add(seen regclass, urls text[] | bytea[]) -> boolean[]
 * seen_test_and_add(seen regclass, signatures bigint[]) -> boolean[]
 *
 * Answers in input order, with the input's dimensions; a repeat inside the
 * batch is seen; a NULL element is answered NULL and not added.  Memory:
 * 16 bytes an element, and 9 a distinct signature.
 */
Datum
seen_test_and_add_array(PG_FUNCTION_ARGS)
{
	ArrayType  *values = PG_GETARG_ARRAYTYPE_P(1);
	int			nelems = ArrayGetNItems(ARR_NDIM(values), ARR_DIMS(values));
	SieveBatchItem *items;
	bool	   *answers;
	int			nitems;
	int			nnulls;
	ArrayType  *result;

	if (ARR_ELEMTYPE(values) == TEXTOID)
		sbf_refuse_bytea_hex_elements(values);
	if (nelems == 0)
	{
		/* the seen is checked all the same */
		test_and_add(PG_GETARG_OID(0), NULL, 0, NULL);
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
	}
	items = sieve_batch_items(values, &nitems, &nnulls);
	answers = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(bool) * nelems);
	memset(answers, 0, sizeof(bool) * nelems);
	test_and_add(PG_GETARG_OID(0), items, nitems, answers);
	result = sbf_answers_array(values, answers, nelems, nnulls);
	pfree(items);
	pfree(answers);
	PG_RETURN_ARRAYTYPE_P(result);
}
