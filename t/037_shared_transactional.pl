
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Transactional adds when things die: a client killed in the middle of its
# transaction, a session terminated, the server crashing with transactions
# open and one prepared.  What committed stays; what did not commit is new
# again (a crawler fetches it, rather than losing it); a prepared
# transaction's adds wait, across the crash, for COMMIT PREPARED.  A
# standby replays it all with wal_consistency_checking, and VACUUM folds
# the pending adds into the pages and advances the table's relfrozenxid.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('transactional', 'max_prepared_transactions = 5',
	'wal_level = replica', 'max_wal_senders = 4',
	'wal_consistency_checking = generic');
# The standby is a copy that pg_basebackup makes: where there is none
# (PostgreSQL 17 from npm, see docs/upgrading.md) the standby's checks are
# skipped, and the kills, the crash and VACUUM are checked on the primary
my $no_standby = SbfTest::missing_programs('pg_basebackup');
my $standby;
unless ($no_standby)
{
	$node->backup('base');
	$standby = PostgreSQL::Test::Cluster->new('transactional_standby');
	$standby->init_from_backup($node, 'base', has_streaming => 1);
	$standby->start;
}

$node->safe_psql('postgres',
	q{SELECT shared_bloom_create('frontier_seen', 1000000, 0.01)});

# the URLs of batch b (1,000 of them, of their own host)
sub batch
{
	my ($b) = @_;
	return qq{ARRAY(SELECT 'https://batch$b.example/' || g FROM generate_series(1, 1000) g)};
}

# how many URLs of batch b a fresh session is told are new (added now, in
# a transaction that rolls back, so that the filter is left as it was)
sub new_in_batch
{
	my ($b) = @_;
	return $node->safe_psql('postgres', qq{
		BEGIN;
		SELECT count(*) FILTER (WHERE NOT seen)
		  FROM unnest(shared_test_and_add('frontier_seen', @{[batch($b)]})) seen;
		ROLLBACK;});
}

sub present_in_batch
{
	my ($n, $b) = @_;
	return $n->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE shared_contains('frontier_seen', u))
		  FROM unnest(@{[batch($b)]}) u});
}

# a session that adds batch b, then stays in its transaction
sub open_adder
{
	my ($b, $then) = @_;
	my ($in, $out) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		'<', \$in, '>', \$out, '2>', \$out);
	$in .= qq{BEGIN;
		SELECT 'pid', pg_backend_pid();
		SELECT count(*) FROM unnest(shared_test_and_add('frontier_seen', @{[batch($b)]}));
		$then
	};
	$h->pump until $out =~ /pid\|(\d+)\n\d+\n/;
	return ($h, $1);
}

# batch 1 committed; batch 2 added by a client that is then killed (its
# backend sees the connection go and aborts); batch 3 by a session that is
# terminated
$node->safe_psql('postgres',
	qq{SELECT shared_test_and_add('frontier_seen', @{[batch(1)]})});
my ($client, $client_pid) = open_adder(2, '');
is(present_in_batch($node, 2), 0, 'another session does not see uncommitted adds');
$client->kill_kill;
$node->poll_query_until('postgres',
	qq{SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $client_pid)})
  or die 'the killed client\'s backend did not exit';
is(new_in_batch(2), 1000, 'a killed client\'s uncommitted adds are new again');

my ($terminated, $terminated_pid) = open_adder(3, '');
$node->safe_psql('postgres', qq{SELECT pg_terminate_backend($terminated_pid, 60000)});
$terminated->finish;
is(new_in_batch(3), 1000, 'a terminated session\'s uncommitted adds are new again');
is(new_in_batch(1), 0, 'committed adds stay');

# the server crashes with batch 4 open in one session and batch 5 in a
# prepared transaction; batch 6 commits just before
my ($open, $open_pid) = open_adder(4, '');
my ($prepared) = open_adder(5, q{PREPARE TRANSACTION 'batch5'; SELECT 'prepared';});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_prepared_xacts WHERE gid = 'batch5'})
  or die 'batch 5 was not prepared';
$node->safe_psql('postgres',
	qq{SELECT shared_test_and_add('frontier_seen', @{[batch(6)]})});
$node->stop('immediate');
$open->kill_kill;
$prepared->kill_kill;
$node->start;

is(new_in_batch(6), 0, 'adds committed before the crash stay');
is(new_in_batch(4), 1000, 'adds open at the crash are new again');
is(present_in_batch($node, 5), 0,
	'a prepared transaction\'s adds stay pending across the crash');
$node->safe_psql('postgres', q{COMMIT PREPARED 'batch5'});
is(present_in_batch($node, 5), 1000, 'and count once COMMIT PREPARED is done');

# the standby replays it all (wal_consistency_checking compares every page)
SKIP:
{
	skip "the standby: $no_standby", 1 if $no_standby;
	$node->wait_for_catchup($standby);
	is( $standby->safe_psql('postgres', q{
			SELECT string_agg(n::text, ',' ORDER BY b) FROM generate_series(1, 6) b,
			  LATERAL (SELECT count(*) FILTER (WHERE shared_contains('frontier_seen',
			             'https://batch' || b || '.example/' || g)) AS n
			             FROM generate_series(1, 1000) g) c}),
		'1000,0,0,0,1000,1000',
		'the standby answers as the primary: committed batches only');
}

