#!/usr/bin/env bash
# Parameter study: how well do bloom, stablebloom and slidingbloom mark the
# repeats of real URL streams, at equal memory?  For each stream, and for each memory budget
# (a number of bits per distinct URL of the stream), it runs
#
#   is_duplicate(url, <filter>) OVER (ORDER BY pos)
#
# with a Bloom filter (k = bloom_optimal_hashes for the budget), with
# Stable Bloom filters of every k, Max and target false-positive rate of the
# grid (P from stablebloom_sized, cells = budget bits / bits per cell), and
# with sliding Bloom filters of every target rate, refresh off and on (the
# largest window whose slidingbloom_sized fits the budget), and prints one
# table per stream against the exact answer
# (row_number() OVER (PARTITION BY url ORDER BY pos) > 1):
#
#   tp  repeats flagged             fp  first visits flagged (pages skipped)
#   fn  repeats missed (refetched)  precision, recall, f1 as usual
#   p   decrements per insertion    seconds  the marking pass, joined to the
#                                            exact answer to count
#   window  the sliding filter's window; for the other methods the window a
#           sliding filter of the budget holds at fpr 0.01, for wf1
#   wf1     F1 against the windowed answer: a repeat of a URL met within
#           the window - 1 arrivals before
#
#   bash bench/parameter_study.sh [STREAM ...] > study.txt
#
# Each STREAM is the path of a URL stream file, gzipped or not: pos<TAB>url
# lines, or one URL a line, the line number being the position
# (stream_to_copy in scripts/lib.sh tells them apart).  Without arguments,
# the space-separated paths of $SBF_STUDY_STREAMS, else the files the
# repository ships: data/doccrawl-pg-python.tsv.gz and
# data/eot2024-sitemaps-300k.txt.gz (the first 300,000 URLs of the eot2024
# stream below; under a minute).  Progress goes to stderr, the tables to
# stdout.
#
# docs/parameter-study.md was produced from three public streams, whole:
#
#   bash bench/parameter_study.sh /path/to/doccrawl-pg-python.tsv.gz \
#       /path/to/doccrawl-rust.tsv.gz /path/to/eot2024-sitemaps-a-m.txt.gz
#
#   doccrawl-pg-python.tsv.gz  breadth-first crawl of the PostgreSQL 15 and
#                              Python 3.11 HTML manuals (shipped in data/)
#   doccrawl-rust.tsv.gz       the same crawl of the Rust 1.63 documentation
#   eot2024-sitemaps-a-m.txt.gz  the sitemap URL seeds of hosts a-m of the
#                              2024 End of Term web archive, in file and line
#                              order (github.com/end-of-term/eot2024,
#                              seed-lists/sitemap-url-seeds/)
#
# As root on Debian 12 it installs what is missing, builds and installs sbf
# and runs a throwaway PostgreSQL 15 cluster (scripts/lib.sh).  With
# SBF_USE_EXISTING=1 it uses the server and database that PGHOST, PGPORT,
# PGUSER and PGDATABASE name instead (sbf must be installed there; the script
# runs CREATE EXTENSION IF NOT EXISTS sbf and works in a schema sbf_study,
# which must not exist and is dropped at the end).
#
# The grid, as space-separated lists in the environment:
#
#   SBF_BITS_PER_URL  memory budgets, bits per distinct URL  (0.5 2 8 32)
#   SBF_HASHES        stablebloom k                          (2 4 8)
#   SBF_MAXES         stablebloom Max: 1, 3, 7 take 1, 2, 3 bits a cell (1 3)
#   SBF_FPRS          stablebloom target false-positive rates, from which
#                     stablebloom_sized derives P    (0.01 0.05 0.2 0.5)
#
#   SBF_SLIDING_FPRS  slidingbloom target false-positive rates (0.01 0.05 0.2 0.5)
#
# The default grid is 4 x (1 + 3 x 2 x 4 + 4 x 2) = 132 runs per stream; on 2 cores
# the three whole streams above take about 7 minutes (a run over 2M rows
# takes 1.5 to 2.5 s).  SBF_MAXES="1 3 7" makes it 148 runs and about 10
# minutes.
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	cat >&2 <<'TXT'
usage: bash bench/parameter_study.sh [STREAM ...] > study.txt
  STREAM  the path of a URL stream file (default: $SBF_STUDY_STREAMS, else
          data/doccrawl-pg-python.tsv.gz data/eot2024-sitemaps-300k.txt.gz);
          docs/parameter-study.md was produced from doccrawl-pg-python.tsv.gz,
          doccrawl-rust.tsv.gz and eot2024-sitemaps-a-m.txt.gz
