#!/usr/bin/env bash
# The main job: what sbf finds in a real crawl stream.
#
#   bash scripts/demo.sh [--rows N] [--database DB] [--keep] [--out DIR] [STREAM]
#
# Builds and installs sbf, starts a throwaway PostgreSQL 15 cluster, loads
# STREAM (default data/doccrawl-pg-python.tsv.gz, a breadth-first crawl of
# the PostgreSQL 15 and Python 3.11 manuals) and marks every link that
# leads to an already discovered URL, six ways: exactly (plain SQL),
# with bloom, stablebloom and slidingbloom filters at a few memory budgets, with
# the offline sieve, and live: two crawler sessions replaying the stream at
# the same time through one shared filter.  Prints one table (TP, FP, FN,
# precision, recall, F1, seconds per method) and draws how the
# false-positive and false-negative rates of bloom, stablebloom and
# slidingbloom evolve along the stream at equal memory.
#
#   STREAM         a file of URLs, gzipped or not: "pos<TAB>url" lines or
#                  one URL a line (numbered from 1)
#   --rows N       only the first N rows of the stream
#   --database DB  use this existing database (a name or a libpq connection
#                  string; sbf must be installed on its server) instead of a
#                  throwaway cluster; the work happens in a schema sbf_demo,
#                  dropped at the end
#   --keep         keep the throwaway cluster (or the sbf_demo schema)
#   --out DIR      where to write results.tsv, evolution.tsv and
#                  duplicates.png (default: out/)
. "$(dirname "$0")/lib.sh"

STREAM=$SBF_ROOT/data/doccrawl-pg-python.tsv.gz
ROWS=
DATABASE=
OUT=$SBF_ROOT/out
while [ $# -gt 0 ]; do
	case $1 in
		--rows) ROWS=${2:?--rows needs a number}; shift 2 ;;
		--database) DATABASE=${2:?--database needs a database}; shift 2 ;;
		--keep) SBF_KEEP_CLUSTER=1; shift ;;
		--out) OUT=${2:?--out needs a directory}; shift 2 ;;
		-h | --help) sed -n '2,/^\. /p' "$0" | sed 's/^# \{0,1\}//; /^\. /d'; exit 0 ;;
		-*) die "unknown option $1 (see --help)" ;;
		*) STREAM=$1; shift ;;
	esac
done
[ -r "$STREAM" ] || die "cannot read the stream $STREAM"
[ -z "$ROWS" ] || [[ $ROWS =~ ^[1-9][0-9]*$ ]] || die "--rows needs a positive number, not $ROWS"
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

# Memory budgets (bytes) and the stable filter's shape
BUDGETS=${SBF_BUDGETS:-"1024 4096 16384"}
PLOT_BUDGET=${SBF_PLOT_BUDGET:-1024}
SBF_HASHES=${SBF_HASHES:-2}
SBF_FPR=${SBF_FPR:-0.2}
# The sliding filter: the largest window that fits the budget at this rate
SBF_SLIDING_FPR=${SBF_SLIDING_FPR:-0.2}
FLUSHES=${SBF_FLUSHES:-10}
# The live crawl: sessions, rows a batch, the shared filter's target rate
LIVE_SESSIONS=${SBF_LIVE_SESSIONS:-2}
LIVE_BATCH=${SBF_LIVE_BATCH:-1000}
LIVE_FPR=${SBF_LIVE_FPR:-0.01}

ensure_packages gnuplot-nox
# an existing database given with --database keeps everything but the
# sbf_demo schema; otherwise a throwaway cluster (stopped on exit)
EXISTING_DATABASE=$DATABASE
if [ -z "$DATABASE" ]; then
	build_and_install
	start_cluster
	DATABASE=$PGDATABASE
fi

# -d takes a database name or a whole connection string
psql() { command psql -X -q -v ON_ERROR_STOP=1 -d "$DATABASE" "$@"; }
psql -c "SELECT 1" >/dev/null 2>&1 || die "cannot connect to $DATABASE"
sql() { psql -A -t -c "SET search_path = sbf_demo, public" -c "$1"; }

psql -c "CREATE EXTENSION IF NOT EXISTS sbf" >/dev/null 2>&1 ||
	die "sbf is not installed on the server (make && sudo make install)"
