
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Shared filters across crashes: what committed transactions added is
# there after an immediate shutdown and after a killed postmaster (generic
# WAL, a transaction id per adding transaction); an unlogged filter comes
# back empty but usable, and whole after a clean restart; a filter filled to its capacity has no false
# negative and a false-positive rate at or below the one asked for; and
# what makes that possible costs a few dozen bytes of WAL a value.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = SbfTest::new_node('crash');

# a million generated URLs, added in batches of 1,000, each batch its own
# transaction; the absent ones are of another host
my $present = q{'https://site' || (g % 997) || '.example/page/' || g};
my $absent  = q{'https://absent' || (g % 997) || '.example/page/' || g};

sub add_in_batches
{
	my ($filter, $batches) = @_;
	$node->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			FOR b IN 0 .. $batches - 1 LOOP
				PERFORM shared_test_and_add('$filter',
					ARRAY(SELECT $present FROM generate_series(b * 1000 + 1, b * 1000 + 1000) g));
				COMMIT;
			END LOOP;
		END \$\$});
}

# count of the first n present URLs the filter does not report
sub false_negatives
{
	my ($filter, $n) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, $n) g
		 WHERE NOT shared_contains('$filter', $present)});
}

sub false_positives
{
	my ($filter, $n) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, $n) g
		 WHERE shared_contains('$filter', $absent)});
}

sub fingerprint
{
	my ($filter, $kind) = @_;
	return $node->safe_psql('postgres',
		"SELECT md5(shared_${kind}_snapshot('$filter')::text)");
}

$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('urls', 1000000, 0.01);
	SELECT shared_stablebloom_create('recent', 1000000, 0.01, 3, max => 3);
	SELECT shared_bloom_create('scratch', 1000000, 0.01, unlogged => true);
});

add_in_batches('urls', 1000);
add_in_batches('recent', 300);
add_in_batches('scratch', 10);
is(false_negatives('scratch', 10000), 0, 'unlogged filter: 10k values added before the crash');

# a rolled-back transaction's values are gone (the filter is transactional):
# its pending add, in WAL, is an aborted transaction's after recovery too
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT shared_test_and_add('urls', 'https://rolled-back.example/');
	ROLLBACK;
	SELECT shared_test_and_add('urls', 'https://committed-after.example/');
});

my $urls_before   = fingerprint('urls',   'bloom');
my $recent_before = fingerprint('recent', 'stablebloom');

# 1. immediate shutdown: no checkpoint, crash recovery replays the WAL
$node->stop('immediate');
$node->start;

is(false_negatives('urls', 1000000), 0,
	'no false negatives on 1M URLs after an immediate shutdown');
my $fp  = false_positives('urls', 1000000);
my $fpr = $fp / 1000000;
ok($fpr <= 0.01 * 1.10,
	"false-positive rate at capacity $fpr (of 1M absent URLs) within 10% of the 0.01 asked for, or below");
is(fingerprint('urls', 'bloom'), $urls_before,
	'bloom filter: every page as before the immediate shutdown');
is(fingerprint('recent', 'stablebloom'), $recent_before,
	'stable filter: every cell and page PRNG effect as before the immediate shutdown');
is($node->safe_psql('postgres',
		"SELECT shared_contains('urls', 'https://rolled-back.example/')"),
	'f', 'a rolled-back value is new after recovery too');
is($node->safe_psql('postgres',
		"SELECT shared_contains('urls', 'https://committed-after.example/')"),
	't', 'the last committed value survives an immediate shutdown');

# the unlogged filter is reset to its metapage: empty, parameters kept
is(false_negatives('scratch', 10000), 10000,
	'unlogged filter: empty after crash recovery');
is($node->safe_psql('postgres',
		"SELECT shared_info('scratch', true) ->> 'pages_written' || ' ' || (shared_info('scratch', true) ->> 'capacity')"),
	'0 1000000', 'unlogged filter: its parameters survive');
is($node->safe_psql('postgres',
		"SELECT shared_test_and_add('scratch', 'x')::text || shared_test_and_add('scratch', 'x')::text"),
	'falsetrue', 'unlogged filter: usable after crash recovery');

# 2. the stable filter keeps behaving: recent values seen, the rate near
# the stable point (each page is a small Stable Bloom filter)
add_in_batches('recent', 700);
my $recent_fn = $node->safe_psql('postgres', qq{
	SELECT count(*) FROM generate_series(699901, 700000) g
	 WHERE NOT shared_contains('recent', $present)});
