#!/usr/bin/env bash
# Benchmark: the exact online store (seen_test_and_add on a compressed
# seen, docs/sieve.md "The exact online store") against the exact table a
# user writes and the shared Bloom filter at 1%, in the same run (issue 45,
# "Speed" and "Size").
#
#   bash bench/seen_online.sh                  # 2M URLs preloaded, a few minutes
#   URLS=20000000 bash bench/seen_online.sh    # the issue's 20M
#
# Three stores get the same URLS synthetic URLs first (those of
# synthetic_seen, bench/lib.sh): the compressed seen zseen
# (sieve_seen_create + sieve_seen_import), the exact table plain_seen
# (sig bigint PRIMARY KEY) and the shared Bloom filter sbloom
# (shared_bloom_create at 1%, logged, transactional, its capacity the
# preloaded URLs and every later add).  Then BATCHES (200) batches of 1,000
# URLs go to each store, one prepared statement a batch, each in its own
# transaction as a crawler sends them: (a) all new, (b) 900 of the
# preloaded URLs spread over the whole seen and 100 new, by
#   SELECT seen_test_and_add('zseen', batch)
#   INSERT INTO plain_seen SELECT url_signature(u) FROM unnest(batch) u
#     ON CONFLICT DO NOTHING RETURNING sig
#   SELECT shared_test_and_add('sbloom', batch)
# and by a no-op of the same arguments (array_fill(false, ...), inlined) on
# the same batches.  Each run takes new URLs from its own range (the same
# for the ways of one run, which write to different stores), so that no
# "new" URL was seen by an earlier run.  Each way is timed by the backend's
# CPU time (cpu_seconds, bench/lib.sh: the machine is shared), so the wait
# for the commit's WAL flush is not counted; the best of REPEAT (3) runs,
# alternating the ways; net of the no-op.  Prints ns a URL and the ratio
# of each to the exact table; bytes a URL on disk (pg_total_relation_size
# over the URLs held) of each store before and after the adds, and of the
# compressed seen after sieve_seen_compact, and how long that took.
#
# Checks its answers first, on batches of their own: the compressed seen
# and the exact table must answer the same count of new URLs for every
# batch (1,000 of the new batches, 100 of the 90% seen ones); and at the
# end (after the compaction too) the compressed seen must hold exactly the
# signatures of the exact table.  The shared filter's false positives
# (new URLs it answers seen) are printed.
#
# The throwaway cluster runs with shared_buffers = SHARED_BUFFERS (2GB:
# the three stores stay in memory), max_wal_size = 8GB and
# checkpoint_timeout = 1h, autovacuum off, JIT off.
. "$(dirname "$0")/lib.sh"

case "${1:-}" in -h | --help) sed -n '2,43p' "$0" >&2; exit 2 ;; esac
URLS=${URLS:-2000000}
BATCHES=${BATCHES:-200}
REPEAT=${REPEAT:-3}
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
build_and_install
start_cluster
trap 'stop_cluster; rm -rf "$BENCH_TMP"' EXIT
command psql -X -q -c "ALTER SYSTEM SET shared_buffers = '${SHARED_BUFFERS:-2GB}'" \
	-c "ALTER SYSTEM SET max_wal_size = '8GB'" \
	-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" \
	-c "ALTER SYSTEM SET autovacuum = off"
restart_cluster
export PGOPTIONS="-c client_min_messages=warning -c jit=off"
n=$((BATCHES * 1000))
# every add of the runs and of the checks: new batches add 1,000 URLs, 90%
# seen ones 100
ADDS=$(((REPEAT + 1) * (n + n / 10)))

say "the three stores of $URLS URLs"
start=$(date +%s)
psql -c "CREATE EXTENSION sbf"
synthetic_seen "$URLS" | psql
psql <<SQL
\o /dev/null
SELECT shared_bloom_create('sbloom', $((URLS + ADDS)), 0.01);
SELECT shared_test_and_add('sbloom', array_agg('https://www.example' || (g % 1000) || '.gov/path/' || g || '/page.html'))
	FROM generate_series(1, $URLS) g GROUP BY g / 100000;
\o
-- a big transaction's adds wait in overflow pages (docs/shared.md); fold
-- them, and give the pages back
VACUUM sbloom;
VACUUM FULL sbloom;
CREATE FUNCTION bench_noop(seen regclass, urls text[]) RETURNS boolean[]
	LANGUAGE sql AS 'SELECT array_fill(false, ARRAY[cardinality(\$2)])';
CREATE FUNCTION bench_exact(urls text[]) RETURNS SETOF bigint LANGUAGE sql AS
	'INSERT INTO plain_seen SELECT url_signature(u) FROM unnest(\$1) u ON CONFLICT DO NOTHING RETURNING sig';