# VACUUM folds every pending add and advances relfrozenxid to the oldest
# transaction id a page keeps: a page's folded xid stays until it is
# vacuum_freeze_min_age old, as a heap tuple's xmin stays unfrozen.
# VACUUM FREEZE keeps it all the same (a standby's older snapshot needs it:
# t/031), so relfrozenxid stays where VACUUM left it, at the oldest folded
# xid; only the setting clears it: with vacuum_freeze_min_age 0, VACUUM
# advances relfrozenxid to the oldest running (none here)
is($node->safe_psql('postgres',
		q{SELECT relfrozenxid <> '0'::xid FROM pg_class WHERE relname = 'frontier_seen'}),
	't', 'the filter has a relfrozenxid from its creation');
$node->safe_psql('postgres',
	q{DO $$ BEGIN FOR i IN 1 .. 50 LOOP PERFORM txid_current(); COMMIT; END LOOP; END $$});
my $frozenxid = q{SELECT relfrozenxid FROM pg_class WHERE relname = 'frontier_seen'};
my $age = q{SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'frontier_seen'};
my $age_before = $node->safe_psql('postgres', $age);
$node->safe_psql('postgres', q{VACUUM frontier_seen});
my $age_vacuum = $node->safe_psql('postgres', $age);
my $xid_vacuum = $node->safe_psql('postgres', $frozenxid);
$node->safe_psql('postgres', q{VACUUM (FREEZE) frontier_seen});
my $xid_freeze = $node->safe_psql('postgres', $frozenxid);
$node->safe_psql('postgres',
	q{SET vacuum_freeze_min_age = 0; VACUUM frontier_seen});
my $age_after = $node->safe_psql('postgres', $age);
cmp_ok($age_before, '>=', 50, 'the filter\'s relfrozenxid ages');
cmp_ok($age_vacuum, '<', $age_before, 'VACUUM advances it');
cmp_ok($age_vacuum, '>=', 50, 'to the oldest folded xid, from before the 50');
is($xid_freeze, $xid_vacuum,
	'VACUUM FREEZE keeps the folded xids younger than vacuum_freeze_min_age');
cmp_ok($age_after, '<', 5,
	'with vacuum_freeze_min_age 0, VACUUM advances it to the oldest running');
is($node->safe_psql('postgres', q{SELECT shared_info('frontier_seen', true) -> 'uncommitted_adds'}),
	'0', 'no uncommitted add is left');
is(present_in_batch($node, 1) . ',' . present_in_batch($node, 5), '1000,1000',
	'the same answers after VACUUM');
SKIP:
{
	skip "the standby: $no_standby", 1 if $no_standby;
	$node->wait_for_catchup($standby);
	is(present_in_batch($standby, 6), 1000, 'the standby replays VACUUM\'s folding');
}

# while a snapshot is held (a dump), committed adds stay pending; a page
# full of them folds them all the same: the standby replays that too
# (wal_consistency_checking), and answers as the primary
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class;');
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('one_page', 1000, 0.01);
	DO $$
	BEGIN
		FOR b IN 0 .. 19 LOOP
			PERFORM shared_test_and_add('one_page',
				ARRAY(SELECT 'held' || g FROM generate_series(b * 25 + 1, b * 25 + 25) g));
			COMMIT;
		END LOOP;
	END $$;
});
$holder->quit;
my $held = q{SELECT count(*) FROM generate_series(1, 500) g WHERE shared_contains('one_page', 'held' || g)};
is($node->safe_psql('postgres', $held), 500, 'adds while a snapshot is held: all there');
SKIP:
{
	skip "the standby: $no_standby", 1 if $no_standby;
	$node->wait_for_catchup($standby);
	is($standby->safe_psql('postgres', $held), 500, 'the standby replays the folds of a full page');
	$standby->stop;
}

# the margin is clamped to half autovacuum_freeze_max_age, as PostgreSQL
# clamps freeze_min_age: a larger vacuum_freeze_min_age would keep a
# folded xid (and relfrozenxid) past the age that starts an
# anti-wraparound VACUUM, which autovacuum would then run again and again
$node->append_conf('postgresql.conf',
	"autovacuum = off\nautovacuum_freeze_max_age = 100000\n");
$node->restart;
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('clamped', 1000, 0.01);
	SELECT shared_test_and_add('clamped', 'https://clamped.example/');
	VACUUM clamped});
my $clamped = q{SET vacuum_freeze_min_age = 1000000000; VACUUM clamped;
	SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'clamped'};
cmp_ok($node->safe_psql('postgres', $clamped), '>=', 1,
	'VACUUM keeps a young folded xid');
$node->safe_psql('postgres',
	q{DO $$ BEGIN FOR i IN 1 .. 50010 LOOP PERFORM txid_current(); COMMIT; END LOOP; END $$});
cmp_ok($node->safe_psql('postgres', $clamped), '<', 5,
	'and clears it once it is half autovacuum_freeze_max_age old, '
	  . 'whatever vacuum_freeze_min_age says');
is($node->safe_psql('postgres',
		q{SELECT shared_contains('clamped', 'https://clamped.example/')}),
	't', 'the value stays');

$node->stop;
done_testing();
