#!/usr/bin/env bash
# Benchmark: shared filters (docs/shared.md) against statements of the same
# shape that do no filter work, and against a bloom value stored in a
# table, measured in the same run with pgbench (-M prepared).
#
#   bash bench/shared.sh                  # throwaway cluster; ~14 minutes
#   PG_CONFIG=/path/to/bin/pg_config bash bench/shared.sh
#                                         # another PostgreSQL install (15 to 18)
#   SBF_USE_EXISTING=1 bash bench/shared.sh   # PGHOST/PGPORT/PGDATABASE as
#                                         # set, with that server's settings
#
# The throwaway cluster runs with shared_buffers = 4GB (the filters of 1 GB,
# and the pages written of those of 16 GB, stay in shared buffers),
# max_wal_size = 24GB and checkpoint_timeout = 1h (no checkpoint inside a
# run: it would add full-page images; the 1 GB stage writes about 10 GB of
# WAL, and a checkpoint starts at about half of max_wal_size), autovacuum
# off, track_wal_io_timing on; otherwise PostgreSQL's defaults
# (synchronous_commit on, full_page_writes on), JIT off; pg_prewarm touches
# every buffer once before the runs, and the machine's free memory is
# touched once (a virtual machine's first write to a page of its memory
# faults in the host).  URLs are 'https://www.example.org/path/<n>/page.html', n drawn at
# random up to 10^12: all new.  Prints:
#
#  - one URL per statement, 1 client, SECONDS_PER_RUN (5) seconds a run,
#    REPEAT (3) rounds alternating, medians: shared_test_and_add on a logged
#    filter (also with synchronous_commit = off) and on an unlogged one,
#    shared_contains, against the no-op SELECT bench_noop('f', url) (a SQL
#    function of the same arguments returning url IS NULL, inlined by the
#    planner: the cheapest statement of that shape); an INSERT of the URL
#    into a table, as any durable one-row write; and a bloom of 4 MB stored
#    in a one-row table: SELECT bloom_contains(f, url) FROM t, and 100 of
#    UPDATE t SET f = bloom_add(f, url);
#  - batches of 1,000 URLs per call, 1 and 2 sessions, logged and unlogged,
#    against bench_noop('f', text[]) returning array_fill(false, ...) of the
#    same length (the array is built by both; the no-op neither reads its
#    elements nor hashes them), at 4 MB (capacity 3.4M at 1%: a new filter
#    every run, of 1,600 calls, so that it stays under half its capacity),
#    1 GB (890M at 1%: every page written once first, so the runs are
#    steady state: no first writes, no checkpoint; also logged with
#    synchronous_commit = off, 1 and 2 sessions) and 16 GB (14.24G at 1%:
#    SHARED_16G_CALLS (30) calls a run, shared by the sessions; nearly every
#    URL falls on a page never written, with 8 kB of WAL each: 2 GB in all,
#    while the pages stay in shared buffers and go with the filters, so that
#    the data directory stays near 2 GB; also logged with wal_compression =
#    lz4, where the server has it);
#  - at 1 GB, batches in which 900 of the 1,000 URLs were added before (the
#    crawl's common case), against the no-op of the same batches;
#  - the same 1 GB batches, new and 90% seen, into filters made with
#    transactional => false (the filters above are transactional, the
#    default), logged and unlogged, 1 session, and 2 sessions logged;
#  - the re-crawl loop of docs/shared.md: shared sliding filters of the 4 MB
#    stage's capacity (3.4M URLs a window at 1%), a window of 7 days
#    (shared_test_and_add(f, batch, now())) and one of 3.4M arrivals,
#    logged and unlogged, 1 session, new filters every run of 1,600 calls,
#    beside the Bloom kind's 4 MB lines;
#  - the exact answer a user writes in two lines, as its baseline: INSERT
#    INTO seen (sig) SELECT url_signature(u) FROM unnest(batch) u ON
#    CONFLICT DO NOTHING RETURNING sig, into a bigint primary key of 20M
#    rows (1.3 GB), logged and then unlogged, new and 90%-seen batches;
#  - the native floor: bench/shared_floor.c, each 1 GB filter's layout
#    (the transactional one's pending adds, the line layout), hash, sort
#    and prefetching in process memory (no buffers, locks, WAL, commit log);
#  - WAL bytes per URL (pg_current_wal_lsn() before and after each run) and
#    how much of it is full-page images (pg_waldump --stats);
#  - the backend's peak private memory (RssAnon) over 200 calls of 1,000
#    URLs and over one call of 1M URLs, and for the stored value;
#  - the goals of the shared filters' speed issue, met or missed.
#
# The throwaway cluster asks for huge pages (huge_pages = try; this script
# reserves them with vm.nr_hugepages when run as root): with 4 kB pages
# every value's page costs TLB misses as well as cache misses.
. "$(dirname "$0")/lib.sh"

T=${SECONDS_PER_RUN:-5}
REPEAT=${REPEAT:-3}
BIG_CALLS=${SHARED_16G_CALLS:-30}
SMALL_CALLS=1600

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	build_and_install
	start_cluster
	if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/vm/nr_hugepages)" -lt 2200 ]; then
		sysctl -q -w vm.nr_hugepages=2200 || true
	fi
	command psql -X -q -c "ALTER SYSTEM SET shared_buffers = '4GB'" \
		-c "ALTER SYSTEM SET max_wal_size = '24GB'" \
		-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" \
		-c "ALTER SYSTEM SET autovacuum = off" \
		-c "ALTER SYSTEM SET track_wal_io_timing = on"
	restart_cluster
