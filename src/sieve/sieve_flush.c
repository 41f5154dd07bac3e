/*-------------------------------------------------------------------------
 *
 * sieve_flush.c
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
 *	1. runs DELETE FROM A RETURNING pos, url, writing every returned URL
 *	   to a temporary file (sieve_spill.c) and feeding its signature
 *	   url_signature(url), position and offset in that file to a tuplesort
 *	   on (sig, pos);
 *	2. walks the sorted stream keeping the first position of each
 *	   signature and looks it up in Z: a signature not in Z is inserted
 *	   into Z (in ascending signature order) and its (pos, offset) goes to
 *	   a second tuplesort, on pos.  The lookup is a merge with Z read in
 *	   signature order when Z is not much larger than the batch, and a
 *	   probe of Z's unique index per signature otherwise (SIEVE_MERGE_RATIO),
 *	   Z's size judged from its pages on disk, which no stale statistics
 *	   can understate.  A compressed seen (sieve_store.c) is merged into a
 *	   new Z, swapped in at step 4;
 *	3. appends the new URLs, read back from the file by offset, to F in
 *	   ascending discovery position, with their signature in F.sig when F has that column (a bigint;
 *	   a generated or identity sig is left to its own values);
 *	4. a compressed seen: the new Z replaces the old (ACCESS EXCLUSIVE from
 *	   there to the commit).
 *
 * On Citus (sieve_citus.c), with the three tables hash-distributed by sig
 * and colocated, the coordinator's tables are empty shells: the flush then
 * takes its lock on Z on every node, looks signatures up by asking Z in SQL
 * which of a batch it has (never its shell's pages or index), and appends
 * to F from arrays (Citus cannot read an ephemeral named relation).  Any
 * other layout of Citus tables is refused.
 *
 * Both sorts are PostgreSQL's external sort, one after the other (the rows
 * found new wait in a temporary file until the first is over), each
 * bounded by three quarters of work_mem and spilling to temporary files
 * beyond it, so memory does not grow with the size of A or Z.  Rows are
 * deleted by one statement and inserted in batches, through SPI, so
 * triggers, constraints, defaults and permissions apply as for SQL, without
 * a round trip per row.  The sorts carry fixed-size rows, never a URL, so
 * their merge passes copy 24 bytes a row whatever the URLs' length.  A
 * batch of URLs is bounded by bytes as well as by rows (a quarter of
 * work_mem), and URLs stay as A stored them, compressed if they were, from
 * the DELETE to the INSERT into F, so memory does not grow with the URLs'
 * length either.
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

#include "pg_version_compat.h"

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
#include "utils/syscache.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

#include "hash.h"
#include "sieve.h"

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
 * they were), beside the sort on position, which has the rest.  A
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
	Oid			seen_index;		/* unique btree on seen (sig) */
	Relation	discovered;
	Relation	frontier;
	bool		frontier_sig;	/* write frontier.sig */
	bool		discovered_sig; /* check discovered.sig */
	bool		citus;			/* Citus tables: everything through SQL */
	bool		compressed;		/* seen is a compressed seen (sieve_store.c) */
	char	   *seen_name;		/* quoted, schema-qualified, for SPI */
	char	   *discovered_name;
	char	   *frontier_name;
} SieveTables;

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

/*
 * frontier.sig, when the frontier has that column, gets the URL's signature
 * (Citus routes the rows of a frontier distributed by it): it must then be
 * a bigint, and is written unless it computes its own values (a generated
 * or identity column)
 */
static bool
frontier_has_sig(Relation frontier)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(frontier), "sig");
	Form_pg_attribute att;

	if (attnum == InvalidAttrNumber)
		return false;
	check_column(frontier, "frontier", "sig", INT8OID);
	att = TupleDescAttr(RelationGetDescr(frontier), attnum - 1);
	return att->attgenerated == '\0' && att->attidentity == '\0';
}

