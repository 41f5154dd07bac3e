/*-------------------------------------------------------------------------
 *
 * sieve_store.c
 *	  The compressed Z of the offline sieve: a table of Rice-coded chunks
 *	  of sorted signatures, read in order, merged with a flush's new
 *	  signatures into a new table that replaces it, and probed by head.
 *
 * A compressed seen is an ordinary heap table made by sieve_seen_create:
 *
 *	  (head bigint PRIMARY KEY, chunk sieve_chunk NOT NULL)
 *
 * one row per chunk of a few hundred consecutive signatures (format.h),
 * head being the chunk's first signature, the chunks' ranges ascending and
 * disjoint.  Its primary key is the sparse index of chunk heads: a lookup
 * reads the btree's few pages and one heap page, and decodes one chunk.
 *
 * Why a table of chunks rather than a table access method of its own: the
 * rows are what pg_dump, COPY, pg_upgrade, streaming replication and hot
 * standby already carry, and the sieve_chunk type checks every chunk that
 * comes in through them.  The cost is a row header and a btree entry per
 * chunk, about 0.2 byte a URL.
 *
 * A flush is the notes' own: Z is read in order and merged with the sorted
 * new signatures into a new Z, which replaces the old one.  The new Z is
 * written into a new heap (make_new_heap), whose rows are inserted frozen
 * (they are visible once the swap commits, and vanish with the new heap if
 * it does not), then swapped in at the end of the flush, after it has
 * appended to the frontier (finish_heap_swap, as REFRESH MATERIALIZED VIEW
 * and CLUSTER do), which rebuilds the primary key.  So a crash or an ERROR
 * anywhere before the commit leaves the old Z, never a half-merged one,
 * and the table on disk holds no dead rows: its size is the chunks'.
 * Until the swap the flush holds SHARE ROW EXCLUSIVE (other flushes wait;
 * readers do not, for the whole of the frontier's append too); the swap
 * takes ACCESS EXCLUSIVE until the commit.  A flush that finds nothing new
 * writes nothing.
 *
 * The rewrite writes below SQL, into a new heap swapped in whole, so what
 * would miss it is refused, before the flush reads anything, again before
 * the merge reads the seen and again at the swap (the flush's triggers on
 * discovered and frontier run the user's code in between): a trigger,
 * rule or CHECK constraint on the seen (it would not fire or apply), a
 * partition bound (it would not be checked), a publication that publishes
 * it (logical decoding does not carry a heap swap: a subscriber would keep
 * the seen of its initial sync, however many flushes followed), a scan of
 * it still open in the transaction (a cursor would read the old heap, then
 * the new one; CLUSTER refuses it too), and a write to it by the
 * transaction (the swap would discard it).  A logical replication slot
 * that decodes without publications gets a WARNING at the swap.
 *
 * Z is read with the latest snapshot, not the transaction's: the flush
 * holds the lock that keeps every other writer out, and under REPEATABLE
 * READ an older snapshot would miss the signatures a flush committed after
 * it began (whose rows, frozen, every snapshot sees anyway).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_publication.h"
#include "catalog/pg_type.h"
#include SBF_REPACK_H			/* commands/cluster.h before 19 */
#include "commands/tablecmds.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "sieve.h"
#include "sieve_codes.h"

/*
 * Is type sbf's sieve_chunk?  Told by its input function, which is this
 * library's whatever schema sbf is in.
 */
static bool
is_sieve_chunk_type(Oid type)
{
	Oid			input;
	Oid			ioparam;
	FmgrInfo	flinfo;

	if (type == InvalidOid || get_typtype(type) != TYPTYPE_BASE)
		return false;
	getTypeInputInfo(type, &input, &ioparam);
	fmgr_info(input, &flinfo);
	return flinfo.fn_addr == sieve_chunk_in;
}

bool
sieve_store_is_compressed(Oid seen)
{
	AttrNumber	attnum = get_attnum(seen, "chunk");

	return attnum != InvalidAttrNumber && is_sieve_chunk_type(get_atttype(seen, attnum));
}

/*
 * A flush replaces the compressed seen by a new table, as REFRESH
 * MATERIALIZED VIEW does, which only its owner may do (the primary key is
 * rebuilt as the caller)
 */
void
sieve_store_check_rewrite(Oid seen, const char *caller)
{
	if (!relation_ownercheck(seen, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s", get_rel_name(seen)),
				 errdetail("%s replaces compressed seen relation \"%s\" by a new table, which only its owner may do.",
						   caller, get_rel_name(seen)),
				 errhint("Flush as the owner of the compressed seen, or as a member of the role that owns it.")));
}

/*
 * Checks a compressed seen: a plain heap table whose only columns are
 * head bigint and chunk sieve_chunk, with an ascending unique btree index
 * on (head) (a lookup scans it backwards from a signature); returns the
 * index.  caller names the function for the messages.
 */