fi
export PGOPTIONS="-c client_min_messages=warning -c jit=off"
LOAD_START=$(cut -d ' ' -f 1-3 /proc/loadavg)
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
# sql ...: psql, its output dropped
sql() { psql "$@" >/dev/null; }

sql <<'SQL'
CREATE EXTENSION IF NOT EXISTS sbf;
DROP TABLE IF EXISTS urls, t, one_logged, one_unlogged, batch_logged, batch_unlogged;
CREATE OR REPLACE FUNCTION bench_noop(filter regclass, value text) RETURNS boolean
	LANGUAGE sql AS 'SELECT $2 IS NULL';
CREATE OR REPLACE FUNCTION bench_noop(filter regclass, "values" text[]) RETURNS boolean[]
	LANGUAGE sql AS 'SELECT array_fill(false, ARRAY[cardinality($2)])';
SQL
if [ -z "${SBF_USE_EXISTING:-}" ]; then
	# touch every buffer once (pg_prewarm reads a sparse filter of nearly
	# shared_buffers' size), so that no run pays for a fresh cluster's first
	# touch of its shared memory
	sql -c "CREATE EXTENSION pg_prewarm" \
		-c "SELECT shared_bloom_create('prefault', 3300000000, 0.01, 0, true)" \
		-c "SELECT pg_prewarm('prefault')" \
		-c "DROP TABLE prefault" -c "DROP EXTENSION pg_prewarm"
	# and touch the machine's free memory once, in pieces of 1 MB, then free
	# it: on a virtual machine the first write to a page of guest memory
	# faults in the host, and the runs' WAL goes into the page cache (in a
	# profile on a fresh machine, copying WAL into the page cache was 24% of
	# a logged add's time, and 7% once the memory had been used)
	free_mb=$(awk '$1 == "MemFree:" { print int($2 / 1024) }' /proc/meminfo)
	if [ "${free_mb:-0}" -gt 2048 ]; then
		perl -e 'my @touched; push @touched, "\1" x 1048576 for 1 .. $ARGV[0]' \
			"$((free_mb - 1024))" || true
	fi
fi
WALDIR=$(psql -c "SHOW data_directory")/pg_wal
# the data directory's largest size on disk (sparse files count what is
# written), sampled every 2 s in the background while this script runs
echo 0 >"$BENCH_TMP/disk_peak"
if [ -r "$WALDIR" ]; then
	(
		peak=0
		while sleep 2 && kill -0 $$ 2>/dev/null; do
			d=$(du -sm "$(dirname "$WALDIR")" 2>/dev/null | awk '{ print $1 }' || true)
			if [ "${d:-0}" -gt "$peak" ]; then
				peak=$d
				echo "$peak" >"$BENCH_TMP/disk_peak"
			fi
		done
	) &
	DISK_SAMPLER=$!
fi
URL="'https://www.example.org/path/' || :i || '/page.html'"
BATCH="array(SELECT 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' FROM generate_series(0, 999) g)"
ONE="\\set i random(1, 1000000000000)"
MANY="\\set b random(0, 999999999) * 1000"
# 900 URLs of the 1M added first ('seen/'), then 100 new ones
SEEN90="$MANY
\\set s random(0, 999000)"
BATCH90="array(SELECT CASE WHEN g < 900 THEN 'https://www.example.org/seen/' || (:s + g) ELSE 'https://www.example.org/path/' || (:b::bigint + g) || '/page.html' END FROM generate_series(0, 999) g)"

# server_state: checkpoints so far, the WAL's insert and flush positions,
# its syncs so far and their milliseconds (0 without track_wal_io_timing),
# from the views of the server's version: checkpoints moved from
# pg_stat_bgwriter to pg_stat_checkpointer in 17, WAL syncs from
# pg_stat_wal to pg_stat_io in 18
server_state() {
	local version checkpoints syncs
	version=$(psql -c "SHOW server_version_num")
	if [ "$version" -ge 170000 ]; then
		checkpoints="(SELECT num_timed + num_requested FROM pg_stat_checkpointer)"
	else
		checkpoints="(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
	fi
	if [ "$version" -ge 180000 ]; then
		syncs="(SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal'),
			(SELECT sum(fsync_time) FROM pg_stat_io WHERE object = 'wal')"
	else
		syncs="(SELECT wal_sync FROM pg_stat_wal), (SELECT wal_sync_time FROM pg_stat_wal)"
	fi
	psql -F ' ' -c "SELECT $checkpoints, pg_current_wal_lsn(), pg_current_wal_flush_lsn(), $syncs"
}

# fpi_bytes FROM TO: bytes of full-page images in the WAL between two LSNs
fpi_bytes() {
	if [ -r "$WALDIR" ]; then
		pg_waldump --stats -p "$WALDIR" -s "$1" -e "$2" 2>/dev/null | awk '$1 == "Total" { print $5 }' || true
	fi
}

