
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# An unlogged filter without init fork, as pg_upgrade leaves it (it carries
# the main fork of a table, not its init fork, and the filter's CREATE TABLE
# in the new cluster makes none): a crash before any session opens it
# leaves it as it was; the first session that opens it writes the metapage
# into a new init fork, so that a crash afterwards empties the filter with
# its parameters, and it takes values again.  An empty init fork, as an
# earlier build of 1.1 left after pg_upgrade, gets the metapage too.  On
# every major; t/070_pg_upgrade.pl does the same through a real pg_upgrade
# where two majors are at hand.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('init_fork');
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('u', 100000, 0.01, unlogged => true);
	SELECT shared_stablebloom_create('us', 100000, 0.02, 3, max => 3, unlogged => true);
	SELECT shared_test_and_add('u', ARRAY(SELECT 'v' || g FROM generate_series(1, 1000) g));
	SELECT shared_test_and_add('us', ARRAY(SELECT 'v' || g FROM generate_series(1, 1000) g));
});
my $parameters = q{
	SELECT string_agg(n || ' ' || (shared_info(n::regclass) - ARRAY['pages_written', 'bits_set',
		'size_bytes', 'fill', 'estimated_cardinality', 'zero_cells', 'zero_fraction',
		'estimated_fpr', 'adds', 'load', 'expected_fpr'])::text, E'\n' ORDER BY n)
	FROM (VALUES ('u'), ('us')) f(n)
};
my $before = $node->safe_psql('postgres', $parameters);
my $values = q{
	SELECT count(*) FILTER (WHERE shared_contains('u', 'v' || g)) || ' '
		|| count(*) FILTER (WHERE shared_contains('us', 'v' || g))
	FROM generate_series(1, 1000) g
};
my $values_before = $node->safe_psql('postgres', $values);
my %init = map {
	$_ => $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')") . '_init'
} ('u', 'us');

# an empty init fork, as an earlier build left it after pg_upgrade: the
# first open writes the metapage into it
$node->safe_psql('postgres', q{SELECT shared_bloom_create('ue', 1000, 0.01, unlogged => true)});
my $ue_init = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('ue')") . '_init';
$node->stop;
truncate($ue_init, 0) or die "truncate $ue_init: $!";
$node->start;
is($node->safe_psql('postgres', q{SELECT shared_test_and_add('ue', 'x')}), 'f',
	'a filter with an empty init fork answers');
is(-s $ue_init, 8192, 'opening it wrote its init fork\'s metapage');

# what pg_upgrade leaves: no init fork
my $tablespace = $node->basedir . '/moved';
mkdir $tablespace or die "mkdir $tablespace: $!";
$node->safe_psql('postgres', qq{
	CREATE TABLESPACE moved LOCATION '$tablespace';
	SELECT shared_bloom_create('ut', 1000, 0.01, unlogged => true);
	SELECT shared_test_and_add('ut', 'kept');
});
my $ut_init = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('ut')") . '_init';
$node->stop;
for my $f (sort keys %init)
{
	is(-s $init{$f}, 8192, "$f: the init fork holds the metapage");
	unlink($init{$f}) or die "unlink $init{$f}: $!";
}
unlink($ut_init) or die "unlink $ut_init: $!";
$node->start;

# moved to another tablespace before its first open, a filter without init
# fork gets one there, which a crash then resets it to
$node->safe_psql('postgres', 'ALTER TABLE ut SET TABLESPACE moved');
my $ut_moved = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('ut')") . '_init';
is(-s $ut_moved, 8192, 'a filter moved before its first open has its init fork in its new place');

# a crash before any session opens the filters leaves them as they were
$node->stop('immediate');
$node->start;
ok(!-e $init{$_}, "$_: still no init fork") for sort keys %init;
is($node->safe_psql('postgres', q{
		SELECT shared_contains('ut', 'kept')::text || (shared_info('ut', false) ->> 'capacity')}),
	'false1000', 'the moved filter came back from the crash empty with its parameters');
my $log_offset = -s $node->logfile;
is($node->safe_psql('postgres', $parameters), $before,
	'a crash before the first open: both filters keep their parameters');
is($node->safe_psql('postgres', $values), $values_before, '... and their values');

# the first open wrote the init fork, and said so in the server log
for my $f (sort keys %init)
{
	is(-s $init{$f}, 8192, "$f: opening the filter wrote its init fork's metapage");
	ok($node->log_contains(
			qr/writing the metapage of unlogged shared filter "$f" into its init fork/,
			$log_offset),
		"$f: the server log says so");
}

# a crash now empties the filters and keeps their parameters
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $parameters), $before,
	'after a crash both filters have their parameters');
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(1, 1000) g
		 WHERE shared_contains('u', 'v' || g) OR shared_contains('us', 'v' || g)}),
	0, 'and are empty, as an unlogged table is after a crash');
is($node->safe_psql('postgres', q{SELECT shared_info('u', false) ->> 'adds'}),
	'0', 'and count no values added');
is($node->safe_psql('postgres', q{
		SELECT shared_test_and_add('u', 'again'), shared_test_and_add('u', 'again'),
			   shared_test_and_add('us', 'again'), shared_test_and_add('us', 'again')}),
	'f|t|f|t', 'and take values');

# TRUNCATE in the transaction that made an unlogged filter leaves no
# metapage in either fork: after a crash it still has none (the init fork
# does not bring back the parameters it had before the TRUNCATE), and a
# page 0 restored afterwards is what a crash comes back to
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT shared_bloom_create('t', 1000, 0.01, unlogged => true);
	TRUNCATE t;
	COMMIT;
	BEGIN;
	SELECT shared_bloom_create('r', 1000, 0.01, unlogged => true);
	TRUNCATE r;
	INSERT INTO r SELECT * FROM us WHERE page = 0;
	COMMIT;
});
my $no_meta = qr/shared filter "t" has no metapage/;
my ($ret, $out, $err) = $node->psql('postgres', q{SELECT shared_contains('t', 'x')});
like($err, $no_meta, 'an unlogged filter truncated in its creating transaction has no metapage');
$node->stop('immediate');
$node->start;
($ret, $out, $err) = $node->psql('postgres', q{SELECT shared_contains('t', 'x')});
like($err, $no_meta, '... nor after a crash');
is($node->safe_psql('postgres', q{SELECT shared_info('r') ->> 'kind'}), 'stablebloom',
	'one given another page 0 after its TRUNCATE comes back from a crash with that one');
SbfTest::no_crash($node);

done_testing();