Oid
sieve_store_check(Relation seen, const char *caller)
{
	TupleDesc	desc = RelationGetDescr(seen);

	if (seen->rd_rel->relkind != RELKIND_RELATION || seen->rd_rel->relam != HEAP_TABLE_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("compressed seen relation \"%s\" is not a heap table",
						RelationGetRelationName(seen)),
				 errhint("Make a compressed seen with sieve_seen_create.")));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (strcmp(NameStr(att->attname), "head") == 0 && att->atttypid == INT8OID)
			continue;
		if (strcmp(NameStr(att->attname), "chunk") == 0 && is_sieve_chunk_type(att->atttypid))
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("compressed seen relation \"%s\" has a column \"%s\" of type %s",
						RelationGetRelationName(seen), NameStr(att->attname),
						format_type_be(att->atttypid)),
				 errdetail("A compressed seen has the columns head bigint and chunk sieve_chunk, and no other."),
				 errhint("Make a compressed seen with sieve_seen_create.")));
	}
	if (get_attnum(RelationGetRelid(seen), "head") == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("compressed seen relation \"%s\" has no column \"head\" of type bigint",
						RelationGetRelationName(seen)),
				 errhint("Make a compressed seen with sieve_seen_create.")));
	return sieve_ascending_index(seen, "head", caller);
}

/* The decoded chunk and what is wrong with it, as an ERROR */
static void
chunk_corrupted(Relation seen, int64 head, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("compressed seen relation \"%s\" has a corrupted chunk at head " INT64_FORMAT,
					RelationGetRelationName(seen), head),
			 errdetail_internal("%s", what)));
}

/*
 * The chunk of a row of seen (in slot) and its head, checked to lie within
 * the row as stored (a bit flipped on disk in its length must not make a
 * read run past it) and to hold at least a header
 */
static SieveChunk
row_chunk(Relation seen, TupleTableSlot *slot, AttrNumber head_att,
		  AttrNumber chunk_att, int64 *head)
{
	bool		isnull;
	Datum		head_datum = slot_getattr(slot, head_att, &isnull);
	struct varlena *chunk;

	if (isnull)
		chunk_corrupted(seen, 0, "A row has no head.");
	*head = DatumGetInt64(head_datum);
	chunk = (struct varlena *) DatumGetPointer(slot_getattr(slot, chunk_att, &isnull));
	if (isnull)
		chunk_corrupted(seen, *head, "The row has no chunk.");
	/* a stored row never holds a pointer into memory */
	if (VARATT_IS_EXTERNAL(chunk) && !VARATT_IS_EXTERNAL_ONDISK(chunk))
		chunk_corrupted(seen, *head, "The chunk's header says it is held in memory.");
	if (!VARATT_IS_EXTERNAL(chunk))
	{
		HeapTuple	tuple = ExecFetchSlotHeapTuple(slot, false, NULL);
		char	   *end = (char *) tuple->t_data + tuple->t_len;

		if ((char *) chunk >= end || VARSIZE_ANY(chunk) > (Size) (end - (char *) chunk))
			chunk_corrupted(seen, *head, "The chunk runs past the end of its row.");
	}
	if (VARATT_IS_EXTENDED(chunk))
		chunk = PG_DETOAST_DATUM(PointerGetDatum(chunk));
	if (VARSIZE(chunk) < SIEVE_CHUNK_HEADER_SIZE)
		chunk_corrupted(seen, *head, "The chunk is shorter than its header.");
	return (SieveChunk) chunk;
}

/*
 * Decodes the chunk of a row of seen (in slot) into out, checking it whole
 * and against its head; returns how many signatures it holds
 */
static uint32
decode_row(Relation seen, TupleTableSlot *slot, AttrNumber head_att,
		   AttrNumber chunk_att, int64 *out, int64 *head)
{
	SieveChunk	chunk = row_chunk(seen, slot, head_att, chunk_att, head);
	const char *what;
	uint32		decoded;

	if (chunk->first != *head)
		chunk_corrupted(seen, *head,
						psprintf("The chunk starts at " INT64_FORMAT ", not at its head.",
								 chunk->first));
	what = sieve_chunk_decode(chunk, VARSIZE(chunk), out, &decoded);
	if (what != NULL)
		chunk_corrupted(seen, *head, what);
	return decoded;
}

/*
 * Reading seen's signatures in ascending order, through its primary key,
 * a segment at a time: a chunk decoded, with the online adds (rows without
 * a chunk, sieve_online.c) whose heads lie between it and the next chunk
 * merged into it.  The primary key orders every row by head, and the
 * chunks' ranges are disjoint, so the adds read between two chunks are
 * exactly those past the first one's head and before the second's.  The
 * adds held at once are bounded (READER_MAX_ADDS): when that many are
 * read, they make a segment with the signatures of the chunk held that
 * lie below the last of them, and the rest of the chunk waits for the
 * adds after it.  A seen of online adds alone, or whose only chunk spans
 * them all (a first flush of a few URLs), is then read in bounded memory,
 * not in 16 bytes an add.
 */
