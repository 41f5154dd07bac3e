#!/usr/bin/env bash
# The Sliding Bloom filter paper's experiments, re-run: its own structure
# (m bits and m counters, written for this benchmark in
# bench/sliding_paper.c) against sbf's sliding filter of the same memory,
# on the same streams, scored against the exact w-duplicate forwarder.
#
#   bash bench/sliding_paper.sh                 # starts a throwaway cluster
#   SBF_USE_EXISTING=1 bash bench/sliding_paper.sh   # PGHOST/PGPORT/PGDATABASE as set
#
# The paper's defaults: streams of 10,000 arrivals drawn uniformly from 100
# distinct values, window w = 500, m = 768, k = 4, and its rule that a
# duplicate is neither forwarded nor stored (refresh => false).  Its four
# experiments: the rate against m; against w (m = 512); against the number
# of distinct values (m = 768); and two levels, 5 streams each forwarding
# what its own filter finds new, the messages saved against w (sbf's
# filters beside exact forwarders; the central filter does not change the
# messages).  Each point is SEEDS streams (10), the same
# for both structures.  Prints, for each point, the false duplicate rate
# (arrivals declared duplicates that the exact forwarder forwards, over the
# arrivals it forwards) of each, mean and standard deviation over the
# streams, their ratio, and sbf's misses inside its own window (an arrival
# reported new although sbf stored the same value fewer than w arrivals
# before: never, by its guarantee; the test suite checks it, this counts it
# again).
#
# Equal memory: the paper's structure takes m (1 + ceil(log2 w)) bits; sbf's
# filters get as many bytes of slices, their 72-byte header aside:
# slidingbloom_fit(w, bytes + 72, 0, false, D), told the expected number D
# of distinct values in a window (D = V (1 - (1 - 1/V)^w) for V values),
# and the same without D (distinct_values => NULL: every value new, so
# false positives alone count).  SLIDING_FILTER replaces the first by
# another SQL expression of :w, :bytes (of slices), :distinct and :seed
# (each run's hash seed).
. "$(dirname "$0")/lib.sh"

SEEDS=${SEEDS:-10}
ELEMENTS=${ELEMENTS:-10000}
SLIDING_FILTER=${SLIDING_FILTER:-}

if [ -z "${SBF_USE_EXISTING:-}" ]; then
	ensure_packages
	build_and_install
	start_cluster
fi
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

BIN=$BENCH_TMP/sliding_paper
gcc -O2 -Wall -o "$BIN" "$SBF_ROOT/bench/sliding_paper.c" || die "cannot build bench/sliding_paper.c"

psql <<'SQL'
CREATE EXTENSION IF NOT EXISTS sbf;
DROP TABLE IF EXISTS sliding_stream, sliding_results;
CREATE TABLE sliding_stream (i bigint PRIMARY KEY, v bigint NOT NULL, exact_dup boolean NOT NULL);
CREATE TABLE sliding_results (experiment text, point int, seed int, structure text,
							  bytes bigint, rate float8, misses bigint);
SQL

