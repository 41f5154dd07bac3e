#!/usr/bin/env bash
# Benchmark: what transactional adds cost (docs/shared.md, "Rollback,
# crash, replication").  A transactional shared bloom filter (the default,
# format version 3) against one made with transactional => false (the line
# layout, version 2), both for 100M URLs at 1% (about 135 MB), logged and
# unlogged, in batches of 1,000 URLs a call with pgbench -M prepared, one
# client: all new URLs, and batches of which 900 were added before.  Net =
# over bench_noop of the same batch; medians of REPEAT (3) rounds of
# SECONDS_PER_RUN (5) seconds, the kinds alternating within each round.
# Each round also adds new URLs to the transactional filters while another
# session holds a snapshot (as pg_dump does), which keeps the adds it may
# not see pending until a page is full of them (docs/shared.md, "A dump
# during a crawl"): its cost against the same adds without.
#
#   bash bench/shared_transactional.sh        # throwaway cluster; ~4 minutes
#   SBF_USE_EXISTING=1 bash bench/shared_transactional.sh
#
# Every page of each filter is written once first (steady state: no first
# writes), and the throwaway cluster has shared_buffers = 1GB.
. "$(dirname "$0")/lib.sh"

T=${SECONDS_PER_RUN:-5}
REPEAT=${REPEAT:-3}
CAPACITY=100000000

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
	command psql -X -q -c "ALTER SYSTEM SET shared_buffers = '1GB'" \
		-c "ALTER SYSTEM SET max_wal_size = '4GB'" \
		-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" \
		-c "ALTER SYSTEM SET autovacuum = off"
	restart_cluster
fi
export PGOPTIONS="-c client_min_messages=warning -c jit=off"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

psql >/dev/null <<SQL
CREATE EXTENSION IF NOT EXISTS sbf;
DROP TABLE IF EXISTS tx_logged, tx_unlogged, im_logged, im_unlogged;
CREATE OR REPLACE FUNCTION bench_noop(filter regclass, "values" text[]) RETURNS boolean[]
	LANGUAGE sql AS 'SELECT array_fill(false, ARRAY[cardinality(\$2)])';
SELECT shared_bloom_create('tx_logged', $CAPACITY, 0.01);
SELECT shared_bloom_create('tx_unlogged', $CAPACITY, 0.01, unlogged => true);
SELECT shared_bloom_create('im_logged', $CAPACITY, 0.01, transactional => false);
SELECT shared_bloom_create('im_unlogged', $CAPACITY, 0.01, unlogged => true,
						   transactional => false);
SQL
# every page written (and 1M 'seen/' URLs added), 10,000 URLs a transaction
for f in tx_logged tx_unlogged im_logged im_unlogged; do
	psql -c "DO \$\$ BEGIN
		FOR b IN 0 .. 199 LOOP
			PERFORM shared_test_and_add('$f', ARRAY(
				SELECT CASE WHEN b < 100 THEN 'https://www.example.org/seen/' ELSE 'https://www.example.org/warm/' END
					   || (b * 10000 + g) FROM generate_series(0, 9999) g));
			COMMIT;
		END LOOP;
	END \$\$" >/dev/null
	say "$f: $(psql -c "SELECT shared_info('$f', true) ->> 'pages_written'") of $(psql -c "SELECT shared_info('$f', true) ->> 'pages'") pages written"
done

NEW="array(SELECT 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' FROM generate_series(0, 999) g)"
SEEN90="array(SELECT CASE WHEN g < 900 THEN 'https://www.example.org/seen/' || (:s + g) ELSE 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' END FROM generate_series(0, 999) g)"
HEAD="\\set b random(0, 999999999) * 1000
\\set s random(0, 999000)"

declare -A tps
run() {
	local key=$1 call=$2 out t
	printf '%s\nSELECT %s;\n' "$HEAD" "$call" >"$BENCH_TMP/script.sql"
	out=$(pgbench -n -M prepared -c 1 -T "$T" -f "$BENCH_TMP/script.sql" 2>&1) ||
		die "pgbench failed on $key: $out"
	t=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
	tps[$key]+="$t "
}

# a session holding a snapshot (REPEATABLE READ, its query asleep), and its end
hold() {
	command psql -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM pg_class" \
		-c "SELECT pg_sleep(86400)" >/dev/null 2>&1 &
	sleep 1
}
release() {
	psql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		WHERE query = 'SELECT pg_sleep(86400)'" >/dev/null
	wait || true
}

for round in $(seq "$REPEAT"); do
	say "round $round of $REPEAT"
	for batch in new seen90; do
		b=$NEW
		[ "$batch" = seen90 ] && b=$SEEN90
		run "noop:$batch" "bench_noop('tx_logged', $b)"
		for f in im_logged tx_logged im_unlogged tx_unlogged; do
			run "$f:$batch" "shared_test_and_add('$f', $b)"
		done
	done
	hold
	for f in tx_logged tx_unlogged; do
		run "held_$f:new" "shared_test_and_add('$f', $NEW)"
	done
	release
done

# net ns a URL: (1 / tps - 1 / noop tps) / 1000 URLs
net() { echo "(1 / $(median ${tps[$1]}) - 1 / $(median ${tps[noop:$2]})) * 1000000" | bc -l; }
echo
echo "| batch of 1,000 | filter | immediate, ns/URL net | transactional, ns/URL net | transactional / immediate |"
echo "| --- | --- | --- | --- | --- |"
for batch in new seen90; do
	for l in logged unlogged; do
		im=$(net "im_$l:$batch" "$batch")
		tx=$(net "tx_$l:$batch" "$batch")
		printf '| %s | %s | %.0f | %.0f | %.2fx |\n' \
			"$([ "$batch" = new ] && echo "all new" || echo "900 seen")" "$l" "$im" "$tx" \
			"$(echo "$tx / $im" | bc -l)"
	done
done
echo
echo "| batch of 1,000, all new | filter | transactional, ns/URL net | a snapshot held, ns/URL net | held / not held |"
echo "| --- | --- | --- | --- | --- |"
for l in logged unlogged; do
	tx=$(net "tx_$l:new" new)
	held=$(net "held_tx_$l:new" new)
	printf '| | %s | %.0f | %.0f | %.2fx |\n' "$l" "$tx" "$held" "$(echo "$held / $tx" | bc -l)"
done
