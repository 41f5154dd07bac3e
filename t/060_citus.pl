# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# sbf on a real Citus cluster: the Citus section of docs/distributed.md, run.
# A coordinator and two workers (t/SbfCitus.pm) hold the doc crawl
# distributed by its URL signature; a plain server ("single") holds the same
# rows and gives the reference answers.  Every Citus statement of the
# document is executed here, and each claim is checked against one server:
#  (a) the layout: a plain "sig bigint" distribution column, checked against
#	   url_signature(url) by a CHECK constraint (a GENERATED column is
#	   refused by Citus), the tables colocated;
#  (b) bloom_agg, bloom_union_agg and bloom_intersect_agg over the whole
#	   distributed table equal one server's bit for bit, are pushed down to
#	   the workers as partial aggregates, and also work with the coordinator
#	   aggregation strategy disabled;
#  (c) stablebloom_agg (ordered, no combine function) is gathered on the
#	   coordinator, refused with the strategy disabled, and per shard through
#	   run_command_on_shards gives one server's filter of each shard's rows;
#  (d) marking per shard (run_command_on_colocated_placements): each shard's
#	   stream marked in order with its own filter equals one server's
#	   marking of that shard's rows; false positives and negatives against
#	   the exact answer and against one server's marking of the whole stream;
#	   is_duplicate OVER (PARTITION BY sig ...) is pushed down and is the
#	   exact per-URL answer; OVER (ORDER BY pos) gathers every row;
#  (e) the run_command_on_shards + bloom_union_agg merge is one server's
#	   filter; its time and the bytes it ships against the aggregate and
#	   one server.
# Times are printed (diag), never asserted: they go into docs/distributed.md.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use SbfCitus;
use List::Util qw(min);
use PostgreSQL::Test::Utils;
use Test::More;

SbfCitus::skip_unless_installed();

my ($coordinator, @workers) = SbfCitus::new_cluster('citus', 2);
my $single = SbfTest::new_node('single');

# The best of RUNS executions of SQL, in milliseconds, as psql's \timing
# measures it (the results are discarded); SETUP, untimed, before each
sub best_ms
{
	my ($node, $sql, $runs, $setup) = @_;
	my $script = "\\o /dev/null\n";
	$script .= ($setup ? "$setup;\n" : '') . "\\timing on\n$sql;\n\\timing off\n"
	  for 1 .. $runs;
	my $out = $node->safe_psql('postgres', $script);
	my @ms = $out =~ /^Time: ([0-9.]+) ms/mg;
	die "no timing in the output of $sql" unless @ms == $runs;
	return min(@ms);
}

# ERROR message of SQL run on NODE (empty when it succeeded)
sub error_of
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	return $ret == 0 ? '' : $err;
}

my @rows = SbfTest::stream_rows(SbfTest::data_file('doccrawl-pg-python.tsv.gz'));
my $nrows = scalar(@rows);

# --- (a) the layout -------------------------------------------------------

# The layout the document described before it was run: Citus refuses it
like(
	error_of(
		$coordinator, q{
CREATE TABLE crawl_generated (pos bigint, url text,
	sig bigint GENERATED ALWAYS AS (url_signature(url)) STORED);
SELECT create_distributed_table('crawl_generated', 'sig');
}),
	qr/cannot distribute relation.*\n.*Distribution column must not use GENERATED ALWAYS AS/,
	'(a) a GENERATED signature column cannot be the distribution column');

# The layout of docs/distributed.md, as written there
$coordinator->safe_psql(
	'postgres', q{
CREATE TABLE crawl (
	pos bigint NOT NULL,
	url text NOT NULL,
	sig bigint NOT NULL CHECK (sig = url_signature(url))
);
SELECT create_distributed_table('crawl', 'sig');

CREATE TABLE marks (pos bigint NOT NULL, sig bigint NOT NULL, seen boolean NOT NULL);
SELECT create_distributed_table('marks', 'sig', colocate_with => 'crawl');
});

# The crawler's two ways in: a batch from a table of new links, and one row
my ($lastpos, $lasturl) = @{ $rows[-1] };
$coordinator->safe_psql('postgres',
	'CREATE TABLE new_links (pos bigint NOT NULL, url text NOT NULL)');