psql -c "DROP SCHEMA IF EXISTS sbf_demo CASCADE" -c "CREATE SCHEMA sbf_demo" >/dev/null 2>&1
if [ -n "$EXISTING_DATABASE" ] && [ -z "${SBF_KEEP_CLUSTER:-}" ]; then
	trap 'psql -c "DROP SCHEMA IF EXISTS sbf_demo CASCADE" >/dev/null 2>&1 || true' EXIT
fi

say "loading $(basename "$STREAM")${ROWS:+ (first $ROWS rows)}"
sql "CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL)"
stream_to_copy "$STREAM" | psql -c "\\copy sbf_demo.crawl FROM STDIN" ||
	die "loading $STREAM failed (is it pos<TAB>url or one URL a line?)"
[ -z "$ROWS" ] || sql "DELETE FROM crawl WHERE pos > (SELECT max(pos) FROM (SELECT pos FROM crawl ORDER BY pos LIMIT $ROWS) s)"
sql "ANALYZE crawl"
read -r rows distinct < <(sql "SELECT count(*), count(DISTINCT url) FROM crawl" | tr '|' ' ')
[ "$rows" -gt 0 ] || die "the stream $STREAM has no rows"
say "$rows rows, $distinct distinct URLs, $((rows - distinct)) repeats"

# mark METHOD MEMORY PARAMETERS "SELECT pos, flagged ..." times the query
# and keeps its flags in marks
sql "CREATE TABLE marks (method text, pos bigint, flagged bool)"
sql "CREATE TABLE runs (n serial, method text, memory text, parameters text, seconds numeric)"
mark() {
	say "marking: $1 ($2, $3)"
	sql "DO \$\$
		DECLARE started timestamptz := clock_timestamp();
		BEGIN
			INSERT INTO marks SELECT '$1', pos, flagged FROM ($4) s;
			INSERT INTO runs (method, memory, parameters, seconds)
			VALUES ('$1', '$2', '$3', round(extract(epoch FROM clock_timestamp() - started)::numeric, 2));
		END \$\$"
}

# sliding_window BYTES: the largest window whose slidingbloom_sized at
# $SBF_SLIDING_FPR has at most BYTES bytes of slices (bisection)
sliding_window() {
	sql "WITH RECURSIVE s(lo, hi) AS (
			SELECT 0::bigint, $1::bigint * 8
			UNION ALL
			SELECT CASE WHEN fits THEN mid ELSE lo END, CASE WHEN fits THEN hi ELSE mid END
			FROM (SELECT lo, hi, (lo + hi) / 2 AS mid,
						 slidingbloom_bytes((lo + hi) / 2, $SBF_SLIDING_FPR) - 72 <= $1 AS fits
				  FROM s WHERE hi - lo > 1) t)
		 SELECT max(lo) FROM s"
}
# sliding_shape WINDOW: k, slices and generation of the sized filter
sliding_shape() {
	sql "SELECT 'k=' || (i->>'hashes') || ' slices=' || (i->>'slices') || ' g=' || (i->>'generation')
		 FROM slidingbloom_info(slidingbloom_sized($1, $SBF_SLIDING_FPR)) i"
}

mark "exact" "-" "row_number() over url" \
	"SELECT pos, row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS flagged FROM crawl"
sql "CREATE TABLE exact AS SELECT pos, flagged AS dup FROM marks WHERE method = 'exact';
	 CREATE INDEX ON marks (method, pos)"

for budget in $BUDGETS; do
	bits=$((budget * 8))
	hashes=$(sql "SELECT bloom_optimal_hashes($bits, $distinct)")
	mark "bloom $budget" "$(numfmt --to=iec "$budget")B" "bits=$bits hashes=$hashes" \
		"SELECT pos, is_duplicate(url, bloom_empty($bits, $hashes)) OVER (ORDER BY pos) AS flagged FROM crawl"
	p=$(sql "SELECT stablebloom_info(stablebloom_sized($bits, $SBF_FPR, $SBF_HASHES, 1))->>'decrements'")
	mark "stablebloom $budget" "$(numfmt --to=iec "$budget")B" \
		"cells=$bits hashes=$SBF_HASHES max=1 P=$p (fpr $SBF_FPR)" \
		"SELECT pos, is_duplicate(url, stablebloom_sized($bits, $SBF_FPR, $SBF_HASHES, 1)) OVER (ORDER BY pos) AS flagged FROM crawl"
	window=$(sliding_window "$budget")
	mark "slidingbloom $budget" "$(numfmt --to=iec "$budget")B" \
		"window=$window fpr=$SBF_SLIDING_FPR refresh $(sliding_shape "$window")" \
		"SELECT pos, is_duplicate(url, slidingbloom_sized($window, $SBF_SLIDING_FPR, 0, true)) OVER (ORDER BY pos) AS flagged FROM crawl"