#define READER_MAX_ADDS		65536

typedef struct ChunkReader
{
	Relation	seen;
	Relation	index;
	Snapshot	snapshot;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	AttrNumber	head_att;
	AttrNumber	chunk_att;
	int64	   *signatures;		/* the current segment */
	uint32		n;
	uint32		next;
	uint32		size;			/* of signatures */
	int64	   *held;			/* the chunk read ahead, decoded */
	uint32		nheld;
	bool		holding;
	int64	   *incoming;		/* the next chunk's, while held is merged */
	int64	   *adds;			/* online adds read since the held chunk */
	uint32		nadds;
	uint32		addsize;
	uint64		nadded;			/* online adds read in all */
	bool		exhausted;
	bool		have_last;		/* the previous segment's last, for the order */
	int64		last;
} ChunkReader;

static void
reader_begin(ChunkReader *reader, Relation seen, Oid index, Snapshot snapshot)
{
	memset(reader, 0, sizeof(ChunkReader));
	reader->seen = seen;
	reader->index = index_open(index, AccessShareLock);
	reader->snapshot = RegisterSnapshot(snapshot);
	reader->slot = table_slot_create(seen, NULL);
	reader->scan = index_beginscan_compat(seen, reader->index, reader->snapshot, 0, 0);
	index_rescan(reader->scan, NULL, 0, NULL, 0);
	reader->head_att = get_attnum(RelationGetRelid(seen), "head");
	reader->chunk_att = get_attnum(RelationGetRelid(seen), "chunk");
	reader->size = SIEVE_CHUNK_MAX_COUNT;
	reader->signatures = palloc(sizeof(int64) * reader->size);
	reader->held = palloc(sizeof(int64) * SIEVE_CHUNK_MAX_COUNT);
	reader->incoming = palloc(sizeof(int64) * SIEVE_CHUNK_MAX_COUNT);
	reader->addsize = 1024;
	reader->adds = palloc(sizeof(int64) * reader->addsize);
}

static void
reader_restart(ChunkReader *reader)
{
	index_rescan(reader->scan, NULL, 0, NULL, 0);
	reader->n = reader->next = 0;
	reader->nheld = reader->nadds = 0;
	reader->nadded = 0;
	reader->holding = false;
	reader->exhausted = reader->have_last = false;
}

/*
 * The segment of the first nheld signatures of the chunk held and the adds
 * read after it (either may be empty), merged in order; an add equal to a
 * signature of the chunk (a row a user inserted) is kept once.  The rest
 * of the chunk, which lies past the last add, stays held.
 */
static void
reader_emit_part(ChunkReader *reader, uint32 nheld)
{
	uint32		total = nheld + reader->nadds;
	uint32		i = 0;
	uint32		j = 0;
	uint32		n = 0;

	if (total > reader->size)
	{
		reader->size = total;
		reader->signatures = repalloc_huge(reader->signatures, sizeof(int64) * total);
	}
	while (i < nheld || j < reader->nadds)
	{
		int64		next;

		if (j >= reader->nadds ||
			(i < nheld && reader->held[i] <= reader->adds[j]))
		{
			next = reader->held[i++];
			if (j < reader->nadds && reader->adds[j] == next)
				j++;
		}
		else
			next = reader->adds[j++];
		reader->signatures[n++] = next;
	}
	reader->n = n;
	reader->next = 0;
	reader->nadds = 0;
	if (nheld < reader->nheld)
		memmove(reader->held, reader->held + nheld,
				sizeof(int64) * (reader->nheld - nheld));
	reader->nheld -= nheld;
	reader->holding = reader->nheld > 0;
}

/* The segment of the chunk held, whole, and the adds read after it */
static void
reader_emit(ChunkReader *reader)
{
	reader_emit_part(reader, reader->nheld);
}