CHECKPOINT;
SQL
say "  loaded in $(($(date +%s) - start)) s"

# size_per_url REL URLS: bytes a URL on disk
size_per_url() { psql -c "SELECT round(pg_total_relation_size('$1')::numeric / $2, 2)"; }
declare -A size
size[zseen:before]=$(size_per_url zseen "$URLS")
size[plain:before]=$(size_per_url plain_seen "$URLS")
size[bloom:before]=$(size_per_url sbloom "$URLS")

# batch SLOT KIND B: SQL of the array of batch B (an SQL expression) of
# slot SLOT, KIND new or seen90; new URLs are numbered from 10 * URLS on,
# BATCHES * 1,000 numbers a slot; the seen ones are spread over 1 to URLS
# (a crawler's batch is not sorted) and differ from slot to slot
batch() {
	local h="10 * $URLS::bigint + $1::bigint * $n + ($3) * 1000 + g"
	if [ "$2" = seen90 ]; then
		h="CASE WHEN g < 900 THEN ((($3) * 1000 + g)::bigint * 7919 + $1::bigint * 104729) % $URLS + 1 ELSE $h END"
	fi
	echo "ARRAY(SELECT 'https://www.example' || (h % 1000) || '.gov/path/' || h || '/page.html' FROM generate_series(0, 999) g, LATERAL (SELECT $h AS h) x)"
}
# batches SLOT KIND: SQL of the BATCHES batches (b, urls) of slot SLOT
batches() {
	echo "SELECT b, $(batch "$1" "$2" b) AS urls FROM generate_series(0, $((BATCHES - 1))) b"
}
# query WAY SLOT KIND [per-batch]: one statement sending the batches to
# WAY, counting the URLs answered new (per batch, in order, with
# per-batch): the checks' form
query() {
	local from group="" cols="count(*)"
	case $1 in
	noop) from="unnest(bench_noop('zseen', q.urls)) a WHERE NOT a" ;;
	zseen) from="unnest(seen_test_and_add('zseen', q.urls)) a WHERE NOT a" ;;
	exact) from="bench_exact(q.urls) s" ;;
	bloom) from="unnest(shared_test_and_add('sbloom', q.urls)) a WHERE NOT a" ;;
	esac
	if [ -n "${4:-}" ]; then
		# every batch, those with no new URL too
		from="LATERAL (SELECT count(*) AS c FROM ${from}) s"
		cols="string_agg(c::text, ',' ORDER BY q.b)"
	fi
	echo "SELECT $cols FROM ($(batches "$2" "$3")) q, $from $group"
}

# timed WAY SLOT KIND: the psql script of a timed run: the batches of
# the slot to WAY, one statement each, prepared (as pgbench -M prepared),
# each in its own transaction, as a crawler sends them
timed() {
	local stmt b
	# shellcheck disable=SC2016 # $1 is the statement's parameter
	case $1 in
	noop) stmt="SELECT bench_noop('zseen', $(batch "$2" "$3" '$1'))" ;;
	zseen) stmt="SELECT seen_test_and_add('zseen', $(batch "$2" "$3" '$1'))" ;;
	exact) stmt="INSERT INTO plain_seen SELECT url_signature(u) FROM unnest($(batch "$2" "$3" '$1')) u ON CONFLICT DO NOTHING RETURNING sig" ;;
	bloom) stmt="SELECT shared_test_and_add('sbloom', $(batch "$2" "$3" '$1'))" ;;
	esac
	echo '\o /dev/null'
	echo "PREPARE q(int) AS $stmt;"
	for b in $(seq 0 $((BATCHES - 1))); do echo "EXECUTE q($b);"; done
	echo '\o'
	echo "SELECT 1"
}

say "checking the answers"
declare -A fp
for kind in new seen90; do
	slot=$([ $kind = seen90 ] && echo 1 || echo 0)
	z=$(psql -c "$(query zseen "$slot" $kind per-batch)")
	e=$(psql -c "$(query exact "$slot" $kind per-batch)")
	f=$(psql -c "$(query bloom "$slot" $kind per-batch)")
	want=$([ $kind = new ] && echo 1000 || echo 100)
	[ "$z" = "$e" ] || die "$kind batches: seen_test_and_add and the exact table disagree on the new URLs of a batch ($z against $e)"
	[ "$e" = "$(printf "$want%.0s," $(seq "$BATCHES") | sed 's/,$//')" ] ||
		die "$kind batches: not $want new URLs a batch: $e"
	again=$(psql -c "$(query zseen "$slot" $kind)")
	[ "$again" = 0 ] || die "$kind batches: $again URLs new again to seen_test_and_add"
	fp[$kind]=$(echo "$f" | tr ',' '\n' | awk -v w="$want" '{ s += w - $1 } END { print s }')
