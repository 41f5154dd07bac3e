/*-------------------------------------------------------------------------
 *
 * sieve_citus.c
 *	  The offline sieve on Citus: which layouts of seen, discovered and
 *	  frontier sieve_flush supports there, and sieve_flush_shards, which
 *	  flushes every colocated shard group on its worker.
 *
 * sbf neither links against Citus nor needs it: Citus is found by its
 * catalog table pg_catalog.pg_dist_partition, and its metadata is read and
 * its functions called through SPI, by name, only when that table exists.
 *
 * On the coordinator, the tables are shells: their rows are in the shards,
 * on the workers.  sieve_flush (sieve.c) therefore runs everything through
 * SQL there, which Citus distributes, and never reads a shell's pages or
 * index.  The one layout it accepts is the one in which each shard group
 * (the shards of seen, discovered and frontier that cover one range of
 * signatures, on one worker) is a sieve of its own: the three tables
 * hash-distributed by their column sig and colocated.  In it, a URL, its
 * repeats and its signature in seen are all in one shard group, so
 * flushing every shard group with sieve_flush, on its worker, is exactly
 * one flush of the whole, which sieve_flush_shards does in parallel across
 * workers.  Any other layout of Citus tables (a reference table, a Citus
 * local table, tables distributed by another column, not colocated,
 * replicated by statement, or some local and some distributed) is refused
 * by name.
 *
 * Locks.  A flush on the coordinator takes SHARE ROW EXCLUSIVE on seen
 * with LOCK TABLE, which Citus takes on seen on every node with metadata,
 * in one order: so flushes issued from any node (the coordinator, or a
 * worker through its shell tables) run one after the other.  Without it
 * each would lock seen on its own node only, and two flushes from two
 * nodes would delete the rows of discovered's shards in different orders
 * and deadlock.  sieve_flush_shards takes ROW EXCLUSIVE on seen the same
 * way, which lets several of them run at once (each shard group is then
 * serialized by the lock its flush takes on its seen shard) but none with
 * a flush of the whole.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "catalog/namespace.h"
#include "catalog/pg_namespace_d.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "sieve.h"

PG_FUNCTION_INFO_V1(sieve_flush_shards);

#define SIEVE_CITUS_HINT \
	"On Citus, seen, discovered and frontier must be hash-distributed by their column sig and colocated: create_distributed_table(table, 'sig', colocate_with => 'seen')."

/* What pg_dist_partition says of one table */
typedef struct CitusTable
{
	bool		found;
	char		method;			/* partmethod: h(ash), a(ppend), r(ange), n(one) */
	char		replication;	/* repmodel: s(treaming), c(statement), t(wo-phase) */
	int32		colocation;
	char	   *column;			/* distribution column, or NULL */
} CitusTable;

static bool
citus_installed(void)
{
	return OidIsValid(get_relname_relid("pg_dist_partition",
										PG_CATALOG_NAMESPACE));
}

static char *
spi_text(HeapTuple tuple, TupleDesc desc, int column)
{
	return SPI_getvalue(tuple, desc, column);
}

static void
read_citus_table(Oid relid, CitusTable *table)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};
	int			rc;

	memset(table, 0, sizeof(CitusTable));
	rc = SPI_execute_with_args("SELECT partmethod::text, repmodel::text, colocationid, "
							   "CASE WHEN partkey IS NOT NULL THEN "
							   "pg_catalog.column_to_column_name(logicalrelid, partkey) END "
							   "FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1::pg_catalog.regclass",
							   1, argtypes, args, NULL, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition: %s",
			 SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return;
	table->found = true;
	table->method = spi_text(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)[0];
	table->replication = spi_text(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2)[0];
	table->colocation = pg_strtoint32(spi_text(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 3));
	table->column = spi_text(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
	SPI_freetuptable(SPI_tuptable);
}

static void
refuse(const char *caller, const char *role, Oid relid, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s does not support %s relation \"%s\": %s",
					caller, role, get_rel_name(relid), problem),
			 errhint(SIEVE_CITUS_HINT)));
}