TXT
	exit 2
}
case "${1:-}" in -h | --help) usage ;; esac
BITS_PER_URL=${SBF_BITS_PER_URL:-0.5 2 8 32}
HASHES=${SBF_HASHES:-2 4 8}
MAXES=${SBF_MAXES:-1 3}
FPRS=${SBF_FPRS:-0.01 0.05 0.2 0.5}
SLIDING_FPRS=${SBF_SLIDING_FPRS:-0.01 0.05 0.2 0.5}
if [ $# -eq 0 ]; then
	if [ -n "${SBF_STUDY_STREAMS:-}" ]; then
		read -ra streams <<<"$SBF_STUDY_STREAMS"
		set -- "${streams[@]}"
	else
		set -- "$SBF_ROOT/data/doccrawl-pg-python.tsv.gz" \
			"$SBF_ROOT/data/eot2024-sitemaps-300k.txt.gz"
	fi
fi
for path in "$@"; do
	[ -r "$path" ] || { printf 'error: cannot read %s\n' "$path" >&2; usage; }
done

# "0.5 2 8" -> "{0.5,2,8}", a SQL array literal
array() { local a IFS=' '; read -ra a <<<"$1"; IFS=,; printf '{%s}' "${a[*]}"; }

if [ -n "${SBF_USE_EXISTING:-}" ]; then
	say "using the existing server (PGHOST=${PGHOST:-} PGPORT=${PGPORT:-} PGDATABASE=${PGDATABASE:-})"
else
	ensure_packages
	build_and_install
	start_cluster
fi
# JIT would add a compile time to every run that says nothing about filters
export PGOPTIONS="${PGOPTIONS:-} -c jit=off -c client_min_messages=warning"

psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }

psql -c "CREATE EXTENSION IF NOT EXISTS sbf"
psql -c "CREATE SCHEMA sbf_study"
[ -z "${SBF_USE_EXISTING:-}" ] ||
	trap 'psql -c "DROP SCHEMA sbf_study CASCADE" || true' EXIT
psql <<'SQL'
CREATE TABLE sbf_study.crawl (pos bigint PRIMARY KEY, url text NOT NULL);

-- The exact answer: every occurrence of a URL after its first; gap: the
-- arrivals since its previous occurrence (NULL for the first)
CREATE TABLE sbf_study.exact (pos bigint PRIMARY KEY, dup boolean NOT NULL, gap bigint);

-- One row per configuration; a Bloom filter has no max, p or target_fpr
CREATE TABLE sbf_study.grid (
	id			serial PRIMARY KEY,
	method		text NOT NULL,
	bits		bigint NOT NULL,	-- memory budget, in bits of filter
	hashes		integer NOT NULL,
	max			integer,
	cells		bigint,
	target_fpr	float8,
	decrements	bigint,				-- P, as stablebloom_sized rounded it
	"window"	bigint,				-- sliding: its window; others: for wf1
	refresh		boolean,			-- sliding only
	tp			bigint,
	fp			bigint,
	fn			bigint,
	wtp			bigint,				-- against the windowed answer
	wfp			bigint,
	wfn			bigint,
	seconds		numeric
);

-- The largest window whose slidingbloom_sized(window, fpr) has at most
-- "bits" bits of slices (the header aside, as for the others); 0 if none
CREATE FUNCTION sbf_study.window_for(bits bigint, fpr float8) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	lo			bigint := 0;
	hi			bigint := 1;
	mid			bigint;
BEGIN
	WHILE (slidingbloom_bytes(hi, fpr) - 72) * 8 <= bits LOOP
		lo := hi;
		hi := hi * 2;
	END LOOP;
	WHILE hi - lo > 1 LOOP
		mid := (lo + hi) / 2;
		IF (slidingbloom_bytes(mid, fpr) - 72) * 8 <= bits THEN
			lo := mid;
		ELSE
			hi := mid;
		END IF;
	END LOOP;
	RETURN lo;
END $$;

-- TP, FP and FN of one is_duplicate pass with filter (a bloom, a
-- stablebloom or a slidingbloom), against the exact answer and against the
-- windowed one (a repeat within w - 1 arrivals)
CREATE FUNCTION sbf_study.score(filter anyelement, w bigint,
	OUT tp bigint, OUT fp bigint, OUT fn bigint,
	OUT wtp bigint, OUT wfp bigint, OUT wfn bigint)