# point EXPERIMENT X VALUES WINDOW BITS: SEEDS streams through both
# structures, in one session
point() {
	local experiment=$1 x=$2 values=$3 window=$4 bits=$5
	local counter_bits bytes distinct filter seed
	counter_bits=$(awk -v w="$window" 'BEGIN { b = 0; while (2 ^ b < w) b++; print b }')
	bytes=$((bits * (1 + counter_bits) / 8))
	distinct=$(awk -v v="$values" -v w="$window" 'BEGIN { printf "%d", v * (1 - (1 - 1 / v) ^ w) + 0.5 }')
	filter=${SLIDING_FILTER:-"slidingbloom_fit(:w, :bytes + 72, :seed, false, :distinct)"}
	filter=${filter//:w/$window}
	filter=${filter//:bytes/$bytes}
	filter=${filter//:distinct/$distinct}
	{
		for seed in $(seq 1 "$SEEDS"); do
			# each run its own hash seed, as the reference's
			echo "SELECT ${filter//:seed/$seed} AS f \\gset"
			echo "SELECT slidingbloom_fit($window, $bytes + 72, $seed, false) AS u \\gset"
			read -r false_dups forwarded misses < <("$BIN" paper "$values" "$ELEMENTS" "$seed" "$window" "$bits" 4)
			cat <<SQL
INSERT INTO sliding_results VALUES ('$experiment', $x, $seed, 'paper', $bytes, $false_dups::float8 / $forwarded, $misses);
TRUNCATE sliding_stream;
\\copy sliding_stream FROM PROGRAM '$BIN stream $values $ELEMENTS $seed $window'
WITH marked AS (
	SELECT i, v, exact_dup, is_duplicate(v, :'f'::slidingbloom) OVER (ORDER BY i) AS flagged,
		   is_duplicate(v, :'u'::slidingbloom) OVER (ORDER BY i) AS flagged_unknown
	FROM sliding_stream
)
INSERT INTO sliding_results
SELECT '$experiment', $x, $seed, structure,
	   (slidingbloom_info(filter) ->> 'slices')::bigint
	   * ((slidingbloom_info(filter) ->> 'slice_bits')::bigint / 8),
	   rate, misses
FROM (VALUES ('sbf', :'f'::slidingbloom,
			  (SELECT count(*) FILTER (WHERE flagged AND NOT exact_dup)::float8
					  / count(*) FILTER (WHERE NOT exact_dup) FROM marked),
			  (SELECT count(*) FROM (SELECT i - lag(i) OVER (PARTITION BY v ORDER BY i) AS gap
									FROM marked WHERE NOT flagged) g
			   WHERE gap <= $window - 1)),
			 ('sbf, distinct unknown', :'u'::slidingbloom,
			  (SELECT count(*) FILTER (WHERE flagged_unknown AND NOT exact_dup)::float8
					  / count(*) FILTER (WHERE NOT exact_dup) FROM marked),
			  (SELECT count(*) FROM (SELECT i - lag(i) OVER (PARTITION BY v ORDER BY i) AS gap
									FROM marked WHERE NOT flagged_unknown) g
			   WHERE gap <= $window - 1))) r (structure, filter, rate, misses);
SQL
		done
	} | psql
}

say "the rate against m (w = 500, 100 values)"
for m in 256 512 768 1024 1536 2048; do point "m" "$m" 100 500 "$m"; done
say "the rate against w (m = 512, 100 values)"
for w in 100 200 300 400 500 600 800 1000; do point "w" "$w" 100 "$w" 512; done
say "the rate against the distinct values (w = 500, m = 768)"
for v in 25 50 100 200 300 500 1000; do point "values" "$v" "$v" 500 768; done

# The two-level scheme: STREAMS streams of ELEMENTS arrivals each over the
# same 100 values, each with slidingbloom_fit(w, 1024, 0, false, D) of its
# own; the share of arrivals they do not forward (the messages saved),
# beside the exact forwarders', and the false duplicates that part of the
# saving is
STREAMS=5
say "two levels: $STREAMS streams, the messages saved against w"
psql <<'SQL'
DROP TABLE IF EXISTS sliding_two_level, sliding_two_level_results;
CREATE TABLE sliding_two_level (stream int, i bigint, v bigint, exact_dup boolean);
CREATE TABLE sliding_two_level_results (w int, seed int, saved float8, exact_saved float8,
										false_dups float8);
SQL
for w in 100 200 300 500 800 1000; do
	distinct=$(awk -v v=100 -v w="$w" 'BEGIN { printf "%d", v * (1 - (1 - 1 / v) ^ w) + 0.5 }')
	{
		for seed in $(seq 1 "$SEEDS"); do
			echo "TRUNCATE sliding_two_level;"
			for stream in $(seq 1 "$STREAMS"); do
				echo "\\copy sliding_two_level (i, v, exact_dup) FROM PROGRAM '$BIN stream 100 $ELEMENTS $((seed * 100 + stream)) $w'"
				echo "UPDATE sliding_two_level SET stream = $stream WHERE stream IS NULL;"
			done
			cat <<SQL
WITH marked AS (
	SELECT exact_dup, is_duplicate(v, slidingbloom_fit($w, 1024, $seed, false, $distinct))
						  OVER (PARTITION BY stream ORDER BY i) AS dup
	FROM sliding_two_level
)
INSERT INTO sliding_two_level_results
SELECT $w, $seed, avg(dup::int), avg(exact_dup::int),
	   count(*) FILTER (WHERE dup AND NOT exact_dup)::float8 / count(*) FILTER (WHERE NOT exact_dup)
FROM marked;
SQL
		done
	} | psql
done

printf '\nfalse duplicate rate, mean ± sd over %s streams of %s arrivals; equal memory\n' "$SEEDS" "$ELEMENTS"
psql -F ' ' <<'SQL' | awk '
	BEGIN { printf "%-10s %6s %6s %16s %16s %9s %16s %7s\n", "experiment", "point", "bytes", "paper", "sbf", "sbf/paper", "D unknown", "misses" }
	{ printf "%-10s %6s %6s %7.2f%% ± %5.2f %7.2f%% ± %5.2f %9s %7.2f%% ± %5.2f %7s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
SELECT p.experiment, p.point, p.bytes,
	   round(100 * avg(p.rate)::numeric, 2), round(100 * stddev(p.rate)::numeric, 2),
	   round(100 * avg(s.rate)::numeric, 2), round(100 * stddev(s.rate)::numeric, 2),
	   CASE WHEN avg(p.rate) > 0 THEN round((avg(s.rate) / avg(p.rate))::numeric, 2)::text
			WHEN avg(s.rate) = 0 THEN '1.00' ELSE 'inf' END,
	   round(100 * avg(u.rate)::numeric, 2), round(100 * stddev(u.rate)::numeric, 2),
	   sum(s.misses) + sum(u.misses)
FROM sliding_results p
	 JOIN sliding_results s USING (experiment, point, seed)
	 JOIN sliding_results u USING (experiment, point, seed)
WHERE p.structure = 'paper' AND s.structure = 'sbf' AND u.structure = 'sbf, distinct unknown'
GROUP BY p.experiment, p.point, p.bytes
ORDER BY array_position(ARRAY['m', 'w', 'values'], p.experiment), p.point;
SQL

printf '\ntwo levels: %s streams of %s arrivals over 100 values, 1 kB a local filter;\n' "$STREAMS" "$ELEMENTS"
printf 'messages saved (arrivals not forwarded), mean over %s runs\n' "$SEEDS"
psql -F ' ' <<'SQL' | awk '
	BEGIN { printf "%6s %12s %12s %18s\n", "w", "sbf saved", "exact saved", "false duplicates" }
	{ printf "%6s %11.1f%% %11.1f%% %17.2f%%\n", $1, $2, $3, $4 }'
SELECT w, round(100 * avg(saved)::numeric, 1), round(100 * avg(exact_saved)::numeric, 1),
	   round(100 * avg(false_dups)::numeric, 2)
FROM sliding_two_level_results GROUP BY w ORDER BY w;
SQL
rm -rf "$BENCH_TMP"
