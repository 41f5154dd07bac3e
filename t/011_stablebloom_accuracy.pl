
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The false-positive rate of a stable Bloom filter at its stable point,
# measured with fixed seeds, against Deng & Rafiei's formula.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('stablebloom_accuracy');

# |measured - theory| <= share * theory
sub within
{
	my ($measured, $theory, $share) = @_;
	return abs($measured - $theory) <= $share * $theory;
}

# 300k distinct keys into 100k cells: after the first 100k insertions the
# filter is at its stable point, and every key after that is new, so each
# flag among keys 100001..300000 is a false positive.
foreach my $cfg ([ 4, 1, 7 ], [ 4, 3, 23 ], [ 6, 1, 7 ])
{
	my ($k, $max, $p) = @$cfg;
	foreach my $keys ('g', q{'https://example.org/' || g})
	{
		my ($measured, $theory) = split(
			/\|/,
			$node->safe_psql(
				'postgres', qq{
			SELECT count(*) FILTER (WHERE dup AND g > 100000) / 200000.0,
				   stablebloom_fpr(100000, $k, $p, $max)
			FROM (SELECT g, is_duplicate($keys, stablebloom_empty(100000, $k, $max, $p, 42))
							OVER (ORDER BY g) AS dup
				  FROM generate_series(1, 300000) g) s}));
		ok( within($measured, $theory, 0.10),
			sprintf(
				"k=%d Max=%d P=%d, keys %s: measured fpr %.5f within 10%% of stablebloom_fpr %.5f",
				$k, $max, $p, $keys, $measured, $theory));
	}
}

# The zero fraction at the stable point matches stablebloom_stable_zeros
my ($zeros, $theory) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	SELECT (stablebloom_info(f)->>'zero_fraction')::float8,
		   stablebloom_stable_zeros(100000, 4, 7, 1)
	FROM (SELECT stablebloom_agg(g, stablebloom_empty(100000, 4, 1, 7, 42) ORDER BY g) AS f
		  FROM generate_series(1, 300000) g) s}));
ok( within($zeros, $theory, 0.05),
	sprintf(
		"zero fraction after 300k insertions %.5f within 5%% of stablebloom_stable_zeros %.5f",
		$zeros, $theory));

# Forgetting follows the model: a URL met again 99 insertions later is
# missed when one of its k cells was decremented in between (Max = 1),
# which happens with probability 1 - (1 - P/m)^(99 k) = 2.7% here
my ($missed, $total, $expected) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	SELECT count(*) FILTER (WHERE NOT dup AND g % 2 = 0), count(*) FILTER (WHERE g % 2 = 0),
		   1 - (1 - 7 / 100000.0) ^ (99 * 4)
	FROM (SELECT g, is_duplicate(CASE WHEN g % 2 = 0 THEN g - 99 ELSE g END,
								 stablebloom_empty(100000, 4, 1, 7, 42)) OVER (ORDER BY g) AS dup
		  FROM generate_series(1, 200000) g) s}));
ok( within($missed / $total, $expected, 0.15),
	sprintf(
		"repeats 99 insertions apart: %d of %d missed (%.5f), within 15%% of the expected rate %.5f",
		$missed, $total, $missed / $total, $expected));

SbfTest::no_crash($node);
done_testing();