LANGUAGE sql AS $$
	SELECT count(*) FILTER (WHERE flagged AND dup),
		   count(*) FILTER (WHERE flagged AND NOT dup),
		   count(*) FILTER (WHERE NOT flagged AND dup),
		   count(*) FILTER (WHERE flagged AND gap < w),
		   count(*) FILTER (WHERE flagged AND NOT coalesce(gap < w, false)),
		   count(*) FILTER (WHERE NOT flagged AND gap < w)
	FROM (SELECT e.dup, e.gap, is_duplicate(c.url, filter) OVER (ORDER BY c.pos) AS flagged
		  FROM sbf_study.crawl c JOIN sbf_study.exact e USING (pos)) s
$$;

-- Run one configuration of the grid and store its result
CREATE FUNCTION sbf_study.run(run_id integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	g			sbf_study.grid;
	sbf			stablebloom;
	started		timestamptz := clock_timestamp();
BEGIN
	SELECT * INTO STRICT g FROM sbf_study.grid WHERE id = run_id;
	IF g.method = 'bloom' THEN
		SELECT * INTO g.tp, g.fp, g.fn, g.wtp, g.wfp, g.wfn
		FROM sbf_study.score(bloom_empty(g.bits, g.hashes), g."window");
	ELSIF g.method = 'slidingbloom' THEN
		SELECT * INTO g.tp, g.fp, g.fn, g.wtp, g.wfp, g.wfn
		FROM sbf_study.score(slidingbloom_sized(g."window", g.target_fpr, 0, g.refresh),
							 g."window");
		g.hashes := slidingbloom_info(slidingbloom_sized(g."window", g.target_fpr))->>'hashes';
	ELSE
		sbf := stablebloom_sized(g.cells, g.target_fpr, g.hashes, g.max);
		g.decrements := stablebloom_info(sbf)->>'decrements';
		SELECT * INTO g.tp, g.fp, g.fn, g.wtp, g.wfp, g.wfn
		FROM sbf_study.score(sbf, g."window");
	END IF;
	UPDATE sbf_study.grid
	SET decrements = g.decrements, hashes = g.hashes, tp = g.tp, fp = g.fp, fn = g.fn,
		wtp = g.wtp, wfp = g.wfp, wfn = g.wfn,
		seconds = round(extract(epoch FROM clock_timestamp() - started), 2)
	WHERE id = run_id;
END $$;
SQL

for path in "$@"; do
	stream=$(basename "$path")
	say "$stream: loading"
	psql -c "TRUNCATE sbf_study.crawl, sbf_study.exact, sbf_study.grid RESTART IDENTITY"
	stream_to_copy "$path" | psql -c "\\copy sbf_study.crawl FROM STDIN"
	psql -c "ANALYZE sbf_study.crawl"

	say "$stream: the exact answer, and the grid"
	psql -v bits_per_url="$(array "$BITS_PER_URL")" -v hashes="$(array "$HASHES")" \
		-v maxes="$(array "$MAXES")" -v fprs="$(array "$FPRS")" \
		-v sliding_fprs="$(array "$SLIDING_FPRS")" <<'SQL'
INSERT INTO sbf_study.exact
	SELECT pos, row_number() OVER (PARTITION BY url ORDER BY pos) > 1,
		   i - lag(i) OVER (PARTITION BY url ORDER BY pos)
	FROM (SELECT pos, url, row_number() OVER (ORDER BY pos) AS i FROM sbf_study.crawl) c;
ANALYZE sbf_study.exact;

SELECT count(DISTINCT url) AS distinct_urls FROM sbf_study.crawl \gset

-- Each budget is a whole number of 64-bit words, the same for every method.
-- A Bloom filter spends it on bits with the best k for the stream's
-- distinct URLs; a stable Bloom filter on cells of cell_bits bits each.
WITH budget AS (
	SELECT DISTINCT (ceil(b * :distinct_urls / 64) * 64)::bigint AS bits
	FROM unnest(:'bits_per_url'::float8[]) b
)
INSERT INTO sbf_study.grid (method, bits, hashes, max, cells, target_fpr)
SELECT 'bloom', bits, bloom_optimal_hashes(bits, :distinct_urls), NULL, NULL, NULL
FROM budget
UNION ALL
SELECT 'stablebloom', bits, k, max, bits / cell_bits, fpr
FROM budget,
	 unnest(:'hashes'::integer[]) k,
	 unnest(:'maxes'::integer[]) max,
	 unnest(:'fprs'::float8[]) fpr,
	 LATERAL (SELECT (stablebloom_info(stablebloom_empty(64, 1, max, 0))->>'cell_bits')::integer
			  AS cell_bits) c
ORDER BY 2, 1, 4, 3, 6;

-- Sliding filters of the budget: the largest window each rate allows
CREATE TEMP TABLE windows AS
	SELECT bits, fpr, sbf_study.window_for(bits, fpr) AS w
	FROM (SELECT DISTINCT bits FROM sbf_study.grid) b,
		 unnest(:'sliding_fprs'::float8[] || 0.01::float8) fpr
	GROUP BY bits, fpr;
INSERT INTO sbf_study.grid (method, bits, hashes, target_fpr, "window", refresh)
SELECT 'slidingbloom', bits, 0, fpr, w, refresh
FROM windows, (VALUES (false), (true)) r(refresh)
WHERE w > 0 AND fpr = ANY (:'sliding_fprs'::float8[])
ORDER BY 2, 4, 6;

-- The other methods' wf1 is against the window of the budget at fpr 0.01
UPDATE sbf_study.grid g SET "window" = w.w
FROM windows w
WHERE g.method <> 'slidingbloom' AND w.bits = g.bits AND w.fpr = 0.01;
DROP TABLE windows;
SQL

	counts=$(psql -At -F ' ' -c "
		SELECT count(*), count(*) FILTER (WHERE NOT dup), count(*) FILTER (WHERE dup)
		FROM sbf_study.exact")
	read -r rows distinct_urls dups <<<"$counts"
	grid=$(psql -At -F ' ' -c "
		SELECT id, method, pg_size_pretty(bits / 8), 'k=' || hashes,
			   coalesce('max=' || max || ' fpr=' || target_fpr, ''),
			   coalesce('window=' || \"window\" || ' fpr=' || target_fpr || ' refresh=' || refresh, '')
		FROM sbf_study.grid ORDER BY id")
	runs=$(wc -l <<<"$grid")
	while read -r id description; do
		say "$stream: run $id/$runs: $description"
		psql -c "SELECT sbf_study.run($id)" >/dev/null
	done <<<"$grid"

	printf '%s: %s rows, %s distinct URLs, %s true duplicates\n\n' \
		"$stream" "$rows" "$distinct_urls" "$dups"
	psql -P footer=off <<'SQL'
SELECT method, pg_size_pretty(bits / 8) AS memory, hashes AS k, max,
	   decrements AS p, target_fpr, refresh, tp, fp, fn,
	   round(tp::numeric / nullif(tp + fp, 0), 4) AS precision,
	   round(tp::numeric / nullif(tp + fn, 0), 4) AS recall,
	   round(2 * tp::numeric / nullif(2 * tp + fp + fn, 0), 4) AS f1,
	   "window",
	   round(2 * wtp::numeric / nullif(2 * wtp + wfp + wfn, 0), 4) AS wf1,
	   seconds
FROM sbf_study.grid
ORDER BY bits, method, max, hashes, target_fpr, refresh;
SQL
done

cat <<'TXT'
How to read this: tp = repeats flagged, fp = first visits wrongly flagged (a
URL the crawler would skip), fn = repeats missed (a URL fetched again).  A
Bloom filter never misses a repeat (fn = 0) but flags more and more first
visits as it fills.  A stable Bloom filter forgets old URLs at P decrements
per insertion: once the stream is long enough, it flags about target_fpr of
the first visits however long the stream, and it misses the repeats of URLs
it has forgotten.  A higher target_fpr gives a lower P (at least 1): fewer
repeats missed, more first visits flagged.  Max = 3 spends 2 bits a cell, so
it has half the cells of Max = 1 at equal memory, but a cell must be
decremented three times before its URL is forgotten.

Compare each stablebloom row with the bloom row of the same memory: a stable
Bloom filter pays off only where that bloom row has many false positives,
that is where the stream has far more distinct URLs than the memory holds.

A sliding Bloom filter never misses a repeat within its window and forgets
what is older: its fn are repeats from farther back than the window the
memory allows at its target_fpr (a higher rate buys a longer window).
refresh = t stores every sighting, so a URL met often stays remembered.
wf1 scores every method against the windowed question (a repeat within the
window - 1 arrivals before), where a sliding filter has no false negative.
TXT
