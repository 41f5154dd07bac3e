#!/usr/bin/env bash
# Benchmark: what transactional adds cost (docs/shared.md, "Rollback,
# crash, replication").  A transactional shared bloom filter (the default,
# format version 3) against one made with transactional => false (the line
# layout, version 2), in three parts, each against a baseline measured in
# the same run:
#
#  1. Batches of 1,000: both kinds for 100M URLs at 1% (about 135 MB),
#     logged and unlogged, in batches of 1,000 URLs a call with pgbench
#     -M prepared, one client: all new URLs, and batches of which 900 were
#     added before.  Net = over bench_noop of the same batch; medians of
#     REPEAT (3) rounds of SECONDS_PER_RUN (5) seconds, the kinds
#     alternating within each round.  Every page of each filter is written
#     once first (steady state: no first writes).  Each round also adds new
#     URLs to the transactional filters while another session holds a
#     snapshot (as pg_dump does), which keeps the adds it may not see
#     pending (docs/shared.md, "A dump during a crawl"): its cost against
#     the same adds without.
#  2. A bulk load in one transaction: LOAD_VALUES (10M) new URLs
#     ('https://www.example.org/load/<n>/page.html') into a new logged
#     filter of LOAD_CAPACITY (760M at 1%: the transactional filter is
#     1,024 MB, the other 917 MB), loaded as a user's script would: one DO
#     block (so one transaction) that calls shared_test_and_add on chunks
#     of LOAD_CHUNK (100,000) URLs, ARRAY(SELECT ... FROM
#     generate_series(...)), and counts the URLs answered new.  Net = over
#     the same DO block calling bench_noop.  Then VACUUM of each filter,
#     timed: the transactional filter's VACUUM folds the load's pending
#     adds into the bits (the other has none), which the next adds to each
#     page would do otherwise.  Both filters are made new in every one of
#     LOAD_REPEAT (3) rounds (a CHECKPOINT before each load: every load
#     starts from the same state; none between a load and its VACUUM), the
#     order of the kinds alternating; medians of wall time, the backend's
#     CPU time (where the role may read /proc/self/stat: the machine's
#     other jobs add less to it), WAL bytes and the backend's peak private
#     memory (RssAnon).  Prints per URL net,
#     transactional / transactional => false (the goal of issue 41: within
#     2x), the fold, and load + fold against the other kind's load.
#  3. An A/B of the tree against AB_BASE (0138b59, where one transaction
#     could add at most 79 values to a page): the 1 GB filters of
#     bench/shared.sh's batches (890M at 1%, transactional, logged, every
#     page written first, one made by each build), batches of 1,000 as in
#     part 1, all new and 900 seen, also with synchronous_commit = off
#     (the same WAL, without waiting for the commit's flush, which a shared
#     disk makes the noisiest part), AB_REPEAT (5) rounds of
#     SECONDS_PER_RUN, the builds' sbf.so swapped between pgbench runs
#     (bench/lib.sh, builds_beside), alternating A B / B A; prints ns/URL
#     net of each and the ratio tree / base (median, and its range over the
#     rounds: the noise).
#
#   bash bench/shared_transactional.sh        # throwaway cluster; ~12 minutes
#   LOAD_VALUES=1000000 AB_REPEAT=3 bash bench/shared_transactional.sh
#                                             # smaller; LOAD_VALUES=0 or
#                                             # AB_BASE=none leave a part out
#   SBF_USE_EXISTING=1 bash bench/shared_transactional.sh
#                                             # parts 1 and 2 only (the A/B
#                                             # swaps the installed library)
#
# The throwaway cluster has shared_buffers = 3GB (the two 1 GB filters of
# part 2 or 3 stay in shared buffers), max_wal_size = 24GB and
# checkpoint_timeout = 1h (no checkpoint inside a run: a load writes about
# 1 GB of full-page images, the first write of each page), autovacuum off.
. "$(dirname "$0")/lib.sh"

T=${SECONDS_PER_RUN:-5}
REPEAT=${REPEAT:-3}
CAPACITY=100000000
LOAD_VALUES=${LOAD_VALUES:-10000000}
LOAD_CHUNK=${LOAD_CHUNK:-100000}
LOAD_CAPACITY=${LOAD_CAPACITY:-760000000}
LOAD_REPEAT=${LOAD_REPEAT:-3}
AB_BASE=${AB_BASE:-0138b59}
AB_REPEAT=${AB_REPEAT:-5}
AB_CAPACITY=890000000

if [ -n "${SBF_USE_EXISTING:-}" ]; then
	AB_BASE=none