done

# The offline sieve: the stream arrives in $FLUSHES batches, each flushed;
# a row is a repeat when it did not reach the frontier
say "marking: sieve_flush ($FLUSHES flushes)"
sql "CREATE TABLE seen (sig bigint PRIMARY KEY);
	 CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
	 CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL)"
sql "DO \$\$
	DECLARE
		started timestamptz := clock_timestamp();
		lo bigint;
		step bigint := ceil($rows / $FLUSHES::numeric);
	BEGIN
		FOR b IN 0 .. $FLUSHES - 1 LOOP
			INSERT INTO discovered
				SELECT pos, url FROM (SELECT pos, url, row_number() OVER (ORDER BY pos) AS r FROM crawl) s
				WHERE r > b * step AND r <= (b + 1) * step;
			PERFORM sieve_flush('seen', 'discovered', 'frontier');
		END LOOP;
		INSERT INTO marks SELECT 'sieve_flush', c.pos, f.pos IS NULL
			FROM crawl c LEFT JOIN frontier f USING (pos);
		INSERT INTO runs (method, memory, parameters, seconds)
		VALUES ('sieve_flush', pg_size_pretty(pg_total_relation_size('seen')) || ' (seen)',
				'$FLUSHES flushes, work_mem ' || current_setting('work_mem'),
				round(extract(epoch FROM clock_timestamp() - started)::numeric, 2));
	END \$\$"

# A live crawl through a shared filter: $LIVE_SESSIONS sessions replay the
# stream at the same time, in batches of $LIVE_BATCH rows in pos order dealt
# in turn (session 1 takes batches 1, 3, 5, ..., session 2 batches 2, 4,
# 6, ...), each batch one transaction that asks the filter about all its
# URLs at once and records the answers.  Each session waits until all are
# ready, so that they run together; the time is theirs together, from the
# first start to the last finish.
say "marking: shared bloom ($LIVE_SESSIONS sessions, batches of $LIVE_BATCH, capacity $distinct fpr $LIVE_FPR)"
sql "CREATE TABLE live_batches AS
		SELECT (row_number() OVER (ORDER BY pos) - 1) / $LIVE_BATCH + 1 AS batch, pos, url FROM crawl;
	 CREATE INDEX ON live_batches (batch);
	 ANALYZE live_batches;
	 CREATE TABLE live_sessions (session int PRIMARY KEY, started timestamptz,
								 finished timestamptz, batches int, rows bigint);
	 SELECT shared_bloom_create('live_seen', $distinct, $LIVE_FPR)" >/dev/null
sql "CREATE PROCEDURE live_session(me int, sessions int, filter regclass)
	LANGUAGE plpgsql AS \$\$
	DECLARE
		last_batch bigint := (SELECT max(batch) FROM live_batches);
		waiting_since timestamptz := clock_timestamp();
		t0 timestamptz;
		nbatches int := 0;
		nrows bigint := 0;
		answered bigint;
	BEGIN
		INSERT INTO live_sessions (session) VALUES (me);
		COMMIT;
		WHILE (SELECT count(*) FROM live_sessions) < sessions LOOP
			IF clock_timestamp() > waiting_since + interval '60 s' THEN
				RAISE 'session %: the other sessions did not start', me;
			END IF;
			PERFORM pg_sleep(0.001);
		END LOOP;
		t0 := clock_timestamp();
		FOR b IN me .. last_batch BY sessions LOOP
			INSERT INTO marks
			SELECT 'shared bloom', a.pos, a.seen
			  FROM (SELECT array_agg(pos ORDER BY pos) AS pos,
						   shared_test_and_add(filter, array_agg(url ORDER BY pos)) AS seen
					  FROM live_batches WHERE batch = b) x,
				   unnest(x.pos, x.seen) AS a(pos, seen);
			GET DIAGNOSTICS answered = ROW_COUNT;
			nbatches := nbatches + 1;
			nrows := nrows + answered;
			COMMIT;
		END LOOP;
		UPDATE live_sessions
		   SET started = t0, finished = clock_timestamp(), batches = nbatches, rows = nrows
		 WHERE session = me;
		COMMIT;
	END \$\$"
