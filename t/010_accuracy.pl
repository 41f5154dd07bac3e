
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Accuracy of bloom against the theory, and against the exact answer on a
# real crawl stream.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('accuracy');

# |measured - theory| <= share * theory
sub within
{
	my ($measured, $theory, $share) = @_;
	return abs($measured - $theory) <= $share * $theory;
}

# 200k distinct URLs into a filter sized for them at 1%
$node->safe_psql(
	'postgres', q{
	CREATE TABLE f AS
		SELECT bloom_agg('https://example.org/page/' || i, 200000, 0.01) AS filter
		FROM generate_series(1, 200000) i});

my $fn = $node->safe_psql(
	'postgres', q{
	SELECT count(*) FROM f, generate_series(1, 200000) i
	WHERE NOT bloom_contains(filter, 'https://example.org/page/' || i)});
is($fn, 0, "no false negatives on 200k inserted keys (missed: $fn)");

# 1M keys that were never added
my ($fp, $expected) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	SELECT (SELECT count(*) FROM generate_series(200001, 1200000) i
			WHERE bloom_contains(filter, 'https://example.org/page/' || i)),
		   1000000 * bloom_expected_fpr((bloom_info(filter)->>'bits')::bigint,
										(bloom_info(filter)->>'hashes')::int, 200000)
	FROM f}));
ok( within($fp, $expected, 0.15),
	sprintf(
		"false positives on 1M absent keys within 15%% of (1 - e^(-kn/m))^k (measured %d, theory %.0f)",
		$fp, $expected));

# bigint keys go through a different hashing path: the same bounds
my $bigint_expected;
($fn, $fp, $bigint_expected) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	WITH f AS (SELECT bloom_agg(i, 200000, 0.01) AS filter FROM generate_series(1, 200000) i)
	SELECT (SELECT count(*) FROM generate_series(1, 200000) i WHERE NOT filter @> i),
		   (SELECT count(*) FROM generate_series(200001, 1200000) i WHERE filter @> i),
		   1000000 * bloom_expected_fpr((bloom_info(filter)->>'bits')::bigint,
										(bloom_info(filter)->>'hashes')::int, 200000)
	FROM f}));
is($fn, 0, "bigint keys: no false negatives (missed: $fn)");
ok( within($fp, $bigint_expected, 0.15),
	sprintf(
		"bigint keys: false positives within 15%% of theory (measured %d, theory %.0f)",
		$fp, $bigint_expected));

# The cardinality estimate of a filter at capacity is within 2%
my $card = $node->safe_psql('postgres', 'SELECT bloom_cardinality(filter) FROM f');
ok($card > 196000 && $card < 204000,
	sprintf("bloom_cardinality estimates 200000 within 2%% (got %.0f)", $card));

# A real crawl stream: is_duplicate against the exact answer
SbfTest::load_stream($node, 'crawl',
	SbfTest::data_file('doccrawl-pg-python.tsv.gz'));
my ($rows, $tp);
($rows, $tp, $fp, $fn) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	WITH marked AS (
		SELECT pos,
			   is_duplicate(url, bloom_sized(10000, 0.01)) OVER (ORDER BY pos) AS flagged,
			   row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS dup
		FROM crawl)
	SELECT count(*), count(*) FILTER (WHERE flagged AND dup),
		   count(*) FILTER (WHERE flagged AND NOT dup),
		   count(*) FILTER (WHERE NOT flagged AND dup)
	FROM marked}));
is($rows, 139551, "doccrawl-pg-python: $rows rows loaded");
is($fn, 0,
	"doccrawl-pg-python: every one of $tp true duplicates flagged (false negatives: $fn)"
);

# 5473 distinct URLs in a filter for 10000 at 1%: fpr stays under 0.2%, so
# fewer than 0.002 * 5473 = 11 first occurrences may be flagged
cmp_ok($fp, '<', 11,
	"doccrawl-pg-python: false positives among 5473 first occurrences below 11 (got $fp)"
);

SbfTest::no_crash($node);
done_testing();
