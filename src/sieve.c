/*-------------------------------------------------------------------------
 *
 * sieve.c
 *	  sieve_flush(seen, discovered, frontier): the offline sieve.
 *
 * Vigna's "crivello offline" (the flush of the Mercator crawler's URL-seen
 * test, Heydon & Najork 1999).  Three tables:
 *
 *	  Z = seen (sig bigint, unique btree index): the signature of every URL
 *		  ever discovered;
 *	  A = discovered (pos bigint, url text): URLs found since the last flush,
 *		  in discovery order;
 *	  F = frontier (pos bigint, url text): URLs to visit.
 *
 * A flush, in one C pass inside the caller's transaction:
 *
 *	1. runs DELETE FROM A RETURNING pos, url, feeding every returned row,
 *	   with its signature url_signature(url), to a tuplesort on (sig, pos);
 *	2. walks the sorted stream keeping the first position of each
 *	   signature and looks it up in Z: a signature not in Z is inserted
 *	   into Z (in ascending signature order) and its (pos, url) goes to a
 *	   second tuplesort, on pos.  The lookup is a merge with Z read in
 *	   signature order when Z is not much larger than the batch, and a
 *	   probe of Z's unique index per signature otherwise (SIEVE_MERGE_RATIO),
 *	   Z's size judged from its pages on disk, which no stale statistics
 *	   can understate;
 *	3. appends the sorted new URLs to F in ascending discovery position.
 *
 * Both sorts are PostgreSQL's external sort, each bounded by half of
 * work_mem (they are alive together) and spilling to temporary files
 * beyond it, so memory does not grow with the size of A or Z.  Rows are
 * deleted by one statement and inserted in batches, through SPI, so
 * triggers, constraints, defaults and permissions apply as for SQL, without
 * a round trip per row.  A batch of URLs is bounded by bytes as well as by
 * rows (a quarter of work_mem), and URLs stay as A stored them, compressed
 * if they were, from the DELETE to the INSERT into F, so memory does not
 * grow with the URLs' length either.
 *
 * Concurrency: the flush takes SHARE ROW EXCLUSIVE on Z, so two flushes on
 * the same Z serialize (and nobody else writes to Z meanwhile), but rows
 * may still be inserted into A: A is read with a snapshot taken after the
 * lock, and only the rows read are deleted, so rows inserted concurrently
 * stay for the next flush.  Under READ COMMITTED, a row of A that another
 * transaction deletes first is left to it, and one it updates is flushed
 * as updated (the DELETE's usual recheck; an update that moved the row to
 * another partition is a serialization error).  Under REPEATABLE READ or
 * SERIALIZABLE, whose snapshot predates the lock, a flush that ran into
 * another one fails with a serialization error (40001) when it tries to
 * delete a row the other took or to insert a signature the other inserted.
 * An error or a ROLLBACK leaves all three tables as they were.
 *
 * Privileges are checked before any lock is taken: those of the statements
 * the flush runs, and those LOCK TABLE asks for the locks it takes.
 * Row-level security on seen is refused (the index probes would bypass it),
 * and so are rules on A, tables that share rows through partitioning or
 * inheritance, and a Z with inheritance children (the lookups read Z
 * alone, where SELECT would read its children too).  Row-level security on
 * A applies as to any DELETE ... RETURNING: the rows its policies hide
 * stay.  So does the memory of AFTER ROW DELETE triggers on A (a foreign
 * key that references it, say): PostgreSQL queues an event per row deleted
 * until the statement ends.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_inherits.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/queryenvironment.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

#include "hash.h"

PG_FUNCTION_INFO_V1(sieve_flush);

/* Rows per SPI batch: signatures read from seen, rows inserted */
#define SIEVE_BATCH		10000

/*
 * Merge with seen when it could hold fewer than this many rows per row read
 * from discovered, else probe its index.  Reading seen in order costs about
 * a quarter of a probe per row (bench/sieve_flush.sh).
 */
#define SIEVE_MERGE_RATIO	4.0

/*
 * The most rows a page of seen can hold: a tuple header and sig, maxaligned,
 * and a line pointer each (226 at 8 kB pages).  Pages times this is never
 * below seen's true size, whatever ANALYZE last saw: a bulk load into a
 * seen analysed while empty leaves reltuples at 0.
 */
