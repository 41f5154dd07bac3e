/*-------------------------------------------------------------------------
 *
 * sieve_seen.c
 *	  The SQL side of the compressed seen (sieve_store.c):
 *	  sieve_seen_create, sieve_contains (a URL or a batch), sieve_signatures and
 *	  sieve_seen_import.  The sieve_chunk type is in sieve_chunk.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "executor/tstoreReceiver.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/sinval.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "hash.h"
#include "sieve.h"
#include "value_io.h"

PG_FUNCTION_INFO_V1(sieve_seen_create);
PG_FUNCTION_INFO_V1(sieve_contains);
PG_FUNCTION_INFO_V1(sieve_contains_array);
PG_FUNCTION_INFO_V1(sieve_signatures);
PG_FUNCTION_INFO_V1(sieve_seen_import);
PG_FUNCTION_INFO_V1(sieve_seen_online);
PG_FUNCTION_INFO_V1(sieve_seen_compact);

/*
 * Makes the compressed seen table (quoted, qualified) take online adds
 * (sieve_online.c): its chunk may be NULL, and a unique index on (head)
 * WHERE chunk IS NOT NULL finds the chunks alone.  In SPI, as the caller.
 */
static void
make_online(const char *table)
{
	if (SPI_execute(psprintf("ALTER TABLE %s ALTER COLUMN chunk DROP NOT NULL", table),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not alter %s", table);
	if (SPI_execute(psprintf("CREATE UNIQUE INDEX ON %s (head) WHERE chunk IS NOT NULL", table),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not index %s", table);
}

/*
 * sieve_seen_create(name text, unlogged boolean DEFAULT false) -> regclass
 *
 * CREATE TABLE name (head bigint PRIMARY KEY, chunk sieve_chunk), and its
 * index of chunks (make_online), as the caller, in the schema the name or
 * the search path gives
 */
Datum
sieve_seen_create(PG_FUNCTION_ARGS)
{
	List	   *names = textToQualifiedNameList(PG_GETARG_TEXT_PP(0));
	bool		unlogged = PG_GETARG_BOOL(1);
	RangeVar   *rv = makeRangeVarFromNameList(names);
	Oid			namespace;
	const char *table;
	Oid			relid;
	Relation	seen;
	/* sieve_chunk is in sbf's schema, with this function */
	const char *schema = quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));

	if (rv->catalogname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cross-database references are not implemented: %s",
						text_to_cstring(PG_GETARG_TEXT_PP(0)))));

	/*
	 * The schema CREATE TABLE would choose for the name (the first schema
	 * of the search path that exists, or pg_temp), named in the statement,
	 * and where the table made is found afterwards: a table of that name
	 * elsewhere on the search path (a temporary one, one in pg_catalog) is
	 * neither checked nor returned
	 */
	namespace = RangeVarGetCreationNamespace(rv);
	table = quote_qualified_identifier(isTempNamespace(namespace) ? "pg_temp" :
									   get_namespace_name(namespace),
									   rv->relname);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(psprintf("CREATE %sTABLE %s (head pg_catalog.int8 PRIMARY KEY, chunk %s.sieve_chunk)",
							 unlogged ? "UNLOGGED " : "", table, schema),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "sieve_seen_create: could not create %s", table);
	make_online(table);
	SPI_finish();

	/*
	 * A table made in a schema of a FOR TABLES IN SCHEMA publication, or
	 * beside a FOR ALL TABLES one, is in it: refused at once rather than at
	 * the first flush
	 */
	relid = get_relname_relid(rv->relname, namespace);
	if (!OidIsValid(relid))
		elog(ERROR, "sieve_seen_create: created %s, then did not find it", table);
	seen = table_open(relid, AccessShareLock);
	sieve_store_check_unpublished(seen);
	table_close(seen, NoLock);
	PG_RETURN_OID(relid);
}

/*
 * What sieve_contains found out about seen, kept at its call site
 * (fn_extra, which a plpgsql simple expression keeps for the whole
 * transaction) for one user, security context and row_security setting
 * (SELECT and row-level security depend on them) while the catalogs stand
 * still: checked and filled again when any of them differs, or when an
 * invalidation was processed since it was filled, ours (an ALTER TABLE or
 * GRANT earlier in the transaction, which does not move
 * SharedInvalidMessageCounter) or another backend's.
 */
