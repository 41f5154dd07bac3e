#!/usr/bin/env bash
# Benchmark: near-duplicate search with simhash (docs/simhash.md), each
# figure beside a baseline measured in the same run.
#
#   bash bench/simhash.sh                 # throwaway cluster; ~20 minutes
#   SIZES="1000000 10000000 100000000" bash bench/simhash.sh
#                                         # and 100M (about 15 GB of disk,
#                                         # an hour more)
#   PG_CONFIG=/path/to/bin/pg_config bash bench/simhash.sh
#                                         # another PostgreSQL 15 install
#   SBF_USE_EXISTING=1 bash bench/simhash.sh  # PGHOST/PGPORT/PGDATABASE as
#                                         # set, with that server's settings
#
# The fingerprints: ROWS (1,000,000) pseudo-random ones,
# hashint8extended(id, 7)::simhash64, and planted near-duplicates: for each of
# the first PLANTED (1,000) rows, 4 copies with 0, 1, 2 and 3 bits flipped
# (bits chosen by hashint8extended too).  The throwaway cluster runs with
# shared_buffers = 1GB, work_mem = 1GB, maintenance_work_mem = 1GB, JIT and
# parallel query off; otherwise PostgreSQL's defaults.  Prints:
#
#  (a) for each size in SIZES (default 1M and 10M; the table grows, with
#      more random fingerprints, from one to the next), one near-duplicate
#      query, "the rows within d bits of this row's fingerprint", for
#      d = 3 and 6: the sequential scan (SEQ_QUERIES (5) queries), then for
#      each layout in LAYOUTS (2 3 4 5 6 8 blocks; LARGE_LAYOUTS, 2 4 5,
#      above 10M) the GIN index of that layout, built afresh, and per
#      query: the keys it looks up (as simhash_gin.c counts them; d = 6 is
#      skipped where a layout would read the whole index), the candidates
#      (rows the index returns, before the recheck), the heap blocks read
#      and the rows found (averages over PROBES (20) queries, from EXPLAIN
#      ANALYZE), the latency (pgbench -M prepared, 1 client,
#      QUERY_SECONDS (10) s, a fixed seed) and its ratio to the sequential
#      scan's, and the index's build time and size;
#  (b) every near-duplicate pair (d <= 3) of the 1M table at once: the
#      equi-join on simhash_keys(fp, 3, B) for B = 4, 5 and 6, in seconds
#      (the goal: under 60 s), with the pairs found (the same for every B)
#      and the candidate keys joined; against what the same work costs
#      row by row: the table's rows times the latency of one query through
#      the default index (DEFAULT_BLOCKS, 2) and of one sequential scan,
#      from (a) at 1M;
#  (c) simhash(body) throughput in MB of text per second, on the pages of
#      data/pgdoc15-pages.tsv.gz copied TEXT_COPIES (4) times (about 28 MB),
#      against md5(body) and length(body) over the same rows, medians of
#      REPEAT (3) runs.
#
# The machine is shared: every ratio is against a baseline measured
# minutes apart in the same run; absolute times vary by 10-30% between
# runs.
. "$(dirname "$0")/lib.sh"

ROWS=${ROWS:-1000000}
PLANTED=${PLANTED:-1000}
QUERY_SECONDS=${QUERY_SECONDS:-10}
TEXT_COPIES=${TEXT_COPIES:-4}
REPEAT=${REPEAT:-3}
SIZES=${SIZES:-"$ROWS 10000000"}
LAYOUTS=${LAYOUTS:-"2 3 4 5 6 8"}
LARGE_LAYOUTS=${LARGE_LAYOUTS:-"2 4 5"}
DEFAULT_BLOCKS=${DEFAULT_BLOCKS:-2}
PROBES=${PROBES:-20}
SEQ_QUERIES=${SEQ_QUERIES:-5}
PAGES=$SBF_ROOT/data/pgdoc15-pages.tsv.gz
[ -r "$PAGES" ] || die "cannot read $PAGES"

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
	command psql -X -q -c "ALTER SYSTEM SET shared_buffers = '1GB'" \
		-c "ALTER SYSTEM SET work_mem = '1GB'" \
		-c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" \
		-c "ALTER SYSTEM SET jit = off" \
		-c "ALTER SYSTEM SET max_parallel_workers_per_gather = 0" \
		-c "ALTER SYSTEM SET max_parallel_maintenance_workers = 0" >/dev/null
	restart_cluster