/* Reads the next segment; false at the end of seen */
static bool
reader_next_chunk(ChunkReader *reader)
{
	for (;;)
	{
		int64		head;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (reader->exhausted ||
			!index_getnext_slot(reader->scan, ForwardScanDirection, reader->slot))
		{
			reader->exhausted = true;
			break;
		}
		(void) slot_getattr(reader->slot, reader->chunk_att, &isnull);
		if (isnull)
		{
			/* an online add: its head alone */
			head = DatumGetInt64(slot_getattr(reader->slot, reader->head_att, &isnull));
			if (isnull)
				chunk_corrupted(reader->seen, 0, "A row has no head.");
			if (reader->nadds == reader->addsize)
			{
				reader->addsize *= 2;
				reader->adds = repalloc_huge(reader->adds, sizeof(int64) * reader->addsize);
			}
			reader->adds[reader->nadds++] = head;
			reader->nadded++;
			if (reader->nadds >= READER_MAX_ADDS)
			{
				/* the adds, and the chunk held as far as the last of them */
				uint32		below = 0;

				while (below < reader->nheld && reader->held[below] <= head)
					below++;
				reader_emit_part(reader, below);
				break;
			}
			continue;
		}
		if (reader->holding || reader->nadds > 0)
		{
			int64	   *swap;
			uint32		count = decode_row(reader->seen, reader->slot, reader->head_att,
										   reader->chunk_att, reader->incoming, &head);

			reader_emit(reader);
			swap = reader->held;
			reader->held = reader->incoming;
			reader->incoming = swap;
			reader->nheld = count;
			reader->holding = true;
			break;
		}
		reader->nheld = decode_row(reader->seen, reader->slot, reader->head_att,
								   reader->chunk_att, reader->held, &head);
		reader->holding = true;
	}
	if (reader->exhausted)
	{
		if (!reader->holding && reader->nadds == 0)
		{
			reader->n = reader->next = 0;
			return false;
		}
		reader_emit(reader);
	}
	if (reader->have_last && reader->signatures[0] <= reader->last)
		chunk_corrupted(reader->seen, reader->signatures[0],
						psprintf("The chunk starts at or before the end of the previous one, " INT64_FORMAT ".",
								 reader->last));
	reader->have_last = true;
	reader->last = reader->signatures[reader->n - 1];
	return true;
}

static void
reader_end(ChunkReader *reader)
{
	index_endscan(reader->scan);
	ExecDropSingleTupleTableSlot(reader->slot);
	UnregisterSnapshot(reader->snapshot);
	index_close(reader->index, NoLock);
	pfree(reader->signatures);
	pfree(reader->held);
	pfree(reader->incoming);
	pfree(reader->adds);
}

struct SieveStoreMerge
{
	Relation	seen;
	ChunkReader reader;
	/* the new Z, begun at the first new signature */
	bool		writing;
	Oid			new_heap;
	Relation	new_rel;
	BulkInsertState bistate;
	CommandId	cid;
	SieveChunkWriter writer;
	Datum	   *values;
	bool	   *nulls;
	uint64		added;
};

/* A chunk of the new Z, as a frozen row of the new heap */
static void
emit_chunk(void *arg, SieveChunk chunk)
{
	SieveStoreMerge *merge = (SieveStoreMerge *) arg;
	HeapTuple	tuple;

	merge->values[merge->reader.head_att - 1] = Int64GetDatum(chunk->first);
	merge->values[merge->reader.chunk_att - 1] = PointerGetDatum(chunk);
	tuple = heap_form_tuple(RelationGetDescr(merge->new_rel), merge->values, merge->nulls);
	heap_insert(merge->new_rel, tuple, merge->cid,
				HEAP_INSERT_FROZEN | HEAP_INSERT_SKIP_FSM, merge->bistate);
	heap_freetuple(tuple);
}

static SieveStoreMerge *
scan_begin(Relation seen, Oid index, Snapshot snapshot)
{
	SieveStoreMerge *merge = palloc0(sizeof(SieveStoreMerge));

	merge->seen = seen;
	reader_begin(&merge->reader, seen, index, snapshot);
	return merge;
}

SieveStoreMerge *
sieve_store_merge_begin(Relation seen, Oid index, const char *caller)
{
	/* the user's code run since the flush opened seen: a trigger on discovered */
	sieve_store_check_unwritten(seen, caller);
	return scan_begin(seen, index, GetLatestSnapshot());
}

/*
 * Reading seen in order with sieve_store_next, as the transaction's
 * snapshot sees it (in a parallel worker too)
 */
SieveStoreMerge *
sieve_store_read_begin(Relation seen, Oid index)
{
	return scan_begin(seen, index, GetTransactionSnapshot());
}

/*
 * The new heap, and the old signatures before the current one copied into
 * it: the reader starts again from the first chunk
 */
static void
start_writing(SieveStoreMerge *merge)
{
	Relation	seen = merge->seen;
	int			natts = RelationGetDescr(seen)->natts;

	merge->new_heap = make_new_heap(RelationGetRelid(seen), seen->rd_rel->reltablespace,
									seen->rd_rel->relam, seen->rd_rel->relpersistence,
									ExclusiveLock);
	merge->new_rel = table_open(merge->new_heap, NoLock);
	merge->bistate = GetBulkInsertState();
	merge->cid = GetCurrentCommandId(true);
	merge->values = palloc0(sizeof(Datum) * natts);
	merge->nulls = palloc(sizeof(bool) * natts);
	/* dropped columns are NULL */
	memset(merge->nulls, true, sizeof(bool) * natts);
	merge->nulls[merge->reader.head_att - 1] = false;
	merge->nulls[merge->reader.chunk_att - 1] = false;
	sieve_chunk_writer_init(&merge->writer, SIEVE_CHUNK_CODE_BYTES, emit_chunk, merge);
	merge->writing = true;
	reader_restart(&merge->reader);
}