typedef struct ContainsCache
{
	Oid			seen;
	Oid			user;			/* GetUserIdAndSecContext when filled */
	int			sec_context;
	bool		row_security;
	uint64		local_epoch;	/* sieve_inval_epoch when filled */
	uint64		shared_epoch;	/* SharedInvalidMessageCounter when filled */
	bool		compressed;
	Oid			index;			/* on head, or on sig */
	Oid			chunk_index;	/* an online compressed seen's, or invalid */
	AttrNumber	head_att;		/* a compressed seen's columns */
	AttrNumber	chunk_att;
} ContainsCache;

/*
 * Moved by every relcache invalidation this backend processes (a table's
 * columns, indexes, privileges, policies, row-level security flags) and by
 * every change to roles and their memberships
 */
static uint64 sieve_inval_epoch = 0;
static bool sieve_inval_registered = false;

static void
sieve_relcache_callback(Datum arg, Oid relid)
{
	sieve_inval_epoch++;
}

static void
sieve_syscache_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	sieve_inval_epoch++;
}

/* Does the cache hold for this call? */
static bool
contains_cache_valid(ContainsCache *cache, Oid seen_oid)
{
	Oid			user;
	int			sec_context;

	GetUserIdAndSecContext(&user, &sec_context);
	return cache != NULL && cache->seen == seen_oid &&
		cache->user == user && cache->sec_context == sec_context &&
		cache->row_security == row_security &&
		cache->local_epoch == sieve_inval_epoch &&
		cache->shared_epoch == SharedInvalidMessageCounter;
}

/*
 * The caller may read seen: SELECT on the table, checked before any lock
 * is taken
 */
static void
check_select(Oid seen_oid)
{
	AclResult	aclresult = pg_class_aclcheck(seen_oid, GetUserId(), ACL_SELECT);

	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(get_rel_relkind(seen_oid)),
					   get_rel_name(seen_oid));
}

/*
 * What every reader of a seen checks once it holds its lock, as
 * sieve_flush does: the readers go to the table's index and rows directly,
 * so a row-level security policy could not hide a row from them, and they
 * read seen alone, where SELECT would read its inheritance children too.
 * Both are refused rather than answered past.
 */
void
sieve_seen_check_readable(Relation seen, const char *caller)
{
	List	   *children;

	if (check_enable_rls(RelationGetRelid(seen), InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support row-level security on seen relation \"%s\"",
						caller, RelationGetRelationName(seen)),
				 errdetail("%s reads the table's index and rows directly, where a policy could not hide a row.",
						   caller)));
	children = find_inheritance_children(RelationGetRelid(seen), NoLock);
	if (children != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("seen relation \"%s\" has inheritance children",
						RelationGetRelationName(seen)),
				 errdetail("%s reads seen alone, where SELECT would read its children too.",
						   caller)));
}

/*
 * A plain seen: a table whose column sig is a bigint (not a domain over
 * one, as for sieve_flush) with a unique btree index on it, which is
 * probed with int8's own comparison; returns the index
 */
static Oid
check_plain(Relation seen, const char *caller)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(seen), "sig");
	Oid			type;

	if (seen->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("seen relation \"%s\" is not a table",
						RelationGetRelationName(seen))));
	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"sig\" of seen relation \"%s\" does not exist",
						RelationGetRelationName(seen)),
				 errhint("%s reads a compressed seen (sieve_seen_create) or a table with a column sig bigint and a unique index on it.",
						 caller)));
	type = TupleDescAttr(RelationGetDescr(seen), attnum - 1)->atttypid;
	if (type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"sig\" of seen relation \"%s\" has type %s, not %s",
						RelationGetRelationName(seen), format_type_be(type),
						format_type_be(INT8OID))));
	return sieve_unique_index(seen, "sig", caller);
}

/*
 * A plain seen's unique btree on sig, probed for each of the n signatures
 * (ascending, distinct): one scan and snapshot for the batch, rescanned
 * for each signature.  Descents in signature order read the btree's pages
 * in order, each from shared buffers after the first; a merge with a scan
 * of the whole index would read every page of it, which pays only when the
 * batch is about as large as the seen.
 */
