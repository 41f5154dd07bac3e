#!/usr/bin/env bash
# Benchmark: how long readers of a compressed seen (sieve_contains from a
# live crawler) wait for a flush into it, against a base commit, 195ef04
# by default (which swapped the new seen in before the frontier's append,
# so readers waited from there to the commit; the swap is last now).  One
# run, one cluster: the two builds' sbf.so are installed in turn (the SQL
# is the same), alternating, REPEAT times (3 by default).
#
#   bash bench/sieve_flush_readers.sh [BASE]
#
# It always starts a throwaway cluster of its own (no SBF_USE_EXISTING):
# it replaces the installed library under it.
#
# Each run flushes NEW new URLs (1M by default) into a compressed seen of
# URLS (2M by default), made afresh, while one pgbench client calls
# sieve_contains on random URLs in transactions of their own.  Prints, for
# each build, the flush's wall time, the reads' longest latency and the
# time spent in reads longer than 100 ms (a read takes well under 1 ms
# otherwise: that time is waiting for the flush's ACCESS EXCLUSIVE lock,
# or, on a shared machine, for the CPU), as seconds and as a share of the
# flush; the medians, and their ratio.
# READ_SECONDS (30) must outlast a flush.  Leaves the current tree's build
# installed.
. "$(dirname "$0")/lib.sh"

case "${1:-}" in -h | --help) sed -n '2,22p' "$0" >&2; exit 2 ;; esac
BASE=${1:-195ef04}
URLS=${URLS:-2000000}
NEW=${NEW:-1000000}
REPEAT=${REPEAT:-3}
READ_SECONDS=${READ_SECONDS:-30}
builds_beside "$BASE" current
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "the sources: $URLS URLs seen, $NEW new"
psql <<SQL
CREATE EXTENSION sbf;
CREATE TABLE plain_seen (sig bigint PRIMARY KEY);
INSERT INTO plain_seen SELECT url_signature('https://e.org/' || g) FROM generate_series(1, $URLS) g;
CREATE TABLE new_urls (pos bigint PRIMARY KEY, url text NOT NULL);
INSERT INTO new_urls SELECT g, 'https://e.org/' || g FROM generate_series($URLS + 1, $URLS + $NEW) g;
CREATE TABLE d (pos bigint PRIMARY KEY, url text NOT NULL);
CREATE TABLE f (pos bigint NOT NULL, url text NOT NULL);
SQL
echo "SELECT sieve_contains('z', 'https://e.org/' || (random() * ($URLS + $NEW))::int);" >"$BENCH_TMP/read.sql"

# one run with the build installed: prints "flush_s max_s waited_s"
run() {
	local log=$BENCH_TMP/log.$1 pgbench start end
	psql <<SQL
DROP TABLE IF EXISTS z;
TRUNCATE d, f;
\o /dev/null
SELECT sieve_seen_create('z');
SET work_mem = '64MB';
SELECT sieve_seen_import('z', 'plain_seen');
\o
INSERT INTO d SELECT * FROM new_urls;
VACUUM ANALYZE z, d;
CHECKPOINT;
SQL
	rm -f "$log".*
	pgbench -n -c 1 -T "$READ_SECONDS" -f "$BENCH_TMP/read.sql" -l --log-prefix="$log" >/dev/null 2>&1 &
	pgbench=$!
	sleep 2
	start=$(date +%s.%N)
	psql -c "SELECT sieve_flush('z', 'd', 'f')" >/dev/null
	end=$(date +%s.%N)
	kill -0 "$pgbench" 2>/dev/null || die "the flush outlasted the readers: raise READ_SECONDS"
	wait "$pgbench"
	# column 3: the transaction's latency in microseconds
	awk -v flush="$(echo "$end - $start" | bc)" \
		'{ if ($3 > max) max = $3; if ($3 > 100000) waited += $3 }
		 END { printf "%.2f %.3f %.3f\n", flush, max / 1e6, waited / 1e6 }' "$log".*
}

printf '%-16s %9s %11s %10s %7s\n' "build" "flush s" "max read s" "waited s" "share"
base_waited=() current_waited=() base_share=() current_share=() base_max=() current_max=()
for i in $(seq "$REPEAT"); do
	for build in base current; do
		use_build "$build"
		read -r flush max waited < <(run "$build")
		share=$(echo "$waited / $flush" | bc -l)
		printf '%-16s %9s %11s %10s %6.0f%%\n' "$build ($i)" "$flush" "$max" "$waited" "$(echo "$share * 100" | bc -l)"
		if [ "$build" = base ]; then
			base_waited+=("$waited") base_share+=("$share") base_max+=("$max")
		else
			current_waited+=("$waited") current_share+=("$share") current_max+=("$max")
		fi
	done
done
b=$(median "${base_waited[@]}")
c=$(median "${current_waited[@]}")
printf '\nmedian of %d: readers waited %s s of the flush with %s (%.0f%%), %s s now (%.0f%%): %.2fx\n' \
	"$REPEAT" "$b" "$BASE" "$(echo "$(median "${base_share[@]}") * 100" | bc -l)" \
	"$c" "$(echo "$(median "${current_share[@]}") * 100" | bc -l)" \
	"$(echo "$c / ($b + 0.0001)" | bc -l)"
printf 'the longest read: %s s with %s, %s s now\n' "$(median "${base_max[@]}")" "$BASE" "$(median "${current_max[@]}")"