/*
 * Moves past the old signatures below signature, copying them into the new
 * Z when it is being written; true if the old Z has signature
 */
static bool
advance(SieveStoreMerge *merge, int64 signature, bool to_end)
{
	ChunkReader *reader = &merge->reader;

	for (;;)
	{
		while (reader->next < reader->n)
		{
			int64		old = reader->signatures[reader->next];

			if (!to_end && old >= signature)
				return old == signature;
			if (merge->writing)
				sieve_chunk_writer_push(&merge->writer, old);
			reader->next++;
		}
		if (!reader_next_chunk(reader))
			return false;
	}
}

/* The next signature of seen, when the merge is used to read it whole */
bool
sieve_store_next(SieveStoreMerge *merge, int64 *signature)
{
	ChunkReader *reader = &merge->reader;

	while (reader->next >= reader->n)
		if (!reader_next_chunk(reader))
			return false;
	*signature = reader->signatures[reader->next++];
	return true;
}

bool
sieve_store_merge_add(SieveStoreMerge *merge, int64 signature)
{
	for (;;)
	{
		if (advance(merge, signature, false))
			return false;
		if (merge->writing)
			break;
		start_writing(merge);
	}
	sieve_chunk_writer_push(&merge->writer, signature);
	merge->added++;
	return true;
}

/*
 * Makes the merge write a new Z even if nothing new is added: the online
 * adds are folded into chunks (sieve_seen_compact)
 */
void
sieve_store_merge_rewrite(SieveStoreMerge *merge)
{
	if (!merge->writing)
		start_writing(merge);
}

/* How many online adds the merge has read (all of them, once finished) */
uint64
sieve_store_merge_online_adds(SieveStoreMerge *merge)
{
	return merge->reader.nadded;
}

uint64
sieve_store_merge_finish(SieveStoreMerge *merge)
{
	if (merge->writing)
	{
		advance(merge, 0, true);
		sieve_chunk_writer_finish(&merge->writer);
		FreeBulkInsertState(merge->bistate);
		table_close(merge->new_rel, NoLock);
	}
	reader_end(&merge->reader);
	return merge->added;
}

/*
 * The publications that publish seen's changes: those that list it or a
 * partitioned table it is a partition of, those of their schemas, and
 * those FOR ALL TABLES that do not leave it (or its top-most ancestor)
 * out (as the relcache's publication descriptor gathers them).  None for
 * an unlogged or temporary table, which no publication carries.
 */
static List *
seen_publications(Relation seen)
{
	Oid			relid = RelationGetRelid(seen);
	Oid			top = relid;
	List	   *publications;
	ListCell   *lc;

	if (!is_publishable_relation(seen))
		return NIL;
	publications = GetRelationIncludedPublications(relid);
	publications = list_concat_unique_oid(publications,
										  GetSchemaPublications(RelationGetNamespace(seen)));
	if (seen->rd_rel->relispartition)
	{
		List	   *ancestors = get_partition_ancestors(relid);

		foreach(lc, ancestors)
		{
			Oid			ancestor = lfirst_oid(lc);

			publications = list_concat_unique_oid(publications,
												  GetRelationIncludedPublications(ancestor));
			publications = list_concat_unique_oid(publications,
												  GetSchemaPublications(get_rel_namespace(ancestor)));
		}
		top = llast_oid(ancestors);
	}
	return list_concat_unique_oid(publications, sbf_all_tables_publications(top));
}

/*
 * A compressed seen in a publication would diverge on the subscribers: a
 * flush's heap swap is no change that logical decoding sees, so they would
 * keep the chunks of their initial sync, silently.  Refused, naming the
 * first of its publications by name.
 */
void
sieve_store_check_unpublished(Relation seen)
{
	List	   *publications = seen_publications(seen);
	char	   *first = NULL;
	ListCell   *lc;

	foreach(lc, publications)
	{
		char	   *name = get_publication_name(lfirst_oid(lc), false);

		if (first == NULL || strcmp(name, first) < 0)
			first = name;
	}
	if (first != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("compressed seen relation \"%s\" is in publication \"%s\"",
						RelationGetRelationName(seen), first),
				 errdetail("A flush replaces a compressed seen by a new table, which logical replication does not carry: a subscriber would keep the seen of its initial sync."),
				 errhint("For a replicated crawl, flush into a plain seen (sig bigint), whose flushes replicate. A compressed seen left out of every publication (unlogged, or in no publication that lists it, its schema or all tables) is not on the subscriber at all.")));
}