SbfTest::copy_rows($coordinator, 'new_links', [ @rows[ 0 .. $#rows - 1 ] ]);
(my $quoted = $lasturl) =~ s/'/''/g;
$coordinator->safe_psql(
	'postgres', qq{
INSERT INTO crawl (pos, url, sig)
	SELECT pos, url, url_signature(url) FROM new_links;
INSERT INTO crawl (pos, url, sig)
	VALUES ($lastpos, '$quoted', url_signature('$quoted'));
});

like(
	error_of(
		$coordinator,
		q{INSERT INTO crawl VALUES (0, 'https://www.postgresql.org/', 42)}),
	qr/violates check constraint/,
	'(a) a row whose sig is not url_signature(url) is refused on its shard');

my ($nshards, $colocated, $placed, $workers_used) = split(
	/\|/,
	$coordinator->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'crawl'::regclass),
	   (SELECT count(DISTINCT colocationid) = 1 FROM pg_dist_partition
		WHERE logicalrelid IN ('crawl'::regclass, 'marks'::regclass)),
	   (SELECT count(*) FROM crawl),
	   (SELECT count(DISTINCT nodeport) FROM pg_dist_shard_placement p
		JOIN pg_dist_shard s USING (shardid) WHERE s.logicalrelid = 'crawl'::regclass)
}));
is($placed, $nrows,
	"(a) the $nrows rows of the doc crawl are in the distributed table ($nshards shards on $workers_used workers)"
);
is($colocated, 't', '(a) crawl and marks are colocated');

# One server: the same rows, and the shard intervals of the cluster so that
# it can tell which shard a row is on (Citus hashes a bigint with hashint8)
SbfTest::load_stream($single, 'crawl',
	SbfTest::data_file('doccrawl-pg-python.tsv.gz'));
my $intervals = $coordinator->safe_psql(
	'postgres', q{
SELECT string_agg(format('(%s, %s, %s)', shardid, shardminvalue, shardmaxvalue), ', ')
FROM pg_dist_shard WHERE logicalrelid = 'crawl'::regclass
});
$single->safe_psql(
	'postgres', qq{
CREATE TABLE shards (shardid bigint, lo int, hi int);
INSERT INTO shards VALUES $intervals;
CREATE TABLE crawl_sharded AS
	SELECT c.pos, c.url, s.shardid FROM crawl c
	JOIN shards s ON hashint8(url_signature(c.url)) BETWEEN s.lo AND s.hi;
CREATE TABLE exact AS
	SELECT pos, row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS dup FROM crawl;
});

# Each shard's rows as Citus holds them, against one server's idea of them
my $per_shard_rows = q{string_agg(shardid || ':' || n || ':' || s, ',' ORDER BY shardid)};
my $citus_shards = $coordinator->safe_psql(
	'postgres', qq{
SELECT $per_shard_rows FROM (
	SELECT shardid, split_part(result, ' ', 1) AS n, split_part(result, ' ', 2) AS s
	FROM run_command_on_shards('crawl',
		\$\$SELECT count(*) || ' ' || md5(string_agg(pos::text, ',' ORDER BY pos)) FROM %s\$\$)) r
});
my $single_shards = $single->safe_psql(
	'postgres', qq{
SELECT $per_shard_rows FROM (
	SELECT shardid, count(*) AS n, md5(string_agg(pos::text, ',' ORDER BY pos)) AS s
	FROM crawl_sharded GROUP BY shardid) r
});
is($citus_shards, $single_shards,
	'(a) every row is on the shard whose hashint8 interval holds its sig');

# --- (b) aggregates over the whole distributed table ---------------------

# Per-batch filters, distributed by batch: their union is the crawl's filter
my $batches = q{
CREATE TABLE batches (batch bigint NOT NULL, filter bloom NOT NULL);
};
$coordinator->safe_psql('postgres',
	"$batches SELECT create_distributed_table('batches', 'batch');");
$single->safe_psql('postgres', $batches);
foreach my $node ($coordinator, $single)
{
	$node->safe_psql(
		'postgres', q{
INSERT INTO batches
	SELECT pos / 4096, bloom_agg(url, 10000, 0.01) FROM crawl GROUP BY pos / 4096;
});
}

my %aggregate = (
	'bloom_agg' => 'SELECT bloom_agg(url, 10000, 0.01) FROM crawl',
	'bloom_union_agg' => 'SELECT bloom_union_agg(filter) FROM batches',
	'bloom_intersect_agg' => 'SELECT bloom_intersect_agg(filter) FROM batches');
my $whole = $single->safe_psql('postgres',
	'SELECT md5(bloom_agg(url, 10000, 0.01)::text) FROM crawl');