static void
plain_contains(Relation seen, Oid index, const int64 *signatures, int n,
			   bool *found)
{
	Relation	indexrel = index_open(index, AccessShareLock);
	Snapshot	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	TupleTableSlot *slot = table_slot_create(seen, NULL);
	IndexScanDesc scan = index_beginscan_compat(seen, indexrel, snapshot, 1, 0);
	ScanKeyData key;
	int			i;

	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(signatures[i]));
		index_rescan(scan, &key, 1, NULL, 0);
		found[i] = index_getnext_slot(scan, ForwardScanDirection, slot);
		ExecClearTuple(slot);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(indexrel, NoLock);
}

/*
 * Opens seen for sieve_contains, checked as the cache at the call site
 * says it must be (and the cache filled); the caller closes it, keeping
 * the lock
 */
static Relation
contains_open(FunctionCallInfo fcinfo, Oid seen_oid)
{
	ContainsCache *cache = (ContainsCache *) fcinfo->flinfo->fn_extra;
	Relation	seen;
	bool		checked;

	if (!sieve_inval_registered)
	{
		CacheRegisterRelcacheCallback(sieve_relcache_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, sieve_syscache_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMMEMROLE, sieve_syscache_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, sieve_syscache_callback, (Datum) 0);
		sieve_inval_registered = true;
	}
	checked = !contains_cache_valid(cache, seen_oid);
	if (checked)
		check_select(seen_oid);
	/* the lock processes the invalidations pending, ours and others' */
	seen = table_open(seen_oid, AccessShareLock);
	if (!contains_cache_valid(cache, seen_oid))
	{
		/* an invalidation that came with the lock: SELECT again */
		if (!checked)
			check_select(seen_oid);
		if (cache == NULL)
			cache = fcinfo->flinfo->fn_extra =
				MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ContainsCache));
		cache->seen = InvalidOid;
		/* what the checks read may move the epochs: filled as of the start */
		GetUserIdAndSecContext(&cache->user, &cache->sec_context);
		cache->row_security = row_security;
		cache->local_epoch = sieve_inval_epoch;
		cache->shared_epoch = SharedInvalidMessageCounter;
		cache->compressed = sieve_store_is_compressed(seen_oid);
		if (cache->compressed)
		{
			cache->index = sieve_store_check(seen, "sieve_contains");
			cache->chunk_index = sieve_chunk_index(seen);
			cache->head_att = get_attnum(seen_oid, "head");
			cache->chunk_att = get_attnum(seen_oid, "chunk");

			/*
			 * An online seen whose index of chunks was dropped: its adds
			 * would be read as corrupted chunks
			 */
			if (!OidIsValid(cache->chunk_index) &&
				!TupleDescAttr(RelationGetDescr(seen), cache->chunk_att - 1)->attnotnull)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("compressed seen relation \"%s\" has no index of its chunks",
								RelationGetRelationName(seen)),
						 errdetail("Its column chunk may be NULL, for online adds, but it has no unique index on (head) WHERE chunk IS NOT NULL to find its chunks by."),
						 errhint("SELECT sieve_seen_online('%s'); makes the index again.",
								 sieve_qualified_name(seen))));
		}
		else
			cache->index = check_plain(seen, "sieve_contains");
		sieve_seen_check_readable(seen, "sieve_contains");
		cache->seen = seen_oid;
	}
	return seen;
}

/*
 * Are the n signatures (ascending, distinct) in seen, opened by
 * contains_open?
 */
static void
contains_sorted(FunctionCallInfo fcinfo, Relation seen, const int64 *signatures,
				int n, bool *found)
{
	ContainsCache *cache = (ContainsCache *) fcinfo->flinfo->fn_extra;

	if (!cache->compressed)
		plain_contains(seen, cache->index, signatures, n, found);
	else if (!OidIsValid(cache->chunk_index))
		sieve_store_contains(seen, cache->index, cache->head_att,
							 cache->chunk_att, signatures, n, found);
	else
	{
		/* the chunks, then the online adds of what they lack */
		int64	   *rest = palloc(sizeof(int64) * n);
		bool	   *rest_found = palloc(sizeof(bool) * n);
		int			nrest = 0;
		int			i;

		sieve_store_contains(seen, cache->chunk_index, cache->head_att,
							 cache->chunk_att, signatures, n, found);
		for (i = 0; i < n; i++)
			if (!found[i])
				rest[nrest++] = signatures[i];
		if (nrest > 0)
			plain_contains(seen, cache->index, rest, nrest, rest_found);
		nrest = 0;
		for (i = 0; i < n; i++)
			if (!found[i])
				found[i] = rest_found[nrest++];
		pfree(rest);
		pfree(rest_found);
	}
}

