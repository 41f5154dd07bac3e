#!/usr/bin/env bash
# A crawl sharded across servers: two more local PostgreSQL clusters hold
# the crawl split by url_signature(url), reached from this one through
# postgres_fdw with extensions 'sbf' (docs/distributed.md).  Checks that
#  (a) bloom_union_agg of the shards' bloom_agg (computed on the shards)
#	   equals bloom_agg over the whole crawl on one server;
#  (b) is_duplicate ... OVER (PARTITION BY shard ORDER BY pos) on each shard
#	   finds every true duplicate, with false positives within theory;
#  (c) sieve_flush run on each shard gives the single-server frontier.
. "$(dirname "$0")/lib.sh"
fresh_db

SHARDS=2
declare -a dirs ports
cleanup_shards() {
	local d
	for d in "${dirs[@]}"; do stop_server "$d"; rm -rf "$d"; done
	cleanup_test
}
trap cleanup_shards EXIT
for i in $(seq 1 $SHARDS); do
	dirs[$i]=$(mktemp -d /tmp/sbf-shard.XXXXXX)
	ports[$i]=$((PGPORT + i))
	start_server "${dirs[$i]}" "${ports[$i]}"
	shard() { psql -X -A -t -q -v ON_ERROR_STOP=1 -h "${dirs[$1]}" -p "${ports[$1]}" -d postgres "${@:2}"; }
	shard "$i" <<'SQL'
CREATE EXTENSION sbf;
CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL, shard int NOT NULL);
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
SQL
done
shard() { psql -X -A -t -q -v ON_ERROR_STOP=1 -h "${dirs[$1]}" -p "${ports[$1]}" -d postgres "${@:2}"; }

# The coordinator: the whole crawl locally (the single-server reference),
# and the same rows partitioned by url_signature over the shards
q <<SQL
CREATE EXTENSION postgres_fdw;
CREATE TABLE whole (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE crawl (pos bigint NOT NULL, url text NOT NULL, shard int NOT NULL)
	PARTITION BY LIST (shard);
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
SQL
for i in $(seq 1 $SHARDS); do
	q <<SQL
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '${dirs[$i]}', port '${ports[$i]}', dbname 'postgres', extensions 'sbf');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i OPTIONS (user 'postgres');
CREATE FOREIGN TABLE crawl_$i PARTITION OF crawl FOR VALUES IN ($((i - 1)))
	SERVER shard$i OPTIONS (table_name 'crawl');
CREATE FOREIGN TABLE frontier_$i (pos bigint, url text)
	SERVER shard$i OPTIONS (table_name 'frontier');
SQL
done
gzip -dc "$SBF_DATA/doccrawl-pg-python.tsv.gz" | q -c "\\copy whole FROM STDIN"
q -c "INSERT INTO crawl SELECT pos, url, (url_signature(url) & 1)::int FROM whole"
counts=$(for i in $(seq 1 $SHARDS); do shard "$i" -c "SELECT count(*) FROM crawl"; done | tr '\n' ' ')
check "the crawl is split over $SHARDS shards by url_signature (rows: $counts)" \
	[ "$(q -c "SELECT count(*) FROM crawl")" = "$(q -c "SELECT count(*) FROM whole")" ]

# (a) per-shard aggregates, pushed down, merged here
AGG="SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(url, 10000, 0.01) AS f FROM crawl_1
	 UNION ALL SELECT bloom_agg(url, 10000, 0.01) FROM crawl_2) s"
plan=$(q -c "EXPLAIN (VERBOSE, COSTS OFF) $AGG")
check "bloom_agg is computed on the shards (pushed down by postgres_fdw)" \
	grep -q "Remote SQL: SELECT public.bloom_agg(url, 10000::bigint, 0.01::double precision)" <<<"$plan"
check_sql "(a) bloom_union_agg of the shards' bloom_agg = bloom_agg on one server" \
	"SELECT ($AGG) = (SELECT bloom_agg(url, 10000, 0.01) FROM whole)"