is($recent_fn, 0, 'stable filter: the last 100 values added are all seen');
my $stable = $node->safe_psql('postgres',
	"SELECT shared_info('recent') ->> 'stable_fpr'");
my $sfp = false_positives('recent', 200000) / 200000;
ok($sfp <= $stable * 1.15 && $sfp >= $stable * 0.85,
	"stable filter: false-positive rate $sfp within 15% of its stable point $stable");

# 3. a killed postmaster (SIGKILL, no shutdown at all)
add_in_batches('urls', 100);
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT shared_test_and_add('urls', 'https://committed-last.example/');
	COMMIT;
});
$urls_before = fingerprint('urls', 'bloom');
$node->kill9;
# the children notice the postmaster's death and exit; until then a start
# fails (shared memory still in use): retry, cleaning up after each try
my $started = 0;
for (my $i = 0; $i < 600 && !$started; $i++)
{
	$started = $node->start(fail_ok => 1);
	next if $started;
	usleep(100_000);
	$node->stop('fast', fail_ok => 1);
}
ok($started, 'restarted after the postmaster was killed');
is($node->safe_psql('postgres',
		"SELECT shared_contains('urls', 'https://committed-last.example/')"),
	't', 'the last committed value survives a killed postmaster');
is(false_negatives('urls', 1000000), 0,
	'no false negatives on 1M URLs after a killed postmaster');
is(fingerprint('urls', 'bloom'), $urls_before,
	'bloom filter: every page as before the postmaster was killed');

# 4. clean restarts keep what was added to unlogged filters: the shutdown
# checkpoint writes every buffer an add marked dirty, those read clean
# after a restart as well as those still dirty (an add skips marking a
# buffer that is dirty already; checkpoints other than the shutdown's
# leave unlogged buffers dirty)
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('scratch_imm', 1000000, 0.01, unlogged => true,
							   transactional => false);
});
sub add_unlogged
{
	my ($host) = @_;
	for my $filter ('scratch', 'scratch_imm')
	{
		$node->safe_psql('postgres', qq{
			SELECT shared_test_and_add('$filter',
				ARRAY(SELECT 'https://$host.example/' || g FROM generate_series(1, 2000) g))});
	}
}
add_unlogged('before');
$node->restart;
add_unlogged('after');
add_unlogged('again');
$node->restart;
for my $filter ('scratch', 'scratch_imm')
{
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, 2000) g,
			   unnest(ARRAY['before', 'after', 'again']) h
		 WHERE NOT shared_contains('$filter', 'https://' || h || '.example/' || g)}),
		0, "$filter: every value added before two clean restarts is there after them");
}

# 5. what a logged add writes to WAL: the bytes of the page it changed and
# little else.  Filters of 10M values (about 1,500 pages), every page
# written first (a page's first write logs all of it), then 1,000 new
# values, most on a page of their own: in the line layout, an element sets
# six bits of one 64-byte line, a few scattered bytes that a generic WAL
# record carries with 4 bytes of header each; the transactional layout
# adds the pending add and the line it folds.  Logging the changed 8-byte
# words instead measured 56 and 71 bytes a value.  A sliding filter stamps
# k cells of the page with the value's clock, and its page's latest clock
# (80.7 and 49.6 bytes a value for 1,500 and 370 pages; logging the touched
# words whole, 132 and 102).
$node->safe_psql('postgres', q{
	CHECKPOINT;
	SELECT shared_bloom_create('wal_lines', 10000000, 0.01, transactional => false);
	SELECT shared_bloom_create('wal_pending', 10000000, 0.01);
	SELECT shared_slidingbloom_create('wal_arrivals', 300000, 0.01);
	SELECT shared_slidingbloom_create('wal_days', interval '7 days', 0.01, 300000);
});
for my $case (['wal_lines', 45], ['wal_pending', 62], ['wal_arrivals', 100],
	['wal_days', 70])
{
	my ($filter, $most) = @$case;
	add_in_batches($filter, 20);
	my ($new, $bytes) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT pg_current_wal_insert_lsn() AS before \\gset
		SELECT count(*) FILTER (WHERE NOT seen),
			   round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'before') / 1000, 1)
		  FROM unnest(shared_test_and_add('$filter',
				ARRAY(SELECT 'https://wal.example/' || g FROM generate_series(1, 1000) g))) seen});
	is($new, 1000, "$filter: 1,000 new values");
	ok($bytes <= $most,
		"$filter: $bytes bytes of WAL a new value, at most $most");
}

SbfTest::no_crash($node);
done_testing();
