
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# One transaction adds as many values as it likes to a transactional
# filter, far past the 79 uncommitted adds a page has room for (the rest go
# to overflow pages of the filter, WAL-logged), with the guarantees of a
# small one:
#
# 1. the server is killed in the middle of a transaction adding 50M
#    values: after recovery every value committed before is there, none of
#    the killed transaction's values is (but for false positives), the
#    filter takes new adds and VACUUM cleans up after the dead transaction;
# 2. two prepared transactions of 1M values each survive a clean restart
#    and a crash; while prepared, their values are not seen and an adder
#    of one of them waits; COMMIT PREPARED makes one's values seen,
#    ROLLBACK PREPARED makes the other's new again;
# 3. a streaming standby replays big transactions (committed, rolled back,
#    a savepoint rolled back inside a committed one) and VACUUM with
#    wal_consistency_checking on the primary, and answers as the primary;
# 4. adds written where a fold dropped others are replayed as they were
#    written, on the standby and in crash recovery.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# A psql in the background: SQL is fed to it as the test goes, and the
# test reads what it printed (stdout and stderr together)
sub background
{
	my ($node, $sql) = @_;
	my $s = {
		in      => '',
		out     => '',
		timeout => IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default)
	};
	$s->{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{out}, $s->{timeout});
	feed($s, "SELECT 'pid', pg_backend_pid();\n", qr/pid\|(\d+)\n/);
	($s->{pid}) = $s->{out} =~ /pid\|(\d+)\n/;
	$s->{in} .= $sql // '';
	$s->{h}->pump_nb while length $s->{in};
	return $s;
}

# feed SQL to a background psql and read its output until it matches (or
# has an error)
sub feed
{
	my ($s, $sql, $until) = @_;
	$s->{in} .= $sql;
	$s->{timeout}->start($PostgreSQL::Test::Utils::timeout_default);
	$s->{h}->pump until $s->{out} =~ $until || $s->{out} =~ /ERROR:/;
	return $s->{out};
}

#
# 1. A crash in the middle of a 50M-value transaction
#
# A filter for 10M values (1,724 pages of 8 kB).  200,000 values are
# committed first, in one transaction (116 a page: more than the old limit
# already); then one transaction starts adding 50M values, 100,000 a call,
# and reports each call done in a sequence (setval is not transactional:
# other sessions see it at once).  Once it has added 5M values (2,900 a
# page, 37 times the 79 a page has room for; 70 MB of overflow pages) the
# postmaster is killed and so is the backend, in the middle of its next
# call.
#
my $node = SbfTest::new_node('big_crash', 'wal_level = replica');
my $seed = q{'https://seed.example/page/' || g};
my $bulk = q{'https://bulk.example/page/' || g};
my $later = q{'https://later.example/page/' || g};

$node->safe_psql('postgres', qq{
	SELECT shared_bloom_create('crawl', 10000000, 0.01);
	CREATE SEQUENCE bulk_progress;
	SELECT count(*) FROM unnest(shared_test_and_add('crawl',
		ARRAY(SELECT $seed FROM generate_series(1, 200000) g)));
});
is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, 200000) g
		 WHERE shared_contains('crawl', $seed)}),
	200000, '200,000 values committed in one transaction');

my $adder = background($node, qq{
	DO \$\$
	BEGIN
		FOR b IN 0 .. 499 LOOP
			PERFORM shared_test_and_add('crawl',
				ARRAY(SELECT $bulk FROM generate_series(b * 100000 + 1, b * 100000 + 100000) g));
			PERFORM setval('bulk_progress', b * 100000 + 100000);
		END LOOP;
	END \$\$;
});
my $goal = 5_000_000;
my $done = 0;
my $wal_start = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
while (time() < $deadline)
{
	$adder->{h}->pump_nb;
	last if $adder->{out} =~ /ERROR/ || !$adder->{h}->pumpable;
	$done = $node->safe_psql('postgres',
		'SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM bulk_progress');
	last if $done >= $goal;
	usleep(100_000);
}
cmp_ok($done, '>=', $goal,
	"one open transaction has added $done values without an error")
  or diag("the adding session printed: $adder->{out}");