/*
 * sieve_contains(seen regclass, url text) -> boolean
 *
 * Is url_signature(url) in seen, a compressed seen or a plain one (sig
 * bigint with a unique btree index)?  Exact, but for 64-bit collisions.
 */
Datum
sieve_contains(PG_FUNCTION_ARGS)
{
	text	   *url = PG_GETARG_TEXT_PP(1);
	int64		signature = sbf_signature(VARDATA_ANY(url), VARSIZE_ANY_EXHDR(url));
	Relation	seen = contains_open(fcinfo, PG_GETARG_OID(0));
	bool		found;

	contains_sorted(fcinfo, seen, &signature, 1, &found);
	table_close(seen, NoLock);
	PG_RETURN_BOOL(found);
}

static int
batch_item_cmp(const void *a, const void *b)
{
	const SieveBatchItem *x = (const SieveBatchItem *) a;
	const SieveBatchItem *y = (const SieveBatchItem *) b;

	if (x->signature != y->signature)
		return (x->signature > y->signature) - (x->signature < y->signature);
	return (x->index > y->index) - (x->index < y->index);
}

/*
 * The signatures of the elements of a non-empty array (url_signature of a
 * text's or a bytea's bytes; a bigint is one), each with its place in the
 * array, sorted by signature, then place; *nitems of them, the NULL
 * elements counted in *nnulls.  An array may hold MaxArraySize elements:
 * 16 bytes an item.
 */
SieveBatchItem *
sieve_batch_items(ArrayType *values, int *nitems, int *nnulls)
{
	int			nelems = ArrayGetNItems(ARR_NDIM(values), ARR_DIMS(values));
	bool		signatures_given = ARR_ELEMTYPE(values) == INT8OID;
	SieveBatchItem *items = MemoryContextAllocHuge(CurrentMemoryContext,
												   sizeof(SieveBatchItem) * Max(nelems, 1));
	ArrayIterator it = array_create_iterator(values, 0, NULL);
	Datum		value;
	bool		isnull;
	int			i;

	*nitems = *nnulls = 0;
	for (i = 0; array_iterate(it, &value, &isnull); i++)
	{
		if (i % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
		if (isnull)
		{
			(*nnulls)++;
			continue;
		}
		if (signatures_given)
			items[*nitems].signature = DatumGetInt64(value);
		else
		{
			struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));

			items[*nitems].signature = sbf_signature(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
		}
		items[(*nitems)++].index = i;
	}
	array_free_iterator(it);
	qsort(items, *nitems, sizeof(SieveBatchItem), batch_item_cmp);
	return items;
}

/*
 * sieve_contains(seen regclass, urls text[]) -> boolean[]
 * sieve_contains(seen regclass, signatures bigint[]) -> boolean[]
 *
 * The single form for each element (a url, or a signature as url_signature
 * gives it), answered in input order with the input's dimensions; a NULL
 * element is answered NULL.  The signatures are sorted (keeping their
 * places) and their distinct values asked of seen in one walk, so that a
 * compressed seen decodes each chunk at most once a batch.  Memory: 26
 * bytes an element, and the one chunk decoded.
 */