done
# the checks added to the filter in one transaction each: fold their adds
# and give the overflow pages back, as after the load
psql -c "VACUUM sbloom" -c "VACUUM FULL sbloom"
printf 'answers checked: %d batches of 1,000 new and %d 90%% seen, the same new URLs a batch\n' "$BATCHES" "$BATCHES"
printf '  for seen_test_and_add and the exact table; the shared filter answered seen %s of\n' "${fp[new]}"
printf '  the %d new URLs of the new batches and %s of the %d of the 90%% seen ones\n\n' "$n" "${fp[seen90]}" "$((n / 10))"

printf '%-40s %10s\n' "" "CPU s"
declare -A best
for i in $(seq "$REPEAT"); do
	for kind in new seen90; do
		slot=$((2 * i + ($([ $kind = seen90 ] && echo 1 || echo 0))))
		for way in noop zseen exact bloom; do
			s=$(cpu_seconds "$(timed $way $slot $kind)")
			[[ $s =~ ^[0-9.]+$ ]] || die "$way $kind: the timed run failed"
			name="$way $kind"
			printf '%-40s %10s\n' "$name ($i)" "$s"
			if [ -z "${best[$name]:-}" ] || [ "$(echo "$s < ${best[$name]}" | bc)" = 1 ]; then best[$name]=$s; fi
		done
	done
done
added=$(psql -c "SELECT count(*) FROM plain_seen")
size[zseen:after]=$(size_per_url zseen "$added")
size[plain:after]=$(size_per_url plain_seen "$added")
size[bloom:after]=$(size_per_url sbloom "$added")
# same_signatures: die unless zseen holds exactly plain_seen's signatures
same_signatures() {
	local diff
	diff=$(psql -c "SELECT (SELECT count(*) FROM sieve_signatures('zseen')) - $added, (SELECT count(*) FROM (SELECT sig FROM plain_seen EXCEPT ALL SELECT s FROM sieve_signatures('zseen') s) x)")
	[ "$diff" = "0|0" ] || die "$1: the compressed seen does not hold the exact table's signatures (count difference|missing: $diff)"
}
same_signatures "after the adds"
start=$(date +%s.%N)
folded=$(psql -c "SELECT sieve_seen_compact('zseen')")
compact_s=$(echo "$(date +%s.%N) - $start" | bc -l)
same_signatures "after sieve_seen_compact"
size[zseen:compact]=$(size_per_url zseen "$added")

echo
printf 'best of %s, net of the no-op, CPU of the backend   new URLs         90%% seen\n' "$REPEAT"
printf '%-44s %8s %7s %8s %7s\n' "(batches of 1,000, $BATCHES a run)" "ns/URL" "/exact" "ns/URL" "/exact"
declare -A net
for way in zseen exact bloom; do
	for kind in new seen90; do
		net[$way $kind]=$(echo "(${best[$way $kind]} - ${best[noop $kind]}) * 1000000000 / $n" | bc -l)
	done
done
for way in zseen exact bloom; do
	case $way in
	zseen) label="seen_test_and_add, compressed seen" ;;
	exact) label="INSERT ... ON CONFLICT, exact table" ;;
	bloom) label="shared_test_and_add, Bloom 1%" ;;
	esac
	printf '%-44s %8.0f %6.2fx %8.0f %6.2fx\n' "$label" \
		"${net[$way new]}" "$(echo "${net[$way new]} / ${net[exact new]}" | bc -l)" \
		"${net[$way seen90]}" "$(echo "${net[$way seen90]} / ${net[exact seen90]}" | bc -l)"
done
printf '%-44s %8.0f %7s %8.0f\n' "(the no-op itself)" \
	"$(echo "${best[noop new]} * 1000000000 / $n" | bc -l)" "" \
	"$(echo "${best[noop seen90]} * 1000000000 / $n" | bc -l)"
echo
printf 'bytes a URL on disk (pg_total_relation_size)   %12s %12s\n' "$URLS URLs" "$added URLs"
printf '%-46s %12s %12s\n' "compressed seen" "${size[zseen:before]}" "${size[zseen:after]}"
printf '%-46s %12s %12s\n' "  after sieve_seen_compact" "" "${size[zseen:compact]}"
printf '%-46s %12s %12s\n' "exact table" "${size[plain:before]}" "${size[plain:after]}"
printf '%-46s %12s %12s\n' "shared Bloom filter, 1%, capacity $((URLS + ADDS))" "${size[bloom:before]}" "${size[bloom:after]}"
printf 'sieve_seen_compact: %s online adds folded in %.1f s (wall time)\n' "$folded" "$compact_s"