/*
 * discovered.sig, when discovered has a bigint column of that name, must be
 * its URL's signature (or NULL): on Citus it chose the row's shard group,
 * and a row in the wrong one would put its signature in the wrong shard of
 * seen, where no later flush looks for it.  A column sig of another type
 * is some other column and is left alone.
 */
static bool
discovered_has_sig(Relation discovered)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(discovered), "sig");

	return attnum != InvalidAttrNumber &&
		TupleDescAttr(RelationGetDescr(discovered), attnum - 1)->atttypid == INT8OID;
}

/* Opens, checks and locks the tables; the caller is connected to SPI */
static void
open_tables(SieveTables *t, Oid seen, Oid discovered, Oid frontier)
{
	bool		citus;

	if (seen == discovered || seen == frontier || discovered == frontier)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seen, discovered and frontier must be three different tables")));

	/*
	 * Nobody may queue or hold locks on tables they could not flush, or
	 * could not lock with LOCK TABLE: check the privileges first.  (The
	 * index probes read seen directly, hence SELECT.)
	 */
	t->compressed = sieve_store_is_compressed(seen);
	if (t->compressed)
	{
		check_privileges(seen, "seen", ACL_SELECT, ShareRowExclusiveLock);
		sieve_store_check_rewrite(seen, "sieve_flush");
	}
	else
		check_privileges(seen, "seen", ACL_SELECT | ACL_INSERT, ShareRowExclusiveLock);
	check_privileges(discovered, "discovered", ACL_SELECT | ACL_DELETE, RowExclusiveLock);
	check_privileges(frontier, "frontier", ACL_INSERT, RowExclusiveLock);

	/*
	 * Serialize flushes on the same seen table before reading anything.  On
	 * Citus, on every node with metadata (sieve_citus.c), first: it takes
	 * this node's lock in its order.
	 */
	citus = sieve_citus_layout(seen, discovered, frontier, "sieve_flush");
	if (citus)
		sieve_citus_lock(seen, "SHARE ROW EXCLUSIVE");
	t->seen = table_open(seen, ShareRowExclusiveLock);
	t->discovered = table_open(discovered, RowExclusiveLock);
	t->frontier = table_open(frontier, RowExclusiveLock);

	check_relkind(t->seen, "seen", false);
	check_relkind(t->discovered, "discovered", true);
	check_relkind(t->frontier, "frontier", true);
	if (t->compressed)
		t->seen_index = sieve_store_check(t->seen, "sieve_flush");
	else
		check_column(t->seen, "seen", "sig", INT8OID);
	check_column(t->discovered, "discovered", "pos", INT8OID);
	check_column(t->discovered, "discovered", "url", TEXTOID);
	check_column(t->frontier, "frontier", "pos", INT8OID);
	check_column(t->frontier, "frontier", "url", TEXTOID);
	t->frontier_sig = frontier_has_sig(t->frontier);
	t->discovered_sig = discovered_has_sig(t->discovered);
	check_no_overlap(t);
	if (!t->compressed)
		t->seen_index = sieve_unique_index(t->seen, "sig", "sieve_flush");

	/* the layout, again under the locks */
	t->citus = sieve_citus_layout(seen, discovered, frontier, "sieve_flush");
	if (t->citus && !citus)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("seen relation \"%s\" was distributed by Citus during the flush",
						RelationGetRelationName(t->seen))));

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

	/*
	 * What the rewrite of a compressed seen would skip: triggers, rules,
	 * constraints, an open scan of it, publications (sieve_store.c)
	 */
	if (t->compressed)
		sieve_store_check_rewritable(t->seen, "sieve_flush");

	t->seen_name = sieve_qualified_name(t->seen);
	t->discovered_name = sieve_qualified_name(t->discovered);
	t->frontier_name = sieve_qualified_name(t->frontier);
}