my ($state, $xid, $wal) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT state, backend_xid IS NOT NULL,
		   pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$wal_start') > 0
	  FROM pg_stat_activity WHERE pid = $adder->{pid}});
is("$state|$xid|$wal", 'active|t|t',
	'it is still running, with a transaction id, and has written WAL');
# and it does not keep them in memory: its own (anonymous, not shared)
# memory is what a call needs, far below the 120 MB that 5M values of 24
# bytes would take (Linux only)
SKIP:
{
	open(my $status, '<', "/proc/$adder->{pid}/status")
	  or skip('no /proc to read a backend\'s memory from', 1);
	my ($rss) = map { /^RssAnon:\s+(\d+) kB/ ? $1 : () } <$status>;
	close($status);
	cmp_ok($rss, '<', 64 * 1024,
		"after $done values the adding backend uses $rss kB of its own memory");
}

my $log_from = -s $node->logfile;
# the crash: the postmaster killed, and the backend (busy in its call, it
# would otherwise go on until the call ends)
$node->kill9;
kill(9, $adder->{pid});
$adder->{h}->kill_kill;
my $started = 0;
for (my $i = 0; $i < 600 && !$started; $i++)
{
	$started = $node->start(fail_ok => 1);
	next if $started;
	usleep(100_000);
	$node->stop('fast', fail_ok => 1);
}
ok($started, 'restarted after the postmaster was killed mid-transaction');

is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, 200000) g
		 WHERE shared_contains('crawl', $seed)}),
	200000, 'after the crash: every committed value is there');
# 100,000 of the values the killed transaction had added; the filter holds
# 200,000 values for 10M: its rate is far below 1%
my $step = int($done / 100000);
my $forgotten = qq{SELECT $bulk FROM generate_series($step, $step * 100000, $step) g};
my $fp = $node->safe_psql('postgres', qq{
	SELECT count(*) FROM ($forgotten) v(u) WHERE shared_contains('crawl', u)});
cmp_ok($fp, '<', 1000,
	"after the crash: of 100,000 values the killed transaction added, $fp (false positives) are seen");

# the filter goes on: the forgotten values are new to a crawler, and a new
# big transaction (500,000 values) commits; the dead transaction's
# overflow pages (its adds are an aborted transaction's after recovery)
# are reused, the relation does not grow
my $size = q{SELECT pg_relation_size('crawl')};
my $size_after_crash = $node->safe_psql('postgres', $size);
cmp_ok($size_after_crash, '>', 50_000_000,
	"the killed transaction left $size_after_crash bytes of overflow pages and filter");
# (each value is tested after the batch's earlier ones are added: a few
# more may be false positives)
my $new = $node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE NOT seen)
	  FROM unnest(shared_test_and_add('crawl', ARRAY($forgotten))) seen});
ok($new <= 100000 - $fp && $new > 100000 - $fp - 100,
	"the forgotten values are added again as new: $new, but for false positives");
$node->safe_psql('postgres', qq{
	SELECT count(*) FROM unnest(shared_test_and_add('crawl',
		ARRAY(SELECT $later FROM generate_series(1, 500000) g)))});
my $present = qq{
	SELECT (SELECT count(*) FROM generate_series(1, 200000) g
			 WHERE shared_contains('crawl', $seed)) || ',' ||
		   (SELECT count(*) FROM ($forgotten) v(u) WHERE shared_contains('crawl', u)) || ',' ||
		   (SELECT count(*) FROM generate_series(1, 500000) g
			 WHERE shared_contains('crawl', $later))};
is($node->safe_psql('postgres', $present), '200000,100000,500000',
	'and they are there, with 500,000 more added in one transaction');
is($node->safe_psql('postgres', $size), $size_after_crash,
	'in the dead transaction\'s overflow pages: the filter has not grown');

# VACUUM after the dead transaction: no error, no warning, nothing left
# uncommitted, the same answers
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'VACUUM crawl');
is("$ret|$stderr", '0|', 'VACUUM runs clean after the crash');
is($node->safe_psql('postgres',
		q{SELECT shared_info('crawl', true) ->> 'uncommitted_adds'}),
	'0', 'no uncommitted add is left after VACUUM');
