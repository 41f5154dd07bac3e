#!/usr/bin/env bash
# Benchmark: crawling a site with Scrapy (docs/scrapy.md).  The site is
# generated (clients/scrapy/tests/testsite.py serve --generate): PAGES
# (10,000) pages of SEED (44), 30 to 40 links a page and 20 site maps of
# 500 to 700, in forms that only canonicalisation makes one (utm_
# parameters, query order, dot segments, fragments, HTTP://), some links
# through 301 redirects and some to 404s; served on 127.0.0.1, every GET
# counted.  Crawled by clients/scrapy/tests/crawl.py in three ways, each
# with 1 and with PROCESSES (4) crawler processes:
#
#   scrapy       Scrapy's scheduler and in-memory dupefilter, as it comes
#                (its fingerprint sorts the query and drops fragments, but
#                keeps utm_ parameters: extra fetches).  Nothing is shared:
#                each of 4 processes crawls the whole site on its own, so
#                scrapy-4 is run only if WAYS names it
#   dupefilter   Scrapy's scheduler, sbf_scrapy.SbfDupeFilter: one round
#                trip to PostgreSQL per link.  The filter is shared, the
#                queues are not: each process fetches the start page and
#                the processes race for its links; a process whose own
#                queue runs dry stops
#   frontier     sbf_scrapy's scheduler and middlewares: one transaction
#                per page (its links and its done mark), claims of 8 rows,
#                one queue shared by the processes
#
# sbf's ways canonicalise with utm_* removed and the query sorted.  For
# each crawl: the wall time (from the start of the processes to the end of
# the last), the GETs and the distinct pages the site answered, and the
# database time a page: on the server, the sum of total_exec_time and
# total_plan_time of pg_stat_statements (the crawlers' statements, COMMIT
# and its WAL flush included) when the server has it loaded (the throwaway
# cluster does), and on the client, the stat sbf/db_seconds of the
# crawlers (the time the Store waited for PostgreSQL, round trips
# included; - if the package does not count it).  Medians of REPEAT (3)
# rounds, the ways in a rotated order in each round; the ratios are of
# each round's figures against Scrapy's with 1 process of the same round.
# CONCURRENCY (16) requests at a time per process; LATENCY (0) seconds the
# site waits before each answer; WAYS the ways to run (all but scrapy-4
# unless set, e.g. WAYS="scrapy scrapy-4").
#
#   REPEAT=1 bash bench/scrapy_crawl.sh            # throwaway cluster; ~20 minutes on 2 busy cores
#   bash bench/scrapy_crawl.sh                     # 3 rounds, ~1 hour
#   PAGES=1000 REPEAT=1 bash bench/scrapy_crawl.sh # a quick look, ~2 minutes
#   SBF_USE_EXISTING=1 bash bench/scrapy_crawl.sh  # the server of the PG* variables
. "$(dirname "$0")/lib.sh"

PAGES=${PAGES:-10000}
SEED=${SEED:-44}
REPEAT=${REPEAT:-3}
PROCESSES=${PROCESSES:-4}
CONCURRENCY=${CONCURRENCY:-16}
LATENCY=${LATENCY:-0}
PYTHON=/usr/bin/python3
CLIENT=$SBF_ROOT/clients/scrapy

ensure_packages python3-scrapy python3-psycopg python3-pip
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
	psql -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
	restart_cluster
	psql -c "ALTER SYSTEM SET pg_stat_statements.track_planning = on" -c "SELECT pg_reload_conf()" >/dev/null
fi
psql -c "CREATE EXTENSION IF NOT EXISTS sbf"
# the server-side figure needs pg_stat_statements loaded
STATEMENTS=
if psql -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
	-c "SELECT count(*) FROM pg_stat_statements" >/dev/null 2>&1; then
	STATEMENTS=1
else
	say "no pg_stat_statements on the server: no server-side database time"
fi

say "installing clients/scrapy into $BENCH_TMP/py"
"$PYTHON" -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check \
	--target "$BENCH_TMP/py" "$CLIENT" || die "pip install failed"
export PYTHONPATH=$BENCH_TMP/py

SERVER=
cleanup() {
	if [ -n "$SERVER" ]; then
		kill "$SERVER" 2>/dev/null || true
		wait "$SERVER" 2>/dev/null || true
	fi
	rm -rf "$BENCH_TMP"
	stop_cluster
}
trap cleanup EXIT
"$PYTHON" "$CLIENT/tests/testsite.py" serve --generate "$PAGES" --seed "$SEED" \
	--log "$BENCH_TMP/fetches" --port-file "$BENCH_TMP/port" \
	--latency "$LATENCY" >"$BENCH_TMP/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 600); do [ -s "$BENCH_TMP/port" ] && break; sleep 0.1; done
[ -s "$BENCH_TMP/port" ] || die "the site did not start: $(cat "$BENCH_TMP/server.log")"
START_URL="http://127.0.0.1:$(cat "$BENCH_TMP/port")/index.html"

# the ways: crawl.py's mode, the processes, crawl.py's other options
declare -A mode procs opts label
for p in 1 "$PROCESSES"; do
	suffix=$([ "$p" = 1 ] || echo "-$p")
	mode[scrapy$suffix]=scrapy
	mode[dupefilter$suffix]=dupefilter
	mode[frontier$suffix]=frontier
	for w in scrapy dupefilter frontier; do procs[$w$suffix]=$p; done
