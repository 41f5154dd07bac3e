#!/usr/bin/env bash
# What a large, sparse shared filter costs the operations that copy a
# cluster, a database or a table: bytes on disk and bytes of WAL, measured
# (docs/shared.md, "What each operation costs").
#
#   bash bench/shared_sizes.sh [GB]        # default 2; ~2 minutes at 2 GB
#   PG_CONFIG=/path/to/bin/pg_config bash bench/shared_sizes.sh
#
# A throwaway cluster (wal_level = replica) and a standby made from it
# first get a logged filter of GB gigabytes (shared_bloom_create with the
# capacity that size holds) with 1,000 values in it, so that nearly all of
# its file is a hole.  Then, each measured as disk used (du, holes not
# counted, after a checkpoint) and, where it writes WAL, the WAL it wrote:
#
#   the filter as created and filled           its file's apparent size and disk
#   the same filter on the standby             the standby's file, after replay
#   pg_basebackup -Fp, -Ft                     the backup's disk
#   CREATE DATABASE ... STRATEGY wal_log       WAL, and the new database's disk
#   CREATE DATABASE ... STRATEGY file_copy     WAL, and the new database's disk
#   ALTER TABLE ... SET TABLESPACE             WAL, and the moved file's disk
#   VACUUM FULL                                WAL, and the new file's disk
#
# Disk is measured with du, so a file system without holes (or a copy
# tool that fills them) shows the apparent size everywhere.
. "$(dirname "$0")/lib.sh"

GB=${1:-2}
[[ $GB =~ ^[1-9][0-9]*$ ]] || die "GB must be a positive number, not $GB"
ensure_packages
build_and_install
start_cluster
trap 'stop_cluster; stop_server "$BENCH_TMP/standby" 2>/dev/null; rm -rf "$BENCH_TMP"' EXIT
chown postgres: "$BENCH_TMP"

psql_() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
mb() { echo $(( ($1 + 524288) / 1048576 )); }
disk() { du -s -B1 "$@" | awk '{ s += $1 } END { print s + 0 }'; }
lsn() { psql_ -c 'SELECT pg_current_wal_insert_lsn()'; }
wal_since() { psql_ -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$1')"; }

psql_ -c "CREATE EXTENSION IF NOT EXISTS sbf" -c "ALTER SYSTEM SET wal_level = replica" -c "ALTER SYSTEM SET max_wal_senders = 4" \
	-c "ALTER SYSTEM SET max_wal_size = '8GB'"
restart_cluster

# a standby, made before the filter exists: it gets the filter through WAL
mkdir -p "$BENCH_TMP/standby"
chown postgres: "$BENCH_TMP/standby"
runuser -u postgres -- pg_basebackup -D "$BENCH_TMP/standby/data" -Fp -X fetch -R -c fast \
	-h "$PGHOST" -p "$PGPORT"
sport=$((PGPORT + 1))
run_server "$BENCH_TMP/standby" "$sport"

# a Bloom filter of GB gigabytes: 64,000 bits a page, 1% at its capacity
pages=$(( GB * 131072 - 1 ))
capacity=$(( pages * 64000 / 10 ))
psql_ -c "SELECT shared_bloom_create('big', $capacity, 0.01)" \
	-c "SELECT shared_test_and_add('big', ARRAY(SELECT 'https://example.org/' || g FROM generate_series(1, 1000) g))" \
	-c "CHECKPOINT" >/dev/null
data=$SBF_CLUSTER/data
path=$(psql_ -c "SELECT pg_relation_filepath('big')")
apparent=$(psql_ -c "SELECT pg_relation_size('big')")
filedisk=$(disk "$data/$path"*)
cluster=$(disk "$data")

rows=()
row() { rows+=("$(printf '| %s | %s | %s |' "$1" "$2" "$3")"); }
row "the filter as created, 1,000 values added ($(mb "$apparent") MB apparent)" "$(mb "$filedisk") MB" "-"
row "the whole cluster" "$(mb "$cluster") MB" "-"

# the standby replays the creation and the adds
target=$(lsn)
until [ "$(command psql -X -A -t -h "$BENCH_TMP/standby" -p "$sport" -c \
	"SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '$target') >= 0")" = t ]; do
	sleep 0.2
done
command psql -X -q -h "$BENCH_TMP/standby" -p "$sport" -c CHECKPOINT
row "the filter on a standby made before it, after replaying the same" "$(mb "$(disk "$BENCH_TMP/standby/data/$path"*)") MB" "-"
stop_server "$BENCH_TMP/standby"
rm -rf "$BENCH_TMP/standby"

# base backups, plain and tar
for format in p t; do
	runuser -u postgres -- pg_basebackup -D "$BENCH_TMP/backup" -F$format -X fetch -c fast \
		-h "$PGHOST" -p "$PGPORT"
	row "pg_basebackup -F$format" "$(mb "$(disk "$BENCH_TMP/backup")") MB" "-"
	rm -rf "$BENCH_TMP/backup"
done

# CREATE DATABASE from the database holding the filter, both strategies
for strategy in wal_log file_copy; do
	start=$(lsn)
	psql_ -c "CREATE DATABASE copy_$strategy TEMPLATE postgres STRATEGY $strategy"
	wal=$(wal_since "$start")
	psql_ -c CHECKPOINT
	oid=$(psql_ -c "SELECT oid FROM pg_database WHERE datname = 'copy_$strategy'")
	row "CREATE DATABASE ... STRATEGY $strategy" "$(mb "$(disk "$data/base/$oid")") MB" "$(mb "$wal") MB"
	psql_ -c "DROP DATABASE copy_$strategy"
done

# SET TABLESPACE and VACUUM FULL
mkdir -p "$BENCH_TMP/space"
chown postgres: "$BENCH_TMP/space"
psql_ -c "CREATE TABLESPACE elsewhere LOCATION '$BENCH_TMP/space'"
# rewrite LABEL SQL: run SQL, checkpoint, and add the row of the filter's
# file afterwards and the WAL SQL wrote
rewrite() {
	local start wal
	start=$(lsn)
	psql_ -c "$2"
	wal=$(wal_since "$start")
	psql_ -c CHECKPOINT
	row "$1" "$(mb "$(disk "$data/$(psql_ -c "SELECT pg_relation_filepath('big')")"*)") MB" "$(mb "$wal") MB"
}
rewrite "ALTER TABLE ... SET TABLESPACE" "ALTER TABLE big SET TABLESPACE elsewhere"
psql_ -c "ALTER TABLE big SET TABLESPACE pg_default"
rewrite "VACUUM FULL" "VACUUM FULL big"

echo
echo "A logged shared filter of $GB GB ($(mb "$apparent") MB apparent) holding 1,000 values, in a cluster of $(mb "$cluster") MB:"
echo
echo "| operation | disk | WAL written |"
echo "| --- | --- | --- |"
printf '%s\n' "${rows[@]}"
