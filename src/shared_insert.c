/*-------------------------------------------------------------------------
 *
 * shared_insert.c
 *	  Shared filters: shared_test_and_add, for one value and for arrays.
 *
 * Test-and-add of a value is done under the exclusive lock of its one data
 * page, so it is atomic: of many sessions adding the same value at once,
 * exactly one is answered false.  Sessions adding values of different
 * pages never wait for each other; the relation itself is only locked in
 * RowExclusiveLock, which adders share, held to the end of the transaction
 * as any table's lock is (so DROP TABLE waits for open adders).
 *
 * A batch is processed page by page: the values are sorted by page,
 * stably, and each page is locked and WAL-logged once for all its values,
 * taken in input order.  Values on different pages never interact, so the
 * answers are exactly those of adding the values one by one in input
 * order (a repeat inside the batch is answered true).
 *
 * Logged filters change their pages through generic WAL, as contrib/bloom
 * does: no shared_preload_libraries.  Like nextval(), a change assigns a
 * transaction id, so that COMMIT waits for the WAL to be flushed: what a
 * committed transaction added survives a crash.  The change is not undone
 * by ROLLBACK (a Bloom filter cannot forget), so what a rolled-back
 * transaction added may stay: only more false positives.  A bloom page
 * whose values are all present already is not changed nor logged; its WAL
 * is flushed up to the page's LSN instead, so that a value found present
 * because of another session's unflushed change is durable too.
 * Unlogged (and temporary) filters are changed without WAL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "shared.h"

PG_FUNCTION_INFO_V1(shared_test_and_add);
PG_FUNCTION_INFO_V1(shared_test_and_add_int8);
PG_FUNCTION_INFO_V1(shared_test_and_add_array);

/* One value of a batch: its hash, page and place in the input */
typedef struct SbfBatchItem
{
	SbfHash		hash;
	BlockNumber page;
	int			index;
} SbfBatchItem;

/* By page, then by input order: a stable sort */
static int
sbf_batch_item_cmp(const void *a, const void *b)
{
	const SbfBatchItem *x = (const SbfBatchItem *) a;
	const SbfBatchItem *y = (const SbfBatchItem *) b;

	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Are all values of the group present in the page (the bloom fast path)? */
static bool
sbf_group_all_present(const SbfSharedMeta *meta, Page page,
					  const SbfBatchItem *items, int n)
{
	int			i;

	if (meta->decrements > 0 || PageIsNew(page))
		return false;
	for (i = 0; i < n; i++)
		if (!sbf_page_test(meta, sbf_page_block(page), items[i].hash))
			return false;
	return true;
}

/*
 * Test-and-add the n values of one page, in input order, writing their
 * answers.
 */
static void
sbf_add_group(Relation rel, const SbfSharedMeta *meta,
			  const SbfBatchItem *items, int n, bool *answers)
{
	bool		wal = RelationNeedsWAL(rel);
	Buffer		buf = sbf_shared_read_extend(rel, items[0].page);
	GenericXLogState *state = NULL;
	Page		page;
	int			i;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (!PageIsNew(BufferGetPage(buf)))
		sbf_shared_check_page(rel, BufferGetPage(buf), items[0].page);
	if (sbf_group_all_present(meta, BufferGetPage(buf), items, n))
	{
		XLogRecPtr	lsn = wal ? PageGetLSN(BufferGetPage(buf)) : InvalidXLogRecPtr;

		UnlockReleaseBuffer(buf);

		/*
		 * The bits may come from another session's change whose WAL is not
		 * flushed yet (its transaction is still open).  This transaction
		 * takes no transaction id, so its COMMIT would not wait for that
		 * WAL: flush it now, so that what a committed transaction was told
		 * it added survives a crash.  Usually there is nothing to flush.
		 */
		if (wal)
			XLogFlush(lsn);
		for (i = 0; i < n; i++)
			answers[items[i].index] = true;
		return;
	}

	/* about to write WAL: take a transaction id first, not under the lock */
	if (wal && !TransactionIdIsValid(GetTopTransactionIdIfAny()))
	{
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		(void) GetTopTransactionId();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	}

	if (wal)
	{
		state = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(state, buf,
										 PageIsNew(BufferGetPage(buf)) ?
										 GENERIC_XLOG_FULL_IMAGE : 0);
	}
	else
		page = BufferGetPage(buf);

	if (PageIsNew(page))
		sbf_shared_page_init(page, meta, items[0].page);
	for (i = 0; i < n; i++)
		answers[items[i].index] = sbf_page_add(meta, sbf_page_block(page),
											   sbf_page_opaque(page),
											   items[i].hash);

	if (state != NULL)
		GenericXLogFinish(state);
	else
		MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
}

/* Refuse adding where nextval() is refused: read-only, standby, parallel */
static Relation
sbf_open_for_add(Oid relid)
{
	PreventCommandIfReadOnly("shared_test_and_add()");
	PreventCommandIfParallelMode("shared_test_and_add()");
	return sbf_shared_open(relid, RowExclusiveLock, ACL_UPDATE);
}

/* Test-and-add the n items (in input order), answers[i] for item i */
static void
sbf_add_items(Relation rel, SbfBatchItem *items, int n, bool *answers)
{
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	int			start;

	if (n > 1)
		qsort(items, n, sizeof(SbfBatchItem), sbf_batch_item_cmp);
	for (start = 0; start < n;)
	{
		int			end = start + 1;

		while (end < n && items[end].page == items[start].page)
			end++;
		sbf_add_group(rel, &meta, items + start, end - start, answers);
		start = end;
		CHECK_FOR_INTERRUPTS();
	}
}

static bool
sbf_test_and_add_one(Oid relid, Datum value, SbfElementKind kind)
{
	Relation	rel = sbf_open_for_add(relid);
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	SbfBatchItem item;
	bool		answer;

	item.hash = sbf_hash_element(value, kind, meta.seed);
	item.page = sbf_shared_page_of(&meta, item.hash);
	item.index = 0;
	sbf_add_items(rel, &item, 1, &answer);
	relation_close(rel, NoLock);
	return answer;
}

/* shared_test_and_add(filter regclass, value text|bytea) -> bool */
Datum
shared_test_and_add(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(sbf_test_and_add_one(PG_GETARG_OID(0), PG_GETARG_DATUM(1),
										SBF_ELEMENT_VARLENA));
}

/* shared_test_and_add(filter regclass, value bigint) -> bool */
Datum
shared_test_and_add_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(sbf_test_and_add_one(PG_GETARG_OID(0), PG_GETARG_DATUM(1),
										SBF_ELEMENT_INT8));
}

