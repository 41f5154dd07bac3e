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
# slidingbloom evolve along the stream at equal memory.  Then near-duplicate
# pages, which no URL filter sees: the 1,169 pages of the PostgreSQL 15
# manual (data/pgdoc15-pages.tsv.gz) and a re-crawl of every 5th page,
# unchanged or changed slightly (a date, a counter, 3 words); how many
# re-fetched pages simhash recognizes within 3 bits, against an exact hash
# (md5) of the text; and the closest pairs of pages of the manual, with
# the Jaccard similarity of their shingle sets.
#
#   STREAM         a file of URLs, gzipped or not: "pos<TAB>url" lines or
#                  one URL a line (numbered from 1)
#   --rows N       only the first N rows of the stream
#   --database DB  use this existing database (a name or a libpq connection
#                  string; sbf must be installed on its server) instead of a
#                  throwaway cluster; the work happens in a schema sbf_demo,
#                  dropped at the end
#   --keep         keep the throwaway cluster (or the sbf_demo schema)
#   --out DIR      where to write results.tsv, evolution.tsv,
#                  duplicates.png, near_duplicates.tsv and
#                  closest_pairs.tsv (default: out/)
. "$(dirname "$0")/lib.sh"

STREAM=$SBF_ROOT/data/doccrawl-pg-python.tsv.gz
PAGES=$SBF_ROOT/data/pgdoc15-pages.tsv.gz
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
[ -r "$PAGES" ] || die "cannot read the pages $PAGES"
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
# a row is a repeat when it did not reach the frontier.  Twice: into a
# plain seen (a bigint primary key) and into a compressed one
# (sieve_seen_create); the memory column is seen's size on disk, and its
# bytes per distinct URL.
# sieve_marks METHOD SEEN: $FLUSHES flushes into SEEN, which is empty
sieve_marks() {
	say "marking: $1 ($FLUSHES flushes)"
	sql "TRUNCATE discovered, frontier;
	DO \$\$
	DECLARE
		started timestamptz := clock_timestamp();
		lo bigint;
		step bigint := ceil($rows / $FLUSHES::numeric);
	BEGIN
		FOR b IN 0 .. $FLUSHES - 1 LOOP
			INSERT INTO discovered
				SELECT pos, url FROM (SELECT pos, url, row_number() OVER (ORDER BY pos) AS r FROM crawl) s
				WHERE r > b * step AND r <= (b + 1) * step;
			PERFORM sieve_flush('$2', 'discovered', 'frontier');
		END LOOP;
		INSERT INTO marks SELECT '$1', c.pos, f.pos IS NULL
			FROM crawl c LEFT JOIN frontier f USING (pos);
		INSERT INTO runs (method, memory, parameters, seconds)
		VALUES ('$1', pg_size_pretty(pg_total_relation_size('$2')) || ' (seen, '
					|| round(pg_total_relation_size('$2') / $distinct::numeric) || ' B/URL)',
				'$FLUSHES flushes, work_mem ' || current_setting('work_mem'),
				round(extract(epoch FROM clock_timestamp() - started)::numeric, 2));
	END \$\$"
}
sql "CREATE TABLE seen (sig bigint PRIMARY KEY);
	 CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
	 CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
	 SELECT sieve_seen_create('compressed_seen')" >/dev/null
sieve_marks sieve_flush seen
sieve_marks "sieve, compressed" compressed_seen

# A live crawl: $LIVE_SESSIONS sessions replay the stream at the same
# time, in batches of $LIVE_BATCH rows in pos order dealt in turn (session
# 1 takes batches 1, 3, 5, ..., session 2 batches 2, 4, 6, ...), each batch
# one transaction that asks about all its URLs at once and records the
# answers.  Each session waits until all are ready, so that they run
# together; the time is theirs together, from the first start to the last
# finish.  Twice: through a shared Bloom filter, and through the exact
# online store (seen_test_and_add on a compressed seen).
# The shared filter adds at once (transactional => false): sized for the
# stream, a batch can be a fifth of its capacity.
sql "CREATE TABLE live_batches AS
		SELECT (row_number() OVER (ORDER BY pos) - 1) / $LIVE_BATCH + 1 AS batch, pos, url FROM crawl;
	 CREATE INDEX ON live_batches (batch);
	 ANALYZE live_batches;
	 CREATE TABLE live_sessions (session int PRIMARY KEY, started timestamptz,
								 finished timestamptz, batches int, rows bigint);
	 SELECT shared_bloom_create('live_seen', $distinct, $LIVE_FPR, transactional => false);
	 SELECT sieve_seen_create('live_exact')" >/dev/null