foreach my $name (sort keys %aggregate)
{
	my $sql = $aggregate{$name};
	my $expected =
	  $single->safe_psql('postgres', "SELECT md5(($sql)::text)");
	my $got = $coordinator->safe_psql('postgres', "SELECT md5(($sql)::text)");
	is($got, $expected,
		"(b) $name over the distributed table = one server, bit for bit");
	my $plan = $coordinator->safe_psql('postgres',
		"EXPLAIN (VERBOSE, COSTS OFF) $sql");
	# (Citus 14 moves the partial states in binary: worker_binary_partial_agg
	# and coord_binary_combine_agg)
	ok( $plan =~ /worker_(binary_)?partial_agg/
		  && $plan =~ /coord_(binary_)?combine_agg/,
		"(b) $name is pushed down (EXPLAIN VERBOSE: worker_partial_agg on the shards, coord_combine_agg on the coordinator)"
	) or diag($plan);
	my ($ret, $disabled, $err) = $coordinator->psql('postgres',
		"SET citus.coordinator_aggregation_strategy = 'disabled';\n"
		  . "SELECT md5(($sql)::text)");
	is($disabled, $expected,
		"(b) $name with citus.coordinator_aggregation_strategy = 'disabled' = one server"
	) or diag($err);
}
is( $single->safe_psql(
		'postgres', 'SELECT md5(bloom_union_agg(filter)::text) FROM batches'),
	$whole,
	'(b) the union of the per-batch filters is the filter of the whole crawl');

# Times: the aggregate on one server, on Citus, and the merge of the shards'
# filters through run_command_on_shards, for a small and a 4 MB filter
my %ms;
foreach my $capacity (10000, 3400000)
{
	my $agg = "bloom_agg(url, $capacity, 0.01)";
	$ms{"single $capacity"} =
	  best_ms($single, "SELECT ($agg) IS NOT NULL FROM crawl", 3);
	$ms{"citus $capacity"} =
	  best_ms($coordinator, "SELECT ($agg) IS NOT NULL FROM crawl", 3);
	$ms{"merge $capacity"} = best_ms(
		$coordinator,
		"SELECT bloom_union_agg(result::bloom) IS NOT NULL FROM run_command_on_shards('crawl', \$\$SELECT $agg FROM %s\$\$)",
		3);
}

# --- (c) stablebloom_agg --------------------------------------------------

my $sagg =
  'stablebloom_agg(url, stablebloom_sized(20000, 0.05, 4, 3) ORDER BY pos)';
my $plan = $coordinator->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) SELECT $sagg FROM crawl");
ok( $plan =~ /\A\s*Aggregate\n.*Custom Scan \(Citus Adaptive\)/s
	  && $plan !~ /worker_partial_agg/
	  && $plan =~ /Query: SELECT url AS stablebloom_agg/,
	'(c) stablebloom_agg is computed on the coordinator over every row (the shards send url and pos)'
) or diag($plan);
is( $coordinator->safe_psql('postgres', "SELECT md5(($sagg)::text) FROM crawl"),
	$single->safe_psql('postgres', "SELECT md5(($sagg)::text) FROM crawl"),
	'(c) gathered, stablebloom_agg(... ORDER BY pos) = one server, bit for bit'
);
like(
	error_of(
		$coordinator,
		"SET citus.coordinator_aggregation_strategy = 'disabled';\n"
		  . "SELECT $sagg FROM crawl"),
	qr/unsupported aggregate function stablebloom_agg/,
	"(c) with the coordinator aggregation strategy disabled, stablebloom_agg is refused"
);

# One stable filter per shard, each of its shard's stream in order
my $per_shard_filter = q{string_agg(shardid || ':' || f, ',' ORDER BY shardid)};
my $shard_sagg =
  'stablebloom_agg(url, stablebloom_sized(2000, 0.05, 4, 3) ORDER BY pos)';
my $citus_sfilters = $coordinator->safe_psql(
	'postgres', qq{
SELECT $per_shard_filter FROM (
	SELECT shardid, md5((result::stablebloom)::text) AS f
	FROM run_command_on_shards('crawl', \$\$SELECT $shard_sagg FROM %s\$\$)) r
});
my $single_sfilters = $single->safe_psql(
	'postgres', qq{
SELECT $per_shard_filter FROM (
	SELECT shardid, md5(($shard_sagg)::text) AS f
	FROM crawl_sharded GROUP BY shardid) r
});
is($citus_sfilters, $single_sfilters,
	"(c) per shard (run_command_on_shards), each of the $nshards stable filters = one server's of that shard's rows"
);

# --- (d) marking per shard ------------------------------------------------