bool
sieve_citus_layout(Oid seen, Oid discovered, Oid frontier, const char *caller)
{
	Oid			relids[3] = {seen, discovered, frontier};
	const char *roles[3] = {"seen", "discovered", "frontier"};
	CitusTable	tables[3];
	int			citus = 0;

	if (!citus_installed())
		return false;
	for (int i = 0; i < 3; i++)
	{
		read_citus_table(relids[i], &tables[i]);
		if (tables[i].found)
			citus++;
	}
	if (citus == 0)
		return false;

	for (int i = 0; i < 3; i++)
	{
		CitusTable *table = &tables[i];

		if (!table->found)
			refuse(caller, roles[i], relids[i],
				   "it is a local table, and the others are Citus tables");
		if (table->method == 'n')
			refuse(caller, roles[i], relids[i],
				   table->replication == 't' ? "it is a reference table" :
				   "it is a Citus table without a distribution column (a Citus local or single-shard table)");
		if (table->method != 'h')
			refuse(caller, roles[i], relids[i],
				   table->method == 'a' ? "it is append-distributed" :
				   "it is range-distributed");
		if (table->replication != 's')
			refuse(caller, roles[i], relids[i],
				   "its shards are replicated by statement (citus.shard_replication_factor above 1)");
		if (table->column == NULL || strcmp(table->column, "sig") != 0)
			refuse(caller, roles[i], relids[i],
				   psprintf("it is distributed by column \"%s\", not \"sig\"",
							table->column ? table->column : ""));
		if (i > 0 && table->colocation != tables[0].colocation)
			refuse(caller, roles[i], relids[i],
				   psprintf("it is not colocated with seen relation \"%s\"",
							get_rel_name(seen)));
	}
	return true;
}

/*
 * Takes lockmode ("SHARE ROW EXCLUSIVE", "ROW EXCLUSIVE") on seen with LOCK
 * TABLE, which Citus takes on every node with metadata, in one order
 */
void
sieve_citus_lock(Oid seen, const char *lockmode)
{
	char	   *name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(seen)),
												  get_rel_name(seen));
	int			rc = SPI_execute(psprintf("LOCK TABLE %s IN %s MODE", name, lockmode),
								 false, 0);

	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "could not lock seen relation \"%s\": %s", get_rel_name(seen),
			 SPI_result_code_string(rc));
}