# run KEY CLIENTS LIMIT SCRIPT [OPTIONS]: pgbench SCRIPT (one statement a
# transaction) with CLIENTS sessions for LIMIT (-T s or -t calls a client),
# adding to results KEY its calls a second, WAL bytes a call, of them
# full-page-image bytes a call (logged batches), and ms a WAL sync
declare -A tps wal fpi sync
run() {
	local key=$1 clients=$2 limit=$3 script=$4 opts=${5:-} out n t f cp0 lsn0 s0 ms0 cp1 lsn1 flushed s1 ms1
	printf '%s\n' "$script" >"$BENCH_TMP/script.sql"
	read -r cp0 lsn0 _ s0 ms0 < <(server_state)
	# shellcheck disable=SC2086
	out=$(PGOPTIONS="$PGOPTIONS $opts" pgbench -n -M prepared -c "$clients" -j "$clients" \
		$limit -f "$BENCH_TMP/script.sql" 2>&1) || die "pgbench failed on $key: $out"
	sleep 0.5	# for the sessions that ended to report their WAL syncs
	read -r cp1 lsn1 flushed s1 ms1 < <(server_state)
	[ "$cp1" = "$cp0" ] || say "  a checkpoint happened during $key"
	n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
	t=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
	tps[$key]+="$t "
	wal[$key]+="$(psql -c "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0') / $n") "
	sync[$key]+="$(awk -v s="$((s1 - s0))" -v t0="$ms0" -v t1="$ms1" 'BEGIN { print (s > 0 ? (t1 - t0) / s : 0) }') "
	if [[ $key == b:*:logged*:* ]]; then
		f=$(fpi_bytes "$lsn0" "$flushed")
		# (none when the WAL of the run is gone: a checkpoint recycled it)
		if [ -n "$f" ]; then
			fpi[$key]+="$(echo "$f / $n" | bc -l) "
		fi
	fi
	say "  $key: $t calls/s"
}
med() {
	# shellcheck disable=SC2086
	median $1
}

# --- one URL per statement --------------------------------------------------
say "one URL per statement: ${T} s a run, $REPEAT rounds"
sql <<'SQL'
SELECT shared_bloom_create('one_logged', 3400000, 0.01);
SELECT shared_bloom_create('one_unlogged', 3400000, 0.01, 0, true);
CREATE TABLE urls (url text);
CREATE TABLE t (f bloom);
INSERT INTO t SELECT bloom_agg('https://www.example.org/seed/' || g, 3400000, 0.01)
	FROM generate_series(1, 100000) g;
SELECT shared_test_and_add(f, array(SELECT 'https://www.example.org/seed/' || g
									  FROM generate_series(1, 20000) g))
	FROM unnest(ARRAY['one_logged', 'one_unlogged']::regclass[]) f;
SQL
declare -A one=(
	[noop]="SELECT bench_noop('one_logged', $URL);"
	[add_logged]="SELECT shared_test_and_add('one_logged', $URL);"
	[add_logged_async]="SELECT shared_test_and_add('one_logged', $URL);"
	[add_unlogged]="SELECT shared_test_and_add('one_unlogged', $URL);"
	[contains_logged]="SELECT shared_contains('one_logged', $URL);"
	[insert]="INSERT INTO urls VALUES ($URL);"
	[stored_contains]="SELECT bloom_contains(f, $URL) FROM t;"
	[stored_update]="UPDATE t SET f = bloom_add(f, $URL);"
)
# the INSERT right after the logged add: the WAL flush latency of a shared
# disk drifts, and the two are compared
ONE_KEYS="noop add_logged insert add_logged_async add_unlogged contains_logged stored_contains"
for r in $(seq 1 "$REPEAT"); do
	for k in $ONE_KEYS; do
		opts=
		if [ "$k" = add_logged_async ]; then
			opts="-c synchronous_commit=off"
		fi
		run "one:$k" 1 "-T $T" "$ONE
${one[$k]}" "$opts"
	done
	say "  round $r done"
done
run one:stored_update 1 "-t 100" "$ONE
${one[stored_update]}"
stored_mb=$(psql -c "SELECT pg_total_relation_size('t') / 1048576")
stored_kb=$(measure "SELECT 1" "DO \$\$ BEGIN FOR i IN 1..5 LOOP UPDATE t SET f = bloom_add(f, 'https://www.example.org/m/' || i); END LOOP; END \$\$" | awk '{ print $2 }')
stored_read_kb=$(measure "SELECT 1" "SELECT count(*) FROM generate_series(1, 20) i, t WHERE bloom_contains(t.f, 'https://www.example.org/m/' || i)" | awk '{ print $2 }')
sql -c "DROP TABLE t, urls, one_logged, one_unlogged"