static void
close_tables(SieveTables *t)
{
	/* locks are kept until the end of the transaction */
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

static Datum
int8_array(Datum *values, int n)
{
	return PointerGetDatum(construct_array(values, n, INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * A batch of rows for the frontier.  For local tables, a tuplestore
 * registered as SIEVE_BATCH_RELATION; Citus cannot read such a relation, so
 * for Citus tables three arrays, which an INSERT ... SELECT FROM unnest()
 * reads (an array holds its URLs decompressed, so their bytes are counted
 * decompressed there).
 */
typedef struct FrontierBatch
{
	bool		citus;
	bool		sig;			/* write frontier.sig */
	SPIPlanPtr	insert;
	MemoryContext context;		/* reset after each batch */
	TupleDesc	desc;			/* (pos, url, sig) */
	Tuplestorestate *rows;		/* local tables */
	Datum	   *pos;			/* Citus tables */
	Datum	   *url;
	Datum	   *sigs;
	int			n;
	Size		bytes;
} FrontierBatch;

static void
frontier_batch_register(FrontierBatch *batch)
{
	MemoryContext old;
	EphemeralNamedRelation enr;

	old = MemoryContextSwitchTo(batch->context);
	enr = palloc0(sizeof(EphemeralNamedRelationData));
	enr->md.name = pstrdup(SIEVE_BATCH_RELATION);
	enr->md.reliddesc = InvalidOid;
	enr->md.tupdesc = batch->desc;
	enr->md.enrtype = ENR_NAMED_TUPLESTORE;
	enr->md.enrtuples = SIEVE_BATCH;
	enr->reldata = tuplestore_begin_heap(false, false, work_mem);
	MemoryContextSwitchTo(old);

	if (SPI_register_relation(enr) != SPI_OK_REL_REGISTER)
		elog(ERROR, "could not register the batch for the frontier");
	batch->rows = (Tuplestorestate *) enr->reldata;
}

static void
frontier_batch_begin(FrontierBatch *batch, SieveTables *t, TupleDesc desc)
{
	const char *columns = t->frontier_sig ? "pos, url, sig" : "pos, url";

	memset(batch, 0, sizeof(FrontierBatch));
	batch->citus = t->citus;
	batch->sig = t->frontier_sig;
	batch->desc = desc;
	batch->context = AllocSetContextCreate(CurrentMemoryContext, "sieve_flush batch",
										   ALLOCSET_DEFAULT_SIZES);
	if (batch->citus)
	{
		Oid			types[3] = {INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID};

		batch->pos = palloc(sizeof(Datum) * SIEVE_BATCH);
		batch->url = palloc(sizeof(Datum) * SIEVE_BATCH);
		batch->sigs = palloc(sizeof(Datum) * SIEVE_BATCH);
		batch->insert = prepare(psprintf("INSERT INTO %s (%s) SELECT %s FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), pg_catalog.unnest($3)) AS b (pos, url, sig)",
										 t->frontier_name, columns, columns),
								3, types);
	}
	else
	{
		frontier_batch_register(batch);
		batch->insert = prepare(psprintf("INSERT INTO %s (%s) SELECT %s FROM %s",
										 t->frontier_name, columns, columns,
										 SIEVE_BATCH_RELATION), 0, NULL);
	}
}

/* The bytes a URL takes in the batch */
static Size
frontier_batch_url_size(FrontierBatch *batch, Datum url)
{
	return batch->citus ? toast_raw_datum_size(url) : VARSIZE_ANY(DatumGetPointer(url));
}

/* Adds a (pos, url, sig) row */
static void
frontier_batch_add(FrontierBatch *batch, TupleTableSlot *slot, Size url_size)
{
	if (batch->citus)
	{
		MemoryContext old = MemoryContextSwitchTo(batch->context);
		bool		isnull;

		batch->pos[batch->n] = slot_getattr(slot, 1, &isnull);
		batch->url[batch->n] = PointerGetDatum(PG_DETOAST_DATUM_COPY(slot_getattr(slot, 2, &isnull)));
		batch->sigs[batch->n] = slot_getattr(slot, 3, &isnull);
		MemoryContextSwitchTo(old);
	}
	else
		tuplestore_puttupleslot(batch->rows, slot);
	batch->n++;
	batch->bytes += url_size;
}

/* Appends the batch to the frontier and empties it */
static void
frontier_batch_append(FrontierBatch *batch, Relation frontier)
{
	if (batch->citus)
	{
		Datum		args[3];

		args[0] = int8_array(batch->pos, batch->n);
		args[1] = PointerGetDatum(construct_array(batch->url, batch->n, TEXTOID,
												  -1, false, TYPALIGN_INT));
		args[2] = int8_array(batch->sigs, batch->n);
		insert_batch(batch->insert, args, batch->n, "append to the frontier", frontier);
		pfree(DatumGetPointer(args[0]));
		pfree(DatumGetPointer(args[1]));
		pfree(DatumGetPointer(args[2]));
		MemoryContextReset(batch->context);
	}
	else
	{
		insert_batch(batch->insert, NULL, batch->n, "append to the frontier", frontier);
		if (SPI_unregister_relation(SIEVE_BATCH_RELATION) != SPI_OK_REL_UNREGISTER)
			elog(ERROR, "could not unregister the batch for the frontier");
		tuplestore_end(batch->rows);
		MemoryContextReset(batch->context);
		frontier_batch_register(batch);
	}
	batch->n = 0;
	batch->bytes = 0;
}

static void
frontier_batch_end(FrontierBatch *batch)
{
	if (!batch->citus)
	{
		if (SPI_unregister_relation(SIEVE_BATCH_RELATION) != SPI_OK_REL_UNREGISTER)
			elog(ERROR, "could not unregister the batch for the frontier");
		tuplestore_end(batch->rows);
	}
	MemoryContextDelete(batch->context);
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
	TupleTableSlot *slot;		/* virtual (sig, pos, offset) */
	SieveSpill *spill;			/* where the URLs go */
	Relation	discovered;
	bool		check_sig;		/* the third column returned is sig */
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
	 * The URL is spilled as the table stored it, compressed if it was, so
	 * that it is appended to the frontier without being compressed again
	 * (as INSERT ... SELECT does); it is decompressed only to be hashed.
	 */
	returned_url = (struct varlena *) DatumGetPointer(returned->tts_values[1]);
	url = VARATT_IS_EXTERNAL(returned_url) ? detoast_external_attr(returned_url) :
		returned_url;
	url_text = (text *) (VARATT_IS_COMPRESSED(url) ? detoast_attr(url) : url);

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(sbf_signature(VARDATA_ANY(url_text),
													  VARSIZE_ANY_EXHDR(url_text)));
	if (r->check_sig && !returned->tts_isnull[2] &&
		DatumGetInt64(returned->tts_values[2]) != DatumGetInt64(slot->tts_values[0]))
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("discovered relation \"%s\" has a row whose sig is not the signature of its url",
						RelationGetRelationName(r->discovered)),
				 errdetail("The row at pos " INT64_FORMAT " has sig " INT64_FORMAT "; url_signature(url) is " INT64_FORMAT ".",
						   DatumGetInt64(returned->tts_values[0]),
						   DatumGetInt64(returned->tts_values[2]),
						   DatumGetInt64(slot->tts_values[0])),
				 errhint("Fill discovered.sig with url_signature(url), and guard it with CHECK (sig = url_signature(url)).")));
	slot->tts_values[1] = returned->tts_values[0];
	slot->tts_values[2] = Int64GetDatum(sieve_spill_write(r->spill, url));
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
				TupleTableSlot *slot, SieveSpill *spill)
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
	receiver.spill = spill;
	receiver.discovered = t->discovered;
	receiver.check_sig = t->discovered_sig;

	memset(&options, 0, sizeof(options));
	options.dest = (DestReceiver *) &receiver;
	/* a plain table without its inheritance children; a partitioned one whole */
	rc = SPI_execute_extended(psprintf("DELETE FROM %s%s RETURNING pos, url%s",
									   t->discovered->rd_rel->relkind == RELKIND_RELATION ? "ONLY " : "",
									   t->discovered_name,
									   t->discovered_sig ? ", sig" : ""), &options);
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
 * The signatures found new, and their rows: the signatures go to seen in
 * batches, in ascending order, and the (pos, offset, sig) rows to a
 * temporary file, which the sort on position reads once the sort on
 * signature is over
 */
typedef struct NewSignatures
{
	SieveTables *t;
	SPIPlanPtr	insert_seen;
	Datum	   *sigs;
	int			nsigs;
	SieveSpill *spill;
} NewSignatures;

static void
new_signatures_insert(NewSignatures *news)
{
	Datum		arg;

	if (news->nsigs == 0)
		return;
	arg = int8_array(news->sigs, news->nsigs);
	insert_batch(news->insert_seen, &arg, news->nsigs, "insert into seen", news->t->seen);
	pfree(DatumGetPointer(arg));
	news->nsigs = 0;
}

/* The row of a (sig, pos, offset) slot is new */
static void
new_signature(NewSignatures *news, TupleTableSlot *sig_slot)
{
	bool		isnull;
	Datum		sig = slot_getattr(sig_slot, 1, &isnull);

	sieve_spill_row(news->spill, DatumGetInt64(slot_getattr(sig_slot, 2, &isnull)),
					DatumGetInt64(slot_getattr(sig_slot, 3, &isnull)),
					DatumGetInt64(sig));

	/* a compressed seen has the new signatures already */
	if (news->insert_seen == NULL)
		return;
	news->sigs[news->nsigs++] = sig;
	if (news->nsigs == SIEVE_BATCH)
		new_signatures_insert(news);
}

/*
 * Looking signatures up in seen, in ascending order: by merging with seen
 * read in signature order, or by probing its unique index; or, for Citus
 * tables, whose shells on the coordinator hold no rows, by asking seen in
 * SQL which of a batch of signatures it has.
 */
typedef enum SeenLookupMethod
{
	SEEN_MERGE,
	SEEN_PROBE,
	SEEN_QUERY,
	SEEN_COMPRESSED
} SeenLookupMethod;

typedef struct SeenLookup
{
	SeenLookupMethod method;
	/* merge: seen's signatures in ascending order, a batch at a time */
	Portal		cursor;
	int64	   *sigs;			/* query: those of the batch seen has */
	uint64		nsigs;
	uint64		next;
	bool		exhausted;
	/* probe */
	Relation	index;
	Snapshot	snapshot;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	/* query: the (sig, pos, offset) rows waiting for the answer */
	SPIPlanPtr	query;
	Tuplestorestate *pending;
	Datum	   *pending_sigs;
	int			npending;
	/* compressed: merged into a new Z */
	SieveStoreMerge *merge;
} SeenLookup;

static void
seen_lookup_begin(SeenLookup *lookup, SieveTables *t, uint64 nread)
{
	BlockNumber pages;

	memset(lookup, 0, sizeof(SeenLookup));
	if (t->compressed)
	{
		lookup->method = SEEN_COMPRESSED;
		elog(DEBUG1, "sieve_flush: merging with compressed seen relation \"%s\" (" UINT64_FORMAT " discovered rows)",
			 RelationGetRelationName(t->seen), nread);
		lookup->merge = sieve_store_merge_begin(t->seen, t->seen_index, "sieve_flush");
		return;
	}
	if (t->citus)
	{
		Oid			int8array = INT8ARRAYOID;

		/* a shell's size on disk says nothing of seen's */
		lookup->method = SEEN_QUERY;
		elog(DEBUG1, "sieve_flush: querying Citus table seen relation \"%s\" (" UINT64_FORMAT " discovered rows)",
			 RelationGetRelationName(t->seen), nread);
		/*
		 * DISTINCT: at most one row per signature of the batch, even if
		 * seen's shards lack the unique index its shell has
		 */
		lookup->query = prepare(psprintf("SELECT DISTINCT sig FROM ONLY %s WHERE sig OPERATOR(pg_catalog.=) ANY ($1) ORDER BY sig",
										 t->seen_name), 1, &int8array);
		lookup->sigs = palloc(sizeof(int64) * SIEVE_BATCH);
		lookup->pending_sigs = palloc(sizeof(Datum) * SIEVE_BATCH);
		lookup->pending = tuplestore_begin_heap(false, false, Max(work_mem / 4, 64));
		return;
	}

	pages = RelationGetNumberOfBlocks(t->seen);
	lookup->method = (double) pages * SIEVE_SEEN_ROWS_PER_PAGE <
		SIEVE_MERGE_RATIO * (double) nread ? SEEN_MERGE : SEEN_PROBE;
	elog(DEBUG1, "sieve_flush: %s seen relation \"%s\" (%u pages, " UINT64_FORMAT " discovered rows)",
		 lookup->method == SEEN_MERGE ? "merging with" : "probing the index of",
		 RelationGetRelationName(t->seen), pages, nread);
	if (lookup->method == SEEN_MERGE)
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
		lookup->index = index_open(t->seen_index, AccessShareLock);
		lookup->snapshot = RegisterSnapshot(GetTransactionSnapshot());
		lookup->slot = table_slot_create(t->seen, NULL);
		lookup->scan = index_beginscan_compat(t->seen, lookup->index, lookup->snapshot, 1, 0);
	}
}

/*
 * Copies the signatures of SPI's last result (one int8 column, in
 * ascending order, at most SIEVE_BATCH rows) into lookup->sigs, and frees
 * the result.
 */
static void
take_signatures(SeenLookup *lookup)
{
	if (SPI_processed > SIEVE_BATCH)
		elog(ERROR, "sieve_flush: " UINT64_FORMAT " signatures from seen, more than a batch",
			 SPI_processed);
	lookup->nsigs = SPI_processed;
	lookup->next = 0;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		lookup->sigs[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
													  SPI_tuptable->tupdesc,
													  1, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
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
		lookup->exhausted = (SPI_processed < SIEVE_BATCH);
		take_signatures(lookup);
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

/*
 * Asks seen which of the pending signatures it has, and passes the rows of
 * the others on as new.  slot is a (sig, pos, offset) slot to read them into.
 */
static void
seen_query_resolve(SeenLookup *lookup, NewSignatures *news, TupleTableSlot *slot)
{
	Datum		arg;
	int			rc;

	if (lookup->npending == 0)
		return;
	arg = int8_array(lookup->pending_sigs, lookup->npending);
	rc = SPI_execute_plan(lookup->query, &arg, NULL, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "sieve_flush: could not look signatures up in seen: %s",
			 SPI_result_code_string(rc));
	pfree(DatumGetPointer(arg));
	take_signatures(lookup);

	/* both in ascending order */
	tuplestore_rescan(lookup->pending);
	while (tuplestore_gettupleslot(lookup->pending, true, false, slot))
	{
		bool		isnull;
		int64		sig = DatumGetInt64(slot_getattr(slot, 1, &isnull));

		while (lookup->next < lookup->nsigs && lookup->sigs[lookup->next] < sig)
			lookup->next++;
		if (lookup->next < lookup->nsigs && lookup->sigs[lookup->next] == sig)
			continue;
		new_signature(news, slot);
	}
	tuplestore_clear(lookup->pending);
	lookup->npending = 0;
}

/*
 * Looks the signature of a (sig, pos, offset) slot up, and passes its row on
 * if it is new: at once, or with the next batch of pending rows
 */
static void
seen_lookup(SeenLookup *lookup, NewSignatures *news, TupleTableSlot *slot)
{
	bool		isnull;
	int64		sig = DatumGetInt64(slot_getattr(slot, 1, &isnull));

	switch (lookup->method)
	{
		case SEEN_MERGE:
			if (!seen_contains_merge(lookup, sig))
				new_signature(news, slot);
			break;
		case SEEN_PROBE:
			if (!seen_contains_probe(lookup, sig))
				new_signature(news, slot);
			break;
		case SEEN_QUERY:
			tuplestore_puttupleslot(lookup->pending, slot);
			lookup->pending_sigs[lookup->npending++] = Int64GetDatum(sig);
			if (lookup->npending == SIEVE_BATCH)
				seen_query_resolve(lookup, news, slot);
			break;
		case SEEN_COMPRESSED:
			if (sieve_store_merge_add(lookup->merge, sig))
				new_signature(news, slot);
			break;
	}
}

static void
seen_lookup_end(SeenLookup *lookup, NewSignatures *news, TupleTableSlot *slot)
{
	switch (lookup->method)
	{
		case SEEN_MERGE:
			SPI_cursor_close(lookup->cursor);
			break;
		case SEEN_PROBE:
			index_endscan(lookup->scan);
			ExecDropSingleTupleTableSlot(lookup->slot);
			UnregisterSnapshot(lookup->snapshot);
			index_close(lookup->index, NoLock);
			break;
		case SEEN_QUERY:
			seen_query_resolve(lookup, news, slot);
			tuplestore_end(lookup->pending);
			break;
		case SEEN_COMPRESSED:
			sieve_store_merge_finish(lookup->merge);
			break;
	}
}

Datum
sieve_flush(PG_FUNCTION_ARGS)
{
	SieveTables t;
	TupleDesc	sig_desc;
	TupleDesc	pos_desc;
	TupleDesc	frontier_desc;
	AttrNumber	sig_keys[2] = {1, 2};
	AttrNumber	pos_keys[1] = {1};
	Oid			less[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};
	Tuplesortstate *by_signature;
	Tuplesortstate *by_position;
	TupleTableSlot *sig_slot;
	TupleTableSlot *pos_slot;
	TupleTableSlot *frontier_slot;
	SieveSpill *spill;
	SeenLookup	lookup;
	NewSignatures news;
	FrontierBatch batch;
	uint64		nread;
	Oid			int8array = INT8ARRAYOID;
	Size		max_url_bytes = frontier_batch_bytes();
	bool		have_previous = false;
	int64		previous = 0;
	int64		appended = 0;

	/*
	 * The sorts follow each other, each with three quarters of work_mem:
	 * beside the first, a batch of lookups waiting for Citus; beside the
	 * second, a batch for the frontier; a quarter of work_mem each.
	 */
	int			sort_mem = Max(work_mem / 4 * 3, 64);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	open_tables(&t, PG_GETARG_OID(0), PG_GETARG_OID(1), PG_GETARG_OID(2));

	sig_desc = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(sig_desc, 1, "sig", INT8OID, -1, 0);
	TupleDescInitEntry(sig_desc, 2, "pos", INT8OID, -1, 0);
	TupleDescInitEntry(sig_desc, 3, "offset", INT8OID, -1, 0);
	pos_desc = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(pos_desc, 1, "pos", INT8OID, -1, 0);
	TupleDescInitEntry(pos_desc, 2, "offset", INT8OID, -1, 0);
	TupleDescInitEntry(pos_desc, 3, "sig", INT8OID, -1, 0);
	frontier_desc = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(frontier_desc, 1, "pos", INT8OID, -1, 0);
	TupleDescInitEntry(frontier_desc, 2, "url", TEXTOID, -1, 0);
	TupleDescInitEntry(frontier_desc, 3, "sig", INT8OID, -1, 0);
	sig_slot = MakeSingleTupleTableSlot(sig_desc, &TTSOpsMinimalTuple);
	pos_slot = MakeSingleTupleTableSlot(pos_desc, &TTSOpsMinimalTuple);
	frontier_slot = MakeSingleTupleTableSlot(frontier_desc, &TTSOpsVirtual);
	spill = sieve_spill_begin();

	/* 1. discovered, sorted by (signature, position) */
	by_signature = tuplesort_begin_heap(sig_desc, 2, sig_keys, less, collations,
										nulls_first, sort_mem, NULL, TUPLESORT_NONE);
	{
		TupleTableSlot *virtual_slot = MakeSingleTupleTableSlot(sig_desc, &TTSOpsVirtual);

		nread = read_discovered(&t, by_signature, virtual_slot, spill);
		ExecDropSingleTupleTableSlot(virtual_slot);
	}
	tuplesort_performsort(by_signature);

	/* 2. first position of each signature not in seen */
	memset(&news, 0, sizeof(news));
	news.t = &t;
	news.spill = spill;
	news.sigs = palloc(sizeof(Datum) * SIEVE_BATCH);

	/*
	 * Under REPEATABLE READ and SERIALIZABLE the snapshot predates the lock:
	 * a flush that committed meanwhile may have inserted signatures this
	 * one does not see.  ON CONFLICT makes that a serialization failure
	 * (40001, retryable) rather than a unique violation.
	 */
	if (!t.compressed)
		news.insert_seen = prepare(psprintf("INSERT INTO %s (sig) SELECT pg_catalog.unnest($1)%s",
											t.seen_name,
											IsolationUsesXactSnapshot() ? " ON CONFLICT (sig) DO NOTHING" : ""),
								   1, &int8array);

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
		seen_lookup(&lookup, &news, sig_slot);
	}
	seen_lookup_end(&lookup, &news, sig_slot);
	new_signatures_insert(&news);
	tuplesort_end(by_signature);

	/* 3. the new URLs, appended to the frontier in discovery order */
	by_position = tuplesort_begin_heap(pos_desc, 1, pos_keys, less, collations,
									   nulls_first, sort_mem, NULL, TUPLESORT_NONE);
	{
		TupleTableSlot *virtual_slot = MakeSingleTupleTableSlot(pos_desc, &TTSOpsVirtual);
		int64		pos;
		int64		offset;
		int64		sig;

		while (sieve_spill_next_row(spill, &pos, &offset, &sig))
		{
			ExecClearTuple(virtual_slot);
			virtual_slot->tts_values[0] = Int64GetDatum(pos);
			virtual_slot->tts_values[1] = Int64GetDatum(offset);
			virtual_slot->tts_values[2] = Int64GetDatum(sig);
			memset(virtual_slot->tts_isnull, false, 3 * sizeof(bool));
			ExecStoreVirtualTuple(virtual_slot);
			tuplesort_puttupleslot(by_position, virtual_slot);
		}
		ExecDropSingleTupleTableSlot(virtual_slot);
	}
	tuplesort_performsort(by_position);
	frontier_batch_begin(&batch, &t, frontier_desc);
	for (;;)
	{
		bool		more = tuplesort_gettupleslot(by_position, true, false, pos_slot, NULL);
		bool		isnull;
		Size		url_size = 0;
		Datum		url = (Datum) 0;

		if (more)
		{
			url = PointerGetDatum(sieve_spill_read(spill, DatumGetInt64(slot_getattr(pos_slot, 2, &isnull))));
			url_size = frontier_batch_url_size(&batch, url);
		}

		/* append the batch when it is full, or this URL would overflow it */
		if (batch.n > 0 &&
			(!more || batch.n == SIEVE_BATCH || batch.bytes + url_size > max_url_bytes))
		{
			appended += batch.n;
			frontier_batch_append(&batch, t.frontier);
		}
		if (!more)
			break;
		ExecClearTuple(frontier_slot);
		frontier_slot->tts_values[0] = slot_getattr(pos_slot, 1, &isnull);
		frontier_slot->tts_values[1] = url;
		frontier_slot->tts_values[2] = slot_getattr(pos_slot, 3, &isnull);
		memset(frontier_slot->tts_isnull, false, 3 * sizeof(bool));
		ExecStoreVirtualTuple(frontier_slot);
		frontier_batch_add(&batch, frontier_slot, url_size);
	}
	frontier_batch_end(&batch);
	tuplesort_end(by_position);
	sieve_spill_end(spill);

	/*
	 * 4. a compressed seen: the new Z replaces the old, last, so that
	 * ACCESS EXCLUSIVE is held only from here to the commit.  A change the
	 * user's code (the triggers on discovered and frontier) made to the
	 * seen in the meantime would be undone: the swap refuses it.
	 */
	if (t.compressed)
		sieve_store_merge_swap(lookup.merge, "sieve_flush");

	SPI_finish();
	close_tables(&t);
	PG_RETURN_INT64(appended);
}