/*
 * shared_test_and_add(filter regclass, values text[]|bigint[]) -> bool[]
 *
 * Answers in input order, with the input's dimensions; a NULL element is
 * answered NULL and not added.
 */
Datum
shared_test_and_add_array(PG_FUNCTION_ARGS)
{
	ArrayType  *values = PG_GETARG_ARRAYTYPE_P(1);
	Oid			elemtype = ARR_ELEMTYPE(values);
	SbfElementKind kind = (elemtype == INT8OID) ? SBF_ELEMENT_INT8 : SBF_ELEMENT_VARLENA;
	Relation	rel = sbf_open_for_add(PG_GETARG_OID(0));
	SbfSharedMeta meta = *sbf_shared_meta(rel);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	SbfBatchItem *items;
	bool	   *answers;
	Datum	   *result;
	int			nitems = 0;
	int			i;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(values, elemtype, typlen, typbyval, typalign,
					  &elems, &nulls, &nelems);

	items = palloc(sizeof(SbfBatchItem) * Max(nelems, 1));
	answers = palloc0(sizeof(bool) * Max(nelems, 1));
	for (i = 0; i < nelems; i++)
	{
		if (nulls[i])
			continue;
		items[nitems].hash = sbf_hash_element(elems[i], kind, meta.seed);
		items[nitems].page = sbf_shared_page_of(&meta, items[nitems].hash);
		items[nitems].index = i;
		nitems++;
	}
	sbf_add_items(rel, items, nitems, answers);
	relation_close(rel, NoLock);

	result = palloc(sizeof(Datum) * Max(nelems, 1));
	for (i = 0; i < nelems; i++)
		result[i] = BoolGetDatum(answers[i]);
	if (nelems == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
	PG_RETURN_ARRAYTYPE_P(construct_md_array(result, nulls, ARR_NDIM(values),
											 ARR_DIMS(values), ARR_LBOUND(values),
											 BOOLOID, 1, true, TYPALIGN_CHAR));
}