# Each shard's filter sized for its share of the 6,000 distinct URLs the
# whole crawl is sized for
my $capacity = 6000;
my $share = int(($capacity + $nshards - 1) / $nshards);
my $mark_sql = qq{
SELECT count(*) AS placements, bool_and(success) AS all_succeeded
FROM run_command_on_colocated_placements('marks', 'crawl', \$\$
	INSERT INTO %s (pos, sig, seen)
	SELECT pos, sig, is_duplicate(url, bloom_sized($share, 0.01)) OVER (ORDER BY pos)
	FROM %s \$\$)
};
my ($placements, $succeeded) =
  split(/\|/, $coordinator->safe_psql('postgres', $mark_sql));
$ms{'mark shards'} =
  best_ms($coordinator, $mark_sql, 3, 'TRUNCATE marks');
is("$placements $succeeded", "$nshards t",
	"(d) marking ran on each of the $nshards colocated shard pairs, all succeeded"
);
is( $coordinator->safe_psql(
		'postgres', 'SELECT count(*) FROM crawl JOIN marks USING (sig, pos)'),
	$nrows,
	"(d) every row's mark is on its row's shard (colocated join: $nrows rows)");

# One server: each shard's rows marked alone, and the whole stream marked
$single->safe_psql(
	'postgres', qq{
CREATE TABLE shard_marks AS
	SELECT pos, is_duplicate(url, bloom_sized($share, 0.01))
				OVER (PARTITION BY shardid ORDER BY pos) AS seen
	FROM crawl_sharded;
CREATE TABLE whole_marks AS
	SELECT pos, is_duplicate(url, bloom_sized($capacity, 0.01)) OVER (ORDER BY pos) AS seen
	FROM crawl;
CREATE TABLE citus_marks (pos bigint, seen boolean);
CREATE TABLE marks (pos bigint NOT NULL, seen boolean NOT NULL);
});
$ms{'mark single'} = best_ms(
	$single, qq{
INSERT INTO marks (pos, seen)
SELECT pos, is_duplicate(url, bloom_sized($capacity, 0.01)) OVER (ORDER BY pos)
FROM crawl
}, 3, 'TRUNCATE marks');
my $marks = $coordinator->safe_psql('postgres',
	'COPY (SELECT pos, seen FROM marks) TO STDOUT');
$single->safe_psql('postgres', "COPY citus_marks FROM STDIN;\n$marks\n\\.\n");
my ($nmarks, $differ) = split(
	/\|/,
	$single->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM citus_marks),
	   (SELECT count(*) FROM citus_marks c FULL JOIN shard_marks s USING (pos)
		WHERE c.seen IS DISTINCT FROM s.seen)
}));
ok( $nmarks == $nrows && $differ == 0,
	"(d) every shard's marks = one server's marking of that shard's rows ($nmarks marks, $differ differ)"
);

# Against the exact answer and against one server's marking of the whole
# stream with a filter for all 6,000
my ($fp, $fn, $dups, $firsts, $bound, $least, $most, $whole_fp, $whole_fn,
	$extra, $missing)
  = split(
	/\|/,
	$single->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE c.seen AND NOT e.dup),
	   count(*) FILTER (WHERE NOT c.seen AND e.dup),
	   count(*) FILTER (WHERE e.dup),
	   count(*) FILTER (WHERE NOT e.dup),
	   (SELECT ceil(1.5 * sum(n * bloom_expected_fpr(bloom_optimal_bits($share, 0.01),
							bloom_optimal_hashes(bloom_optimal_bits($share, 0.01), $share), n)) + 3)
		FROM (SELECT count(DISTINCT url) AS n FROM crawl_sharded GROUP BY shardid) d),
	   (SELECT min(n) || '|' || max(n)
		FROM (SELECT count(DISTINCT url) AS n FROM crawl_sharded GROUP BY shardid) d),
	   count(*) FILTER (WHERE w.seen AND NOT e.dup),
	   count(*) FILTER (WHERE NOT w.seen AND e.dup),
	   count(*) FILTER (WHERE c.seen AND NOT w.seen),
	   count(*) FILTER (WHERE w.seen AND NOT c.seen)
FROM citus_marks c JOIN exact e USING (pos) JOIN whole_marks w USING (pos)
}));
is($fn, 0,
	"(d) per shard, none of the $dups true duplicates is missed (false negatives: $fn)"
);
cmp_ok($fp, '<=', $bound,
	"(d) per-shard false positives ($fp of $firsts first occurrences; filters of $share at 1% for shards of $least to $most URLs) within 1.5x the theory's final rate + 3 ($bound)"
);
is($whole_fn, 0,
	"(d) one server's marking of the whole stream (a filter of $capacity at 1%) misses none either; its false positives: $whole_fp"
);
diag(
	"per-shard marking against one server's whole-stream marking: $extra rows flagged only per shard, $missing only by one server"
);