#define SIEVE_SEEN_ROWS_PER_PAGE \
	((BLCKSZ - SizeOfPageHeaderData) / \
	 (MAXALIGN(SizeofHeapTupleHeader + sizeof(int64)) + sizeof(ItemIdData)))

/*
 * The rows appended to the frontier by one INSERT: at most SIEVE_BATCH, and
 * URLs of at most a quarter of work_mem in all (as stored: compressed, if
 * they were), beside the sort on position, which has half of work_mem.  A
 * URL longer than that goes alone.  The INSERT reads them from a tuplestore
 * registered as this ephemeral named relation, so they reach the frontier as
 * they were stored, without being compressed again.
 */
#define SIEVE_BATCH_RELATION	"sieve_flush_batch"

static Size
frontier_batch_bytes(void)
{
	return (Size) work_mem * 1024 / 4;
}

/* The three tables, checked and locked */
typedef struct SieveTables
{
	Relation	seen;
	Relation	seen_index;		/* unique btree on seen (sig) */
	Relation	discovered;
	Relation	frontier;
	char	   *seen_name;		/* quoted, schema-qualified, for SPI */
	char	   *discovered_name;
	char	   *frontier_name;
} SieveTables;

static char *
qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

static void
check_relkind(Relation rel, const char *role, bool partitioned_ok)
{
	char		relkind = rel->rd_rel->relkind;

	if (relkind != RELKIND_RELATION &&
		!(partitioned_ok && relkind == RELKIND_PARTITIONED_TABLE))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s relation \"%s\" is not a table", role,
						RelationGetRelationName(rel)),
				 errdetail(partitioned_ok ? "sieve_flush needs a plain or partitioned table for %s." :
						   "sieve_flush needs a plain table for %s.", role)));
}

/* The column must exist and have the given type */
static void
check_column(Relation rel, const char *role, const char *column, Oid type)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(rel), column);
	Oid			actual;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of %s relation \"%s\" does not exist",
						column, role, RelationGetRelationName(rel)),
				 errhint("sieve_flush needs seen (sig bigint), discovered (pos bigint, url text) and frontier (pos bigint, url text).")));
	actual = get_atttype(RelationGetRelid(rel), attnum);
	if (actual != type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of %s relation \"%s\" has type %s, not %s",
						column, role, RelationGetRelationName(rel),
						format_type_be(actual), format_type_be(type))));
}

/* A valid, immediate, non-partial unique btree index on seen (sig) alone */
static Relation
find_signature_index(Relation seen)
{
	AttrNumber	sig = get_attnum(RelationGetRelid(seen), "sig");
	List	   *indexes = RelationGetIndexList(seen);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;

		if (form->indisunique && form->indisvalid && form->indimmediate &&
			form->indnkeyatts == 1 && form->indkey.values[0] == sig &&
			index->rd_rel->relam == BTREE_AM_OID &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
			return index;
		index_close(index, AccessShareLock);
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			 errmsg("seen relation \"%s\" has no unique btree index on (sig)",
					RelationGetRelationName(seen)),
			 errhint("CREATE UNIQUE INDEX ON %s (sig);", qualified_name(seen))));
	return NULL;				/* keep compiler quiet */
}

/*
 * The privileges a flush needs on a table, checked before any lock is
 * taken: each privilege its statements need (one at a time, for
 * pg_class_aclcheck is satisfied by any one bit of its mode), then what
 * LOCK TABLE asks for the lock the flush takes there, so that nobody gets
 * through sieve_flush a lock that LOCK TABLE would refuse them.
 * PostgreSQL 15's LockTableAclCheck: ROW EXCLUSIVE needs INSERT, UPDATE,
 * DELETE or TRUNCATE, the stronger modes UPDATE, DELETE or TRUNCATE.
 */