is($node->safe_psql('postgres', $present), '200000,100000,500000',
	'the same answers after VACUUM');
is($node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE NOT seen)
		  FROM unnest(shared_test_and_add('crawl',
			ARRAY(SELECT 'https://after-vacuum.example/' || g FROM generate_series(1, 1000) g))) seen}),
	1000, 'and new adds after VACUUM');
my @bad = grep { /PANIC|TRAP:|terminated by signal/ }
  split(/\n/, substr(slurp_file($node->logfile), $log_from));
is(scalar(@bad), 0, 'no backend crashed after the restart') or diag(join("\n", @bad));
$node->stop;

#
# 2. Two prepared transactions of 1M values each, across restarts
#
# A filter for 2M values (345 pages): 'a' adds 1M values in one call (2,900
# a page) and is prepared, so is 'b' with another 1M.
#
$node = SbfTest::new_node('big_2pc', 'max_prepared_transactions = 5',
	'wal_level = replica');
my %values = (
	a => q{'https://a.example/' || g},
	b => q{'https://b.example/' || g});
$node->safe_psql('postgres', q{SELECT shared_bloom_create('frontier', 2000000, 0.01)});
for my $gid ('a', 'b')
{
	# 'b' shares no value with 'a': it has nothing to wait for (the
	# timeout makes a wait an error rather than a hang)
	$node->safe_psql('postgres', qq{
		BEGIN;
		SET LOCAL lock_timeout = '10s';
		SELECT count(*) FROM unnest(shared_test_and_add('frontier',
			ARRAY(SELECT $values{$gid} FROM generate_series(1, 1000000) g)));
		PREPARE TRANSACTION '$gid';});
}

# how many of 'a''s or 'b''s values are seen, of every STEPth; a value
# whose bits are not set is looked for in its page's chain of overflow
# pages (2,900 adds a page here while both are pending): the tests
# before VACUUM read a sample
sub seen_of
{
	my ($gid, $step) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series($step, 1000000, $step) g
		 WHERE shared_contains('frontier', $values{$gid})});
}

for my $restart ('a clean restart', 'a crash')
{
	if ($restart eq 'a crash')
	{
		$node->stop('immediate');
		$node->start;
	}
	else
	{
		$node->restart;
	}
	is($node->safe_psql('postgres',
			q{SELECT string_agg(gid, ',' ORDER BY gid) FROM pg_prepared_xacts}),
		'a,b', "after $restart: both transactions are prepared");
	# (the filter is empty: its rate is 0)
	is(seen_of('a', 50) . ',' . seen_of('b', 50), '0,0',
		"after $restart: none of 40,000 of their values is seen");
	my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
		SET lock_timeout = '100ms';
		SELECT shared_test_and_add('frontier', 'https://a.example/500000')});
	like($stderr, qr/canceling statement due to lock timeout/,
		"after $restart: adding one of 'a''s values waits for 'a'");
}

# adders of one value of each wait for the prepared transaction that added it
my %waiter;
for my $gid ('a', 'b')
{
	$waiter{$gid} = background($node,
		qq{SELECT 'answer', shared_test_and_add('frontier', 'https://$gid.example/17');\n});
	is($node->poll_query_until('postgres', qq{
			SELECT l.transactionid = p.transaction
			  FROM pg_locks l, pg_prepared_xacts p
			 WHERE l.pid = $waiter{$gid}{pid} AND NOT l.granted AND p.gid = '$gid'}),
		1, "an adder of one of '$gid''s values waits on its transaction id");
}
$node->safe_psql('postgres', q{COMMIT PREPARED 'a'});
like(feed($waiter{a}, '', qr/answer\|[tf]\n/), qr/answer\|t\n/,
	'after COMMIT PREPARED, the adder waiting for it is told it is seen');
is(seen_of('a', 50), 20000, 'COMMIT PREPARED: its values are there (20,000 of them)');
$node->safe_psql('postgres', q{ROLLBACK PREPARED 'b'});
like(feed($waiter{b}, '', qr/answer\|[tf]\n/), qr/answer\|f\n/,
	'after ROLLBACK PREPARED, the adder waiting for it is told it is new');
