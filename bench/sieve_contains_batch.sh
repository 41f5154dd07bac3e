#!/usr/bin/env bash
# Benchmark: sieve_contains on batches of 1,000 URLs (the text[] form, 1.2)
# against the same URLs asked one call each, on the same compressed seen
# and the same plain one, in the same run.
#
#   bash bench/sieve_contains_batch.sh
#
# The seens hold the signatures of URLS synthetic URLs (2M by default, as
# bench/sieve_contains_checks.sh: about 7,300 chunks); 200,000 lookups,
# half of them present, evenly spread over the seen, are grouped into 200
# batches of 1,000 whose URLs are spread over the whole seen too (a
# crawler's batch is not sorted).  Each way is timed by the backend's CPU
# time (not the wall time: the machine is shared), net of the same query
# without the lookups (the URLs alone, or aggregated into the batches), the
# best of REPEAT runs (7 by default) alternating the two ways.  Prints ns a
# URL for each and the ratio, a batch's URL over a single call's.
. "$(dirname "$0")/lib.sh"

case "${1:-}" in -h | --help) sed -n '2,16p' "$0" >&2; exit 2 ;; esac
URLS=${URLS:-2000000}
REPEAT=${REPEAT:-7}
build_and_install
start_cluster
trap 'stop_cluster; rm -rf "$BENCH_TMP"' EXIT
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "a compressed seen and a plain seen of $URLS URLs"
psql -c "CREATE EXTENSION sbf"
synthetic_seen "$URLS" | psql

# 200,000 URLs from 1 to 2 * URLS, evenly spaced (half present), each with
# its batch: 200 batches of 1,000 drawn across the whole range
urls="SELECT 'https://www.example' || (h % 1000) || '.gov/path/' || h || '/page.html' AS url, (h / $((URLS / 100000)) * 7919) % 200 AS batch FROM generate_series(200, 2 * $URLS, $((URLS / 100000))) h"
single_query() { echo "SELECT count(*) FILTER (WHERE $1) FROM ($urls) u"; }
batch_query() { echo "SELECT count(*) FILTER (WHERE a) FROM (SELECT $1 AS answers FROM ($urls) u GROUP BY batch) b, unnest(answers) a"; }

read -r n batches present < <(psql -F ' ' -c "SELECT count(*), count(DISTINCT batch), count(*) FILTER (WHERE sieve_contains('zseen', url)) FROM ($urls) u")
for seen in zseen plain_seen; do
	single=$(psql -c "$(single_query "sieve_contains('$seen', url)")")
	batch=$(psql -c "$(batch_query "sieve_contains('$seen', array_agg(url))")")
	[ "$single" = "$present" ] && [ "$batch" = "$present" ] ||
		die "$seen: $single found one by one, $batch in batches, not $present"
done
printf '%s lookups in %s batches, %s present\n' "$n" "$batches" "$present"
printf '%-40s %10s\n' "" "CPU s"
declare -A best
for i in $(seq "$REPEAT"); do
	for way in "single base|$(single_query "url <> ''")" \
		"batch base|$(batch_query "array_agg(url <> '')")" \
		"single zseen|$(single_query "sieve_contains('zseen', url)")" \
		"batch zseen|$(batch_query "sieve_contains('zseen', array_agg(url))")" \
		"single plain_seen|$(single_query "sieve_contains('plain_seen', url)")" \
		"batch plain_seen|$(batch_query "sieve_contains('plain_seen', array_agg(url))")"; do
		s=$(cpu_seconds "${way#*|}")
		name=${way%%|*}
		printf '%-40s %10s\n' "$name ($i)" "$s"
		if [ -z "${best[$name]:-}" ] || [ "$(echo "$s < ${best[$name]}" | bc)" = 1 ]; then best[$name]=$s; fi
	done
done
echo
printf '%-40s %12s\n' "best of $REPEAT, net of the URLs alone" "ns a URL"
for seen in zseen plain_seen; do
	one=$(echo "(${best[single $seen]} - ${best[single base]}) * 1000000000 / $n" | bc -l)
	many=$(echo "(${best[batch $seen]} - ${best[batch base]}) * 1000000000 / $n" | bc -l)
	printf '%-40s %12.0f\n' "sieve_contains($seen, url), 1 a call" "$one"
	printf '%-40s %12.0f\n' "sieve_contains($seen, urls), 1,000" "$many"
	printf '%-40s %12.2f\n' "  batch / single" "$(echo "$many / $one" | bc -l)"
done
