#!/usr/bin/env bash
# Benchmark: marking the repeats of the last day in a week of crawl rows, a
# sliding window of time against one of arrivals and against the exact
# query, measured in the same run.
#
#   bash bench/sliding_time.sh              # throwaway cluster; ~3 minutes
#   SBF_USE_EXISTING=1 bash bench/sliding_time.sh
#
# Data: the synthetic crawl of bench/lib.sh (ROWS rows, default 3M), one
# row every 200 ms, so 3M rows are a week and a day is 432,000 rows.
# Prints, each run REPEAT times alternating and the median kept:
#
#  - the floor: lag(url) OVER (ORDER BY pos) = url, a window over the same
#    order reading every url;
#  - is_duplicate(url, slidingbloom_sized('1 day', capacity, 0.01, refresh
#    => true), at): a window of time, capacity the most distinct URLs of
#    any one day of the data;
#  - is_duplicate(url, slidingbloom_sized(432000, 0.01, refresh => true)):
#    a window of as many arrivals;
#  - exact: at - lag(at) OVER (PARTITION BY url ORDER BY pos) <= 1 day,
#    which sorts the rows by URL;
#
# and, for the window of time against the exact answer: the repeats within
# a day missed (must be 0) and the first sightings in a day flagged (false
# and stale positives), with the filters' sizes.
. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
ROWS=${ROWS:-3000000}

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning -c jit=off -c max_parallel_workers_per_gather=0 -c work_mem=64MB"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "generating $ROWS crawl rows, one every 200 ms"
psql -c "CREATE EXTENSION IF NOT EXISTS sbf"
synthetic_crawl crawl_week "$ROWS" | psql
psql <<SQL
ALTER TABLE crawl_week ADD COLUMN at timestamptz;
UPDATE crawl_week SET at = timestamptz '2026-01-01 00:00+00' + pos * interval '200 ms';
VACUUM ANALYZE crawl_week;
SQL
capacity=$(psql -c "SELECT max(n) FROM (SELECT count(DISTINCT url) AS n FROM crawl_week GROUP BY date_trunc('day', at)) s")
echo "crawl_week: $ROWS rows, at most $capacity distinct URLs a day"

# seconds SQL: wall time of one psql run
seconds() {
	local start end
	start=$(date +%s.%N)
	psql -c "$1" >/dev/null
	end=$(date +%s.%N)
	echo "$end - $start" | bc -l
}

time_filter="slidingbloom_sized('1 day', $capacity, 0.01, refresh => true)"
count_filter="slidingbloom_sized(432000, 0.01, refresh => true)"
declare -A q
q[floor]="SELECT count(*) FILTER (WHERE d) FROM (SELECT lag(url) OVER (ORDER BY pos) = url AS d FROM crawl_week) s"
q[time]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, $time_filter, at) OVER (ORDER BY pos) AS d FROM crawl_week) s"
q[count]="SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(url, $count_filter) OVER (ORDER BY pos) AS d FROM crawl_week) s"
q[exact]="SELECT count(*) FILTER (WHERE d) FROM (SELECT at - lag(at) OVER (PARTITION BY url ORDER BY pos) <= interval '1 day' AS d FROM crawl_week) s"

say "marking, $REPEAT rounds"
declare -A t
for i in $(seq 1 "$REPEAT"); do
	for m in floor time count exact; do
		t[$m]+="$(seconds "${q[$m]}") "
		say "  round $i $m done"
	done
done
declare -A med
for m in floor time count exact; do
	# shellcheck disable=SC2086
	med[$m]=$(median ${t[$m]})
done

say "accuracy of the window of time"
read -r within missed flagged_outside outside < <(psql -F ' ' <<SQL
SELECT count(*) FILTER (WHERE exact),
	   count(*) FILTER (WHERE exact AND NOT d),
	   count(*) FILTER (WHERE d AND NOT exact),
	   count(*) FILTER (WHERE NOT exact)
FROM (SELECT is_duplicate(url, $time_filter, at) OVER (ORDER BY pos) AS d,
			 coalesce(at - lag(at) OVER (PARTITION BY url ORDER BY pos) <= interval '1 day', false) AS exact
	  FROM crawl_week) s
SQL
)
size() { psql -c "SELECT pg_size_pretty(pg_column_size(slidingbloom_add($1, 'x'$2))::bigint)"; }

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
cat <<TXT

crawl_week: $ROWS rows over $(echo "$ROWS / 432000" | bc -l | xargs printf '%.1f') days, at most $capacity distinct URLs a day; medians of $REPEAT runs

repeats of the last day                                          seconds   vs floor
  floor: lag(url) OVER (ORDER BY pos) = url                     $(printf '%7.2f' "${med[floor]}")      1.00
  is_duplicate(url, slidingbloom_sized('1 day', ...), at)       $(printf '%7.2f' "${med[time]}")   $(printf '%7s' "$(ratio "${med[time]}" "${med[floor]}")")
  is_duplicate(url, slidingbloom_sized(432000, 0.01, ...))      $(printf '%7.2f' "${med[count]}")   $(printf '%7s' "$(ratio "${med[count]}" "${med[floor]}")")
  exact: at - lag(at) OVER (PARTITION BY url ...) <= '1 day'    $(printf '%7.2f' "${med[exact]}")   $(printf '%7s' "$(ratio "${med[exact]}" "${med[floor]}")")
  the window of time is $(ratio "${med[exact]}" "${med[time]}")x faster than the exact query, $(ratio "${med[time]}" "${med[count]}")x the time of the window of arrivals

the window of time against the exact answer
  repeats within a day: $within, missed: $missed
  first sightings in a day: $outside, flagged: $flagged_outside ($(echo "100 * $flagged_outside / $outside" | bc -l | xargs printf '%.3f')%, sized for 1%)
  filters: of time $(size "$time_filter" ", now()"), of arrivals $(size "$count_filter" "")
TXT
rm -rf "$BENCH_TMP"
