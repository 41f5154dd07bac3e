#!/usr/bin/env bash
# Benchmark: marking duplicates and aggregating on 10M crawl rows, against
# what a user would do instead, measured in the same run.
#
#   bash bench/marking.sh                 # throwaway cluster; ~10 minutes
#   SBF_USE_EXISTING=1 bash bench/marking.sh
#
# Data: crawl (pos bigint PRIMARY KEY, url text), 10M rows generated with a
# fixed seed: URL ids drawn as floor(4.4M * r^2), so a few pages are linked
# very often and most rarely (3.6M distinct URLs).  Prints, each run
# REPEAT times alternating and the median kept:
#
#  - marking: the floor (a window over the same order reading every url,
#    lag(url) OVER (ORDER BY pos) = url), is_duplicate with
#    bloom_sized(3400000, 0.01) and with stablebloom_sized(40000000, 0.05,
#    8, 1), and exact marking with row_number() OVER (PARTITION BY url
#    ORDER BY pos) > 1 with the temporary files it writes;
#  - aggregating: bloom_agg(url, 3400000, 0.01) serial and with 2 parallel
#    workers, bloom_union_agg of 8 per-shard filters, against
#    count(DISTINCT url);
#  - memory: the backend's peak private RSS while marking and aggregating
#    with a 512 MB filter (bloom_empty(2^32 bits, 7)).
. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
ROWS=${ROWS:-10000000}

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning -c jit=off"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "generating $ROWS crawl rows"
psql -c "CREATE EXTENSION IF NOT EXISTS sbf"
synthetic_crawl crawl "$ROWS" | psql
read -r rows distinct size < <(psql -F ' ' -c "SELECT count(*), count(DISTINCT url), pg_size_pretty(pg_table_size('crawl')) FROM crawl")
echo "crawl: $rows rows, $distinct distinct URLs, $size"

# seconds SQL...: wall time of one psql run
seconds() {
	local start end
	start=$(date +%s.%N)
	psql "$@" >/dev/null
	end=$(date +%s.%N)
	echo "$end - $start" | bc -l
}
temp_bytes() { psql -c "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()"; }

SERIAL="SET max_parallel_workers_per_gather = 0"
PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0"

declare -A q
q[floor]="SELECT count(*) FILTER (WHERE d) FROM (SELECT lag(url) OVER (ORDER BY pos) = url AS d FROM crawl) s"
q[bloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, bloom_sized(3400000, 0.01)) OVER (ORDER BY pos) AS d FROM crawl) s"
q[stablebloom]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, stablebloom_sized(40000000, 0.05, 8, 1)) OVER (ORDER BY pos) AS d FROM crawl) s"
q[exact]="SELECT count(*) FILTER (WHERE d) FROM (SELECT row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS d FROM crawl) s"
q[bloom_agg]="SELECT bloom_info(bloom_agg(url, 3400000, 0.01))->>'bits_set' FROM crawl"
q[union_agg]="SELECT bloom_info(bloom_union_agg(f))->>'bits_set' FROM (SELECT bloom_agg(url, 3400000, 0.01) AS f FROM crawl GROUP BY pos % 8) s"
q[count_distinct]="SELECT count(DISTINCT url) FROM crawl"

say "marking, $REPEAT rounds"
declare -A t
for i in $(seq 1 "$REPEAT"); do
	for m in floor bloom stablebloom exact; do
		before=$(temp_bytes)
		t[$m]+="$(seconds -c "$SERIAL" -c "${q[$m]}") "
		sleep 0.5
		after=$(temp_bytes)
		[ "$m" = exact ] && exact_temp=$((after - before))
		say "  round $i $m done"
	done
done
declare -A med
for m in floor bloom stablebloom exact; do
	# shellcheck disable=SC2086
	med[$m]=$(median ${t[$m]})
done

say "aggregating, $REPEAT rounds"
declare -A a
for i in $(seq 1 "$REPEAT"); do
	a[agg_serial]+="$(seconds -c "$SERIAL" -c "${q[bloom_agg]}") "
	a[agg_parallel]+="$(seconds -c "$PARALLEL" -c "${q[bloom_agg]}") "
	a[union_serial]+="$(seconds -c "$SERIAL" -c "${q[union_agg]}") "
	a[union_parallel]+="$(seconds -c "$PARALLEL" -c "${q[union_agg]}") "
	a[count_distinct]+="$(seconds -c "$SERIAL" -c "${q[count_distinct]}") "
	say "  round $i done"
done
declare -A amed
for k in agg_serial agg_parallel union_serial union_parallel count_distinct; do
	# shellcheck disable=SC2086
	amed[$k]=$(median ${a[$k]})