static void
check_privileges(Oid relid, const char *role, AclMode statements,
				 LOCKMODE lockmode)
{
	AclMode		bit;
	AclMode		lock_any;

	for (bit = 1; bit != 0 && bit <= statements; bit <<= 1)
		if ((statements & bit) != 0 &&
			pg_class_aclcheck(relid, GetUserId(), bit) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV,
						   get_relkind_objtype(get_rel_relkind(relid)),
						   get_rel_name(relid));

	Assert(lockmode >= RowExclusiveLock);
	lock_any = ACL_UPDATE | ACL_DELETE | ACL_TRUNCATE;
	if (lockmode == RowExclusiveLock)
		lock_any |= ACL_INSERT;
	if (pg_class_aclcheck(relid, GetUserId(), lock_any) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid)),
				 errdetail("sieve_flush locks %s relation \"%s\" in %s mode, for which LOCK TABLE needs %s privilege.",
						   role, get_rel_name(relid),
						   lockmode == RowExclusiveLock ? "ROW EXCLUSIVE" : "SHARE ROW EXCLUSIVE",
						   lockmode == RowExclusiveLock ? "INSERT, UPDATE, DELETE or TRUNCATE" :
						   "UPDATE, DELETE or TRUNCATE")));
}

/*
 * No two of the tables may share rows through partitioning or inheritance,
 * at any depth: the frontier a partition of discovered would be emptied by
 * the next flush, discovered a partition of the frontier would be appended
 * to while it is read.  And seen may have no inheritance children:
 * SELECT ... FROM seen reads theirs too, but the flush looks signatures up
 * in seen alone (its merge and its unique index), so a URL whose signature
 * sits in a child would be appended again.  Called with the three tables
 * locked, which keeps ALTER TABLE ... INHERIT and ATTACH PARTITION from
 * changing their own parents meanwhile.
 */
static void
check_no_overlap(SieveTables *t)
{
	Relation	rels[3] = {t->seen, t->discovered, t->frontier};
	const char *roles[3] = {"seen", "discovered", "frontier"};

	for (int i = 0; i < 3; i++)
	{
		List	   *inheritors = find_all_inheritors(RelationGetRelid(rels[i]),
													 NoLock, NULL);

		for (int j = 0; j < 3; j++)
			if (j != i && list_member_oid(inheritors, RelationGetRelid(rels[j])))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s relation \"%s\" is a partition or inheritance child of %s relation \"%s\"",
								roles[j], RelationGetRelationName(rels[j]),
								roles[i], RelationGetRelationName(rels[i])),
						 errdetail("seen, discovered and frontier must not share rows through partitioning or inheritance.")));

		/* the first of the inheritors is the table itself */
		if (rels[i] == t->seen && list_length(inheritors) > 1)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("seen relation \"%s\" has inheritance children",
							RelationGetRelationName(t->seen)),
					 errdetail("sieve_flush looks signatures up in seen alone, where SELECT would read its children too.")));
		list_free(inheritors);
	}
}

static void
open_tables(SieveTables *t, Oid seen, Oid discovered, Oid frontier)
{
	if (seen == discovered || seen == frontier || discovered == frontier)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seen, discovered and frontier must be three different tables")));

	/*
	 * Nobody may queue or hold locks on tables they could not flush, or
	 * could not lock with LOCK TABLE: check the privileges first.  (The
	 * index probes read seen directly, hence SELECT.)
	 */
	check_privileges(seen, "seen", ACL_SELECT | ACL_INSERT, ShareRowExclusiveLock);
	check_privileges(discovered, "discovered", ACL_SELECT | ACL_DELETE, RowExclusiveLock);
	check_privileges(frontier, "frontier", ACL_INSERT, RowExclusiveLock);

	/* Serialize flushes on the same seen table before reading anything */
	t->seen = table_open(seen, ShareRowExclusiveLock);
	t->discovered = table_open(discovered, RowExclusiveLock);
	t->frontier = table_open(frontier, RowExclusiveLock);

	check_relkind(t->seen, "seen", false);
	check_relkind(t->discovered, "discovered", true);
	check_relkind(t->frontier, "frontier", true);
	check_column(t->seen, "seen", "sig", INT8OID);
	check_column(t->discovered, "discovered", "pos", INT8OID);
	check_column(t->discovered, "discovered", "url", TEXTOID);
	check_column(t->frontier, "frontier", "pos", INT8OID);
	check_column(t->frontier, "frontier", "url", TEXTOID);
	check_no_overlap(t);
	t->seen_index = find_signature_index(t->seen);

	/*
	 * A rule could make the DELETE of step 1 read another table, or
	 * nothing, and still look like a DELETE ... RETURNING
	 */
	if (t->discovered->rd_rel->relhasrules)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("sieve_flush does not support rules on discovered relation \"%s\"",
						RelationGetRelationName(t->discovered))));

	/* The index probes would see rows that a policy hides */
	if (check_enable_rls(seen, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("sieve_flush does not support row-level security on seen relation \"%s\"",
						RelationGetRelationName(t->seen))));

	t->seen_name = qualified_name(t->seen);
	t->discovered_name = qualified_name(t->discovered);
	t->frontier_name = qualified_name(t->frontier);
}

