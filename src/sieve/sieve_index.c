/*-------------------------------------------------------------------------
 *
 * sieve_index.c
 *	  What the sieve's functions ask of a seen table's catalog entries: the
 *	  unique btree index on its signatures that they probe (sieve_flush,
 *	  sieve_contains) or read in order (the compressed seen's head), and
 *	  the table's name as SQL writes it.
 *
 * Below both the flush (sieve.c) and the compressed seen (sieve_store.c,
 * sieve_seen.c); it calls neither.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/htup_details.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "sieve.h"

/* A table's quoted, schema-qualified name, for SPI and for hints */
char *
sieve_qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

/*
 * A valid, immediate, non-partial unique btree index on rel (column)
 * alone, with bigint's own operator class (the probes compare int8 with
 * int8's functions), in ascending order if asked; found in the catalogs
 * without opening it (on Citus it is a shell's)
 */
static bool
suitable_index(Relation rel, Oid indexoid, AttrNumber attnum, bool ascending,
			   AttrNumber not_null)
{
	Oid			int8_ops = GetDefaultOpClass(INT8OID, BTREE_AM_OID);
	HeapTuple	indextuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	HeapTuple	classtuple = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	Form_pg_index form;
	bool		suitable;

	if (!HeapTupleIsValid(indextuple) || !HeapTupleIsValid(classtuple))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	form = (Form_pg_index) GETSTRUCT(indextuple);
	suitable = attnum != InvalidAttrNumber &&
		form->indisunique && form->indisvalid && form->indimmediate &&
		form->indnkeyatts == 1 && form->indkey.values[0] == attnum &&
		((Form_pg_class) GETSTRUCT(classtuple))->relam == BTREE_AM_OID &&
		heap_attisnull(indextuple, Anum_pg_index_indpred, NULL) ==
		(not_null == InvalidAttrNumber);
	if (suitable)
	{
		bool		isnull;
		oidvector  *indclass = (oidvector *)
			DatumGetPointer(SysCacheGetAttr(INDEXRELID, indextuple,
											Anum_pg_index_indclass, &isnull));
		int2vector *indoption = (int2vector *)
			DatumGetPointer(SysCacheGetAttr(INDEXRELID, indextuple,
											Anum_pg_index_indoption, &isnull));

		suitable = indclass->values[0] == int8_ops &&
			(!ascending || (indoption->values[0] & INDOPTION_DESC) == 0);
	}
	if (suitable && not_null != InvalidAttrNumber)
	{
		bool		isnull;
		List	   *predicate = (List *)
			stringToNode(TextDatumGetCString(SysCacheGetAttr(INDEXRELID, indextuple,
															 Anum_pg_index_indpred,
															 &isnull)));
		Node	   *only;

		/* a single condition is stored bare, several as an AND's list */
		only = IsA(predicate, List) ? (list_length(predicate) == 1 ?
									   linitial(predicate) : NULL) :
			(Node *) predicate;
		suitable = only != NULL && IsA(only, NullTest) &&
			((NullTest *) only)->nulltesttype == IS_NOT_NULL &&
			IsA(((NullTest *) only)->arg, Var) &&
			((Var *) ((NullTest *) only)->arg)->varattno == not_null;
	}
	ReleaseSysCache(classtuple);
	ReleaseSysCache(indextuple);
	return suitable;
}

/*
 * An online compressed seen's index of its chunks: a unique btree index on
 * (head) ascending, with bigint's own operator class, WHERE chunk IS NOT
 * NULL (sieve_seen_create makes it); InvalidOid where there is none
 */
Oid
sieve_chunk_index(Relation rel)
{
	AttrNumber	head = get_attnum(RelationGetRelid(rel), "head");
	AttrNumber	chunk = get_attnum(RelationGetRelid(rel), "chunk");
	ListCell   *lc;

	if (head == InvalidAttrNumber || chunk == InvalidAttrNumber)
		return InvalidOid;
	foreach(lc, RelationGetIndexList(rel))
	{
		if (suitable_index(rel, lfirst_oid(lc), head, true, chunk))
			return lfirst_oid(lc);
	}
	return InvalidOid;
}

static Oid
unique_index(Relation rel, const char *column, bool ascending, const char *caller)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(rel), column);
	ListCell   *lc;

	foreach(lc, RelationGetIndexList(rel))
	{
		if (suitable_index(rel, lfirst_oid(lc), attnum, ascending, InvalidAttrNumber))
			return lfirst_oid(lc);
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			 errmsg("seen relation \"%s\" has no %sunique btree index on (%s)",
					RelationGetRelationName(rel), ascending ? "ascending " : "", column),
			 errdetail("%s needs a valid, immediate, non-partial unique btree index on the bigint column %s alone, with its default operator class%s.",
					   caller, column, ascending ? ", in ascending order" : ""),
			 errhint("CREATE UNIQUE INDEX ON %s (%s);", sieve_qualified_name(rel), column)));
	return InvalidOid;			/* keep compiler quiet */
}

Oid
sieve_unique_index(Relation rel, const char *column, const char *caller)
{
	return unique_index(rel, column, false, caller);
}

Oid
sieve_ascending_index(Relation rel, const char *column, const char *caller)
{
	return unique_index(rel, column, true, caller);
}