Datum
sieve_contains_array(PG_FUNCTION_ARGS)
{
	ArrayType  *urls = PG_GETARG_ARRAYTYPE_P(1);
	int			nelems = ArrayGetNItems(ARR_NDIM(urls), ARR_DIMS(urls));
	Relation	seen = contains_open(fcinfo, PG_GETARG_OID(0));
	SieveBatchItem *items;
	int64	   *distinct;
	bool	   *found;
	bool	   *answers;
	int			nitems;
	int			ndistinct = 0;
	int			nnulls;
	int			i;
	ArrayType  *result;

	if (nelems == 0)
	{
		table_close(seen, NoLock);
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
	}
	items = sieve_batch_items(urls, &nitems, &nnulls);

	distinct = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * Max(nitems, 1));
	for (i = 0; i < nitems; i++)
		if (ndistinct == 0 || distinct[ndistinct - 1] != items[i].signature)
			distinct[ndistinct++] = items[i].signature;
	found = palloc(sizeof(bool) * Max(ndistinct, 1));
	contains_sorted(fcinfo, seen, distinct, ndistinct, found);
	table_close(seen, NoLock);

	/* back to the input's places: items and distinct ascend together */
	answers = palloc0(sizeof(bool) * nelems);
	ndistinct = -1;
	for (i = 0; i < nitems; i++)
	{
		if (i == 0 || items[i].signature != items[i - 1].signature)
			ndistinct++;
		answers[items[i].index] = found[ndistinct];
	}
	result = sbf_answers_array(urls, answers, nelems, nnulls);
	pfree(items);
	pfree(distinct);
	pfree(found);
	pfree(answers);
	PG_RETURN_ARRAYTYPE_P(result);
}

/*
 * Opens seen for reading and checks it is a compressed seen the user may
 * read; returns its primary key
 */
static Oid
open_compressed(Oid seen_oid, LOCKMODE lockmode, Relation *seen, const char *caller)
{
	Oid			index;

	check_select(seen_oid);
	*seen = table_open(seen_oid, lockmode);
	if (!sieve_store_is_compressed(seen_oid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not a compressed seen",
						RelationGetRelationName(*seen)),
				 errdetail("%s reads a table made by sieve_seen_create.", caller)));
	index = sieve_store_check(*seen, caller);
	sieve_seen_check_readable(*seen, caller);
	return index;
}

/*
 * sieve_signatures(seen regclass) -> SETOF bigint: the signatures of a
 * compressed seen, in ascending order
 */
Datum
sieve_signatures(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	seen;
	Oid			index;
	SieveStoreMerge *reader;
	Tuplestorestate *store;
	TupleDesc	desc;
	MemoryContext old;
	int64		signature;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		(rsinfo->allowedModes & SFRM_Materialize) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("sieve_signatures must be called in a context that accepts a set")));

	index = open_compressed(PG_GETARG_OID(0), AccessShareLock, &seen, "sieve_signatures");
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, 1, "sieve_signatures", INT8OID, -1, 0);
	store = tuplestore_begin_heap(false, false, work_mem);
	MemoryContextSwitchTo(old);

	reader = sieve_store_read_begin(seen, index);
	while (sieve_store_next(reader, &signature))
	{
		Datum		value = Int64GetDatum(signature);
		bool		isnull = false;

		tuplestore_putvalues(store, desc, &value, &isnull);
	}
	sieve_store_merge_finish(reader);
	table_close(seen, NoLock);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = desc;
	return (Datum) 0;
}

/*
 * sieve_seen_import(seen regclass, source regclass) -> bigint
 *
 * Merges the signatures in source's column sig (a plain seen, say) into
 * the compressed seen, as a flush would; returns how many were new.
 */