/*
 * A change this transaction made to seen (INSERT, UPDATE, DELETE, MERGE,
 * COPY FROM, by the user's code in the flush itself, a trigger on
 * discovered or frontier, or before it) would be discarded by the swap,
 * which replaces seen by the signatures the merge read and added: refused,
 * before the merge reads seen and again at the swap.  Each of these
 * statements takes ROW EXCLUSIVE on seen, held until the end of the
 * transaction (or the rollback of the subtransaction that took it); a
 * flush or an import takes SHARE ROW EXCLUSIVE, and its swap ACCESS
 * EXCLUSIVE (and SHARE to rebuild the index), never ROW EXCLUSIVE, so a
 * transaction may flush the same seen twice.  LOCK TABLE ... IN ROW
 * EXCLUSIVE MODE, which writes nothing, is refused too.
 */
void
sieve_store_check_unwritten(Relation seen, const char *caller)
{
	if (CheckRelationLockedByMe(seen, RowExclusiveLock, false))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("%s cannot rewrite compressed seen relation \"%s\" written by the same transaction",
						caller, RelationGetRelationName(seen)),
				 errdetail("%s replaces the compressed seen by the signatures it merged, which would discard what this transaction changed in it by INSERT, UPDATE, DELETE, MERGE or COPY.",
						   caller),
				 errhint("Change the compressed seen in a transaction of its own: neither earlier in the flush's nor from the code it runs (a trigger on discovered or frontier, a view that sieve_seen_import reads).")));
}

/*
 * What a flush or an import, which replace seen by a new heap written
 * below SQL, would skip or leave behind: refused, with seen locked (see
 * the head of this file)
 */
void
sieve_store_check_rewritable(Relation seen, const char *caller)
{
	TriggerDesc *trigdesc = seen->trigdesc;
	TupleConstr *constr = RelationGetDescr(seen)->constr;

	/* a cursor, or the query that called the flush, reading seen */
	CheckTableNotInUse(seen, caller);
	sieve_store_check_unwritten(seen, caller);

	for (int i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		Trigger    *trigger = &trigdesc->triggers[i];

		/* a disabled trigger would not fire for SQL either */
		if (trigger->tgenabled == TRIGGER_DISABLED)
			continue;
		/* a foreign key's, say, which fires on the referenced table too */
		if (trigger->tgisinternal && OidIsValid(trigger->tgconstraint))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s does not support triggers on compressed seen relation \"%s\"",
							caller, RelationGetRelationName(seen)),
					 errdetail("A flush writes the compressed seen as a new table, below SQL: the triggers of constraint \"%s\" would not fire.",
							   get_constraint_name(trigger->tgconstraint)),
					 errhint("Drop the constraint.")));
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support triggers on compressed seen relation \"%s\"",
						caller, RelationGetRelationName(seen)),
				 errdetail("A flush writes the compressed seen as a new table, below SQL: trigger \"%s\" would not fire.",
						   trigger->tgname),
				 errhint("Drop the trigger, or disable it with ALTER TABLE ... DISABLE TRIGGER.")));
	}
	if (seen->rd_rules != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support rules on compressed seen relation \"%s\"",
						caller, RelationGetRelationName(seen)),
				 errdetail("A flush writes the compressed seen as a new table, below SQL: its rules would not apply.")));
	if (constr != NULL && constr->num_check > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support check constraints on compressed seen relation \"%s\"",
						caller, RelationGetRelationName(seen)),
				 errdetail("A flush writes the compressed seen as a new table, below SQL: check constraint \"%s\" would not be checked.",
						   constr->check[0].ccname),
				 errhint("Drop the constraint.")));
	sieve_store_check_unpublished(seen);

	/*
	 * A partition's bound would not be checked either: rows outside it,
	 * wrong answers through the parent, a dump that does not restore.
	 * Refused here rather than at sieve_seen_create, for a table is
	 * attached after it is made.  ATTACH PARTITION takes ACCESS EXCLUSIVE
	 * on the table it attaches, so no other session attaches seen while a
	 * flush holds it; the user's code in the flush's own transaction is
	 * caught at the swap, where this runs again.
	 */
	if (seen->rd_rel->relispartition)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support compressed seen relation \"%s\" as a partition",
						caller, RelationGetRelationName(seen)),
				 errdetail("A flush writes the compressed seen as a new table, below SQL: the bound of partition \"%s\" of \"%s\" would not be checked.",
						   RelationGetRelationName(seen),
						   get_rel_name(get_partition_parent(RelationGetRelid(seen), true))),
				 errhint("Detach it with ALTER TABLE ... DETACH PARTITION.")));
}

/* The slots named in the WARNING, in the order of their names */
static int
name_cmp(const ListCell *a, const ListCell *b)
{
	return strcmp((const char *) lfirst(a), (const char *) lfirst(b));
}