static void
close_tables(SieveTables *t)
{
	/* locks are kept until the end of the transaction */
	index_close(t->seen_index, NoLock);
	table_close(t->frontier, NoLock);
	table_close(t->discovered, NoLock);
	table_close(t->seen, NoLock);
}

static SPIPlanPtr
prepare(const char *query, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(query, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", query,
			 SPI_result_code_string(SPI_result));
	return plan;
}

/*
 * Run a prepared INSERT of a batch (an array of signatures, or the frontier's
 * batch relation) and check that it inserted every row: an INSERT that
 * misses rows met a trigger that skipped them, which is not retryable.
 */
static void
insert_batch(SPIPlanPtr plan, Datum *args, int expect, const char *what,
			 Relation rel)
{
	int			rc = SPI_execute_plan(plan, args, NULL, false, 0);

	if (rc != SPI_OK_INSERT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("could not %s: a rule on relation \"%s\" rewrote the statement",
						what, RelationGetRelationName(rel))));
	if (SPI_processed != (uint64) expect)
		ereport(ERROR,
				(errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
				 errmsg("could not %s: " UINT64_FORMAT " of %d rows inserted",
						what, SPI_processed, expect),
				 errdetail("A trigger on relation \"%s\" skipped rows.",
						   RelationGetRelationName(rel))));
}

/* A new, empty batch for the frontier, registered as SIEVE_BATCH_RELATION */
static Tuplestorestate *
register_frontier_batch(TupleDesc desc, MemoryContext context)
{
	MemoryContext old;
	EphemeralNamedRelation enr;

	old = MemoryContextSwitchTo(context);
	enr = palloc0(sizeof(EphemeralNamedRelationData));
	enr->md.name = pstrdup(SIEVE_BATCH_RELATION);
	enr->md.reliddesc = InvalidOid;
	enr->md.tupdesc = desc;
	enr->md.enrtype = ENR_NAMED_TUPLESTORE;
	enr->md.enrtuples = SIEVE_BATCH;
	enr->reldata = tuplestore_begin_heap(false, false, work_mem);
	MemoryContextSwitchTo(old);

	if (SPI_register_relation(enr) != SPI_OK_REL_REGISTER)
		elog(ERROR, "could not register the batch for the frontier");
	return (Tuplestorestate *) enr->reldata;
}

static void
unregister_frontier_batch(Tuplestorestate *rows, MemoryContext context)
{
	if (SPI_unregister_relation(SIEVE_BATCH_RELATION) != SPI_OK_REL_UNREGISTER)
		elog(ERROR, "could not unregister the batch for the frontier");
	tuplestore_end(rows);
	MemoryContextReset(context);
}

