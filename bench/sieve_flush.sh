#!/usr/bin/env bash
# Benchmark: sieve_flush, with a plain seen (a bigint primary key) and
# with a compressed seen (sieve_seen_create), against the plain-SQL flush
# (docs/sieve.md) on the same data in the same run; the backend's peak
# private memory; the bytes a URL of both kinds of seen at 20M URLs; and
# sieve_contains per URL beside a shared Bloom filter and the primary key.
#
#   bash bench/sieve_flush.sh [STREAM]        # starts a throwaway cluster
#   SBF_USE_EXISTING=1 bash bench/sieve_flush.sh [STREAM]
#                                             # PGHOST/PGPORT/PGDATABASE as set
#
# STREAM is a URL stream file (gzipped or not; one URL a line, or
# pos<TAB>url), by default $SBF_SIEVE_STREAM, else the shipped
# data/eot2024-sitemaps-300k.txt.gz (the first 300,000 lines of the eot2024
# sitemap stream).  The figures of docs/benchmarks.md come from the whole
# stream, eot2024-sitemaps-a-m.txt.gz (2,026,278 URLs: the sitemap URL
# seeds of hosts a-m of the 2024 End of Term web archive, in file and line
# order, from github.com/end-of-term/eot2024, seed-lists/sitemap-url-seeds/):
#
#   bash bench/sieve_flush.sh /path/to/eot2024-sitemaps-a-m.txt.gz
#
# The first quarter of the stream, at most 500,000 rows, is flushed into
# seen; then a batch of the next rows up to row 2,000,000 (1.5M rows of the
# whole stream, 225,000 of the shipped slice) is flushed, three times each
# way (plain seen, compressed seen, plain SQL), alternating.  Then sieve_flush alone on the first third of that
# batch and on the batch at work_mem 4MB, and on the rest of the stream
# and that third at work_mem 64MB.  Then, once each way, a batch of 10M
# synthetic crawl rows (3.6M distinct URLs, as in bench/marking.sh) against
# the same seen, each of the three ways.  Prints seconds, the ratios, and
# the peak anonymous RSS of the backend during each flush (sampled every
# 20 ms from /proc), which excludes shared buffers.  Then the sizes: the
# signatures of 20M synthetic URLs in a plain seen and in a compressed one,
# bytes a URL on disk (table and indexes); and 200,000 lookups of each
# kind, half of them present, timed against the same URLs' signatures
# alone.  Takes ~10 minutes on the whole stream; SIEVE_10M=0 skips the
# 10M batch, SIEVE_SIZES=0 the sizes and lookups.
. "$(dirname "$0")/lib.sh"