fi
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "$ROWS fingerprints and $((PLANTED * 4)) planted near-duplicates"
psql <<SQL
CREATE EXTENSION IF NOT EXISTS sbf;
DROP TABLE IF EXISTS fps, pages, found;
CREATE TABLE fps (id bigint PRIMARY KEY, fp simhash64 NOT NULL);
INSERT INTO fps SELECT g, hashint8extended(g, 7)::simhash64 FROM generate_series(1, $ROWS) g;
SQL
# copy -(10 * seed + flips) of row seed: "flips" distinct bits flipped,
# drawn with hashint8extended
psql <<SQL
CREATE FUNCTION pg_temp.flip(fp simhash64, seed bigint, flips int) RETURNS simhash64
LANGUAGE plpgsql IMMUTABLE AS \$\$
DECLARE
	v bigint := fp::bigint;
	mask bigint := 0;
	j int := 0;
	b int;
BEGIN
	WHILE bit_count(mask::bit(64)) < flips LOOP
		j := j + 1;
		b := (abs(hashint8extended(seed * 1000 + j, 3)) % 64)::int;
		mask := mask | (1::bigint << b);
	END LOOP;
	RETURN (v # mask)::simhash64;
END \$\$;
INSERT INTO fps SELECT -(10 * f.id + flips), pg_temp.flip(f.fp, f.id, flips)
FROM fps f, generate_series(0, 3) flips WHERE f.id BETWEEN 1 AND $PLANTED;
VACUUM ANALYZE fps;
SQL
TOTAL=$(psql -c "SELECT count(*) FROM fps")

# keys BLOCKS D: the lookups simhash_ops makes for one query (as
# simhash_gin.c counts them): for each block of width w, every choice of at
# most t = floor(D / BLOCKS) of its bits flipped; "all" above 2,048, where
# the scan reads the whole index instead
keys() {
	awk -v B="$1" -v d="$2" 'function C(n, k,   r, j) { r = 1; for (j = 1; j <= k; j++) r = r * (n - k + j) / j; return r }
	BEGIN { t = int(d / B); n = 0
		for (i = 0; i < B; i++) { w = int(64 * (i + 1) / B) - int(64 * i / B)
			for (k = 0; k <= t && k <= w; k++) n += C(w, k) }
		if (n > 2048) print "all"; else print n }'
}

# lookup_ms SETTINGS: average latency (ms) of one near-duplicate query for
# the fingerprint of a random row, pgbench -M prepared, a fixed seed;
# QUERY_SECONDS of them, or SEQ_QUERIES queries for the sequential scan
lookup_ms() {
	local out runs=(-T "$QUERY_SECONDS")
	[ "${2:-}" = seq ] && runs=(-t "$SEQ_QUERIES")
	printf '%s\n' "\\set id random(1, $N)" \
		"SELECT count(*) FROM fps WHERE fp % (SELECT fp FROM fps WHERE id = :id);" \
		>"$BENCH_TMP/query.sql"
	out=$(PGOPTIONS="$PGOPTIONS $1" pgbench -n -M prepared -c 1 "${runs[@]}" --random-seed=42 \
		-f "$BENCH_TMP/query.sql" 2>&1) || die "pgbench failed: $out"
	awk '/^latency average/ { print $4 }' <<<"$out"
}
SEQSCAN="-c enable_indexscan=off -c enable_bitmapscan=off"
INDEXSCAN="-c enable_seqscan=off"

# probe D: "candidates heap_blocks found", averaged over PROBES queries
# (rows of fixed pseudo-random ids) with distance D, from EXPLAIN ANALYZE:
# the rows the bitmap index scan returned (what the index could not rule
# out), the heap blocks read for them, and the rows within D
probe() {
	psql -c "CREATE FUNCTION pg_temp.explain(id bigint) RETURNS jsonb LANGUAGE plpgsql AS \$\$
		DECLARE p jsonb;
		BEGIN
			EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM fps
				WHERE fp %% (SELECT fp FROM fps WHERE id = %s)', id) INTO p;
			RETURN p;
		END \$\$" -c "SET sbf.simhash_max_distance = $1" -c "SET enable_seqscan = off" -c "
	SELECT round(avg(c), 1), round(avg(h), 1), round(avg(f), 1) FROM (
		SELECT (jsonb_path_query_first(p, 'strict \$.**? (@.\"Node Type\" == \"Bitmap Index Scan\").\"Actual Rows\"'))::numeric AS c,
		       (jsonb_path_query_first(p, 'strict \$.**? (@.\"Node Type\" == \"Bitmap Heap Scan\").\"Exact Heap Blocks\"'))::numeric
		       + (jsonb_path_query_first(p, 'strict \$.**? (@.\"Node Type\" == \"Bitmap Heap Scan\").\"Lossy Heap Blocks\"'))::numeric AS h,
		       (jsonb_path_query_first(p, 'strict \$.**? (@.\"Node Type\" == \"Bitmap Heap Scan\").\"Actual Rows\"'))::numeric AS f
		FROM generate_series(1, $PROBES) k,
		     LATERAL pg_temp.explain(1 + abs(hashint8extended(k, 11)) % $N) p) s"
}

# grow N: add random fingerprints up to id N
grow() {
	psql -c "INSERT INTO fps SELECT g, hashint8extended(g, 7)::simhash64
		FROM generate_series((SELECT max(id) FROM fps) + 1, $1) g" -c "VACUUM ANALYZE fps"
}

# (b) every pair within 3 bits, by the equi-join on the keys
say "the self-join on simhash_keys"
declare -A join_s join_pairs join_keys
for b in 4 5 6; do
	read -r secs _ < <(measure "SET work_mem = '1GB'" "
		CREATE TABLE pairs_$b AS
		WITH k AS MATERIALIZED (SELECT id, fp, simhash_keys(fp, 3, $b) AS key FROM fps)
		SELECT DISTINCT a.id AS x, b.id AS y, a.fp <~> b.fp AS distance
		FROM k a JOIN k b ON a.key = b.key AND a.id < b.id
		WHERE a.fp <~> b.fp <= 3")
	join_s[$b]=$secs
	join_keys[$b]=$(psql -c "SELECT count(*) FROM simhash_keys('0000000000000000', 3, $b)" |
		awk -v total="$TOTAL" '{ print $1 * total }')
	psql -c "CREATE TABLE IF NOT EXISTS found (blocks int, x bigint, y bigint, distance int)" \
		-c "INSERT INTO found SELECT $b, x, y, distance FROM pairs_$b" -c "DROP TABLE pairs_$b"
	join_pairs[$b]=$(psql -c "SELECT count(*) FROM found WHERE blocks = $b")
done
same=$(psql -c "SELECT count(*) = 0 FROM (
	(SELECT x, y FROM found WHERE blocks = 4 EXCEPT SELECT x, y FROM found WHERE blocks = 5)
	UNION ALL (SELECT x, y FROM found WHERE blocks = 5 EXCEPT SELECT x, y FROM found WHERE blocks = 4)
	UNION ALL (SELECT x, y FROM found WHERE blocks = 6 EXCEPT SELECT x, y FROM found WHERE blocks = 5)
	UNION ALL (SELECT x, y FROM found WHERE blocks = 5 EXCEPT SELECT x, y FROM found WHERE blocks = 6)) d")
by_distance=$(psql -c "SELECT string_agg(n || ' at ' || distance, ', ' ORDER BY distance)
	FROM (SELECT distance, count(*) AS n FROM found WHERE blocks = 5 GROUP BY distance) s")
planted_pairs=$(psql -c "SELECT count(*) FROM found WHERE blocks = 5 AND (x < 0 OR y < 0)")

# (a) the lookups of each layout at each size, against the sequential
# scan; every size's table is printed as soon as it is measured
N=$ROWS
first=1
for size in $SIZES; do
	if [ "$size" -gt "$N" ]; then
		say "growing the table to $size fingerprints"
		grow "$size"
		N=$size
	fi
	rows=$(psql -c "SELECT count(*) FROM fps")
	declare -A seq=()
	for d in 3 6; do
		say "$rows fingerprints: the sequential scan, d = $d"
		seq[$d]=$(lookup_ms "$SEQSCAN -c sbf.simhash_max_distance=$d" seq)
	done
	report="$BENCH_TMP/lookups_$size"
	{
		echo
		echo "(a) $rows fingerprints: one near-duplicate query, pgbench -M prepared, ${QUERY_SECONDS} s (a sequential scan: $SEQ_QUERIES queries)"
		printf '%-10s %2s %6s %11s %7s %6s %10s %9s %9s %8s %10s\n' "blocks" "d" "keys" "candidates" "heap" "found" \
			"ms/query" "vs scan" "build s" "MB" "bytes/row"
		for d in 3 6; do
			printf '%-10s %2d %6s %11s %7s %6s %10.3f %9s %9s %8s %10s\n' "seq scan" "$d" "" "$rows" "" "" "${seq[$d]}" "1x" "" "" ""
		done
	} >"$report"
	layouts=$LAYOUTS
	[ "$size" -gt 10000000 ] && layouts=$LARGE_LAYOUTS
	for b in $layouts; do
		say "$rows fingerprints: the GIN index of $b blocks"
		psql -c "DROP INDEX IF EXISTS fps_gin" -c "CHECKPOINT"
		read -r secs _ < <(measure "SET maintenance_work_mem = '1GB'" \
			"CREATE INDEX fps_gin ON fps USING gin (fp simhash_ops (blocks = $b))")
		bytes=$(psql -c "SELECT pg_relation_size('fps_gin')")
		psql -c "VACUUM ANALYZE fps"
		for d in 3 6; do
			k=$(keys "$b" "$d")
			# d = 6 only where the layout looks it up (not a whole-index read)
			if [ "$d" = 6 ] && [ "$k" = all ]; then continue; fi
			ms=$(lookup_ms "$INDEXSCAN -c sbf.simhash_max_distance=$d")
			read -r cand heap found < <(probe "$d" | tr '|' ' ')
			printf '%-10s %2d %6s %11s %7s %6s %10.3f %8.0fx %9.1f %8.1f %10.1f\n' "$b" "$d" "$k" "$cand" "$heap" "$found" \
				"$ms" "$(echo "${seq[$d]} / $ms" | bc -l)" "$secs" "$(echo "$bytes / 1048576" | bc -l)" \
				"$(echo "$bytes / $rows" | bc -l)" >>"$report"
			if [ "$first" = 1 ] && [ "$d" = 3 ] && [ "$b" = "$DEFAULT_BLOCKS" ]; then
				index_ms=$ms
			fi
		done
	done
	psql -c "DROP INDEX IF EXISTS fps_gin"
	[ "$first" = 1 ] && seq_ms=${seq[3]}
	first=0
	cat "$report" >&2
done

# (c) throughput on the manual's pages
say "simhash() throughput on $TEXT_COPIES copies of the manual's pages"
psql -c "CREATE TABLE pages (name text, body text)"
for i in $(seq 1 "$TEXT_COPIES"); do
	gzip -dc "$PAGES" | sed 's/\\/\\\\/g' | psql -c "\\copy pages FROM STDIN"
done
psql -c "ALTER TABLE pages ALTER body SET STORAGE EXTERNAL" -c "VACUUM ANALYZE pages"
text_mb=$(psql -c "SELECT sum(octet_length(body)) / 1e6 FROM pages")
declare -a t_simhash t_md5 t_length
for i in $(seq 1 "$REPEAT"); do
	read -r s _ < <(measure "SELECT 1" "SELECT count(simhash(body)) FROM pages")
	t_simhash+=("$s")
	read -r s _ < <(measure "SELECT 1" "SELECT count(md5(body)) FROM pages")
	t_md5+=("$s")
	read -r s _ < <(measure "SELECT 1" "SELECT sum(length(body)) FROM pages")
	t_length+=("$s")
done
s_simhash=$(median "${t_simhash[@]}")
s_md5=$(median "${t_md5[@]}")
s_length=$(median "${t_length[@]}")

echo
echo "$TOTAL fingerprints ($ROWS random, $((PLANTED * 4)) planted copies with 0..3 bits flipped); $(nproc) cores, shared"
echo
echo "(b) every pair within 3 bits: equi-join on simhash_keys(fp, 3, B), work_mem 1GB"
printf '%-36s %10s %12s %10s\n' "" "seconds" "keys" "pairs"
for b in 4 5 6; do
	printf '%-36s %10.1f %12.0f %10d\n' "simhash_keys, B = $b" "${join_s[$b]}" "${join_keys[$b]}" "${join_pairs[$b]}"
done
printf '%-36s %10.0f %12s %10s\n' "$TOTAL indexed queries (from (a), $DEFAULT_BLOCKS blocks)" "$(echo "$TOTAL * $index_ms / 1000" | bc -l)" "" ""
printf '%-36s %10.0f %12s %10s\n' "$TOTAL sequential scans (from (a))" "$(echo "$TOTAL * $seq_ms / 1000" | bc -l)" "" ""
echo "same pairs for B = 4, 5, 6: $same; by distance: $by_distance; $planted_pairs involve a planted copy"
echo
for size in $SIZES; do
	cat "$BENCH_TMP/lookups_$size"
done
echo
printf '(c) throughput over %.1f MB of text (%d copies of the manual), median of %d\n' "$text_mb" "$TEXT_COPIES" "$REPEAT"
printf '%-36s %10s %10s\n' "" "seconds" "MB/s"
printf '%-36s %10.2f %10.1f\n' "length(body)" "$s_length" "$(echo "$text_mb / $s_length" | bc -l)"
printf '%-36s %10.2f %10.1f\n' "md5(body)" "$s_md5" "$(echo "$text_mb / $s_md5" | bc -l)"
printf '%-36s %10.2f %10.1f\n' "simhash(body) (shingles of 3)" "$s_simhash" "$(echo "$text_mb / $s_simhash" | bc -l)"
rm -rf "$BENCH_TMP"
