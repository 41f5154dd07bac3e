#!/usr/bin/env bash
# Benchmark: what url_canonical and url_host cost per URL, beside what a
# query already pays per URL for functions of the same shape, measured in
# the same run.
#
#   bash bench/url_canonical.sh               # throwaway cluster; ~5 minutes
#   bash bench/url_canonical.sh STREAM.txt.gz # another stream, one URL a line
#   SBF_USE_EXISTING=1 bash bench/url_canonical.sh   # PGHOST/PGPORT/... as set
#
# The URLs: data/eot2024-sitemaps-300k.txt.gz (300,000 real URLs of .gov
# sitemaps), in a table.  For each expression, the median over REPEAT (5)
# runs of SELECT count(expr) FROM urls (JIT and parallel query off), net of
# the same scan with count(u), in ns per URL, and its ratio to md5(u): a
# function every PostgreSQL user knows the cost of.
. "$(dirname "$0")/lib.sh"

STREAM=${1:-$SBF_ROOT/data/eot2024-sitemaps-300k.txt.gz}
REPEAT=${REPEAT:-5}
[ -r "$STREAM" ] || die "cannot read $STREAM"

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
	command psql -X -q -c "ALTER SYSTEM SET jit = off" \
		-c "ALTER SYSTEM SET max_parallel_workers_per_gather = 0" >/dev/null
	restart_cluster
fi
export PGOPTIONS="-c client_min_messages=warning -c jit=off -c max_parallel_workers_per_gather=0"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

psql <<SQL
CREATE EXTENSION IF NOT EXISTS sbf;
DROP TABLE IF EXISTS bench_urls;
CREATE TABLE bench_urls (u text NOT NULL);
\\copy bench_urls FROM PROGRAM 'gzip -dc $STREAM' (FORMAT text)
VACUUM ANALYZE bench_urls;
SQL
N=$(psql -c "SELECT count(*) FROM bench_urls")
say "$N URLs from $(basename "$STREAM")"

# ms EXPR [TABLE]: the median time of SELECT count(EXPR) over TABLE
# (bench_urls), in ms
ms() {
	local runs=() i t
	for i in $(seq 1 "$REPEAT"); do
		t=$(command psql -X -q -A -t -v ON_ERROR_STOP=1 <<SQL | awk '/^Time:/ { print $2 }'
\\timing on
SELECT count($1) FROM ${2:-bench_urls};
SQL
)
		runs+=("$t")
	done
	median "${runs[@]}"
}

base=$(ms u)
md5=$(ms "md5(u)")
md5_net=$(echo "($md5 - $base) * 1000000 / $N" | bc -l)
printf '%-70s %8s %8s\n' "per URL, net of the scan ($(printf '%.0f' "$(echo "$base * 1000000 / $N" | bc -l)") ns)" "ns" "x md5"
printf '%-70s %8.0f %8.2f\n' "md5(u)" "$md5_net" 1
for expr in "lower(u)" "url_signature(u)" "url_canonical(u)" \
	"url_canonical(u, query => 'sort', strip_params => '{utm_*,fbclid}')" \
	"url_host(u)" "url_signature(url_canonical(u))"; do
	t=$(ms "$expr")
	net=$(echo "($t - $base) * 1000000 / $N" | bc -l)
	printf '%-70s %8.0f %8.2f\n' "$expr" "$net" "$(echo "$net / $md5_net" | bc -l)"
done

# strip_params of 1,000 names, over the first 100,000 URLs: each call site
# builds its strip list once while the array stays the same.  Both
# expressions build an array a row (the names and one md5); it is the same
# every row in the first, so the list is kept, and another every row in
# the second, so it is rebuilt: what every row paid before the list was
# kept.
psql -c "DROP TABLE IF EXISTS bench_names, bench_urls_100k" \
	-c "CREATE TABLE bench_names AS SELECT array_agg('utm_' || g ORDER BY g) AS names FROM generate_series(1, 1000) g" \
	-c "CREATE TABLE bench_urls_100k AS SELECT u FROM bench_urls LIMIT 100000"
base100k=$(ms u bench_urls_100k)
same=$(ms "url_canonical(u, strip_params => (SELECT names FROM bench_names) || md5(left(u, 0)))" bench_urls_100k)
changing=$(ms "url_canonical(u, strip_params => (SELECT names FROM bench_names) || md5(u))" bench_urls_100k)
same_net=$(echo "($same - $base100k) * 10" | bc -l)
changing_net=$(echo "($changing - $base100k) * 10" | bc -l)
printf '%-70s %8.0f %8.2f\n' "1,000 strip_params names, the same array every row (kept)" "$same_net" "$(echo "$same_net / $md5_net" | bc -l)"
printf '%-70s %8.0f %8.2f\n' "1,000 strip_params names, another array every row (rebuilt)" "$changing_net" "$(echo "$changing_net / $md5_net" | bc -l)"
printf 'rebuilt / kept: %.1f\n' "$(echo "$changing_net / $same_net" | bc -l)"
psql -c "DROP TABLE bench_names, bench_urls_100k"
psql -c "DROP TABLE bench_urls"