live_pids=()
for session in $(seq 1 "$LIVE_SESSIONS"); do
	sql "CALL live_session($session, $LIVE_SESSIONS, 'live_seen')" >/dev/null &
	live_pids+=($!)
done
for pid in "${live_pids[@]}"; do
	wait "$pid" || die "a session of the live crawl failed"
done
live_memory=$(numfmt --to=iec "$(sql "SELECT shared_info('live_seen')->>'size_bytes'")")
sql "INSERT INTO runs (method, memory, parameters, seconds)
	SELECT 'shared bloom', '${live_memory}B',
		   '$LIVE_SESSIONS sessions, batches of $LIVE_BATCH, capacity $distinct fpr $LIVE_FPR: '
		   || to_char(sum(rows) / greatest(extract(epoch FROM max(finished) - min(started)), 1e-6), 'FM999,999,999') || ' URLs/s',
		   round(extract(epoch FROM max(finished) - min(started))::numeric, 2)
	FROM live_sessions"

sql "CREATE TABLE results AS
	SELECT r.n, r.method, r.memory, r.parameters,
		   count(*) FILTER (WHERE m.flagged AND e.dup) AS tp,
		   count(*) FILTER (WHERE m.flagged AND NOT e.dup) AS fp,
		   count(*) FILTER (WHERE NOT m.flagged AND e.dup) AS fn,
		   count(*) FILTER (WHERE m.flagged) AS flagged,
		   r.seconds
	FROM runs r JOIN marks m USING (method) JOIN exact e USING (pos)
	GROUP BY r.n, r.method, r.memory, r.parameters, r.seconds"

echo
psql -c "SET search_path = sbf_demo, public" -c "\\pset footer off" -c "
	SELECT method, memory, parameters, tp, fp, fn,
		   round(tp::numeric / nullif(tp + fp, 0), 4) AS precision,
		   round(tp::numeric / nullif(tp + fn, 0), 4) AS recall,
		   round(2 * tp::numeric / nullif(2 * tp + fp + fn, 0), 4) AS f1,
		   seconds
	FROM results ORDER BY n"
psql -A -F $'\t' -P footer=off -c "SET search_path = sbf_demo, public" \
	-c "SELECT method, memory, parameters, tp, fp, fn, flagged, seconds FROM results ORDER BY n" \
	>"$OUT/results.tsv"

# How the rates evolve: in 25 slices of the stream, the share of first
# visits flagged (false-positive rate) and of repeats missed (false-negative
# rate), for bloom, stablebloom and slidingbloom at the same memory, beside what theory
# says: (1 - e^(-kn/m))^k for a Bloom filter after n distinct URLs, and the
# stable point of the stable one
say "drawing the false-positive and false-negative rates along the stream"
plot_bits=$((PLOT_BUDGET * 8))
plot_hashes=$(sql "SELECT bloom_optimal_hashes($plot_bits, $distinct)")
plot_p=$(sql "SELECT stablebloom_info(stablebloom_sized($plot_bits, $SBF_FPR, $SBF_HASHES, 1))->>'decrements'")
plot_window=$(sliding_window "$PLOT_BUDGET")
psql -A -F $'\t' -P footer=off -c "SET search_path = sbf_demo, public" -c "
	SELECT slice, max(pos) AS last_pos,
		   round(count(*) FILTER (WHERE b AND NOT dup)::numeric / nullif(count(*) FILTER (WHERE NOT dup), 0), 4) AS bloom_fp,
		   round(count(*) FILTER (WHERE NOT b AND dup)::numeric / nullif(count(*) FILTER (WHERE dup), 0), 4) AS bloom_fn,
		   round(count(*) FILTER (WHERE s AND NOT dup)::numeric / nullif(count(*) FILTER (WHERE NOT dup), 0), 4) AS sbf_fp,
		   round(count(*) FILTER (WHERE NOT s AND dup)::numeric / nullif(count(*) FILTER (WHERE dup), 0), 4) AS sbf_fn,
		   round(bloom_expected_fpr($plot_bits, $plot_hashes, max(distinct_so_far))::numeric, 4) AS bloom_theory,
		   round(stablebloom_fpr($plot_bits, $SBF_HASHES, $plot_p, 1)::numeric, 4) AS sbf_stable,
		   round(count(*) FILTER (WHERE w AND NOT dup)::numeric / nullif(count(*) FILTER (WHERE NOT dup), 0), 4) AS sliding_fp,
		   round(count(*) FILTER (WHERE NOT w AND dup)::numeric / nullif(count(*) FILTER (WHERE dup), 0), 4) AS sliding_fn
	FROM (SELECT e.pos, e.dup, b.flagged AS b, s.flagged AS s, w.flagged AS w,
				 ntile(25) OVER (ORDER BY e.pos) AS slice,
				 count(*) FILTER (WHERE NOT e.dup) OVER (ORDER BY e.pos) AS distinct_so_far
		  FROM exact e
		  JOIN marks b ON b.method = 'bloom $PLOT_BUDGET' AND b.pos = e.pos
		  JOIN marks s ON s.method = 'stablebloom $PLOT_BUDGET' AND s.pos = e.pos
		  JOIN marks w ON w.method = 'slidingbloom $PLOT_BUDGET' AND w.pos = e.pos) t
	GROUP BY slice ORDER BY slice" >"$OUT/evolution.tsv"