# PARTITION BY the distribution column: pushed down, and exact per URL
my $by_sig = q{
SELECT pos, is_duplicate(url, bloom_sized(10, 0.01)) OVER (PARTITION BY sig ORDER BY pos) AS seen
FROM crawl
};
$plan = $coordinator->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) $by_sig");
ok( $plan =~ /\A\s*Custom Scan \(Citus Adaptive\)/
	  && $plan =~ /Query: SELECT .*is_duplicate\(.*OVER \(PARTITION BY/,
	'(d) is_duplicate OVER (PARTITION BY sig ORDER BY pos) runs on the shards (pushed down)'
) or diag($plan);
my $by_sig_marks =
  $coordinator->safe_psql('postgres', "COPY ($by_sig) TO STDOUT");
$single->safe_psql('postgres',
	"CREATE TABLE by_sig (pos bigint, seen boolean);\nCOPY by_sig FROM STDIN;\n$by_sig_marks\n\\.\n"
);
my ($by_sig_n, $by_sig_differ) = split(
	/\|/,
	$single->safe_psql(
		'postgres', q{
SELECT count(*), count(*) FILTER (WHERE b.seen IS DISTINCT FROM e.dup)
FROM by_sig b FULL JOIN exact e USING (pos)
}));
ok( $by_sig_n == $nrows && $by_sig_differ == 0,
	"(d) ... and marks exactly the repeats of each URL, whatever the filter (a 10-element filter; $by_sig_differ of $by_sig_n rows differ from the exact answer)"
);

# ORDER BY alone: one filter over the whole stream, on the coordinator
my $ordered = q{
SELECT pos, is_duplicate(url, bloom_sized(6000, 0.01)) OVER (ORDER BY pos) AS seen
FROM crawl
};
$plan = $coordinator->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) $ordered");
like(
	$plan,
	qr/\A\s*WindowAgg\n.*Custom Scan \(Citus Adaptive\)/s,
	'(d) is_duplicate OVER (ORDER BY pos) runs on the coordinator over every row'
);
my $ordered_marks =
  $coordinator->safe_psql('postgres', "COPY ($ordered) TO STDOUT");
$single->safe_psql('postgres',
	"CREATE TABLE ordered (pos bigint, seen boolean);\nCOPY ordered FROM STDIN;\n$ordered_marks\n\\.\n"
);
is( $single->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE o.seen IS DISTINCT FROM w.seen)
FROM ordered o FULL JOIN whole_marks w USING (pos)
}),
	0,
	'(d) ... and equals one server\'s marking of the whole stream');

$ms{'mark single select'} = best_ms($single,
	"SELECT count(*) FILTER (WHERE seen) FROM ($ordered) s", 3);
$ms{'mark coordinator'} = best_ms($coordinator,
	"SELECT count(*) FILTER (WHERE seen) FROM ($ordered) s", 3);
$ms{'mark by sig'} = best_ms($coordinator,
	"SELECT count(*) FILTER (WHERE seen) FROM ($by_sig) s", 3);

# --- (e) the merge through run_command_on_shards --------------------------

my ($merged, $shipped) = split(
	/\|/,
	$coordinator->safe_psql(
		'postgres', q{
SELECT md5(bloom_union_agg(result::bloom)::text), sum(length(result))
FROM run_command_on_shards('crawl', $$SELECT bloom_agg(url, 3400000, 0.01) FROM %s$$)
}));
my ($whole4m, $url_bytes) = split(
	/\|/,
	$single->safe_psql(
		'postgres',
		'SELECT md5(bloom_agg(url, 3400000, 0.01)::text), sum(octet_length(url)) FROM crawl'
	));
is($merged, $whole4m,
	"(e) bloom_union_agg of the shards' filters (run_command_on_shards) = one server's bloom_agg(url, 3400000, 0.01), bit for bit"
);
my $shipped_small = $coordinator->safe_psql(
	'postgres', q{
SELECT sum(length(result))
FROM run_command_on_shards('crawl', $$SELECT bloom_agg(url, 10000, 0.01) FROM %s$$)
});
cmp_ok($shipped, '>', $url_bytes,
	"(e) for a 4 MB filter the $nshards shards' filters ship $shipped bytes of hex, more than the crawl's $url_bytes bytes of URLs"
);

diag(sprintf(
		"times (best of 3, ms): %s",
		join(', ', map { "$_ $ms{$_}" } sort keys %ms)));
diag(
	"bytes shipped to the coordinator: filters as hex $shipped_small (capacity 10000), $shipped (3400000); URLs $url_bytes"
);

SbfTest::no_crash($_) foreach ($coordinator, @workers, $single);

done_testing();