# (b) marking on each shard, against the exact answer of the whole crawl
q -c "CREATE TABLE exact AS SELECT pos, row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS dup FROM whole"
fp=0; fn=0; bound=0
for i in $(seq 1 $SHARDS); do
	shard "$i" -c "CREATE TABLE marked AS SELECT pos, is_duplicate(url, bloom_sized(3000, 0.01))
						OVER (PARTITION BY shard ORDER BY pos) AS flagged FROM crawl"
	q <<SQL
CREATE FOREIGN TABLE marked_$i (pos bigint, flagged bool) SERVER shard$i OPTIONS (table_name 'marked');
SQL
	read -r f n b < <(q -F ' ' -c "
		SELECT count(*) FILTER (WHERE m.flagged AND NOT e.dup),
			   count(*) FILTER (WHERE NOT m.flagged AND e.dup),
			   ceil(1.5 * count(*) FILTER (WHERE NOT e.dup)
						* bloom_expected_fpr(bloom_optimal_bits(3000, 0.01),
											 bloom_optimal_hashes(bloom_optimal_bits(3000, 0.01), 3000),
											 count(*) FILTER (WHERE NOT e.dup)) + 3)
		FROM marked_$i m JOIN exact e USING (pos)")
	fp=$((fp + f)); fn=$((fn + n)); bound=$((bound + b))
done
check "(b) marking on each shard misses no true duplicate (false negatives: $fn)" [ "$fn" -eq 0 ]
check "(b) false positives on the shards ($fp) within 1.5x the theory's final rate + 3 per shard ($bound)" [ "$fp" -le "$bound" ]

# (c) the offline sieve, run on each shard, against one server
q -c "INSERT INTO discovered SELECT pos, url FROM whole" -c "SELECT sieve_flush('seen', 'discovered', 'frontier')" >/dev/null
for i in $(seq 1 $SHARDS); do
	shard "$i" -c "INSERT INTO discovered SELECT pos, url FROM crawl" \
		-c "SELECT sieve_flush('seen', 'discovered', 'frontier')" >/dev/null
done
check_sql "(c) the shards' frontiers together are the single-server frontier" \
	"SELECT NOT EXISTS (SELECT pos, url FROM frontier EXCEPT ALL
						(SELECT pos, url FROM frontier_1 UNION ALL SELECT pos, url FROM frontier_2))
		AND NOT EXISTS ((SELECT pos, url FROM frontier_1 UNION ALL SELECT pos, url FROM frontier_2)
						EXCEPT ALL SELECT pos, url FROM frontier)
		AND (SELECT count(*) FROM frontier) = 5473"

# Binary COPY from this cluster to another gives identical values
q <<'SQL'
CREATE TABLE filters (id int, b bloom, s stablebloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3), stablebloom_empty(16, 2, 3, 1)),
	(2, (SELECT bloom_agg(url, 10000, 0.01) FROM whole),
		(SELECT stablebloom_agg(url, stablebloom_sized(20000, 0.05, 4, 3) ORDER BY pos) FROM whole)),
	(3, NULL, NULL);
SQL
q -c "\\copy filters TO '$TEST_TMP/filters.bin' WITH (FORMAT binary)"
shard 1 -c "CREATE TABLE filters (id int, b bloom, s stablebloom)"
shard 1 -c "\\copy filters FROM '$TEST_TMP/filters.bin' WITH (FORMAT binary)"
FINGERPRINT="SELECT md5(string_agg(id || ':' || coalesce(b::text, '-') || ':' || coalesce(s::text, '-'), ',' ORDER BY id)) FROM filters"
here=$(q -c "$FINGERPRINT")
there=$(shard 1 -c "$FINGERPRINT")
check "binary COPY to another cluster gives identical bloom and stablebloom values ($here = $there)" \
	[ "$here" = "$there" -a -n "$here" ]

finish