/*
 * Logical decoding that does not go through publications (test_decoding,
 * wal2json, Debezium's decoderbufs, pglogical): a slot of this database
 * whose plugin is not pgoutput decodes every logged table's changes, and
 * sees none in a flush's heap swap.  Warned, naming the slots, not refused:
 * its user may decode only other tables.  pgoutput's slots decode what
 * publications publish, which sieve_store_check_unpublished refuses.  An
 * unlogged or temporary seen is decoded by none.
 */
static void
warn_decoding_slots(Relation seen, const char *caller)
{
	List	   *names = NIL;
	StringInfoData list;
	ListCell   *lc;

	if (!is_publishable_relation(seen))
		return;
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	for (int i = 0; i < max_replication_slots; i++)
	{
		ReplicationSlot *slot = &ReplicationSlotCtl->replication_slots[i];
		NameData	name;
		NameData	plugin;
		Oid			database;

		if (!slot->in_use)
			continue;
		SpinLockAcquire(&slot->mutex);
		name = slot->data.name;
		plugin = slot->data.plugin;
		database = slot->data.database;
		SpinLockRelease(&slot->mutex);
		/* a physical slot has no database */
		if (database != MyDatabaseId || strcmp(NameStr(plugin), "pgoutput") == 0)
			continue;
		names = lappend(names, psprintf("\"%s\" (plugin \"%s\")",
										NameStr(name), NameStr(plugin)));
	}
	LWLockRelease(ReplicationSlotControlLock);
	if (names == NIL)
		return;
	list_sort(names, name_cmp);
	initStringInfo(&list);
	foreach(lc, names)
		appendStringInfo(&list, "%s%s", list.len > 0 ? ", " : "", (char *) lfirst(lc));
	ereport(WARNING,
			(errmsg("logical decoding does not carry this %s's rewrite of compressed seen relation \"%s\"",
					caller, RelationGetRelationName(seen)),
			 errdetail_plural("Logical replication slot %s decodes this database without a publication, and will see no change to the compressed seen.",
							  "Logical replication slots %s decode this database without a publication, and will see no change to the compressed seen.",
							  list_length(names), list.data),
			 errhint("For a crawl that logical decoding must carry, flush into a plain seen (sig bigint), whose flushes are inserts.")));
}

/*
 * Replaces seen by the new Z, if there is one: takes ACCESS EXCLUSIVE on
 * seen until the end of the transaction.  The caller swaps last, so that
 * readers wait only from here to the commit; what the user's code did to
 * seen since the merge began (triggers on the frontier) is refused here.
 */
void
sieve_store_merge_swap(SieveStoreMerge *merge, const char *caller)
{
	Oid			seen = RelationGetRelid(merge->seen);
	char		relpersistence = merge->seen->rd_rel->relpersistence;

	if (!merge->writing)
		return;
	LockRelationOid(seen, AccessExclusiveLock);
	/* again: the user's triggers on discovered and frontier have run since */
	sieve_store_check_rewritable(merge->seen, caller);
	warn_decoding_slots(merge->seen, caller);
	finish_heap_swap_compat(seen, merge->new_heap, false, false, false, true,
							RecentXmin, ReadNextMultiXactId(), relpersistence);
	elog(DEBUG1, "sieve: compressed seen relation \"%s\" rewritten: " UINT64_FORMAT " signatures in " UINT64_FORMAT " chunks, " UINT64_FORMAT " new",
		 RelationGetRelationName(merge->seen), merge->writer.signatures,
		 merge->writer.chunks, merge->added);
}

/*
 * Is each of the n signatures (ascending, distinct) in the compressed
 * seen?  Answers found[i] for signatures[i].
 *
 * For a signature, the chunk whose head is the greatest at or below it,
 * found through the primary key, is decoded and checked whole before it
 * answers.  Its neighbours in the index are read (as far as their headers:
 * a lookup that lands in one checks it whole) whenever they could make the
 * answer wrong: when the signature is not in the chunk, the chunk before,
 * which must end below its head (else it could hold the signature); when
 * the signature also lies past the chunk's last, the chunk after, which
 * must start at its own head and past the signature (else a chunk whose
 * head moved up would hide it).  A chunk found holding the signature
 * answers alone: it is whole and at its head.  So a chunk that overlaps
 * another, an index that disagrees with the rows, or a head moved between
 * its neighbours is an ERROR, never an answer.  (A row gone as a whole, or
 * whose head moved past a neighbour's, is seen only by a read of the whole
 * table: a lookup cannot miss what it does not know of.)
 *
 * A batch walks the seen once, in signature order, with one snapshot: the
 * chunk last decoded is kept, and a signature up to its last is answered
 * from it without going to the index again; a signature past it goes down
 * the primary key to a chunk past it, which is decoded.  So each chunk is
 * read and decoded at most once a batch.  Past the first chunk the descent
 * is bounded below by the head of the chunk decoded (a second scan, of two
 * keys): a backward read of a btree leaf checks its keys on every entry it
 * passes, down to the page's start unless a key stops it, which for a
 * lookup alone is about half a page of heads.  A batch checks the chunk
 * before each chunk it decodes at once, found or not (the entry before in
 * the scan, or, when the bound stops it, the chunk decoded before), so
 * that the answers it gives from a chunk later never lack that check.  A
 * batch of one is a lookup as above.  The caller has the columns' numbers
 * (sieve_contains keeps them for the query), so that a lookup does no
 * catalog lookup.
 */