[ "$(wc -l <"$OUT/evolution.tsv")" -gt 1 ] || die "no data to draw (is $PLOT_BUDGET among the budgets $BUDGETS?)"

gnuplot <<GP || die "gnuplot failed"
set terminal pngcairo size 960,600 font "sans,11"
set output "$OUT/duplicates.png"
set title "$(basename "$STREAM"): $rows links, $distinct distinct URLs, filters of $(numfmt --to=iec "$PLOT_BUDGET")B\nbloom: $plot_bits bits, k = $plot_hashes;  stablebloom: $plot_bits cells, k = $SBF_HASHES, Max = 1, P = $plot_p;  slidingbloom: window $plot_window, fpr $SBF_SLIDING_FPR"
set xlabel "position in the stream (end of each of 25 slices)"
set ylabel "rate within the slice"
set yrange [0:1]
set key outside bottom center horizontal maxrows 3 width -2
set grid
set datafile separator "\t"
set datafile missing ""
plot "$OUT/evolution.tsv" skip 1 using 2:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#c0392b" title "bloom: first visits flagged (FP)", \
     "" skip 1 using 2:4 with linespoints lw 2 dt 2 pt 6 ps 0.6 lc rgb "#c0392b" title "bloom: repeats missed (FN)", \
     "" skip 1 using 2:7 with lines lw 1 dt 3 lc rgb "#c0392b" title "bloom: (1 - e^{-kn/m})^k after n distinct", \
     "" skip 1 using 2:5 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#2471a3" title "stablebloom: first visits flagged (FP)", \
     "" skip 1 using 2:6 with linespoints lw 2 dt 2 pt 6 ps 0.6 lc rgb "#2471a3" title "stablebloom: repeats missed (FN)", \
     "" skip 1 using 2:8 with lines lw 1 dt 3 lc rgb "#2471a3" title "stablebloom: stable-point FP rate", \
     "" skip 1 using 2:9 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#1e8449" title "slidingbloom: first visits flagged (FP)", \
     "" skip 1 using 2:10 with linespoints lw 2 dt 2 pt 4 ps 0.6 lc rgb "#1e8449" title "slidingbloom: repeats missed (FN)"
GP

cat <<TXT

tp = repeats flagged, fp = first visits wrongly flagged (pages the crawler
would skip), fn = repeats missed (pages fetched twice).  A Bloom filter never
misses a repeat, but the more the stream outgrows it, the more first visits
it flags; a stable Bloom filter keeps its false positives bounded by
forgetting old URLs, which costs repeats missed; a sliding Bloom filter
forgets exactly what is older than the window the memory holds (refresh:
every sighting restarts a URL's window), so it misses only repeats from
farther back than that.  The sieve is exact.
In the live crawl each URL is answered "new" once across both sessions
(never, if the filter's own false positive hides it), but the sessions
run side by side, so the row told "new" may be a later occurrence than
the URL's first: that first one then counts as an fp and the later one as
an fn, although the crawler fetches the page once.

Results: $OUT/results.tsv
Picture: $OUT/duplicates.png
TXT
