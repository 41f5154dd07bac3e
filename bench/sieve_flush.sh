#!/usr/bin/env bash
# Benchmark: sieve_flush against the plain-SQL flush (docs/sieve.md) on the
# same data in the same run, and the backend's peak private memory.
#
#   bash bench/sieve_flush.sh            # starts a throwaway cluster
#   SBF_USE_EXISTING=1 bash bench/sieve_flush.sh   # PGHOST/PGPORT/PGDATABASE as set
#
# Data: the eot2024 sitemap stream (../shared/data): its first 500k rows
# are flushed into seen, then a batch of the next 1.5M rows is flushed,
# three times each way, alternating.  Then, once each way, a batch of 10M
# synthetic crawl rows (3.6M distinct URLs, as in bench/marking.sh) against
# the same seen.  Prints seconds, the ratio, and the peak anonymous RSS of
# the backend during each flush (sampled every 20 ms from /proc), which
# excludes shared buffers.  Takes ~10 minutes; SIEVE_10M=0 skips the 10M
# batch.
. "$(dirname "$0")/lib.sh"

STREAM=${SBF_STREAMS_DIR:-$SBF_ROOT/../shared/data}/eot2024-sitemaps-a-m.txt.gz
REPEAT=${REPEAT:-3}
[ -r "$STREAM" ] || die "cannot read $STREAM"

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	ensure_packages
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "loading $(basename "$STREAM")"
psql <<'SQL'
DROP TABLE IF EXISTS stream, seen, discovered, frontier, seen_base;
CREATE EXTENSION IF NOT EXISTS sbf;
CREATE TABLE stream (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
SQL
stream_to_copy "$STREAM" | psql -c "\\copy stream FROM STDIN"
psql <<'SQL'
INSERT INTO discovered SELECT pos, url FROM stream WHERE pos <= 500000;
SELECT sieve_flush('seen', 'discovered', 'frontier') AS seen_rows \gset
CREATE TABLE seen_base AS SELECT sig FROM seen;
VACUUM ANALYZE stream, seen_base;
SQL

psql -f "$SBF_ROOT/scripts/plain_sql_flush.sql"
PLAIN_SQL_FLUSH="CALL plain_sql_flush('seen', 'discovered', 'frontier')"

# reset LO HI: seen = the first 500k rows' signatures, discovered = rows LO..HI
reset() {
	psql <<SQL
TRUNCATE seen, discovered, frontier;
INSERT INTO seen SELECT sig FROM seen_base;
INSERT INTO discovered SELECT pos, url FROM stream WHERE pos BETWEEN $1 AND $2;
VACUUM ANALYZE seen, discovered, frontier;
CHECKPOINT;
SQL
}

# run WORK_MEM SQL: prints "seconds peak_anon_kB" for SQL in a fresh backend
run() { measure "SET work_mem = '$1'" "$2"; }

printf '%-28s %8s %9s %8s %12s\n' "flush" "work_mem" "batch" "seconds" "peak_anon_MB"
declare -a c_times sql_times
for i in $(seq 1 "$REPEAT"); do
	reset 500001 2000000
	read -r secs peak < <(run 4MB "SELECT sieve_flush('seen', 'discovered', 'frontier')")
	c_times+=("$secs")
	printf '%-28s %8s %9s %8s %12.1f\n' "sieve_flush" 4MB 1500000 "$secs" "$(echo "$peak / 1024" | bc -l)"
	reset 500001 2000000
	read -r secs peak < <(run 4MB "$PLAIN_SQL_FLUSH")
	sql_times+=("$secs")
	printf '%-28s %8s %9s %8s %12.1f\n' "plain SQL" 4MB 1500000 "$secs" "$(echo "$peak / 1024" | bc -l)"
done

c=$(median "${c_times[@]}")
s=$(median "${sql_times[@]}")
printf '\nmedian of %d: sieve_flush %.2f s, plain SQL %.2f s: sieve_flush is %.2fx faster\n\n' \
	"$REPEAT" "$c" "$s" "$(echo "$s / $c" | bc -l)"

# memory against batch size and work_mem
for cfg in "500001 1000000 4MB" "500001 2000000 4MB" "500001 2026278 64MB" "500001 1000000 64MB"; do
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
	read -r s peak < <(run 4MB "$PLAIN_SQL_FLUSH")
	printf '%-28s %8s %9s %8s %12.1f\n' "plain SQL" 4MB 10000000 "$s" "$(echo "$peak / 1024" | bc -l)"
	printf '\n10M rows: sieve_flush is %.2fx faster\n' "$(echo "$s / $c" | bc -l)"
fi
rm -rf "$BENCH_TMP"