# --- batches of 1,000 URLs per call -----------------------------------------
# new_filter logged|unlogged CAPACITY: batch_logged or batch_unlogged, new
new_filter() {
	sql -c "DROP TABLE IF EXISTS batch_$1" \
		-c "SELECT shared_bloom_create('batch_$1', $2, 0.01, 0, $([ "$1" = unlogged ] && echo true || echo false))"
}
# stage SIZE CAPACITY LIMIT ROUNDS PREFILL: the filters batch_logged and
# batch_unlogged of CAPACITY at 1%, each run LIMIT; PREFILL calls write
# their pages first (fresh: new filters before every run instead)
stage() {
	local size=$1 capacity=$2 limit=$3 rounds=$4 prefill=$5 r l c lim
	sql -c "CHECKPOINT"
	new_filter logged "$capacity"
	new_filter unlogged "$capacity"
	sizes[$size]=$(psql -c "SELECT pg_size_pretty(pg_relation_size('batch_logged'))")
	if [ "$prefill" != fresh ] && [ "$prefill" -gt 0 ]; then
		say "$size: writing every page first ($prefill calls of 1,000 URLs a filter)"
		for l in logged unlogged; do
			run "b:$size:$l:first" 1 "-t $prefill" "$MANY
SELECT shared_test_and_add('batch_$l', $BATCH);"
		done
	fi
	for r in $(seq 1 "$rounds"); do
		for c in 1 2; do
			run "b:$size:noop:$c" "$c" "-T $T" "$MANY
SELECT bench_noop('batch_logged', $BATCH);"
			for l in logged unlogged; do
				lim=$limit
				if [ "$prefill" = fresh ]; then
					new_filter "$l" "$capacity"
					sql -c "SELECT shared_test_and_add('batch_$l', array(SELECT 'https://www.example.org/warm/' || g FROM generate_series(1, 20000) g))"
					lim="-t $((limit / c))"
				elif [[ $limit == -t* ]]; then
					lim="-t $((${limit#-t } / c))"
				fi
				run "b:$size:$l:$c" "$c" "$lim" "$MANY
SELECT shared_test_and_add('batch_$l', $BATCH);"
			done
			# how much of the logged cost is the commit's WAL flush, and how
			# two sessions scale without it (1 GB), and the full-page images
			# of new pages, compressed (16 GB)
			if { [ "$c" = 1 ] || [ "$size" = 1GB ]; } && [ -n "${variant[$size]:-}" ]; then
				run "b:$size:logged_${variant[$size]%%:*}:$c" "$c" "$lim" "$MANY
SELECT shared_test_and_add('batch_logged', $BATCH);" "${variant[$size]#*:}"
			fi
		done
		say "  $size round $r done"
	done
}
declare -A sizes variant=([1GB]="async:-c synchronous_commit=off")
if [ "$(psql -c "SELECT 'lz4' = ANY (enumvals) AND current_setting('is_superuser') = 'on'
	FROM pg_settings WHERE name = 'wal_compression'")" = t ]; then
	variant[16GB]="lz4:-c wal_compression=lz4"
fi
say "batches of 1,000 URLs: 4 MB, $REPEAT rounds"
stage 4MB 3400000 "$SMALL_CALLS" "$REPEAT" fresh

# the re-crawl loop: sliding filters beside the 4 MB Bloom filters
say "batches of 1,000 URLs into sliding filters: $REPEAT rounds"
declare -A slide=(
	[time]="interval '7 days', 0.01, 3400000"
	[arrivals]="3400000, 0.01"
)
for r in $(seq 1 "$REPEAT"); do
	for w in time arrivals; do
		for l in logged unlogged; do
			sql -c "DROP TABLE IF EXISTS slide_$l" \
				-c "SELECT shared_slidingbloom_create('slide_$l', ${slide[$w]}, unlogged => $([ "$l" = unlogged ] && echo true || echo false))" \
				-c "SELECT shared_test_and_add('slide_$l', array(SELECT 'https://www.example.org/warm/' || g FROM generate_series(1, 20000) g))"
			run "b:slide_$w:$l:1" 1 "-t $SMALL_CALLS" "$MANY
SELECT shared_test_and_add('slide_$l', $BATCH);"
		done
	done
done
sizes[slide]=$(psql -c "SELECT pg_size_pretty(pg_relation_size('slide_logged'))")
sql -c "DROP TABLE slide_logged, slide_unlogged"

say "batches of 1,000 URLs: 1 GB, $REPEAT rounds"
stage 1GB 890000000 "-T $T" "$REPEAT" 1000

# rounds TABLE KEY NOOPKEY SUFFIX SET ARRAY: REPEAT rounds of 1 GB batches
# (pgbench commands SET, then the batch ARRAY), 1 session: the no-op (key
# b:1GB:NOOPKEYSUFFIX:1), then the filters TABLElogged and TABLEunlogged
# (b:1GB:KEYloggedSUFFIX:1, b:1GB:KEYunloggedSUFFIX:1)
rounds() {
	local r l
	for r in $(seq 1 "$REPEAT"); do
		run "b:1GB:$3$4:1" 1 "-T $T" "$5
SELECT bench_noop('${1}logged', $6);"
		for l in logged unlogged; do
			run "b:1GB:$2$l$4:1" 1 "-T $T" "$5
SELECT shared_test_and_add('$1$l', $6);"
		done
	done
}
# seen90 TABLE KEY NOOPKEY: the 1M URLs the 90%-seen batches draw from,
# added to TABLElogged and TABLEunlogged, then rounds of those batches
seen90() {
	say "batches of 1,000 URLs, 90% seen before: 1 GB, $REPEAT rounds"
	sql -c "SELECT shared_test_and_add(f, array(SELECT 'https://www.example.org/seen/' || (b * 1000 + g) FROM generate_series(0, 999) g))
		FROM unnest(ARRAY['${1}logged', '${1}unlogged']::regclass[]) f, generate_series(0, 999) b"
	rounds "$1" "$2" "$3" 90 "$SEEN90" "$BATCH90"
}
seen90 batch_ "" noop
FLOOR_PAGES=$(psql -c "SELECT shared_info('batch_logged') ->> 'pages'")
FLOOR_HASHES=$(psql -c "SELECT shared_info('batch_logged') ->> 'hashes'")

say "peak memory"
mem_sql() { echo "SELECT count(*) FROM generate_series(1, $1) b, LATERAL (SELECT $2('batch_logged', array(SELECT 'https://www.example.org/mem/' || (b * $3 + g) || '/page.html' FROM generate_series(0, $3 - 1) g)) r) s"; }
declare -A mem
for f in bench_noop shared_test_and_add; do
	mem[$f:1000]=$(measure "SELECT 1" "$(mem_sql 200 $f 1000)" | awk '{ print $2 }')
	mem[$f:1M]=$(measure "SELECT 1" "$(mem_sql 1 $f 1000000)" | awk '{ print $2 }')
done

# the same 1 GB batches into filters made with transactional => false (the
# line layout, adds immediate), after the transactional ones are dropped so
# that both fit in shared buffers beside nothing else
say "batches of 1,000 URLs, transactional => false: 1 GB, $REPEAT rounds"
sql -c "DROP TABLE batch_logged, batch_unlogged" -c "CHECKPOINT"
for l in logged unlogged; do
	sql -c "SELECT shared_bloom_create('imm_$l', 890000000, 0.01, 0, $([ "$l" = unlogged ] && echo true || echo false), transactional => false)"
	run "b:1GB:imm_$l:first" 1 "-t 1000" "$MANY
SELECT shared_test_and_add('imm_$l', $BATCH);"
done
rounds imm_ imm_ noopimm "" "$MANY" "$BATCH"
# and two sessions logged: the same adds with two thirds of the WAL
for r in $(seq 1 "$REPEAT"); do
	run "b:1GB:imm_logged:2" 2 "-T $T" "$MANY
SELECT shared_test_and_add('imm_logged', $BATCH);"
done
seen90 imm_ imm_ noopimm
FLOOR_LINE_PAGES=$(psql -c "SELECT shared_info('imm_logged') ->> 'pages'")
FLOOR_LINE_HASHES=$(psql -c "SELECT shared_info('imm_logged') ->> 'hashes'")
sql -c "DROP TABLE imm_logged, imm_unlogged"

say "batches of 1,000 URLs: 16 GB, $REPEAT rounds of $BIG_CALLS calls a run"
stage 16GB 14240000000 "-t $BIG_CALLS" "$REPEAT" 0
sql -c "DROP TABLE batch_logged, batch_unlogged"

# --- the exact baseline: a bigint primary key of 20M signatures -------------
say "the exact table: 20M signatures in a bigint primary key"
sql <<'SQL'
CREATE TABLE seen_exact (sig bigint);
INSERT INTO seen_exact
	SELECT DISTINCT url_signature('https://www.example.org/seen/' || g) FROM generate_series(0, 19999999) g;
ALTER TABLE seen_exact ADD PRIMARY KEY (sig);
VACUUM ANALYZE seen_exact;
SQL
exact_mb=$(psql -c "SELECT pg_total_relation_size('seen_exact') / 1048576")
EXACT="INSERT INTO seen_exact (sig) SELECT url_signature(u) FROM unnest"
for l in logged unlogged; do
	if [ "$l" = unlogged ]; then
		sql -c "ALTER TABLE seen_exact SET UNLOGGED"
	fi
	sql -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" -c "SELECT pg_prewarm('seen_exact'), pg_prewarm('seen_exact_pkey')"
	for r in $(seq 1 "$REPEAT"); do
		run b:exact:noop:1 1 "-T $T" "$MANY
SELECT bench_noop('seen_exact', $BATCH);"
		run "b:exact:$l:1" 1 "-T $T" "$MANY
$EXACT($BATCH) u ON CONFLICT DO NOTHING RETURNING sig;"
		run b:exact:noop90:1 1 "-T $T" "$SEEN90
SELECT bench_noop('seen_exact', $BATCH90);"
		run "b:exact:${l}90:1" 1 "-T $T" "$SEEN90
$EXACT($BATCH90) u ON CONFLICT DO NOTHING RETURNING sig;"
	done
done
sql -c "DROP TABLE seen_exact" -c "DROP EXTENSION IF EXISTS pg_prewarm" \
	-c "DROP FUNCTION bench_noop(regclass, text), bench_noop(regclass, text[])"

# --- the native floor ---------------------------------------------------------
say "the native floor: bench/shared_floor.c, the pending layout's $FLOOR_PAGES pages and the line layout's $FLOOR_LINE_PAGES"
gcc -O2 -Wall -I"$("$PG_CONFIG" --includedir-server)" -I"$SBF_ROOT/src/common" -I"$SBF_ROOT/src/filters" -I"$SBF_ROOT/src/shared" \
	-ffunction-sections -fdata-sections \
	"$SBF_ROOT/bench/shared_floor.c" "$SBF_ROOT/src/common/hash.c" \
	-Wl,--gc-sections -o "$BENCH_TMP/shared_floor" || die "cannot build the floor"
# huge pages for the floor beside the cluster's (as root), so that its
# memory is mapped as shared buffers are: transparent huge pages, its
# fallback, may not come in a fragmented memory (its memory column says)
HUGE_BEFORE=$(cat /proc/sys/vm/nr_hugepages)
if [ "$(id -u)" = 0 ]; then
	sysctl -q -w vm.nr_hugepages=$((HUGE_BEFORE + FLOOR_PAGES * 8192 / 2097152 + 8)) || true
fi
"$BENCH_TMP/shared_floor" pending "$FLOOR_PAGES" "$FLOOR_HASHES" >"$BENCH_TMP/floor" 2>/dev/null
"$BENCH_TMP/shared_floor" lines "$FLOOR_LINE_PAGES" "$FLOOR_LINE_HASHES" >>"$BENCH_TMP/floor" 2>/dev/null
if [ "$(id -u)" = 0 ]; then
	sysctl -q -w vm.nr_hugepages="$HUGE_BEFORE" || true
fi
# floor BATCHES LAYOUT [COLUMN]: its ns a URL (column 6: its memory)
floor() { awk -v b="$1" -v l="$2" -v c="${3:-5}" '$1 == b && $2 == l { print $c }' "$BENCH_TMP/floor"; }
FLOOR_NEW=$(floor new pending)
FLOOR_SEEN=$(floor seen90 pending)
FLOOR_LINE_NEW=$(floor new lines)
FLOOR_LINE_SEEN=$(floor seen90 lines)
[ -n "$FLOOR_NEW" ] && [ -n "$FLOOR_LINE_NEW" ] || die "the floor printed no figures"

# --- the tables ---------------------------------------------------------------
ms() { echo "1000 / $1" | bc -l; }
# sync_ms KEY: the median ms a WAL sync took during KEY's runs, or -
sync_ms() {
	local m
	m=$(med "${sync[$1]}")
	if [ "$(echo "$m > 0" | bc -l)" = 1 ]; then printf '%.3f' "$m"; else echo -; fi
}
# one_row LABEL KEY: ms a statement, ratios to the no-op and to the INSERT,
# WAL bytes a statement, ms a WAL sync
one_row() {
	local t
	t=$(med "${tps[one:$2]}")
	printf '  %-56s %7.3f %7.2f %7.2f %8.0f %6s\n' "$1" "$(ms "$t")" \
		"$(echo "$(med "${tps[one:noop]}") / $t" | bc -l)" \
		"$(echo "$(med "${tps[one:insert]}") / $t" | bc -l)" "$(med "${wal[one:$2]}")" \
		"$(sync_ms "one:$2")"
}
# batch_row LABEL KEY BASEKEY SESSIONS [ONEKEY]: ms a call, URLs/s, ns a URL,
# net ns a URL over BASEKEY, WAL and full-page-image bytes a URL, ms a WAL
# sync, and the speed-up over ONEKEY
batch_row() {
	local t f=- up=
	t=$(med "${tps[$2]}")
	if [ -n "${fpi[$2]:-}" ]; then
		f=$(printf '%.0f' "$(echo "$(med "${fpi[$2]}") / 1000" | bc -l)")
	fi
	if [ -n "${5:-}" ]; then
		up=$(printf '%.2fx' "$(echo "$t / $(med "${tps[$5]}")" | bc -l)")
	fi
	printf '  %-24s %2s %8.2f %9.0f %7.0f %7.0f %7.0f %6s %6s %6s\n' "$1" "$4" "$(ms "$t")" \
		"$(echo "$t * 1000" | bc -l)" "$(echo "1000000 / $t" | bc -l)" \
		"$(echo "(1 / $t - 1 / $(med "${tps[$3]}")) * 1000000" | bc -l)" \
		"$(echo "$(med "${wal[$2]}") / 1000" | bc -l)" "$f" "$(sync_ms "$2")" "$up"
}
mb() { printf '%.1f' "$(echo "$1 / 1024" | bc -l)"; }

cat <<TXT

settings: $(psql -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'synchronous_commit', 'full_page_writes', 'wal_level', 'max_wal_size', 'checkpoint_timeout', 'huge_pages', 'server_version')")
$(nproc) cores; load average at the start $LOAD_START, at the end $(cut -d ' ' -f 1-3 /proc/loadavg)

one URL per statement: pgbench -M prepared, 1 client,     ms/stmt    vs     vs     WAL   WAL sync
${T} s a run, medians of $REPEAT                                       no-op  INSERT  B/stmt     ms
TXT
one_row "no-op: SELECT bench_noop('f', url)" noop
one_row "shared_test_and_add('f', url), logged" add_logged
one_row "  the same, synchronous_commit = off" add_logged_async
one_row "shared_test_and_add('f', url), unlogged" add_unlogged
one_row "shared_contains('f', url), logged" contains_logged
one_row "INSERT INTO urls VALUES (url): a durable one-row write" insert
one_row "stored 4 MB bloom: SELECT bloom_contains(f, url) FROM t" stored_contains
one_row "stored 4 MB bloom: UPDATE t SET f = bloom_add(f, url)" stored_update
cat <<TXT
  (the filters: 3.4M at 1%, every page written before; the UPDATE: 100
  statements, which left t at $stored_mb MB)

batches of 1,000 URLs per call: pgbench -M prepared; net = over the no-op call
(same shape, same sessions); 2 vs 1 = URLs/s of 2 sessions over 1 session
                        sessions ms/call    URLs/s  ns/URL  net ns   WAL B/URL   WAL  2 vs 1
                                                                     all    FPI sync ms
TXT
for size in 4MB 1GB 16GB; do
	for l in noop logged unlogged; do
		batch_row "$size $l" "b:$size:$l:1" "b:$size:noop:1" 1
		batch_row "$size $l" "b:$size:$l:2" "b:$size:noop:2" 2 "b:$size:$l:1"
	done
	if [ "$size" = 1GB ]; then
		batch_row "1GB logged, sync. off" "b:1GB:logged_async:1" "b:1GB:noop:1" 1
		batch_row "1GB logged, sync. off" "b:1GB:logged_async:2" "b:1GB:noop:2" 2 "b:1GB:logged_async:1"
		for l in logged unlogged; do
			batch_row "1GB $l, new pages" "b:1GB:$l:first" "b:1GB:noop:1" 1
		done
	fi
done
if [ -n "${variant[16GB]:-}" ]; then
	batch_row "16GB logged, lz4 images" "b:16GB:logged_lz4:1" "b:16GB:noop:1" 1
fi
# the re-crawl loop's sliding filters, net over the 4 MB stage's no-op
for w in time arrivals; do
	for l in logged unlogged; do
		batch_row "sliding $w $l" "b:slide_$w:$l:1" "b:4MB:noop:1" 1
	done
done
cat <<TXT
  (4MB: ${sizes[4MB]}, $SMALL_CALLS calls a run on a new filter; 1GB: ${sizes[1GB]}, after
  1,000 calls writing every page ("new pages": those calls); 16GB: ${sizes[16GB]},
  $BIG_CALLS calls a run, nearly all on new pages; sliding: a window of 7
  days or of 3.4M arrivals for 3.4M URLs at 1%, ${sizes[slide]} (arrivals), new
  filters of $SMALL_CALLS calls a run, beside the 4MB lines; the data directory's
  largest size on disk: $(cat "$BENCH_TMP/disk_peak") MB)

peak private memory of the backend (RssAnon), MB               no-op  shared_test_and_add
  200 calls of 1,000 URLs, 1 GB filter                        $(printf '%7s %10s' "$(mb "${mem[bench_noop:1000]}")" "$(mb "${mem[shared_test_and_add:1000]}")")
  1 call of 1,000,000 URLs, 1 GB filter                       $(printf '%7s %10s' "$(mb "${mem[bench_noop:1M]}")" "$(mb "${mem[shared_test_and_add:1M]}")")
  stored 4 MB bloom: UPDATE ... bloom_add $(mb "$stored_kb") MB, SELECT bloom_contains $(mb "$stored_read_kb") MB
TXT

# --- per URL at 1 GB against the exact table and the native floor ----------
# net KEY NOOPKEY: ns a URL of KEY over NOOPKEY (batches of 1,000)
net() { echo "(1 / $(med "${tps[$1]}") - 1 / $(med "${tps[$2]}")) * 1000000" | bc -l; }
# flush KEY: ns a URL of the commit's WAL flush (one a call)
flush() { echo "$(med "${sync[$1]}") * 1000" | bc -l; }
cat <<TXT

per URL, net over the no-op of the same batches (1 client, batches of 1,000):
the 1 GB filter against the exact table (a bigint primary key of 20M
signatures, $exact_mb MB) and against the native floor (bench/shared_floor.c)
                                       new URLs            90% seen before
                                   ns/URL  exact/sbf     ns/URL  exact/sbf
TXT
# sbf_row LABEL KEY NOOP: a shared filter's line, new and 90%-seen batches
sbf_row() {
	printf '  %-32s %7.0f %9.1fx %10.0f %9.1fx\n' "$1" \
		"$(net "b:1GB:$2:1" "b:1GB:$3:1")" \
		"$(echo "$(net "b:exact:${2#imm_}:1" b:exact:noop:1) / $(net "b:1GB:$2:1" "b:1GB:$3:1")" | bc -l)" \
		"$(net "b:1GB:${2}90:1" "b:1GB:${3}90:1")" \
		"$(echo "$(net "b:exact:${2#imm_}90:1" b:exact:noop90:1) / $(net "b:1GB:${2}90:1" "b:1GB:${3}90:1")" | bc -l)"
}
for l in logged unlogged; do
	sbf_row "shared filter, $l" "$l" noop
done
printf '  %-32s %7.0f %10s %10.0f\n' "  of logged: the commit's WAL flush" \
	"$(flush b:1GB:logged:1)" "" "$(flush b:1GB:logged90:1)"
for l in logged unlogged; do
	sbf_row "  transactional => false, $l" "imm_$l" noopimm
done
printf '  %-32s %7.0f %10s %10.0f\n' "  of logged: the commit's WAL flush" \
	"$(flush b:1GB:imm_logged:1)" "" "$(flush b:1GB:imm_logged90:1)"
for l in logged unlogged; do
	printf '  %-32s %7.0f %10s %10.0f\n' "exact table, $l" \
		"$(net "b:exact:$l:1" b:exact:noop:1)" "" "$(net "b:exact:${l}90:1" b:exact:noop90:1)"
done
printf '  %-32s %7.0f %10s %10.0f   (%s)\n' "native floor, pending layout" "$FLOOR_NEW" "" "$FLOOR_SEEN" "$(floor new pending 6)"
printf '  %-32s %7.0f %10s %10.0f   (%s)\n' "native floor, line layout" "$FLOOR_LINE_NEW" "" "$FLOOR_LINE_SEEN" "$(floor new lines 6)"
printf '  %-32s %7.1fx %9s %10.1fx\n' "unlogged / its layout's floor" \
	"$(echo "$(net b:1GB:unlogged:1 b:1GB:noop:1) / $FLOOR_NEW" | bc -l)" "" \
	"$(echo "$(net b:1GB:unlogged90:1 b:1GB:noop90:1) / $FLOOR_SEEN" | bc -l)"
printf '  %-32s %7.1fx %9s %10.1fx\n' "  transactional => false" \
	"$(echo "$(net b:1GB:imm_unlogged:1 b:1GB:noopimm:1) / $FLOOR_LINE_NEW" | bc -l)" "" \
	"$(echo "$(net b:1GB:imm_unlogged90:1 b:1GB:noopimm90:1) / $FLOOR_LINE_SEEN" | bc -l)"
printf '  %-32s %7.1fx %9s %10.1fx\n' "  transactional / line floor" \
	"$(echo "$(net b:1GB:unlogged:1 b:1GB:noop:1) / $FLOOR_LINE_NEW" | bc -l)" "" \
	"$(echo "$(net b:1GB:unlogged90:1 b:1GB:noop90:1) / $FLOOR_LINE_SEEN" | bc -l)"

# --- the goals of the speed issue ---------------------------------------------
goal() { if [ "$(echo "$2" | bc -l)" = 1 ]; then echo "  met:    $1"; else echo "  missed: $1"; fi; }
one_ratio=$(echo "$(med "${tps[one:noop]}") / $(med "${tps[one:add_logged]}")" | bc -l)
echo
echo "goals"
goal "one URL a statement, logged, <= 1.3x the no-op: $(printf '%.2f' "$one_ratio")x" "$one_ratio <= 1.3"
# speed_goals LABEL KEYPREFIX NOOPKEY FLOOR: the 1 GB goals of a kind of
# filter, FLOOR the native floor of its layout
speed_goals() {
	local unlogged logged exact_logged exact_unlogged floor_ratio
	unlogged=$(net "b:1GB:$2unlogged:1" "b:1GB:$3:1")
	logged=$(net "b:1GB:$2logged:1" "b:1GB:$3:1")
	exact_logged=$(echo "$(net b:exact:logged:1 b:exact:noop:1) / $logged" | bc -l)
	exact_unlogged=$(echo "$(net b:exact:unlogged:1 b:exact:noop:1) / $unlogged" | bc -l)
	floor_ratio=$(echo "$unlogged / $4" | bc -l)
	goal "$1: 1 GB unlogged, <= 300 ns a URL net: $(printf '%.0f' "$unlogged") ns" "$unlogged <= 300"
	goal "$1: 1 GB logged, <= 1500 ns a URL net: $(printf '%.0f' "$logged") ns (the commit's flush: $(printf '%.0f' "$(flush "b:1GB:$2logged:1")") ns)" "$logged <= 1500"
	goal "$1: logged, >= 5x faster than the exact table: $(printf '%.1f' "$exact_logged")x" "$exact_logged >= 5"
	goal "$1: unlogged, >= 20x faster than the exact table: $(printf '%.1f' "$exact_unlogged")x" "$exact_unlogged >= 20"
	goal "$1: unlogged within 3x of its layout's native floor: $(printf '%.1f' "$floor_ratio")x" "$floor_ratio <= 3"
}
speed_goals transactional "" noop "$FLOOR_NEW"
speed_goals "transactional => false" imm_ noopimm "$FLOOR_LINE_NEW"
for size in 4MB 1GB 16GB; do
	for l in logged unlogged; do
		up=$(echo "$(med "${tps[b:$size:$l:2]}") / $(med "${tps[b:$size:$l:1]}")" | bc -l)
		goal "2 sessions >= 1.6x one, $size $l: $(printf '%.2f' "$up")x" "$up >= 1.6"
	done
done
# (not a goal: the same without waiting for the commit's flush, which the
# disk sets)
up=$(echo "$(med "${tps[b:1GB:logged_async:2]}") / $(med "${tps[b:1GB:logged_async:1]}")" | bc -l)
echo "  (1GB logged with synchronous_commit = off: 2 sessions $(printf '%.2f' "$up")x one)"
up=$(echo "$(med "${tps[b:1GB:imm_logged:2]}") / $(med "${tps[b:1GB:imm_logged:1]}")" | bc -l)
echo "  (1GB logged, transactional => false: 2 sessions $(printf '%.2f' "$up")x one)"
if [ -n "${DISK_SAMPLER:-}" ]; then
	kill "$DISK_SAMPLER"
fi
rm -rf "$BENCH_TMP"
