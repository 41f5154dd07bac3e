#!/usr/bin/env bash
# Benchmark: crawling a site with Scrapy (docs/scrapy.md).  The site is the
# one t/090_scrapy.pl crawls (clients/scrapy/tests/testsite.py: the 1,169
# pages of the PostgreSQL 15 manual, 16,000 links in forms that only
# canonicalisation makes one, one broken link), served on 127.0.0.1; every
# GET is counted.  Crawled by clients/scrapy/tests/crawl.py, one process:
#
#   scrapy            Scrapy's scheduler and in-memory dupefilter, as it
#                     comes (its fingerprint drops fragments and sorts the
#                     query but keeps utm_ parameters: extra fetches)
#   scrapy-canonical  the same with the URL canonicalised in Python first
#                     (w3lib's canonicalize_url, utm_* removed)
#   dupefilter        Scrapy's scheduler, sbf_scrapy.SbfDupeFilter: one
#                     round trip to PostgreSQL per request
#   frontier          sbf_scrapy's scheduler and middlewares: one
#                     transaction per page (its links and its done mark),
#                     claims of 8 rows
#
# and frontier with two processes, and frontier with synchronous_commit off
# in the DSN.  Medians of REPEAT (3) rounds, the ways alternating within a
# round; ratios against scrapy of the same run.  CONCURRENCY (16) requests
# at a time; LATENCY (0) seconds the site waits before each answer.
#
#   bash bench/scrapy_crawl.sh                     # throwaway cluster; ~4 minutes
#   SBF_USE_EXISTING=1 bash bench/scrapy_crawl.sh  # the server of the PG* variables
. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
CONCURRENCY=${CONCURRENCY:-16}
LATENCY=${LATENCY:-0}
PYTHON=/usr/bin/python3
CLIENT=$SBF_ROOT/clients/scrapy

ensure_packages python3-scrapy python3-psycopg python3-pip
if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION IF NOT EXISTS sbf"

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
"$PYTHON" "$CLIENT/tests/testsite.py" serve --pages "$SBF_ROOT/data/pgdoc15-pages.tsv.gz" \
	--dir "$BENCH_TMP/site" --log "$BENCH_TMP/fetches" --port-file "$BENCH_TMP/port" \
	--latency "$LATENCY" >"$BENCH_TMP/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 300); do [ -s "$BENCH_TMP/port" ] && break; sleep 0.1; done
[ -s "$BENCH_TMP/port" ] || die "the site did not start: $(cat "$BENCH_TMP/server.log")"
START_URL="http://127.0.0.1:$(cat "$BENCH_TMP/port")/index.html"

# crawl WAY MODE PROCESSES [DSN options]: one crawl from an empty filter
# and frontier; appends the wall time and the GETs to the way's lists
declare -A wall fetches
crawl() {
	local way=$1 mode=$2 processes=$3 dsn=${4:-} start end i pids=()
	psql -c "DROP TABLE IF EXISTS bench_frontier, bench_frontier_hosts, bench_seen"
	: >"$BENCH_TMP/fetches"
	start=$(date +%s.%N)
	for i in $(seq "$processes"); do
		"$PYTHON" "$CLIENT/tests/crawl.py" --start "$START_URL" --mode "$mode" \
			--dsn "$dsn" --filter bench_seen --frontier bench_frontier \
			--strip-params 'utm_*' --concurrency "$CONCURRENCY" \
			--stats "$BENCH_TMP/stats.$i.json" >"$BENCH_TMP/crawl.$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || die "$way: crawler $((i + 1)) failed: $(tail -20 "$BENCH_TMP/crawl.$((i + 1)).log")"
	done
	end=$(date +%s.%N)
	wall[$way]+="$(echo "$end - $start" | bc -l) "
	fetches[$way]+="$(wc -l <"$BENCH_TMP/fetches") "
}

WAYS=(scrapy scrapy-canonical dupefilter frontier frontier-2 frontier-async)
for round in $(seq "$REPEAT"); do
	say "round $round of $REPEAT"
	crawl scrapy scrapy 1
	crawl scrapy-canonical scrapy-canonical 1
	crawl dupefilter dupefilter 1
	crawl frontier frontier 1
	crawl frontier-2 frontier 2
	crawl frontier-async frontier 1 "options='-c synchronous_commit=off'"
done

declare -A label=(
	[scrapy]="Scrapy's scheduler and dupefilter"
	[scrapy-canonical]="Scrapy's, URL canonicalised in Python"
	[dupefilter]="Scrapy's scheduler, SbfDupeFilter (a round trip per request)"
	[frontier]="FrontierScheduler (a transaction per page)"
	[frontier-2]="FrontierScheduler, 2 processes"
	[frontier-async]="FrontierScheduler, synchronous_commit off"
)
pages=$(gzip -dc "$SBF_ROOT/data/pgdoc15-pages.tsv.gz" | wc -l)
base=$(median ${wall[scrapy]})
echo
echo "1,169 pages and 1 broken link, $CONCURRENCY requests at a time, latency ${LATENCY} s; medians of $REPEAT"
echo
echo "| way | wall s | GETs | pages/s | wall / Scrapy's |"
echo "| --- | --- | --- | --- | --- |"
for way in "${WAYS[@]}"; do
	w=$(median ${wall[$way]})
	printf '| %s | %.2f | %s | %.0f | %.2fx |\n' "${label[$way]}" "$w" \
		"$(median ${fetches[$way]})" "$(echo "($pages + 1) / $w" | bc -l)" \
		"$(echo "$w / $base" | bc -l)"
done