sql "CREATE PROCEDURE live_session(me int, sessions int, store regclass, method text)
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
			SELECT method, a.pos, a.seen
			  FROM (SELECT array_agg(pos ORDER BY pos) AS pos, array_agg(url ORDER BY pos) AS urls
					  FROM live_batches WHERE batch = b) x,
				   unnest(x.pos, CASE WHEN method = 'exact online'
									  THEN seen_test_and_add(store, x.urls)
									  ELSE shared_test_and_add(store, x.urls) END) AS a(pos, seen);
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
# live_crawl METHOD STORE MEMORY-QUERY PARAMETERS
live_crawl() {
	local live_pids=() session memory
	say "marking: $1 ($LIVE_SESSIONS sessions, batches of $LIVE_BATCH$4)"
	sql "TRUNCATE live_sessions" >/dev/null
	for session in $(seq 1 "$LIVE_SESSIONS"); do
		sql "CALL live_session($session, $LIVE_SESSIONS, '$2', '$1')" >/dev/null &
		live_pids+=($!)
	done
	for pid in "${live_pids[@]}"; do
		wait "$pid" || die "a session of the live crawl ($1) failed"
	done
	memory=$(sql "$3")
	# a filter's size as the other filters' rows write it
	[ "$1" = "shared bloom" ] && memory="$(numfmt --to=iec "$memory")B"
	sql "INSERT INTO runs (method, memory, parameters, seconds)
		SELECT '$1', '$memory',
			   '$LIVE_SESSIONS sessions, batches of $LIVE_BATCH$4: '
			   || to_char(sum(rows) / greatest(extract(epoch FROM max(finished) - min(started)), 1e-6), 'FM999,999,999') || ' URLs/s',
			   round(extract(epoch FROM max(finished) - min(started))::numeric, 2)
		FROM live_sessions"
}
live_crawl "shared bloom" live_seen \
	"SELECT shared_info('live_seen')->>'size_bytes'" \
	", capacity $distinct fpr $LIVE_FPR"
live_crawl "exact online" live_exact \
	"SELECT pg_size_pretty(pg_total_relation_size('live_exact')) || ' (seen, '
			|| round(pg_total_relation_size('live_exact') / $distinct::numeric) || ' B/URL)'" \
	", seen_test_and_add"

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

# Near-duplicate pages: the manual's pages and a re-crawl of every 5th page
# (in byte order of the names), changed in turn in one of four ways, as a
# page is between two fetches: not at all, a date added, a view counter
# added, or 3 words changed (the 5th, 50th and 100th run of letters and
# digits becomes "changed").  Each re-fetched page is looked up among the
# pages within 3 bits (fp % r.fp, which the GIN index serves); md5 finds
# only identical texts.
say "near-duplicate pages: $(basename "$PAGES")"
sql "CREATE TABLE pages (name text PRIMARY KEY, body text NOT NULL)"
gzip -dc "$PAGES" | sed 's/\\/\\\\/g' | psql -c "\\copy sbf_demo.pages FROM STDIN" ||
	die "loading $PAGES failed"