static Datum
int8_array(Datum *values, int n)
{
	return PointerGetDatum(construct_array(values, n, INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * Step 1: "DELETE FROM discovered RETURNING pos, url", with every row
 * it returns fed straight into the sort on (sig, pos) by this receiver.
 * One statement reads and deletes, so exactly the rows read are deleted:
 * rows inserted after its snapshot stay, and a row that a concurrent
 * transaction deleted first, or that a BEFORE DELETE trigger kept, is
 * neither deleted nor flushed.
 */
typedef struct DiscoveredReceiver
{
	DestReceiver pub;
	Tuplesortstate *by_signature;
	TupleTableSlot *slot;		/* virtual (sig, pos, url) */
	Relation	discovered;
	uint64		nread;
} DiscoveredReceiver;

static void
discovered_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static bool
discovered_receive(TupleTableSlot *returned, DestReceiver *self)
{
	DiscoveredReceiver *r = (DiscoveredReceiver *) self;
	TupleTableSlot *slot = r->slot;
	struct varlena *returned_url;
	struct varlena *url;
	text	   *url_text;

	CHECK_FOR_INTERRUPTS();
	slot_getallattrs(returned);
	if (returned->tts_isnull[0] || returned->tts_isnull[1])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("discovered relation \"%s\" has a row with a null %s",
						RelationGetRelationName(r->discovered),
						returned->tts_isnull[0] ? "pos" : "url"),
				 errhint("Declare discovered.pos and discovered.url NOT NULL.")));

	/*
	 * The URL goes on as the table stored it, compressed if it was, so that
	 * a long URL costs the sorts its compressed size and is appended to the
	 * frontier without being compressed again (as INSERT ... SELECT does);
	 * it is decompressed only to be hashed.
	 */
	returned_url = (struct varlena *) DatumGetPointer(returned->tts_values[1]);
	url = VARATT_IS_EXTERNAL(returned_url) ? detoast_external_attr(returned_url) :
		returned_url;
	url_text = (text *) (VARATT_IS_COMPRESSED(url) ? detoast_attr(url) : url);

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(sbf_signature(VARDATA_ANY(url_text),
													  VARSIZE_ANY_EXHDR(url_text)));
	slot->tts_values[1] = returned->tts_values[0];
	slot->tts_values[2] = PointerGetDatum(url);
	slot->tts_isnull[0] = slot->tts_isnull[1] = slot->tts_isnull[2] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(r->by_signature, slot);
	if ((Pointer) url_text != (Pointer) url)
		pfree(url_text);
	if (url != returned_url)
		pfree(url);
	r->nread++;
	return true;
}

static void
discovered_shutdown(DestReceiver *self)
{
}

static void
discovered_destroy(DestReceiver *self)
{
}

/* Returns the number of rows read (and deleted) */
static uint64
read_discovered(SieveTables *t, Tuplesortstate *by_signature,
				TupleTableSlot *slot)
{
	DiscoveredReceiver receiver;
	SPIExecuteOptions options;
	int			rc;

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = discovered_receive;
	receiver.pub.rStartup = discovered_startup;
	receiver.pub.rShutdown = discovered_shutdown;
	receiver.pub.rDestroy = discovered_destroy;
	receiver.pub.mydest = DestNone;	/* no CommandDest of its own */
	receiver.by_signature = by_signature;
	receiver.slot = slot;
	receiver.discovered = t->discovered;

	memset(&options, 0, sizeof(options));
	options.dest = (DestReceiver *) &receiver;
	/* a plain table without its inheritance children; a partitioned one whole */
	rc = SPI_execute_extended(psprintf("DELETE FROM %s%s RETURNING pos, url",
									   t->discovered->rd_rel->relkind == RELKIND_RELATION ? "ONLY " : "",
									   t->discovered_name), &options);
	if (rc != SPI_OK_DELETE_RETURNING)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("could not read and delete the discovered rows: a rule on relation \"%s\" rewrote the statement",
						RelationGetRelationName(t->discovered))));
	if (SPI_processed != receiver.nread)
		elog(ERROR, "sieve_flush: deleted " UINT64_FORMAT " discovered rows but received " UINT64_FORMAT,
			 SPI_processed, receiver.nread);
	return receiver.nread;
}

/*
 * Looking signatures up in seen, in ascending order: by merging with seen
 * read in signature order, or by probing its unique index.
 */
typedef struct SeenLookup
{
	bool		merge;
	/* merge: seen's signatures in ascending order, a batch at a time */
	Portal		cursor;
	int64	   *sigs;
	uint64		nsigs;
	uint64		next;
	bool		exhausted;
	/* probe */
	Snapshot	snapshot;
	IndexScanDesc scan;
	TupleTableSlot *slot;
} SeenLookup;

static void
seen_lookup_begin(SeenLookup *lookup, SieveTables *t, uint64 nread)
{
	BlockNumber pages = RelationGetNumberOfBlocks(t->seen);

	memset(lookup, 0, sizeof(SeenLookup));
	lookup->merge = (double) pages * SIEVE_SEEN_ROWS_PER_PAGE <
		SIEVE_MERGE_RATIO * (double) nread;
	elog(DEBUG1, "sieve_flush: %s seen relation \"%s\" (%u pages, " UINT64_FORMAT " discovered rows)",
		 lookup->merge ? "merging with" : "probing the index of",
		 RelationGetRelationName(t->seen), pages, nread);
	if (lookup->merge)
	{
		/* the cursor's snapshot does not see the rows this flush inserts */
		lookup->cursor = SPI_cursor_open_with_args(NULL,
												   psprintf("SELECT sig FROM ONLY %s WHERE sig IS NOT NULL ORDER BY sig",
															t->seen_name),
												   0, NULL, NULL, NULL, false, 0);
		lookup->sigs = palloc(sizeof(int64) * SIEVE_BATCH);
	}
	else
	{
		lookup->snapshot = RegisterSnapshot(GetTransactionSnapshot());
		lookup->slot = table_slot_create(t->seen, NULL);
		lookup->scan = index_beginscan(t->seen, t->seen_index, lookup->snapshot, 1, 0);
	}
}