void
sieve_store_contains(Relation seen, Oid index, AttrNumber head_att,
					 AttrNumber chunk_att, const int64 *signatures, int n,
					 bool *found)
{
	Relation	indexrel = index_open(index, AccessShareLock);
	Snapshot	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	TupleTableSlot *slot = table_slot_create(seen, NULL);
	IndexScanDesc scan = index_beginscan_compat(seen, indexrel, snapshot, 1, 0);
	IndexScanDesc bounded = NULL;	/* head <= signature and head > head */
	ScanKeyData keys[2];
	bool		decoded = false;	/* chunk[] holds count, from head */
	int64		head = 0;
	uint32		count = 0;
	uint32		low = 0;		/* chunk[low - 1] < the signature */
	int64		neighbour_head;
	SieveChunk	neighbour;
	static int64 *chunk = NULL;
	int			i;

	if (chunk == NULL)
		chunk = MemoryContextAlloc(TopMemoryContext,
								   sizeof(int64) * SIEVE_CHUNK_MAX_COUNT);
	if (n > 1)
		bounded = index_beginscan_compat(seen, indexrel, snapshot, 2, 0);
	for (i = 0; i < n; i++)
	{
		int64		signature = signatures[i];
		bool		past_last = true;
		IndexScanDesc descent = decoded ? bounded : scan;

		Assert(i == 0 || signatures[i - 1] < signature);
		found[i] = false;

		/* a signature within the chunk decoded: answered by it */
		if (decoded && signature <= chunk[count - 1])
		{
			while (chunk[low] < signature)
				low++;
			found[i] = chunk[low] == signature;
			continue;
		}

		CHECK_FOR_INTERRUPTS();
		ScanKeyInit(&keys[0], 1, BTLessEqualStrategyNumber, F_INT8LE, Int64GetDatum(signature));
		ScanKeyInit(&keys[1], 1, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(head));
		index_rescan(descent, keys, decoded ? 2 : 1, NULL, 0);
		if (index_getnext_slot(descent, BackwardScanDirection, slot))
		{
			bool		had_chunk = decoded;
			int64		before_last = decoded ? chunk[count - 1] : 0;
			uint32		high;

			count = decode_row(seen, slot, head_att, chunk_att, chunk, &head);
			decoded = true;
			low = 0;
			if (head > signature)
				chunk_corrupted(seen, head,
								psprintf("The primary key found it for signature " INT64_FORMAT ", below its head.",
										 signature));
			past_last = signature > chunk[count - 1];
			/* the first of chunk[0, count) that is >= signature */
			high = count;
			while (low < high)
			{
				uint32		mid = low + (high - low) / 2;

				if (chunk[mid] < signature)
					low = mid + 1;
				else
					high = mid;
			}
			found[i] = low < count && chunk[low] == signature;

			/* the chunk before */
			if (!found[i] || n > 1)
			{
				if (index_getnext_slot(descent, BackwardScanDirection, slot))
				{
					neighbour = row_chunk(seen, slot, head_att, chunk_att, &neighbour_head);
					if (neighbour_head >= head || neighbour->first != neighbour_head ||
						neighbour->last < neighbour->first)
						chunk_corrupted(seen, neighbour_head,
										psprintf("The chunk before the one at head " INT64_FORMAT " does not precede it.",
												 head));
					before_last = neighbour->last;
					had_chunk = true;
				}
				if (had_chunk && before_last >= head)
					chunk_corrupted(seen, head,
									psprintf("The chunk overlaps the previous one, which ends at " INT64_FORMAT ".",
											 before_last));
			}
		}

		/* the chunk after, when the signature lies past the chunk found */
		if (!found[i] && past_last)
		{
			ScanKeyInit(&keys[0], 1, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(signature));
			index_rescan(scan, keys, 1, NULL, 0);
			if (index_getnext_slot(scan, ForwardScanDirection, slot))
			{
				neighbour = row_chunk(seen, slot, head_att, chunk_att, &neighbour_head);
				if (neighbour_head <= signature || neighbour->first != neighbour_head)
					chunk_corrupted(seen, neighbour_head,
									psprintf("The primary key found it as the chunk after signature " INT64_FORMAT ".",
											 signature));
			}
		}
		ExecClearTuple(slot);
	}
	index_endscan(scan);
	if (bounded != NULL)
		index_endscan(bounded);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(indexrel, NoLock);
}