# (the waiter's value is not a multiple of 50)
$fp = seen_of('b', 50);
cmp_ok($fp, '<', 200,
	"ROLLBACK PREPARED: of 20,000 of its values, $fp (false positives) are seen");
# (each value is tested after the batch's earlier ones are added: more
# false positives as the filter fills to its capacity)
$new = $node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE NOT seen)
	  FROM unnest(shared_test_and_add('frontier',
		ARRAY(SELECT $values{b} FROM generate_series(1, 1000000) g))) seen});
ok($new <= 1000000 - 1 && $new > 1000000 - 1 - 20000,
	"adding them again: $new are new, all but the waiter's and false positives");
$_->{h}->finish for values %waiter;
($ret, $stdout, $stderr) = $node->psql('postgres', 'VACUUM frontier');
is("$ret|$stderr", '0|', 'VACUUM runs clean');
is(seen_of('a', 1) . ',' . seen_of('b', 1) . ',' . $node->safe_psql('postgres',
		q{SELECT shared_info('frontier', true) ->> 'uncommitted_adds'}),
	'1000000,1000000,0', 'after VACUUM: both sets there (all 2M values), nothing uncommitted');
SbfTest::no_crash($node);
$node->stop;

# parts 3 and 4 need a standby, made with pg_basebackup
SbfTest::end_unless_programs([ 'pg_basebackup' ]);

#
# 3. A standby replays big transactions, checked page by page
#
# wal_consistency_checking on the primary: every generic WAL record carries
# the page as the primary left it, and the standby's replay stops (FATAL
# "inconsistent page found") if replaying the record gives another page.
# 'small' is a filter for 10,000 values (2 pages) that is given 200,000 in
# one transaction (100,000 a page: its pages overflow over a thousand
# times); 'frontier' is one for 1M (173 pages) given 200,000 committed (with
# 50,000 more in a savepoint rolled back) and 200,000 rolled back.
#
my $primary = SbfTest::new_node('big_primary', 'wal_level = replica',
	'max_wal_senders = 4', 'wal_consistency_checking = generic');