done
plan=$(psql -c "$PARALLEL" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${q[bloom_agg]}")
launched=$(sed -n 's/.*Workers Launched: \([0-9]*\).*/\1/p' <<<"$plan" | head -1)

# peak_rss SETTINGS SQL: the backend's peak private memory (kB) running SQL
peak_rss() { measure "$1" "$2" | awk '{ print $2 }'; }
say "memory with a 512 MB filter"
baseline_kb=$(peak_rss "$SERIAL" "SELECT count(*) FILTER (WHERE d) FROM (SELECT lag(url) OVER (ORDER BY pos) = url AS d FROM crawl) s")
mark_kb=$(peak_rss "$SERIAL" "SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, bloom_empty(4294967296, 7)) OVER (ORDER BY pos) AS d FROM crawl) s")
smark_kb=$(peak_rss "$SERIAL" "SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, stablebloom_empty(4294967296, 8, 1, 4)) OVER (ORDER BY pos) AS d FROM crawl) s")
agg_kb=$(peak_rss "$SERIAL" "SELECT bloom_info(bloom_agg(url, bloom_empty(4294967296, 7)))->>'bits_set' FROM crawl")

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
cat <<TXT

crawl: $rows rows, $distinct distinct URLs ($size); medians of $REPEAT runs; $(nproc) cores

marking duplicates                                   seconds   vs floor
  floor: lag(url) OVER (ORDER BY pos) = url         $(printf '%7.2f' "${med[floor]}")      1.00
  is_duplicate(url, bloom_sized(3400000, 0.01))     $(printf '%7.2f' "${med[bloom]}")   $(printf '%7s' "$(ratio "${med[bloom]}" "${med[floor]}")")
  is_duplicate(url, stablebloom_sized(40M,.05,8,1)) $(printf '%7.2f' "${med[stablebloom]}")   $(printf '%7s' "$(ratio "${med[stablebloom]}" "${med[floor]}")")
  exact: row_number() OVER (PARTITION BY url ...)   $(printf '%7.2f' "${med[exact]}")   $(printf '%7s' "$(ratio "${med[exact]}" "${med[floor]}")")
  exact marking is $(ratio "${med[exact]}" "${med[bloom]}")x slower than bloom and wrote $((exact_temp / 1048576)) MB of temporary files;
  the bloom filter is $(psql -c "SELECT pg_size_pretty((bloom_info(bloom_add(bloom_sized(3400000, 0.01), 'x'))->>'size_bytes')::bigint)"), the stable one $(psql -c "SELECT pg_size_pretty((stablebloom_info(stablebloom_add(stablebloom_sized(40000000, 0.05, 8, 1), 'x'))->>'size_bytes')::bigint)")

aggregating                                          seconds   vs count(DISTINCT)
  count(DISTINCT url)                               $(printf '%7.2f' "${amed[count_distinct]}")      1.00
  bloom_agg(url, 3400000, 0.01), serial             $(printf '%7.2f' "${amed[agg_serial]}")   $(printf '%7s' "$(ratio "${amed[agg_serial]}" "${amed[count_distinct]}")")
  bloom_agg(url, 3400000, 0.01), 2 workers          $(printf '%7.2f' "${amed[agg_parallel]}")   $(printf '%7s' "$(ratio "${amed[agg_parallel]}" "${amed[count_distinct]}")")   (speed-up $(ratio "${amed[agg_serial]}" "${amed[agg_parallel]}")x, ${launched:-0} workers launched)
  bloom_union_agg of 8 shards' bloom_agg, serial    $(printf '%7.2f' "${amed[union_serial]}")   $(printf '%7s' "$(ratio "${amed[union_serial]}" "${amed[count_distinct]}")")
  bloom_union_agg of 8 shards' bloom_agg, 2 workers $(printf '%7.2f' "${amed[union_parallel]}")   $(printf '%7s' "$(ratio "${amed[union_parallel]}" "${amed[count_distinct]}")")

peak private memory of the backend (RssAnon), 512 MB filter      MB   (MB over the floor query)
  floor query (lag)                                 $(printf '%7.0f' "$(echo "$baseline_kb / 1024" | bc -l)")
  is_duplicate with bloom_empty(2^32 bits, 7)       $(printf '%7.0f' "$(echo "$mark_kb / 1024" | bc -l)")   $(printf '%7.0f' "$(echo "($mark_kb - $baseline_kb) / 1024" | bc -l)")
  is_duplicate with stablebloom_empty(2^32, 8, 1, 4)$(printf '%7.0f' "$(echo "$smark_kb / 1024" | bc -l)")   $(printf '%7.0f' "$(echo "($smark_kb - $baseline_kb) / 1024" | bc -l)")
  bloom_agg(url, bloom_empty(2^32 bits, 7))         $(printf '%7.0f' "$(echo "$agg_kb / 1024" | bc -l)")   $(printf '%7.0f' "$(echo "($agg_kb - $baseline_kb) / 1024" | bc -l)")
TXT
rm -rf "$BENCH_TMP"