static bool
seen_contains_merge(SeenLookup *lookup, int64 sig)
{
	for (;;)
	{
		while (lookup->next < lookup->nsigs)
		{
			int64		current = lookup->sigs[lookup->next];

			if (current >= sig)
				return current == sig;
			lookup->next++;
		}
		if (lookup->exhausted)
			return false;

		/* the next batch of seen, copied out of SPI's tuple table */
		SPI_cursor_fetch(lookup->cursor, true, SIEVE_BATCH);
		lookup->nsigs = SPI_processed;
		lookup->next = 0;
		lookup->exhausted = (SPI_processed < SIEVE_BATCH);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;

			lookup->sigs[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
														  SPI_tuptable->tupdesc,
														  1, &isnull));
		}
		SPI_freetuptable(SPI_tuptable);
	}
}

static bool
seen_contains_probe(SeenLookup *lookup, int64 sig)
{
	ScanKeyData key;

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(sig));
	index_rescan(lookup->scan, &key, 1, NULL, 0);
	return index_getnext_slot(lookup->scan, ForwardScanDirection, lookup->slot);
}

/* Is sig in seen?  Called with signatures in ascending order */
static bool
seen_contains(SeenLookup *lookup, int64 sig)
{
	return lookup->merge ? seen_contains_merge(lookup, sig)
		: seen_contains_probe(lookup, sig);
}

static void
seen_lookup_end(SeenLookup *lookup)
{
	if (lookup->merge)
		SPI_cursor_close(lookup->cursor);
	else
	{
		index_endscan(lookup->scan);
		ExecDropSingleTupleTableSlot(lookup->slot);
		UnregisterSnapshot(lookup->snapshot);
	}
}