else
	if [ "$AB_BASE" = none ]; then
		build_and_install
		start_cluster
	else
		# the base's sbf.so beside the tree's, the tree's installed
		builds_beside "$AB_BASE" tree
	fi
	command psql -X -q -c "ALTER SYSTEM SET shared_buffers = '3GB'" \
		-c "ALTER SYSTEM SET max_wal_size = '24GB'" \
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
# prefill FILTER: every page written (and 1M 'seen/' URLs added), 10,000
# URLs a transaction
prefill() {
	psql -c "DO \$\$ BEGIN
		FOR b IN 0 .. 199 LOOP
			PERFORM shared_test_and_add('$1', ARRAY(
				SELECT CASE WHEN b < 100 THEN 'https://www.example.org/seen/' ELSE 'https://www.example.org/warm/' END
					   || (b * 10000 + g) FROM generate_series(0, 9999) g));
			COMMIT;
		END LOOP;
	END \$\$" >/dev/null
}
for f in tx_logged tx_unlogged im_logged im_unlogged; do
	prefill "$f"
	say "$f: $(psql -c "SELECT shared_info('$f', true) ->> 'pages_written'") of $(psql -c "SELECT shared_info('$f', true) ->> 'pages'") pages written"
done

NEW="array(SELECT 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' FROM generate_series(0, 999) g)"
SEEN90="array(SELECT CASE WHEN g < 900 THEN 'https://www.example.org/seen/' || (:s + g) ELSE 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' END FROM generate_series(0, 999) g)"
HEAD="\\set b random(0, 999999999) * 1000
\\set s random(0, 999000)"

