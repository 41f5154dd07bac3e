
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Shared filters on a physical standby: generic WAL replays every page, so
# once the standby has replayed a commit it answers shared_contains exactly
# as the primary; adding there is refused (a read-only transaction); after
# promotion it adds again.  One filter exists before the base backup, one
# is created after it (its pages reach the standby only through WAL).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

SbfTest::require_programs('pg_basebackup');

# wal_consistency_checking: every generic WAL record also carries the page
# as the primary left it, and the standby checks that replaying the record
# gave the same page (a mismatch stops it): so the few bytes an add logs
# are proven to be all it changed
my $primary = SbfTest::new_node('primary', 'wal_level = replica',
	'max_wal_senders = 4', 'wal_consistency_checking = generic');
$primary->safe_psql('postgres', q{
	SELECT shared_bloom_create('before_backup', 100000, 0.01);
	SELECT shared_test_and_add('before_backup', 'https://example.com/first');
	SELECT shared_bloom_create('scratch', 1000, 0.01, unlogged => true);
});
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
# (the defaults, said: the primary does not know the standby's snapshots,
# and replay waits for a query rather than cancel it)
$standby->append_conf('postgresql.conf',
	"hot_standby_feedback = off\nmax_standby_streaming_delay = -1\n");
$standby->start;

my $present = q{'https://site' || (g % 97) || '.example/' || g};
my $absent  = q{'https://absent' || (g % 97) || '.example/' || g};

$primary->safe_psql('postgres', q{
	SELECT shared_bloom_create('after_backup', 100000, 0.01);
	SELECT shared_bloom_create('immediate', 100000, 0.01, transactional => false);
	SELECT shared_stablebloom_create('recent', 100000, 0.01, 3, max => 3);
});
# (a batch's pages share WAL records, up to four a record, in both bloom
# layouts: the transactional filters' and the immediate one's)
for my $filter ('before_backup', 'after_backup', 'immediate', 'recent')
{
	$primary->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			FOR b IN 0 .. 99 LOOP
				PERFORM shared_test_and_add('$filter',
					ARRAY(SELECT $present FROM generate_series(b * 1000 + 1, b * 1000 + 1000) g));
				COMMIT;
			END LOOP;
		END \$\$});
}
$primary->wait_for_catchup($standby);

for my $filter ('before_backup', 'after_backup', 'immediate')
{
	is($standby->safe_psql('postgres', qq{
			SELECT count(*) FROM generate_series(1, 100000) g
			 WHERE NOT shared_contains('$filter', $present)}),
		0, "$filter: all 100k values committed on the primary are seen on the standby");
	is($standby->safe_psql('postgres', qq{
			SELECT count(*) FROM generate_series(1, 100000) g
			 WHERE shared_contains('$filter', $absent)}),
		$primary->safe_psql('postgres', qq{
			SELECT count(*) FROM generate_series(1, 100000) g
			 WHERE shared_contains('$filter', $absent)}),
		"$filter: the standby answers 100k absent values as the primary");
	is($standby->safe_psql('postgres',
			"SELECT md5(shared_bloom_snapshot('$filter')::text)"),
		$primary->safe_psql('postgres',
			"SELECT md5(shared_bloom_snapshot('$filter')::text)"),
		"$filter: every page on the standby as on the primary");
}
is($standby->safe_psql('postgres',
		"SELECT md5(shared_stablebloom_snapshot('recent')::text)"),
	$primary->safe_psql('postgres',
		"SELECT md5(shared_stablebloom_snapshot('recent')::text)"),
	'stable filter: every cell on the standby as on the primary');

# A dump on a standby without hot_standby_feedback: the primary folds a
# batch committed after the standby's snapshot into the page's bits (its
# horizon does not count that snapshot), and records it as the page's
# folded xid, so the standby's scan refuses the page.  VACUUM FREEZE keeps
# the folded xid as VACUUM does, until it is vacuum_freeze_min_age old
# (generic WAL raises no recovery conflict: clearing it would let the
# scan read the batch)
$primary->safe_psql('postgres', q{
	SELECT shared_bloom_create('sb', 1000, 0.01);
	SELECT shared_test_and_add('sb', ARRAY(SELECT 'base' || g FROM generate_series(1, 5) g));
});
$primary->wait_for_catchup($standby);
my $held = $standby->background_psql('postgres', on_error_stop => 0);
$held->query_safe(
	'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM sb; SAVEPOINT s;');