Datum
sieve_flush(PG_FUNCTION_ARGS)
{
	SieveTables t;
	TupleDesc	sig_desc;
	TupleDesc	pos_desc;
	AttrNumber	sig_keys[2] = {1, 2};
	AttrNumber	pos_keys[1] = {1};
	Oid			less[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};
	Tuplesortstate *by_signature;
	Tuplesortstate *by_position;
	TupleTableSlot *sig_slot;
	TupleTableSlot *pos_slot;
	SeenLookup	lookup;
	uint64		nread;
	SPIPlanPtr	insert_seen;
	SPIPlanPtr	insert_frontier;
	Oid			int8array = INT8ARRAYOID;
	MemoryContext batch_context;
	Tuplestorestate *batch;
	Datum	   *sigs;
	int			nsigs = 0;
	int			nurls = 0;
	Size		url_bytes = 0;
	Size		max_url_bytes = frontier_batch_bytes();
	bool		have_previous = false;
	int64		previous = 0;
	int64		appended = 0;

	/* the two sorts are alive together: half of work_mem each */
	int			sort_mem = Max(work_mem / 2, 64);

	open_tables(&t, PG_GETARG_OID(0), PG_GETARG_OID(1), PG_GETARG_OID(2));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	sig_desc = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(sig_desc, 1, "sig", INT8OID, -1, 0);
	TupleDescInitEntry(sig_desc, 2, "pos", INT8OID, -1, 0);
	TupleDescInitEntry(sig_desc, 3, "url", TEXTOID, -1, 0);
	pos_desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(pos_desc, 1, "pos", INT8OID, -1, 0);
	TupleDescInitEntry(pos_desc, 2, "url", TEXTOID, -1, 0);
	sig_slot = MakeSingleTupleTableSlot(sig_desc, &TTSOpsMinimalTuple);
	pos_slot = MakeSingleTupleTableSlot(pos_desc, &TTSOpsMinimalTuple);

	/* 1. discovered, sorted by (signature, position) */
	by_signature = tuplesort_begin_heap(sig_desc, 2, sig_keys, less, collations,
										nulls_first, sort_mem, NULL, TUPLESORT_NONE);
	{
		TupleTableSlot *virtual_slot = MakeSingleTupleTableSlot(sig_desc, &TTSOpsVirtual);

		nread = read_discovered(&t, by_signature, virtual_slot);
		ExecDropSingleTupleTableSlot(virtual_slot);
	}
	tuplesort_performsort(by_signature);

	/* 2. first position of each signature not in seen */
	by_position = tuplesort_begin_heap(pos_desc, 1, pos_keys, less, collations,
									   nulls_first, sort_mem, NULL, TUPLESORT_NONE);
	/*
	 * Under REPEATABLE READ and SERIALIZABLE the snapshot predates the lock:
	 * a flush that committed meanwhile may have inserted signatures this
	 * one does not see.  ON CONFLICT makes that a serialization failure
	 * (40001, retryable) rather than a unique violation.
	 */
	insert_seen = prepare(psprintf("INSERT INTO %s (sig) SELECT pg_catalog.unnest($1)%s",
								   t.seen_name,
								   IsolationUsesXactSnapshot() ? " ON CONFLICT (sig) DO NOTHING" : ""),
						  1, &int8array);
	sigs = palloc(sizeof(Datum) * SIEVE_BATCH);

	seen_lookup_begin(&lookup, &t, nread);

	while (tuplesort_gettupleslot(by_signature, true, false, sig_slot, NULL))
	{
		bool		isnull;
		int64		sig = DatumGetInt64(slot_getattr(sig_slot, 1, &isnull));

		CHECK_FOR_INTERRUPTS();
		if (have_previous && sig == previous)
			continue;			/* a repeat within the batch */
		have_previous = true;
		previous = sig;

		if (seen_contains(&lookup, sig))
			continue;

		sigs[nsigs++] = Int64GetDatum(sig);
		ExecClearTuple(pos_slot);
		pos_slot->tts_values[0] = slot_getattr(sig_slot, 2, &isnull);
		pos_slot->tts_values[1] = slot_getattr(sig_slot, 3, &isnull);
		pos_slot->tts_isnull[0] = pos_slot->tts_isnull[1] = false;
		ExecStoreVirtualTuple(pos_slot);
		tuplesort_puttupleslot(by_position, pos_slot);

		if (nsigs == SIEVE_BATCH)
		{
			Datum		arg = int8_array(sigs, nsigs);

			insert_batch(insert_seen, &arg, nsigs, "insert into seen", t.seen);
			pfree(DatumGetPointer(arg));
			nsigs = 0;
		}
	}
	if (nsigs > 0)
	{
		Datum		arg = int8_array(sigs, nsigs);

		insert_batch(insert_seen, &arg, nsigs, "insert into seen", t.seen);
	}
	seen_lookup_end(&lookup);
	tuplesort_end(by_signature);

	/* 3. the new URLs, appended to the frontier in discovery order */
	tuplesort_performsort(by_position);
	batch_context = AllocSetContextCreate(CurrentMemoryContext, "sieve_flush batch",
										  ALLOCSET_DEFAULT_SIZES);
	batch = register_frontier_batch(pos_desc, batch_context);
	insert_frontier = prepare(psprintf("INSERT INTO %s (pos, url) SELECT pos, url FROM %s",
									   t.frontier_name, SIEVE_BATCH_RELATION), 0, NULL);
	for (;;)
	{
		bool		more = tuplesort_gettupleslot(by_position, true, false, pos_slot, NULL);
		bool		isnull;
		Size		url_size = 0;

		if (more)
			url_size = VARSIZE_ANY(DatumGetPointer(slot_getattr(pos_slot, 2, &isnull)));

		/* append the batch when it is full, or this URL would overflow it */
		if (nurls > 0 &&
			(!more || nurls == SIEVE_BATCH || url_bytes + url_size > max_url_bytes))
		{
			insert_batch(insert_frontier, NULL, nurls, "append to the frontier",
						 t.frontier);
			appended += nurls;
			nurls = 0;
			url_bytes = 0;
			unregister_frontier_batch(batch, batch_context);
			batch = register_frontier_batch(pos_desc, batch_context);
		}
		if (!more)
			break;

		tuplestore_puttupleslot(batch, pos_slot);
		url_bytes += url_size;
		nurls++;
	}
	unregister_frontier_batch(batch, batch_context);
	tuplesort_end(by_position);

	SPI_finish();
	close_tables(&t);
	PG_RETURN_INT64(appended);
}