sql "ALTER TABLE pages ADD fp simhash64;
	 UPDATE pages SET fp = simhash(body);
	 CREATE INDEX ON pages USING gin (fp simhash_ops);
	 CREATE TABLE recrawl AS
	 SELECT name, change,
			CASE change
				WHEN 'unchanged' THEN body
				WHEN 'a date added' THEN body || ' Last fetched on 2025-11-21 09:14 UTC.'
				WHEN 'a counter added' THEN body || ' This page was viewed ' || (1000 + 37 * n) || ' times.'
				ELSE regexp_replace(regexp_replace(regexp_replace(body,
						'[A-Za-z0-9]+', 'changed', 1, 100), '[A-Za-z0-9]+', 'changed', 1, 50),
						'[A-Za-z0-9]+', 'changed', 1, 5)
			END AS body
	 FROM (SELECT name, body, n,
				  (ARRAY['unchanged', 'a date added', 'a counter added', '3 words changed'])[(n / 5) % 4 + 1] AS change
		   FROM (SELECT name, body, row_number() OVER (ORDER BY name COLLATE \"C\") - 1 AS n FROM pages) p
		   WHERE n % 5 = 0) s;
	 ALTER TABLE recrawl ADD fp simhash64;
	 UPDATE recrawl SET fp = simhash(body);
	 ANALYZE pages, recrawl"
sql "CREATE TABLE near_duplicates AS
	 SELECT r.change, count(*) AS pages,
			count(*) FILTER (WHERE md5(r.body) = md5(p.body)) AS md5_recognized,
			count(*) FILTER (WHERE r.name = ANY (m.names)) AS simhash_recognized,
			sum(cardinality(m.names) - CASE WHEN r.name = ANY (m.names) THEN 1 ELSE 0 END) AS other_pages_matched,
			percentile_disc(0.5) WITHIN GROUP (ORDER BY r.fp <~> p.fp) AS median_distance
	 FROM recrawl r JOIN pages p USING (name)
	 CROSS JOIN LATERAL (SELECT coalesce(array_agg(q.name), '{}') AS names
						 FROM pages q WHERE q.fp % r.fp) m
	 GROUP BY r.change"
# The closest pairs of the manual, by brute force over its 682,696 pairs,
# and the Jaccard similarity of their sets of 3-word shingles (the
# tokenization of simhash: runs of ASCII letters, digits and non-ASCII
# characters, ASCII lower-cased)
sql "CREATE TABLE closest_pairs AS
	 WITH pairs AS (
		SELECT a.name AS a, b.name AS b, a.fp <~> b.fp AS distance
		FROM pages a JOIN pages b ON a.name < b.name
		ORDER BY distance, a.name COLLATE \"C\", b.name COLLATE \"C\" LIMIT 5
	 ), words AS (
		SELECT p.name, w.i,
			   translate(w.word[1], 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') AS word
		FROM pages p, regexp_matches(p.body, '[A-Za-z0-9\\u0080-\\U0010FFFF]+', 'g') WITH ORDINALITY AS w(word, i)
		WHERE p.name IN (SELECT a FROM pairs UNION SELECT b FROM pairs)
	 ), shingles AS (
		SELECT DISTINCT name, word || ' ' || lead(word, 1) OVER w || ' ' || lead(word, 2) OVER w AS shingle
		FROM words WINDOW w AS (PARTITION BY name ORDER BY i)
	 )
	 SELECT pairs.*,
			round((SELECT count(*) FROM shingles x JOIN shingles y USING (shingle)
				   WHERE x.name = pairs.a AND y.name = pairs.b AND shingle IS NOT NULL)::numeric
				  / (SELECT count(DISTINCT shingle) FROM shingles
					 WHERE name IN (pairs.a, pairs.b) AND shingle IS NOT NULL), 3) AS jaccard
	 FROM pairs"
echo
psql -c "SET search_path = sbf_demo, public" -c "\\pset footer off" -c "
	SELECT change AS \"re-fetched page\", pages, md5_recognized AS \"md5: same\",
		   simhash_recognized AS \"simhash: within 3 bits\", other_pages_matched AS \"other pages within 3\",
		   median_distance AS \"median bits\"
	FROM near_duplicates ORDER BY array_position(ARRAY['unchanged', 'a date added', 'a counter added', '3 words changed'], change)" \
	-c "SELECT a, b, distance AS bits, jaccard FROM closest_pairs ORDER BY distance, a COLLATE \"C\", b COLLATE \"C\""
read -r natural_near closest_bits < <(sql "SELECT (SELECT count(*) FROM pages a JOIN pages b ON a.name < b.name AND a.fp % b.fp),
	(SELECT min(distance) FROM closest_pairs)" | tr '|' ' ')
psql -A -F $'\t' -P footer=off -c "SET search_path = sbf_demo, public" \
	-c "SELECT change, pages, md5_recognized, simhash_recognized, other_pages_matched, median_distance FROM near_duplicates ORDER BY change" \
	>"$OUT/near_duplicates.tsv"
psql -A -F $'\t' -P footer=off -c "SET search_path = sbf_demo, public" \
	-c "SELECT a, b, distance, jaccard FROM closest_pairs ORDER BY distance, a COLLATE \"C\", b COLLATE \"C\"" \
	>"$OUT/closest_pairs.tsv"

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

A re-fetched page whose text changed by a date, a counter or a few words
has a new md5; its simhash stays within 3 bits of the page it was for many
of them (the table), fewer among short pages, where a few words are a
larger share of the text (docs/simhash.md).  Of the pages of the manual itself,
$natural_near pairs are within 3 bits; the closest pair differs in $closest_bits.

Results: $OUT/results.tsv
Picture: $OUT/duplicates.png
Near-duplicates: $OUT/near_duplicates.tsv, $OUT/closest_pairs.tsv
TXT