$primary->safe_psql('postgres', q{
	SELECT shared_bloom_create('small', 10000, 0.01);
	SELECT shared_bloom_create('frontier', 1000000, 0.01);
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('big_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

my %set = (
	committed   => q{'https://committed.example/' || g},
	savepoint   => q{'https://savepoint.example/' || g},
	rolled_back => q{'https://rolled-back.example/' || g},
	never       => q{'https://never.example/' || g});
my %size = (committed => 200000, savepoint => 50000, rolled_back => 200000,
	never => 200000);
$primary->safe_psql('postgres', qq{
	BEGIN;
	SELECT count(*) FROM unnest(shared_test_and_add('small',
		ARRAY(SELECT $set{committed} FROM generate_series(1, 200000) g)));
	SELECT count(*) FROM unnest(shared_test_and_add('frontier',
		ARRAY(SELECT $set{committed} FROM generate_series(1, 100000) g)));
	SAVEPOINT s;
	SELECT count(*) FROM unnest(shared_test_and_add('frontier',
		ARRAY(SELECT $set{savepoint} FROM generate_series(1, 50000) g)));
	ROLLBACK TO SAVEPOINT s;
	SELECT count(*) FROM unnest(shared_test_and_add('frontier',
		ARRAY(SELECT $set{committed} FROM generate_series(100001, 200000) g)));
	COMMIT;});

# what a node answers for a filter: for each set, how many of every
# STEPth of its values are seen and the md5 of the answers in order.  A
# value whose bits are not set is looked for in its page's chain of
# overflow pages until they are folded (by the next add to the page or
# VACUUM): 'small' is read one value in 100 ('small's pages hold 100,000
# adds each), 'frontier' one in 10
my %step = (small => 100, frontier => 10);

sub answers
{
	my ($n, $filter) = @_;
	return join(' ', map {
		$n->safe_psql('postgres', qq{
			SELECT '$_:' || count(*) FILTER (WHERE a) || ':' || md5(string_agg(a::int::text, '' ORDER BY g))
			  FROM (SELECT g, shared_contains('$filter', $set{$_}) a
					  FROM generate_series($step{$filter}, $size{$_}, $step{$filter}) g) s})
	} sort keys %set);
}

sub count_of
{
	my ($answers, $which) = @_;
	return $answers =~ /\b$which:(\d+):/ ? $1 : -1;
}

sub same_on_standby
{
	my ($when) = @_;
	$primary->wait_for_catchup($standby);
	for my $filter ('small', 'frontier')
	{
		is(answers($standby, $filter), answers($primary, $filter),
			"$when: the standby answers as the primary for '$filter'");
	}
}

# a big transaction open on the primary: its values are seen by neither
my $open = background($primary, qq{
	BEGIN;
	SELECT 'added', count(*) FROM unnest(shared_test_and_add('frontier',
		ARRAY(SELECT $set{rolled_back} FROM generate_series(1, 200000) g)));
});
feed($open, '', qr/added\|200000\n/);
same_on_standby('with a big transaction open on the primary');
my $frontier = answers($primary, 'frontier');
is(count_of($frontier, 'committed'), 20000,
	'the committed values are there (20,000 of them)');
cmp_ok(count_of($frontier, 'rolled_back'), '<', 200,
	'the open transaction\'s values are not seen (false positives only)');
cmp_ok(count_of($frontier, 'savepoint'), '<', 50,
	'nor those of the savepoint rolled back');
is(count_of(answers($primary, 'small'), 'committed'), 2000,
	'the small filter has its committed values too (2,000 of them)');

feed($open, "ROLLBACK;\nSELECT 'rolled back';\n", qr/rolled back\n/);
$open->{h}->finish;
same_on_standby('after the rollback');
cmp_ok(count_of(answers($primary, 'frontier'), 'rolled_back'), '<', 200,
	'the rolled-back values are not seen');

$primary->safe_psql('postgres', 'VACUUM small, frontier');
# VACUUM folded every chain: every value is read now
%step = (small => 1, frontier => 1);
same_on_standby('after VACUUM');
is($primary->safe_psql('postgres', q{
		SELECT (shared_info('small', true) ->> 'uncommitted_adds') || ','
			   || (shared_info('frontier', true) ->> 'uncommitted_adds')}),
	'0,0', 'VACUUM leaves nothing uncommitted');
for my $filter ('small', 'frontier')
{
	is( $standby->safe_psql('postgres',
			"SELECT md5(shared_bloom_snapshot('$filter')::text)"),
		$primary->safe_psql('postgres',
			"SELECT md5(shared_bloom_snapshot('$filter')::text)"),
		"every page of '$filter' on the standby as on the primary");
}

# 4. Adds after a fold, replayed.  A rolled-back transaction's adds fill a
# small filter's chain; then one-value calls fold them away and append
# their own in the same overflow pages, where the dropped adds' bytes were.
# A crash replays all of it (with wal_consistency_checking, which stops
# recovery on a page that does not come out as the primary wrote it), and
# the standby replays it as it goes: each must answer every committed value
# (on ca08922, 10 of 3,000 were lost in recovery: a dropped add's
# byte left in the primary's buffer past pd_lower, which redo zeroes)
$primary->safe_psql('postgres', q{
	SELECT shared_bloom_create('refill', 1000, 0.01);
	CHECKPOINT;});
$primary->safe_psql('postgres', q{
	BEGIN;
	SELECT count(*) FROM unnest(shared_test_and_add('refill',
		ARRAY(SELECT 'b' || g FROM generate_series(1, 3000) g)));
	ROLLBACK;});
$primary->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE NOT shared_test_and_add('refill', 'd' || g))
	  FROM generate_series(1, 3000) g});
my $missing = q{SELECT count(*) FILTER (WHERE NOT shared_contains('refill', 'd' || g))
	  FROM generate_series(1, 3000) g};
is($primary->safe_psql('postgres', $missing), '0',
	'every value added after the fold is there');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $missing), '0',
	'and on the standby');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $missing), '0',
	'and after crash recovery (with wal_consistency_checking)');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't',
	'the standby is alive and replaying');
my $standby_log = slurp_file($standby->logfile);
unlike($standby_log, qr/inconsistent page/,
	'the standby found no inconsistent page');
SbfTest::no_crash($primary);
SbfTest::no_crash($standby);

done_testing();
