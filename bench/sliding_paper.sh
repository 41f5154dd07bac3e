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
# duplicate is neither forwarded nor stored (refresh => false).  Three
# experiments: the rate against m; against w (m = 512); against the number
# of distinct values (m = 768).  Each point is SEEDS streams (10), the same
# for both structures.  Prints, for each point, the false duplicate rate
# (arrivals declared duplicates that the exact forwarder forwards, over the
# arrivals it forwards) of each, mean and standard deviation over the
# streams, their ratio, and sbf's misses inside its own window (an arrival
# reported new although sbf stored the same value fewer than w arrivals
# before: never, by its guarantee; the test suite checks it, this counts it
# again).
#
# Equal memory: the paper's structure takes m (1 + ceil(log2 w)) bits; sbf's
# filter gets as many bytes of slices (its 72-byte header aside).  Which
# sbf filter: SLIDING_FILTER, an SQL expression of :w (the window) and
# :bytes, evaluated once a point.  By default, among every slidingbloom
# layout of at most 64 slices and g = ceil(w / l) within those bytes, the
# one of least expected_fpr (slidingbloom_info), which is what a user can
# build today from the documented model.
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
DROP FUNCTION IF EXISTS sliding_least_expected_fpr(bigint, bigint);
CREATE TABLE sliding_stream (i bigint PRIMARY KEY, v bigint NOT NULL, exact_dup boolean NOT NULL);
CREATE TABLE sliding_results (experiment text, point int, seed int, structure text,
							  bytes bigint, rate float8, misses bigint);
-- the default filter: the layout of least expected_fpr within the bytes
CREATE FUNCTION sliding_least_expected_fpr(w bigint, bytes bigint)
RETURNS slidingbloom LANGUAGE sql AS $$
	SELECT f
	FROM generate_series(1, 32) k, generate_series(1, 64 - k) l,
		 LATERAL (SELECT (bytes / 8 / (k + l)) AS words) s,
		 LATERAL (SELECT slidingbloom_empty(s.words * 64, k, k + l, (w + l - 1) / l) AS f) e
	WHERE s.words >= 1
	ORDER BY (slidingbloom_info(f) ->> 'expected_fpr')::float8, k, l
	LIMIT 1
$$;
SQL

# point EXPERIMENT X VALUES WINDOW BITS: SEEDS streams through both
# structures, in one session
point() {
	local experiment=$1 x=$2 values=$3 window=$4 bits=$5
	local counter_bits bytes filter seed
	counter_bits=$(awk -v w="$window" 'BEGIN { b = 0; while (2 ^ b < w) b++; print b }')
	bytes=$((bits * (1 + counter_bits) / 8))
	if [ -n "$SLIDING_FILTER" ]; then
		filter=${SLIDING_FILTER//:w/$window}
		filter=${filter//:bytes/$bytes}
	else
		filter="sliding_least_expected_fpr($window, $bytes)"
	fi
	{
		echo "SELECT $filter AS f \\gset"
		for seed in $(seq 1 "$SEEDS"); do
			read -r false_dups forwarded misses < <("$BIN" paper "$values" "$ELEMENTS" "$seed" "$window" "$bits" 4)
			cat <<SQL
INSERT INTO sliding_results VALUES ('$experiment', $x, $seed, 'paper', $bytes, $false_dups::float8 / $forwarded, $misses);
TRUNCATE sliding_stream;
\\copy sliding_stream FROM PROGRAM '$BIN stream $values $ELEMENTS $seed $window'
WITH marked AS (
	SELECT i, v, exact_dup, is_duplicate(v, :'f'::slidingbloom) OVER (ORDER BY i) AS flagged
	FROM sliding_stream
)
INSERT INTO sliding_results
SELECT '$experiment', $x, $seed, 'sbf',
	   (SELECT (slidingbloom_info(:'f'::slidingbloom) ->> 'slices')::bigint
			   * ((slidingbloom_info(:'f'::slidingbloom) ->> 'slice_bits')::bigint / 8)),
	   (SELECT count(*) FILTER (WHERE flagged AND NOT exact_dup)::float8
			   / count(*) FILTER (WHERE NOT exact_dup) FROM marked),
	   (SELECT count(*) FROM (SELECT i - lag(i) OVER (PARTITION BY v ORDER BY i) AS gap
							 FROM marked WHERE NOT flagged) g
		WHERE gap <= $window - 1);
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

printf '\nfalse duplicate rate, mean ± sd over %s streams of %s arrivals; equal memory\n' "$SEEDS" "$ELEMENTS"
psql -F ' ' <<'SQL' | awk '
	BEGIN { printf "%-10s %6s %7s %16s %16s %8s %12s\n", "experiment", "point", "bytes", "paper", "sbf", "sbf/paper", "sbf misses" }
	{ printf "%-10s %6s %7s %7.2f%% ± %5.2f %7.2f%% ± %5.2f %8s %12s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
SELECT p.experiment, p.point, p.bytes,
	   round(100 * avg(p.rate)::numeric, 2), round(100 * stddev(p.rate)::numeric, 2),
	   round(100 * avg(s.rate)::numeric, 2), round(100 * stddev(s.rate)::numeric, 2),
	   CASE WHEN avg(p.rate) > 0 THEN round((avg(s.rate) / avg(p.rate))::numeric, 2)::text ELSE '-' END,
	   sum(s.misses)
FROM sliding_results p JOIN sliding_results s USING (experiment, point, seed)
WHERE p.structure = 'paper' AND s.structure = 'sbf'
GROUP BY p.experiment, p.point, p.bytes
ORDER BY array_position(ARRAY['m', 'w', 'values'], p.experiment), p.point;
SQL
rm -rf "$BENCH_TMP"
