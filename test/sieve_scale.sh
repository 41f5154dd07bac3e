#!/usr/bin/env bash
# sieve_flush at scale with little memory: two flushes of 1M rows of the
# eot2024 sitemap stream at work_mem = 1MB give exactly the rows of the
# plain-SQL flush (docs/sieve.md), in discovery order.
. "$(dirname "$0")/lib.sh"
fresh_db

STREAM=$SBF_STREAMS/eot2024-sitemaps-a-m.txt.gz
[ -r "$STREAM" ] || { fail "cannot read $STREAM"; finish; }

q <<'SQL'
CREATE TABLE stream (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE seen_c (sig bigint PRIMARY KEY);
CREATE TABLE discovered_c (pos bigint NOT NULL, url text NOT NULL);
-- seq numbers the rows in the order they were appended
CREATE TABLE frontier_c (pos bigint NOT NULL, url text NOT NULL,
						 seq bigint GENERATED ALWAYS AS IDENTITY);
CREATE TABLE seen_sql (LIKE seen_c INCLUDING ALL);
CREATE TABLE discovered_sql (LIKE discovered_c);
CREATE TABLE frontier_sql (LIKE frontier_c INCLUDING IDENTITY);
SQL
stream_to_copy "$STREAM" | q -c "\\copy stream FROM STDIN"

q -f "$SBF_ROOT/scripts/plain_sql_flush.sql"

for batch in "1 1000000" "1000001 2000000"; do
	read -r lo hi <<<"$batch"
	q -c "INSERT INTO discovered_c SELECT pos, url FROM stream WHERE pos BETWEEN $lo AND $hi"
	q -c "INSERT INTO discovered_sql SELECT pos, url FROM stream WHERE pos BETWEEN $lo AND $hi"
	appended=$(q -c "SET work_mem = '1MB'" -c "SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c')")
	q -c "SET work_mem = '1MB'" -c "CALL plain_sql_flush('seen_sql', 'discovered_sql', 'frontier_sql')"
	expected=$(q -c "SELECT count(*) FROM frontier_sql WHERE pos BETWEEN $lo AND $hi")
	check "flush of rows $lo..$hi at work_mem = 1MB appended $appended, the plain-SQL flush $expected" \
		[ "$appended" = "$expected" ]
done

check_sql "the frontiers are the same rows, appended in the same order" \
	"SELECT NOT EXISTS (SELECT pos, url, seq FROM frontier_c EXCEPT ALL SELECT pos, url, seq FROM frontier_sql)
		AND NOT EXISTS (SELECT pos, url, seq FROM frontier_sql EXCEPT ALL SELECT pos, url, seq FROM frontier_c)
		AND (SELECT count(*) FROM frontier_c) > 1000000"
check_sql "the frontier was appended in discovery order (pos ascends with seq)" \
	"SELECT bool_and(pos > previous) FROM (
		SELECT pos, lag(pos) OVER (ORDER BY seq) AS previous FROM frontier_c) s
	 WHERE previous IS NOT NULL"
check_sql "each URL of the stream is in the frontier once, at its first position" \
	"SELECT NOT EXISTS (
		(SELECT min(pos) FROM stream WHERE pos <= 2000000 GROUP BY url_signature(url))
		EXCEPT ALL (SELECT pos FROM frontier_c))"
check_sql "seen holds the same signatures" \
	"SELECT NOT EXISTS (TABLE seen_c EXCEPT TABLE seen_sql) AND NOT EXISTS (TABLE seen_sql EXCEPT TABLE seen_c)"
check_sql "discovered is empty" "SELECT count(*) = 0 FROM discovered_c"

# work_mem bounds the sort: at 1MB the flush spills to temporary files
q -c "INSERT INTO discovered_c SELECT pos + 3000000, url || '#again' FROM stream WHERE pos <= 200000"
before=$(q -c "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()")
q -c "SET work_mem = '1MB'" -c "SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c')" >/dev/null
# the backend reports its statistics as it exits: wait for them (at most 10 s)
for _ in $(seq 1 50); do
	after=$(q -c "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()")
	[ "$after" -gt "$before" ] && break
	sleep 0.2
done
check "at work_mem = 1MB the sort spills to disk ($((after - before)) bytes of temporary files)" [ "$after" -gt "$before" ]

finish