declare -A tps
# run KEY CALL [SETTINGS]: pgbench of SELECT CALL, one client, T seconds,
# SETTINGS added to PGOPTIONS; adds its calls a second to results KEY
run() {
	local key=$1 call=$2 out t
	printf '%s\nSELECT %s;\n' "$HEAD" "$call" >"$BENCH_TMP/script.sql"
	out=$(PGOPTIONS="$PGOPTIONS ${3:-}" pgbench -n -M prepared -c 1 -T "$T" -f "$BENCH_TMP/script.sql" 2>&1) ||
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
psql -c "DROP TABLE tx_logged, tx_unlogged, im_logged, im_unlogged"

# --- 2. a bulk load in one transaction ----------------------------------------
# the backend's CPU time in ticks (utime + stime of /proc/self/stat, in
# 1/CLK_TCK s: what the other jobs of a shared machine do not add to as
# they do to the wall time), where the role may read it
CPU="(SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s)"
[ "$(psql -c "SELECT current_setting('is_superuser')")" = on ] || CPU=0
TICKS=$(getconf CLK_TCK)
psql -c "DROP TABLE IF EXISTS bench_cpu" -c "CREATE TABLE bench_cpu (key text, ticks bigint)"
# load_sql FUNCTION FILTER KEY: the DO block of LOAD_VALUES URLs in chunks
# of LOAD_CHUNK, each chunk's answers counted (one transaction: no COMMIT);
# it records its CPU time under KEY in bench_cpu
load_sql() {
	cat <<SQL
DO \$\$
DECLARE
	n bigint := 0;
	t0 bigint := $CPU;
BEGIN
	FOR c IN 0 .. $(((LOAD_VALUES + LOAD_CHUNK - 1) / LOAD_CHUNK - 1)) LOOP
		SELECT n + count(*) FILTER (WHERE a) INTO n
		FROM unnest($1('$2', ARRAY(
			SELECT 'https://www.example.org/load/' || g || '/page.html'
			FROM generate_series(c::bigint * $LOAD_CHUNK,
								 least((c + 1)::bigint * $LOAD_CHUNK, $LOAD_VALUES) - 1) g))) a;
	END LOOP;
	INSERT INTO bench_cpu VALUES ('$3', $CPU - t0);
END
\$\$
SQL
}
# loaded FILTER WHEN: die unless 1,000 of the loaded URLs, spread over the
# load, are all in FILTER
loaded() {
	local n
	n=$(psql -c "SELECT count(*) FROM generate_series(0, 999) i
		WHERE shared_contains('$1', 'https://www.example.org/load/' || (i * ($LOAD_VALUES / 1000)) || '/page.html')")
	[ "$n" = 1000 ] || die "$1 $2: $n of 1,000 loaded URLs found"
}
declare -A secs walb peak LOADED_MB
# timed KEY SQL: SQL in a fresh backend; adds its seconds, WAL bytes and
# peak private memory (kB) to results KEY
timed() {
	local lsn0 s kb
	lsn0=$(psql -c "SELECT pg_current_wal_lsn()")
	read -r s kb < <(measure "SELECT 1" "$2")
	secs[$1]+="$s "
	peak[$1]+="$kb "
	walb[$1]+="$(psql -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0')") "
	say "  $1: $s s, $((kb / 1024)) MB peak"
}
if [ "$LOAD_VALUES" -gt 0 ]; then
	for round in $(seq "$LOAD_REPEAT"); do
		say "one transaction of $LOAD_VALUES URLs: round $round of $LOAD_REPEAT"
		psql -c "DROP TABLE IF EXISTS load_tx, load_im" \
			-c "SELECT shared_bloom_create('load_tx', $LOAD_CAPACITY, 0.01)" \
			-c "SELECT shared_bloom_create('load_im', $LOAD_CAPACITY, 0.01, transactional => false)" >/dev/null
		order="noop im tx"
		[ $((round % 2)) = 0 ] && order="tx im noop"
		for k in $order; do
			psql -c "CHECKPOINT"
			case $k in
				noop) timed load:noop "$(load_sql bench_noop load_tx load:noop)" ;;
				*)
					timed "load:$k" "$(load_sql shared_test_and_add "load_$k" "load:$k")"
					loaded "load_$k" "after the load"
					# (overflow pages of pending adds, if any, make it grow)
					LOADED_MB[$k]=$(psql -c "SELECT pg_relation_size('load_$k') / 1048576")
					timed "fold:$k" "VACUUM load_$k"
					loaded "load_$k" "after VACUUM"
					;;
			esac
		done
	done
	LOAD_SIZES=$(psql -F ' ' -c "SELECT shared_info('load_tx') ->> 'pages', pg_relation_size('load_tx') / 1048576,
		shared_info('load_im') ->> 'pages', pg_relation_size('load_im') / 1048576")
	psql -c "DROP TABLE load_tx, load_im"

	# per URL: ns, or bytes
	per() { echo "$(median ${secs[$1]}) * 1000000000 / $LOAD_VALUES" | bc -l; }
	noop=$(per load:noop)
	im=$(echo "$(per load:im) - $noop" | bc -l)
	tx=$(echo "$(per load:tx) - $noop" | bc -l)
	fold_im=$(per fold:im)
	fold_tx=$(per fold:tx)
	# CPU ns/URL: the median of KEY's rounds
	cpu() {
		# shellcheck disable=SC2046
		median $(psql -c "SELECT ticks * 1000000000.0 / $TICKS / $LOAD_VALUES FROM bench_cpu WHERE key = '$1'")
	}
	cpu_noop=$(cpu load:noop)
	cpu_im=$(echo "$(cpu load:im) - $cpu_noop" | bc -l)
	cpu_tx=$(echo "$(cpu load:tx) - $cpu_noop" | bc -l)
	wal() { echo "$(median ${walb[$1]}) / $LOAD_VALUES" | bc -l; }
	mb() { echo "$(median ${peak[$1]}) / 1024" | bc -l; }
	read -r tx_pages tx_size im_pages im_size <<<"$LOAD_SIZES"
	echo
	echo "one transaction of $LOAD_VALUES new URLs, in chunks of $LOAD_CHUNK, into a new logged filter for $LOAD_CAPACITY at 1%"
	echo "(transactional: $tx_pages pages, $tx_size MB after VACUUM, ${LOADED_MB[tx]} MB after the load; transactional => false:"
	echo "$im_pages pages, $im_size MB after VACUUM, ${LOADED_MB[im]} MB after the load); medians of $LOAD_REPEAT rounds"
	echo
	echo "| | transactional => false | transactional | transactional / false |"
	echo "| --- | --- | --- | --- |"
	printf '| load, ns/URL net (no-op: %.0f) | %.0f | %.0f | %.2fx |\n' "$noop" "$im" "$tx" "$(echo "$tx / $im" | bc -l)"
	if [ "$CPU" != 0 ]; then
		printf '| load, the backend'"'"'s CPU, ns/URL net (no-op: %.0f) | %.0f | %.0f | %.2fx |\n' "$cpu_noop" "$cpu_im" "$cpu_tx" "$(echo "$cpu_tx / $cpu_im" | bc -l)"
	fi
	printf '| load, WAL bytes/URL | %.1f | %.1f | |\n' "$(wal load:im)" "$(wal load:tx)"
	printf '| load, backend peak memory, MB (no-op: %.0f) | %.0f | %.0f | |\n' "$(mb load:noop)" "$(mb load:im)" "$(mb load:tx)"
	printf '| VACUUM after the load, ns/URL | %.0f | %.0f | |\n' "$fold_im" "$fold_tx"
	printf '| VACUUM, WAL bytes/URL | %.1f | %.1f | |\n' "$(wal fold:im)" "$(wal fold:tx)"
	printf '| load + VACUUM, ns/URL net | %.0f | %.0f | %.2fx |\n' "$(echo "$im + $fold_im" | bc -l)" \
		"$(echo "$tx + $fold_tx" | bc -l)" "$(echo "($tx + $fold_tx) / ($im + $fold_im)" | bc -l)"
	printf '\ntransactional load within 2x of transactional => false: %s (%.2fx; with the fold %.2fx)\n' \
		"$([ "$(echo "$tx <= 2 * $im" | bc -l)" = 1 ] && echo met || echo missed)" \
		"$(echo "$tx / $im" | bc -l)" "$(echo "($tx + $fold_tx) / $im" | bc -l)"
	# each round's ratio, net of its own no-op: the noise
	read -r -a s_noop <<<"${secs[load:noop]}"
	read -r -a s_im <<<"${secs[load:im]}"
	read -r -a s_tx <<<"${secs[load:tx]}"
	read -r -a s_fold <<<"${secs[fold:tx]}"
	printf 'each round, load (and load + VACUUM) over the other kind'"'"'s load:'
	for i in "${!s_noop[@]}"; do
		printf ' %.2fx (%.2fx)' "$(echo "(${s_tx[$i]} - ${s_noop[$i]}) / (${s_im[$i]} - ${s_noop[$i]})" | bc -l)" \
			"$(echo "(${s_tx[$i]} + ${s_fold[$i]} - ${s_noop[$i]}) / (${s_im[$i]} - ${s_noop[$i]})" | bc -l)"
	done
	echo
fi
psql -c "DROP TABLE bench_cpu"

# --- 3. batches of 1,000 against the base build ---------------------------------
if [ "$AB_BASE" != none ]; then
	say "batches of 1,000 URLs: the tree against $AB_BASE, 1 GB, $AB_REPEAT rounds"
	for b in base tree; do
		use_build "$b"
		psql -c "SELECT shared_bloom_create('ab_$b', $AB_CAPACITY, 0.01)" >/dev/null
		prefill "ab_$b"
		say "ab_$b: $(psql -c "SELECT shared_info('ab_$b', true) ->> 'pages_written'") of $(psql -c "SELECT shared_info('ab_$b', true) ->> 'pages'") pages written"
	done
	for round in $(seq "$AB_REPEAT"); do
		say "round $round of $AB_REPEAT"
		order="base tree"
		[ $((round % 2)) = 0 ] && order="tree base"
		for batch in new seen90; do
			b=$NEW
			[ "$batch" = seen90 ] && b=$SEEN90
			run "ab_noop:$batch" "bench_noop('ab_tree', $b)"
			for build in $order; do
				use_build "$build"
				run "ab_$build:$batch" "shared_test_and_add('ab_$build', $b)"
				run "ab_$build:${batch}_async" "shared_test_and_add('ab_$build', $b)" "-c synchronous_commit=off"
			done
		done
	done
	use_build tree
	psql -c "DROP TABLE ab_base, ab_tree"

	# the ratio tree / base of each round's net ns/URL (its own no-op)
	round_ratios() {
		local -a r_base r_tree r_noop
		read -r -a r_base <<<"${tps[ab_base:$1]}"
		read -r -a r_tree <<<"${tps[ab_tree:$1]}"
		read -r -a r_noop <<<"${tps[ab_noop:${1%_async}]}"
		for i in "${!r_noop[@]}"; do
			echo "(1 / ${r_tree[$i]} - 1 / ${r_noop[$i]}) / (1 / ${r_base[$i]} - 1 / ${r_noop[$i]})" | bc -l
		done
	}
	echo
	echo "batches of 1,000, logged, transactional, 1 GB ($AB_CAPACITY at 1%): $(git -C "$SBF_ROOT" rev-parse --short HEAD) against $AB_BASE, medians of $AB_REPEAT rounds"
	echo
	echo "| batch of 1,000 | $AB_BASE, ns/URL net | tree, ns/URL net | tree / $AB_BASE | per round, min–max |"
	echo "| --- | --- | --- | --- | --- |"
	for batch in new seen90 new_async seen90_async; do
		noop=$(median ${tps[ab_noop:${batch%_async}]})
		base=$(echo "(1 / $(median ${tps[ab_base:$batch]}) - 1 / $noop) * 1000000" | bc -l)
		tree=$(echo "(1 / $(median ${tps[ab_tree:$batch]}) - 1 / $noop) * 1000000" | bc -l)
		mapfile -t ratios < <(round_ratios "$batch" | sort -n)
		case $batch in
			new) label="all new" ;;
			seen90) label="900 seen" ;;
			new_async) label="all new, synchronous_commit = off" ;;
			seen90_async) label="900 seen, synchronous_commit = off" ;;
		esac
		printf '| %s | %.0f | %.0f | %.2fx | %.2f–%.2f |\n' \
			"$label" "$base" "$tree" \
			"$(echo "$tree / $base" | bc -l)" "${ratios[0]}" "${ratios[-1]}"
	done
fi