done
opts[dupefilter-$PROCESSES]=--start-dont-filter
label[scrapy]="Scrapy's scheduler and dupefilter"
label[dupefilter]="Scrapy's scheduler, SbfDupeFilter"
label[frontier]="FrontierScheduler and middlewares"
read -r -a WAYS <<<"${WAYS:-scrapy dupefilter dupefilter-$PROCESSES frontier frontier-$PROCESSES}"
for way in "${WAYS[@]}"; do
	[ -n "${mode[$way]:-}" ] || die "unknown way $way (WAYS)"
done

# crawl WAY ROUND: one crawl from an empty filter and frontier; its figures
# go into fig[WAY,ROUND,name]
declare -A fig
crawl() {
	local way=$1 round=$2 start end i pids=() statements
	psql -c "DO \$\$DECLARE t text; BEGIN
		FOR t IN SELECT relname FROM pg_class WHERE relname LIKE 'bench\\_%' AND relkind = 'r' LOOP
			EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', t);
		END LOOP; END\$\$"
	[ -z "$STATEMENTS" ] || psql -c "SELECT pg_stat_statements_reset()" >/dev/null
	: >"$BENCH_TMP/fetches"
	rm -f "$BENCH_TMP"/stats.*.json
	start=$(date +%s.%N)
	for i in $(seq "${procs[$way]}"); do
		# shellcheck disable=SC2086
		"$PYTHON" "$CLIENT/tests/crawl.py" --start "$START_URL" --mode "${mode[$way]}" \
			--filter bench_seen --frontier bench_frontier \
			--strip-params 'utm_*' --query sort --concurrency "$CONCURRENCY" ${opts[$way]:-} \
			--stats "$BENCH_TMP/stats.$i.json" >"$BENCH_TMP/crawl.$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || die "$way: crawler $((i + 1)) failed: $(tail -20 "$BENCH_TMP/crawl.$((i + 1)).log")"
	done
	end=$(date +%s.%N)
	fig[$way,$round,wall]=$(echo "$end - $start" | bc -l)
	fig[$way,$round,gets]=$(wc -l <"$BENCH_TMP/fetches")
	fig[$way,$round,pages]=$(awk -F'\t' '$2 == 200 { print $3 }' "$BENCH_TMP/fetches" | sort -u | wc -l)
	# seconds: the crawlers' statements on the server, and sbf/db_seconds
	statements=-
	[ -z "$STATEMENTS" ] || statements=$(psql -c "
		SELECT round((coalesce(sum(total_exec_time + total_plan_time), 0) / 1000)::numeric, 3)
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query NOT LIKE '%pg_stat_statements%'")
	fig[$way,$round,server]=$statements
	fig[$way,$round,client]=$("$PYTHON" -c '
import json, sys
stats = [json.load(open(f)) for f in sys.argv[1:]]
times = [s["sbf/db_seconds"] for s in stats if "sbf/db_seconds" in s]
print(sum(float(t) for t in times) if times else "-")' "$BENCH_TMP"/stats.*.json)
	say "$way: $(printf '%.1f' "${fig[$way,$round,wall]}") s, ${fig[$way,$round,gets]} GETs," \
		"${fig[$way,$round,pages]} pages, database ${fig[$way,$round,server]} s (server)," \
		"${fig[$way,$round,client]} s (client)"
}

for round in $(seq "$REPEAT"); do
	say "round $round of $REPEAT"
	n=${#WAYS[@]}
	for k in $(seq 0 $((n - 1))); do
		crawl "${WAYS[$(((k + round - 1) % n))]}" "$round"
	done
done

per_page() { if [ "$1" = - ]; then echo -; else echo "$1 * 1000 / $2" | bc -l; fi; }
# column WAY NAME: the median over the rounds of the way's figure NAME
column() {
	local round values=()
	for round in $(seq "$REPEAT"); do
		values+=("${fig[$1,$round,$2]:--}")
	done
	case " ${values[*]} " in
	*" - "*) echo - ;;
	*) median "${values[@]}" ;;
	esac
}
fmt() { if [ "$2" = - ]; then echo -; else printf "$1" "$2"; fi; }

echo
echo "$PAGES generated pages (seed $SEED), $CONCURRENCY requests at a time per process," \
	"latency ${LATENCY} s; $([ "$REPEAT" = 1 ] && echo "1 round" || echo "medians of $REPEAT rounds")"
echo
echo "| way | processes | wall s | GETs | pages | pages/s | pages/s / Scrapy's 1 | DB ms/page, server | DB ms/page, client |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for way in "${WAYS[@]}"; do
	# per round: pages/s, the ratio to the baseline's, database ms a page
	for round in $(seq "$REPEAT"); do
		fig[$way,$round,rate]=$(echo "${fig[$way,$round,pages]} / ${fig[$way,$round,wall]}" | bc -l)
		fig[$way,$round,dbs]=$(per_page "${fig[$way,$round,server]}" "${fig[$way,$round,pages]}")
		fig[$way,$round,dbc]=$(per_page "${fig[$way,$round,client]}" "${fig[$way,$round,pages]}")
		if [ -n "${fig[scrapy,$round,wall]:-}" ]; then
			fig[$way,$round,ratio]=$(echo "${fig[$way,$round,rate]} * ${fig[scrapy,$round,wall]} / ${fig[scrapy,$round,pages]}" | bc -l)
		fi
	done
done
for way in "${WAYS[@]}"; do
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${label[${way%-*}]}" "${procs[$way]}" \
		"$(fmt %.1f "$(column "$way" wall)")" "$(column "$way" gets)" "$(column "$way" pages)" \
		"$(fmt %.0f "$(column "$way" rate)")" "$(fmt %.2fx "$(column "$way" ratio)")" \
		"$(fmt %.2f "$(column "$way" dbs)")" "$(fmt %.2f "$(column "$way" dbc)")"
done
