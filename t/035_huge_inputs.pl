
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Inputs as large as PostgreSQL lets a value be are answered, never with an
# internal error (XX000, "invalid memory alloc request size"):
#
#  - shared_test_and_add on a 45M-element bigint[] (360 MB): a batch is
#    hashed, sorted and added half a million values at a time, and its
#    answers built without a Datum per element;
#  - simhash of a 600 MB document: one pass, remembering only the last
#    "shingle" words.
#
# (Prompt cancellation of such batches is in sql/cancellation.sql.)

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('huge', "work_mem = '64MB'");

my $n = 45_000_000;
$node->safe_psql('postgres',
	"SELECT shared_bloom_create('big', 50000000, 0.01, unlogged => true, transactional => false)");
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
	CREATE TABLE answers AS
	SELECT shared_test_and_add('big',
			(SELECT array_agg(CASE WHEN g % 1000000 = 0 THEN NULL ELSE g::bigint * 7919 END)
			 FROM generate_series(1, $n) g)) AS a;
	SELECT cardinality(a),
		   (SELECT count(*) FROM unnest(a) x WHERE NOT x),
		   (SELECT count(*) FROM unnest(a) x WHERE x IS NULL)
	FROM answers});
is($ret, 0, "a batch of $n bigints is added") or diag $stderr;
my ($len, $new, $nulls) = split /\|/, $stdout // '';
is($len, $n, 'with one answer per element');
is($nulls, 45, 'NULL for each NULL element');
cmp_ok($new, '>', ($n - 45) * 0.99,
	'and at least 99% of the distinct new values answered new (1% false positives at capacity)');
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(1, 45000000, 999983) g
		 WHERE g % 1000000 <> 0 AND NOT shared_contains('big', g::bigint * 7919)}),
	0, 'every value of the batch is in the filter afterwards');

# a 600 MB document, and the same words at a tenth of the size: both
# fingerprints are those of their repeated shingles, which are the same set
($ret, $stdout, $stderr) = $node->psql('postgres', q{
	SELECT simhash(repeat('the quick brown fox jumps over the lazy dog ', 14000000), 3)
		 = simhash(repeat('the quick brown fox jumps over the lazy dog ', 1400), 3)});
is($ret, 0, 'simhash of a 600 MB document is computed') or diag $stderr;
is($stdout, 't', 'and equals that of a short one with the same shingles');

SbfTest::no_crash($node);
done_testing();