$primary->safe_psql('postgres', q{
	SELECT shared_test_and_add('sb', ARRAY(SELECT 'batch' || g FROM generate_series(1, 10) g))});
$primary->safe_psql('postgres', q{SELECT shared_test_and_add('sb', 'later')});
$primary->wait_for_catchup($standby);
my $copy = $standby->basedir . '/sb.copy';
my ($out, $failed) = $held->query("COPY sb TO '$copy'");
is($failed, 1, 'the standby\'s older snapshot: the folded page is refused');
like($held->{stderr}, qr/could not read page \d+ of shared filter "sb" as of this snapshot/,
	'with a serialization failure');
$held->{stderr} = '';
$held->query_safe('ROLLBACK TO s');
$primary->safe_psql('postgres', 'VACUUM (FREEZE) sb');
$primary->safe_psql('postgres', 'VACUUM (FREEZE) sb');
$primary->wait_for_catchup($standby);
($out, $failed) = $held->query("COPY sb TO '$copy'");
is($failed, 1, 'after VACUUM FREEZE twice on the primary, still refused');
like($held->{stderr}, qr/could not read page \d+ of shared filter "sb" as of this snapshot/,
	'with the same serialization failure');
if (!$failed)
{
	$primary->safe_psql('postgres', qq{
		CREATE TABLE sb_restored (page bigint, data bytea) USING sbf_filter;
		COPY sb_restored FROM '$copy'});
	diag('the dump holds '
		  . $primary->safe_psql('postgres', q{
			SELECT count(*) FROM generate_series(1, 10) g
			 WHERE shared_contains('sb_restored', 'batch' || g)})
		  . ' of the 10 values of the batch its snapshot did not see');
}
$held->quit;
# a snapshot taken after the batch reads every page, batch included
$standby->safe_psql('postgres', "COPY sb TO '$copy'");
$primary->safe_psql('postgres', qq{
	DROP TABLE IF EXISTS sb_restored;
	CREATE TABLE sb_restored (page bigint, data bytea) USING sbf_filter;
	COPY sb_restored FROM '$copy'});
is($primary->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(1, 10) g
		 WHERE shared_contains('sb_restored', 'batch' || g)}),
	10, 'a dump on the standby with a newer snapshot holds the batch');

# adding on the standby is an ERROR, as nextval() is
my ($ret, $stdout, $stderr) = $standby->psql('postgres',
	"SELECT shared_test_and_add('before_backup', 'https://example.com/on-standby')");
isnt($ret, 0, 'shared_test_and_add on the standby fails');
like($stderr, qr/cannot execute shared_test_and_add\(\) in a read-only transaction/,
	'shared_test_and_add on the standby: a read-only transaction error');
($ret, $stdout, $stderr) = $standby->psql('postgres',
	"SELECT shared_contains('scratch', 'x')");
like($stderr, qr/cannot access temporary or unlogged relations during recovery/,
	'an unlogged filter cannot be read on the standby');

# promote: the former standby adds, and keeps what it had
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'standby did not leave recovery';
is($standby->safe_psql('postgres', q{
		SELECT shared_test_and_add('after_backup', 'https://example.com/after-promotion')::text
		       || shared_test_and_add('after_backup', 'https://example.com/after-promotion')::text}),
	'falsetrue', 'after promotion: shared_test_and_add works');
is($standby->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, 100000) g
		 WHERE NOT shared_contains('after_backup', $present)}),
	0, 'after promotion: all values added on the former primary are still seen');
is($standby->safe_psql('postgres', q{
		SELECT shared_test_and_add('scratch', 'x')::text || shared_test_and_add('scratch', 'x')::text}),
	'falsetrue', 'after promotion: the unlogged filter is empty and usable');

SbfTest::no_crash($primary);
SbfTest::no_crash($standby);
done_testing();