usage() {
	cat >&2 <<'TXT'
usage: bash bench/sieve_flush.sh [STREAM]
  STREAM  a URL stream file (default: $SBF_SIEVE_STREAM, else
          data/eot2024-sitemaps-300k.txt.gz); docs/benchmarks.md was
          measured with the whole eot2024-sitemaps-a-m.txt.gz
TXT
	rm -rf "$BENCH_TMP"
	exit 2
}
case "${1:-}" in -h | --help) usage ;; esac
[ $# -le 1 ] || usage
STREAM=${1:-${SBF_SIEVE_STREAM:-$SBF_ROOT/data/eot2024-sitemaps-300k.txt.gz}}
REPEAT=${REPEAT:-3}
[ -r "$STREAM" ] || { printf 'error: cannot read %s\n' "$STREAM" >&2; usage; }

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	ensure_packages
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "loading $(basename "$STREAM")"
psql <<'SQL'
DROP TABLE IF EXISTS stream, seen, zseen, discovered, frontier, seen_base;
CREATE EXTENSION IF NOT EXISTS sbf;
CREATE TABLE stream (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
SQL
stream_to_copy "$STREAM" | psql -c "\\copy stream FROM STDIN"
LAST=$(psql -c "SELECT coalesce(max(pos), 0) FROM stream")
# seen: the first quarter, at most 500,000 rows; the batch: the rows after
# it up to row 2,000,000; THIRD: the first third of the batch
SEEN=$((LAST / 4 < 500000 ? LAST / 4 : 500000))
HI=$((LAST < 2000000 ? LAST : 2000000))
THIRD=$((SEEN + (HI - SEEN) / 3))
[ "$SEEN" -gt 0 ] || die "$STREAM holds too few rows ($LAST)"
psql <<SQL
INSERT INTO discovered SELECT pos, url FROM stream WHERE pos <= $SEEN;
SELECT sieve_flush('seen', 'discovered', 'frontier') AS seen_rows \gset
CREATE TABLE seen_base AS SELECT sig FROM seen;
VACUUM ANALYZE stream, seen_base;
SELECT sieve_seen_create('zseen') AS zseen \gset
SQL

psql -f "$SBF_ROOT/scripts/plain_sql_flush.sql"
PLAIN_SQL_FLUSH="CALL plain_sql_flush('seen', 'discovered', 'frontier')"

# reset LO HI: seen and zseen = the first SEEN rows' signatures,
# discovered = rows LO..HI
reset() {
	psql <<SQL
TRUNCATE seen, zseen, discovered, frontier;
INSERT INTO seen SELECT sig FROM seen_base;
SELECT sieve_seen_import('zseen', 'seen_base') AS imported \gset
INSERT INTO discovered SELECT pos, url FROM stream WHERE pos BETWEEN $1 AND $2;
VACUUM ANALYZE seen, zseen, discovered, frontier;
CHECKPOINT;
SQL
}

# run WORK_MEM SQL: prints "seconds peak_anon_kB" for SQL in a fresh backend
run() { measure "SET work_mem = '$1'" "$2"; }

printf '%-28s %8s %9s %8s %12s\n' "flush" "work_mem" "batch" "seconds" "peak_anon_MB"
declare -a c_times z_times sql_times
for i in $(seq 1 "$REPEAT"); do
	reset $((SEEN + 1)) "$HI"
	read -r secs peak < <(run 4MB "SELECT sieve_flush('seen', 'discovered', 'frontier')")
	c_times+=("$secs")
	printf '%-28s %8s %9s %8s %12.1f\n' "sieve_flush" 4MB $((HI - SEEN)) "$secs" "$(echo "$peak / 1024" | bc -l)"
	reset $((SEEN + 1)) "$HI"
	read -r secs peak < <(run 4MB "SELECT sieve_flush('zseen', 'discovered', 'frontier')")
	z_times+=("$secs")
	printf '%-28s %8s %9s %8s %12.1f\n' "sieve_flush, compressed" 4MB $((HI - SEEN)) "$secs" "$(echo "$peak / 1024" | bc -l)"
	reset $((SEEN + 1)) "$HI"
	read -r secs peak < <(run 4MB "$PLAIN_SQL_FLUSH")
	sql_times+=("$secs")
	printf '%-28s %8s %9s %8s %12.1f\n' "plain SQL" 4MB $((HI - SEEN)) "$secs" "$(echo "$peak / 1024" | bc -l)"
done

c=$(median "${c_times[@]}")
z=$(median "${z_times[@]}")
s=$(median "${sql_times[@]}")
printf '\nmedian of %d: sieve_flush %.2f s, compressed %.2f s, plain SQL %.2f s\n' \
	"$REPEAT" "$c" "$z" "$s"
printf 'sieve_flush is %.2fx faster than plain SQL, with a compressed seen %.2fx\n\n' \
	"$(echo "$s / $c" | bc -l)" "$(echo "$s / $z" | bc -l)"

# memory against batch size and work_mem
for cfg in "$((SEEN + 1)) $THIRD 4MB" "$((SEEN + 1)) $HI 4MB" "$((SEEN + 1)) $LAST 64MB" "$((SEEN + 1)) $THIRD 64MB"; do
	read -r lo hi wm <<<"$cfg"
	reset "$lo" "$hi"
	read -r secs peak < <(run "$wm" "SELECT sieve_flush('seen', 'discovered', 'frontier')")
	printf '%-28s %8s %9s %8s %12.1f\n' "sieve_flush" "$wm" "$((hi - lo + 1))" "$secs" "$(echo "$peak / 1024" | bc -l)"
done
if [ "${SIEVE_10M:-1}" != 0 ]; then
	say "10M synthetic rows"
	synthetic_crawl stream 10000000 | psql
	echo
	reset 1 10000000
	read -r c peak < <(run 4MB "SELECT sieve_flush('seen', 'discovered', 'frontier')")
	printf '%-28s %8s %9s %8s %12.1f\n' "sieve_flush" 4MB 10000000 "$c" "$(echo "$peak / 1024" | bc -l)"
	reset 1 10000000
	read -r z peak < <(run 4MB "SELECT sieve_flush('zseen', 'discovered', 'frontier')")
	printf '%-28s %8s %9s %8s %12.1f\n' "sieve_flush, compressed" 4MB 10000000 "$z" "$(echo "$peak / 1024" | bc -l)"
	reset 1 10000000
	read -r s peak < <(run 4MB "$PLAIN_SQL_FLUSH")
	printf '%-28s %8s %9s %8s %12.1f\n' "plain SQL" 4MB 10000000 "$s" "$(echo "$peak / 1024" | bc -l)"
	printf '\n10M rows: sieve_flush is %.2fx faster than plain SQL, with a compressed seen %.2fx\n' \
		"$(echo "$s / $c" | bc -l)" "$(echo "$s / $z" | bc -l)"
fi
if [ "${SIEVE_SIZES:-1}" != 0 ]; then
	say "sizes at 20M URLs, and lookups"
	psql <<'SQL'
DROP TABLE IF EXISTS sizes_plain, sizes_z, stream;
DROP TABLE IF EXISTS lookup_filter;
\o /dev/null
CREATE TABLE sizes_plain (sig bigint PRIMARY KEY);
INSERT INTO sizes_plain
	SELECT url_signature('https://www.example' || (g % 1000) || '.gov/path/' || g || '/page.html')
	FROM generate_series(1, 20000000) g;
VACUUM ANALYZE sizes_plain;
SELECT sieve_seen_create('sizes_z');
SET work_mem = '64MB';
SELECT sieve_seen_import('sizes_z', 'sizes_plain');
VACUUM ANALYZE sizes_z;
SELECT shared_bloom_create('lookup_filter', 20000000, 0.01, transactional => false);
SELECT count(*) FROM (SELECT shared_test_and_add('lookup_filter', array_agg(sig)) FROM sizes_plain GROUP BY sig % 200) a;
SQL
	printf '\n%-36s %12s %14s %12s\n' "seen of 20M URLs" "URLs" "bytes on disk" "bytes a URL"
	psql -F '|' <<'SQL' | while IFS='|' read -r what n bytes; do
SELECT 'bigint primary key', count(*), pg_total_relation_size('sizes_plain') FROM sizes_plain;
SELECT 'compressed (sieve_seen_create)', sum(sieve_chunk_count(chunk)), pg_total_relation_size('sizes_z') FROM sizes_z;
SQL
		printf '%-36s %12s %14s %12.2f\n' "$what" "$n" "$bytes" "$(echo "$bytes / $n" | bc -l)"
	done
	# 200,000 lookups, half present: each way against the signatures alone
	urls="SELECT 'https://www.example' || (h % 1000) || '.gov/path/' || h || '/page.html' AS url FROM generate_series(200, 40000000, 200) h"
	lookup() { measure "SET work_mem = '4MB'" "SELECT count(*) FILTER (WHERE $1) FROM ($urls) u"; }
	read -r base _ < <(lookup "url_signature(url) <> 0")
	printf '\n%-44s %10s %12s\n' "200,000 lookups (half present)" "seconds" "ns a URL"
	for way in "sieve_contains, compressed seen|sieve_contains('sizes_z', url)" \
		"sieve_contains, bigint primary key|sieve_contains('sizes_plain', url)" \
		"EXISTS on the bigint primary key|EXISTS (SELECT FROM sizes_plain WHERE sig = url_signature(url))" \
		"shared_contains, shared Bloom filter 1%|shared_contains('lookup_filter', url_signature(url))"; do
		read -r secs _ < <(lookup "${way#*|}")
		printf '%-44s %10s %12.0f\n' "${way%%|*}" "$secs" "$(echo "($secs - $base) * 1000000000 / 200000" | bc -l)"
	done
	printf '%-44s %10s\n' "(the signatures alone)" "$base"
fi
rm -rf "$BENCH_TMP"