Datum
sieve_seen_import(PG_FUNCTION_ARGS)
{
	Oid			seen_oid = PG_GETARG_OID(0);
	Oid			source_oid = PG_GETARG_OID(1);
	Relation	seen;
	Relation	source;
	Oid			index;
	SieveStoreMerge *merge;
	Tuplestorestate *signatures;
	DestReceiver *receiver;
	SPIExecuteOptions options;
	TupleDesc	tuplestore_desc;
	TupleTableSlot *slot;
	int			rc;
	uint64		added;
	AclResult	aclresult;

	if (seen_oid == source_oid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seen and source must be two different tables")));
	aclresult = pg_class_aclcheck(source_oid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(get_rel_relkind(source_oid)),
					   get_rel_name(source_oid));
	sieve_store_check_rewrite(seen_oid, "sieve_seen_import");
	index = open_compressed(seen_oid, ShareRowExclusiveLock, &seen, "sieve_seen_import");
	sieve_store_check_rewritable(seen, "sieve_seen_import");
	source = table_open(source_oid, AccessShareLock);
	if (get_attnum(source_oid, "sig") == InvalidAttrNumber ||
		get_atttype(source_oid, get_attnum(source_oid, "sig")) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("source relation \"%s\" has no column \"sig\" of type bigint",
						RelationGetRelationName(source))));

	/*
	 * source is read whole, into a tuplestore (on disk beyond work_mem),
	 * before the merge reads seen: a view or a policy on source may run the
	 * user's code, whose change to seen the swap would undo.  Such a change
	 * is then refused before the merge begins, rather than after it (and
	 * no read of source runs the user's code while the merge reads seen).
	 */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	signatures = tuplestore_begin_heap(false, false, work_mem);
	receiver = CreateDestReceiver(DestTuplestore);
	SetTuplestoreDestReceiverParams(receiver, signatures, CurrentMemoryContext,
									false, NULL, NULL);
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = receiver;
	rc = SPI_execute_extended(psprintf("SELECT DISTINCT sig FROM %s WHERE sig IS NOT NULL ORDER BY sig",
									   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(source)),
																  RelationGetRelationName(source))),
							  &options);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "sieve_seen_import: could not read source relation \"%s\": %s",
			 RelationGetRelationName(source), SPI_result_code_string(rc));
	receiver->rDestroy(receiver);
	tuplestore_desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(tuplestore_desc, 1, "sig", INT8OID, -1, 0);
	slot = MakeSingleTupleTableSlot(tuplestore_desc, &TTSOpsMinimalTuple);

	merge = sieve_store_merge_begin(seen, index, "sieve_seen_import");
	while (tuplestore_gettupleslot(signatures, true, false, slot))
	{
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		sieve_store_merge_add(merge, DatumGetInt64(slot_getattr(slot, 1, &isnull)));
	}
	added = sieve_store_merge_finish(merge);
	/* before anything else: nothing reads the old heap after the merge */
	sieve_store_merge_swap(merge, "sieve_seen_import");
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(signatures);
	SPI_finish();
	table_close(source, NoLock);
	table_close(seen, NoLock);
	PG_RETURN_INT64((int64) added);
}

/*
 * sieve_seen_online(seen regclass) -> regclass
 *
 * Makes a compressed seen made before 1.2 take online adds
 * (seen_test_and_add); one that does already is returned as it is
 */
Datum
sieve_seen_online(PG_FUNCTION_ARGS)
{
	Oid			seen_oid = PG_GETARG_OID(0);
	Relation	seen;
	bool		online;
	char	   *table;

	(void) open_compressed(seen_oid, ShareRowExclusiveLock, &seen, "sieve_seen_online");
	online = OidIsValid(sieve_chunk_index(seen));
	table = sieve_qualified_name(seen);
	/* closed, the lock kept: ALTER TABLE refuses a table this session uses */
	table_close(seen, NoLock);
	if (!online)
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		make_online(table);
		SPI_finish();
	}
	PG_RETURN_OID(seen_oid);
}

/*
 * sieve_seen_compact(seen regclass) -> bigint
 *
 * Folds the online adds of seen into its chunks: its signatures are read
 * in order and written into a new table that replaces it, as a flush
 * does; returns how many online adds were folded
 */
Datum
sieve_seen_compact(PG_FUNCTION_ARGS)
{
	Oid			seen_oid = PG_GETARG_OID(0);
	Relation	seen;
	Oid			index;
	SieveStoreMerge *merge;
	uint64		folded;

	sieve_store_check_rewrite(seen_oid, "sieve_seen_compact");
	index = open_compressed(seen_oid, ShareRowExclusiveLock, &seen, "sieve_seen_compact");
	sieve_store_check_rewritable(seen, "sieve_seen_compact");
	merge = sieve_store_merge_begin(seen, index, "sieve_seen_compact");
	sieve_store_merge_rewrite(merge);
	sieve_store_merge_finish(merge);
	folded = sieve_store_merge_online_adds(merge);
	sieve_store_merge_swap(merge, "sieve_seen_compact");
	table_close(seen, NoLock);
	PG_RETURN_INT64((int64) folded);
}