static Datum
text_array(List *values)
{
	Datum	   *datums = palloc(sizeof(Datum) * list_length(values));
	ListCell   *lc;
	int			n = 0;

	foreach(lc, values)
		datums[n++] = CStringGetTextDatum((char *) lfirst(lc));
	return PointerGetDatum(construct_array(datums, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

/*
 * sieve_flush_shards(seen, discovered, frontier): sieve_flush on every
 * shard group, on its worker: one connection per worker, all at once, each
 * flushing its worker's shard groups one after the other in one
 * transaction.  Returns the number of URLs appended in all.
 */
Datum
sieve_flush_shards(PG_FUNCTION_ARGS)
{
	Oid			seen = PG_GETARG_OID(0);
	Oid			discovered = PG_GETARG_OID(1);
	Oid			frontier = PG_GETARG_OID(2);
	const char *schema = quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
	Oid			argtypes[3] = {REGCLASSOID, REGCLASSOID, REGCLASSOID};
	Datum		args[3] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2)};
	Oid			run_types[3] = {TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID};
	Datum		run_args[3];
	List	   *names = NIL;
	List	   *ports = NIL;
	List	   *commands = NIL;
	StringInfoData command;
	StringInfoData failures;
	int			nfailed = 0;
	int64		shards;
	int64		appended = 0;
	int			rc;

	if (!citus_installed())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("sieve_flush_shards needs Citus"),
				 errdetail("Extension citus is not installed in this database."),
				 errhint("Flush tables on one server with sieve_flush(seen, discovered, frontier).")));
	if (seen == discovered || seen == frontier || discovered == frontier)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seen, discovered and frontier must be three different tables")));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!sieve_citus_layout(seen, discovered, frontier, "sieve_flush_shards"))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("sieve_flush_shards needs Citus tables, and seen relation \"%s\", discovered relation \"%s\" and frontier relation \"%s\" are local tables",
						get_rel_name(seen), get_rel_name(discovered), get_rel_name(frontier)),
				 errhint("Flush tables on one server with sieve_flush(seen, discovered, frontier).")));

	/* no flush of the whole meanwhile, on any node */
	sieve_citus_lock(seen, "ROW EXCLUSIVE");

	/*
	 * The shard groups, by node: colocated shards cover the same range.
	 * The shards' names are schema-qualified, those in public too: the
	 * worker resolves them on a connection of its own, whose search_path
	 * starts with "$user".
	 */
	rc = SPI_execute_with_args("SELECT n.nodename, n.nodeport, "
							   "pg_catalog.shard_name($1, s.shardid, false), pg_catalog.shard_name($2, d.shardid, false), "
							   "pg_catalog.shard_name($3, f.shardid, false) "
							   "FROM pg_catalog.pg_dist_shard s "
							   "JOIN pg_catalog.pg_dist_shard d ON d.logicalrelid = $2 AND d.shardminvalue = s.shardminvalue "
							   "JOIN pg_catalog.pg_dist_shard f ON f.logicalrelid = $3 AND f.shardminvalue = s.shardminvalue "
							   "JOIN pg_catalog.pg_dist_placement ps ON ps.shardid = s.shardid "
							   "JOIN pg_catalog.pg_dist_placement pd ON pd.shardid = d.shardid AND pd.groupid = ps.groupid "
							   "JOIN pg_catalog.pg_dist_placement pf ON pf.shardid = f.shardid AND pf.groupid = ps.groupid "
							   "JOIN pg_catalog.pg_dist_node n ON n.groupid = ps.groupid AND n.noderole = 'primary' "
							   "WHERE s.logicalrelid = $1 "
							   "ORDER BY n.nodename, n.nodeport, s.shardminvalue::int",
							   3, argtypes, args, NULL, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of seen relation \"%s\": %s",
			 get_rel_name(seen), SPI_result_code_string(rc));

	initStringInfo(&command);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *node = spi_text(row, desc, 1);
		char	   *port = spi_text(row, desc, 2);
		bool		last;

		if (command.len == 0)
			appendStringInfo(&command,
							 "SELECT pg_catalog.sum(%s.sieve_flush(s, d, f))::bigint "
							 "FROM (VALUES ", schema);
		else
			appendStringInfoString(&command, ", ");
		appendStringInfo(&command, "(%s::pg_catalog.regclass, %s::pg_catalog.regclass, %s::pg_catalog.regclass)",
						 quote_literal_cstr(spi_text(row, desc, 3)),
						 quote_literal_cstr(spi_text(row, desc, 4)),
						 quote_literal_cstr(spi_text(row, desc, 5)));

		last = (i + 1 == SPI_processed) ||
			strcmp(node, spi_text(SPI_tuptable->vals[i + 1], desc, 1)) != 0 ||
			strcmp(port, spi_text(SPI_tuptable->vals[i + 1], desc, 2)) != 0;
		if (last)
		{
			appendStringInfoString(&command, ") v (s, d, f)");
			names = lappend(names, node);
			ports = lappend(ports, port);
			commands = lappend(commands, pstrdup(command.data));
			resetStringInfo(&command);
		}
	}
	shards = (int64) SPI_processed;

	/* every shard of seen must be in a group, or a shard is moving */
	rc = SPI_execute_with_args("SELECT count(*) FROM pg_catalog.pg_dist_shard WHERE logicalrelid = $1",
							   1, argtypes, args, NULL, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not count the shards of seen relation \"%s\"",
			 get_rel_name(seen));
	if (pg_strtoint64(spi_text(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)) != shards)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the shards of seen relation \"%s\", discovered relation \"%s\" and frontier relation \"%s\" are not all placed together",
						get_rel_name(seen), get_rel_name(discovered), get_rel_name(frontier)),
				 errdetail("Found " INT64_FORMAT " shard groups on one node each, for %s shards of seen.",
						   shards, spi_text(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
				 errhint("Retry when no shard is being moved.")));

	/* one command per node, all nodes at once */
	{
		Datum	   *port_datums = palloc(sizeof(Datum) * Max(list_length(ports), 1));
		ListCell   *lc;
		int			n = 0;

		foreach(lc, ports)
			port_datums[n++] = Int32GetDatum(pg_strtoint32((char *) lfirst(lc)));
		run_args[0] = text_array(names);
		run_args[1] = PointerGetDatum(construct_array(port_datums, n, INT4OID, sizeof(int32),
													  true, TYPALIGN_INT));
		run_args[2] = text_array(commands);
	}
	rc = SPI_execute_with_args("SELECT node_name, node_port, success, result "
							   "FROM pg_catalog.master_run_on_worker($1, $2, $3, true)",
							   3, run_types, run_args, NULL, false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not run the flushes on the workers: %s",
			 SPI_result_code_string(rc));

	initStringInfo(&failures);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *result = spi_text(row, desc, 4);

		if (strcmp(spi_text(row, desc, 3), "t") == 0)
			appended += pg_strtoint64(result);
		else
		{
			appendStringInfo(&failures, "%s%s:%s: %s", nfailed > 0 ? "; " : "",
							 spi_text(row, desc, 1), spi_text(row, desc, 2),
							 result ? result : "");
			nfailed++;
		}
	}
	if (nfailed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_EXCEPTION),
				 errmsg("sieve_flush_shards failed on %d of %d nodes", nfailed,
						(int) SPI_processed),
				 errdetail("%s", failures.data),
				 errhint("Each node flushed its shard groups in a transaction of its own: those of the other nodes are flushed, those of a node that failed are as they were. Call sieve_flush_shards again to flush them.")));

	SPI_finish();
	PG_RETURN_INT64(appended);
}
