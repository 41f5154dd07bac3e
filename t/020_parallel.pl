
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# bloom_agg and bloom_union_agg under a forced parallel plan give exactly
# the serial result, bit for bit; stablebloom_agg has no combine function,
# so it is never split into partial aggregates, and with ORDER BY gives the
# same filter whatever the plan below it.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('parallel');

# 1M rows over 300,000 distinct URLs, and 50 per-host filters to merge
$node->safe_psql(
	'postgres', q{
CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL);
INSERT INTO crawl
	SELECT i, 'https://example.org/' || (i % 300000) FROM generate_series(1, 1000000) i;
CREATE TABLE host_filters AS
	SELECT pos % 50 AS host, bloom_agg(url, 300000, 0.01) AS filter FROM crawl GROUP BY 1;
ANALYZE crawl;
ANALYZE host_filters;
});

# Settings that make every scan parallel, and settings that forbid it
my $parallel = q{
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
};
my $serial = q{
SET max_parallel_workers_per_gather = 0;
};

# [aggregate, the relation it reads]
my @aggregates = (
	[ 'bloom_agg(url, 300000, 0.01)', 'crawl' ],
	[ 'bloom_agg(url, bloom_sized(300000, 0.01))', 'crawl' ],
	[ 'bloom_agg(pos, 1000000, 0.01)', 'crawl' ],
	[ 'bloom_union_agg(filter)', 'host_filters' ]);

foreach my $aggregate (@aggregates)
{
	my ($agg, $from) = @$aggregate;

	my $plan = $node->safe_psql('postgres',
		"$parallel EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT $agg FROM $from"
	);
	like($plan, qr/Partial Aggregate/,
		"parallel plan for $agg has a Partial Aggregate");
	my ($launched) = $plan =~ /Workers Launched: ([0-9]+)/;
	$launched //= 0;
	cmp_ok($launched, '>=', 1,
		"parallel workers launched for $agg ($launched)");

	$node->safe_psql('postgres',
		"$serial CREATE TABLE serial_result AS SELECT $agg AS f FROM $from");
	$node->safe_psql('postgres',
		"$parallel CREATE TABLE parallel_result AS SELECT $agg AS f FROM $from"
	);
	my ($same, $bits) = split(
		/\|/,
		$node->safe_psql(
			'postgres', q{
SELECT s.f = p.f, (bloom_info(s.f)->>'bits_set')::bigint
FROM serial_result s, parallel_result p
}));
	ok($same eq 't' && $bits > 0,
		"parallel $agg equals the serial result ($bits bits set)");
	$node->safe_psql('postgres', 'DROP TABLE serial_result, parallel_result');
}

# stablebloom_agg: never a Partial Aggregate, and with ORDER BY the same
# result under a parallel-enabled plan
my $agg =
  'stablebloom_agg(url, stablebloom_sized(100000, 0.05, 4) ORDER BY pos)';
my $plan = $node->safe_psql('postgres',
	"$parallel EXPLAIN (COSTS OFF) SELECT $agg FROM crawl");
unlike($plan, qr/Partial Aggregate/,
	'stablebloom_agg is never split into partial aggregates');

$node->safe_psql('postgres',
	"$serial CREATE TABLE serial_result AS SELECT $agg AS f FROM crawl");
$node->safe_psql('postgres',
	"$parallel CREATE TABLE parallel_result AS SELECT $agg AS f FROM crawl");
my ($same, $insertions) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
SELECT s.f = p.f, (stablebloom_info(s.f)->>'insertions')::bigint
FROM serial_result s, parallel_result p
}));
ok( $same eq 't' && $insertions == 1000000,
	"stablebloom_agg ... ORDER BY pos gives the same filter under a parallel-enabled plan ($insertions insertions)"
);

SbfTest::no_crash($node);

done_testing();
