
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Shared sliding filters are stored as the other shared filters: through
# generic WAL, so a standby replaying with wal_consistency_checking = all
# has every page (and the clock on the metapage) as the primary and
# answers as it did; an immediate shutdown keeps every committed add; an
# unlogged filter comes back empty with its parameters; pg_dump and
# pg_restore move a filter with its clock, answering as before; and the
# false-positive rate at capacity is the one asked for.  Windows
# of arrivals and of time, aged many times over (more arrivals than the
# window, days of a daily window).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The standby is a copy that pg_basebackup makes, the dump needs pg_dump and
# pg_restore: where they are missing (PostgreSQL 17 from npm, see
# docs/upgrading.md) their checks are skipped, and the windows, the crash
# and the false-positive rates are checked on the primary
my $no_standby = SbfTest::missing_programs('pg_basebackup');
my $no_dump = SbfTest::missing_programs('pg_dump', 'pg_restore');

my $primary = SbfTest::new_node('primary', 'wal_level = replica',
	'max_wal_senders = 4', 'wal_consistency_checking = all');
$primary->safe_psql('postgres', q{
	SELECT shared_slidingbloom_create('recent', 5000, 0.01);
	SELECT shared_slidingbloom_create('daily', interval '1 day', 0.01, 20000);
	SELECT shared_slidingbloom_create('scratch', 1000, 0.01, unlogged => true);
	SELECT shared_test_and_add('recent', 'https://example.com/first');
});
my $standby;
unless ($no_standby)
{
	$primary->backup('base');
	$standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->start;
}

# 20,000 arrivals into a window of 5,000, in batches of 500; 3 days of a
# daily window, every 2 hours 500 URLs of which half were met before
my $url = q{'https://site' || (g % 97) || '.example/' || g};
$primary->safe_psql('postgres', qq{
	DO \$\$
	BEGIN
		FOR b IN 0 .. 39 LOOP
			PERFORM shared_test_and_add('recent',
				ARRAY(SELECT $url FROM generate_series(b * 250 + 1, b * 250 + 500) g));
			PERFORM shared_test_and_add('daily',
				ARRAY(SELECT $url FROM generate_series(b * 250 + 1, b * 250 + 500) g),
				timestamptz '2026-11-01 00:00:00+00' + b * interval '2 hours');
			COMMIT;
		END LOOP;
	END \$\$});
$primary->safe_psql('postgres', q{
	SELECT shared_test_and_add('scratch', ARRAY(SELECT 'u' || g FROM generate_series(1, 500) g))});

my $pages = q{SELECT md5(string_agg(page || ':' || data::text, ',' ORDER BY page)) FROM };
my %answers = (
	recent => q{SELECT md5(string_agg(shared_contains('recent', 'https://site' || (g % 97) || '.example/' || g)::text, '' ORDER BY g)) FROM generate_series(1, 12000) g},
	daily => q{SELECT md5(string_agg(shared_contains('daily', 'https://site' || (g % 97) || '.example/' || g, '2026-11-04 06:00:00+00')::text, '' ORDER BY g)) FROM generate_series(1, 12000) g},
);
my %seen = (
	recent => q{SELECT count(*) FILTER (WHERE shared_contains('recent', 'https://site' || (g % 97) || '.example/' || g)) FROM generate_series(1, 12000) g},
	daily => q{SELECT count(*) FILTER (WHERE shared_contains('daily', 'https://site' || (g % 97) || '.example/' || g, '2026-11-04 06:00:00+00')) FROM generate_series(1, 12000) g},
);

SKIP:
{
	skip "the standby: $no_standby", 6 if $no_standby;
	$primary->wait_for_catchup($standby);
	for my $filter ('recent', 'daily')
	{
		is($standby->safe_psql('postgres', $pages . $filter),
			$primary->safe_psql('postgres', $pages . $filter),
			"$filter: every page on the standby as on the primary");
		is($standby->safe_psql('postgres', $answers{$filter}),
			$primary->safe_psql('postgres', $answers{$filter}),
			"$filter: the standby answers 12,000 values as the primary");
		is($standby->safe_psql('postgres', "SELECT shared_info('$filter', true) - 'size_bytes'"),
			$primary->safe_psql('postgres', "SELECT shared_info('$filter', true) - 'size_bytes'"),
			"$filter: shared_info on the standby as on the primary");
	}
}
# the window: a URL is stored at its first arrival (it is met again 250
# arrivals later, seen), number 1 + 500 b + (g - 250 b) for its first batch
# b; the next arrival is 20,002, which sees the stamps from 15,003 on
my $stamped = q{
	WITH u AS (SELECT g, 1 + b * 500 + (g - b * 250) AS arrival,
	                  shared_contains('recent', 'https://site' || (g % 97) || '.example/' || g) AS seen
	             FROM generate_series(1, 10250) g,
	                  LATERAL (SELECT greatest(0, ceil(g / 250.0)::int - 2) AS b) x)
	SELECT count(*) FILTER (WHERE arrival >= 15003), count(*) FILTER (WHERE arrival >= 15003 AND seen),
	       count(*) FILTER (WHERE arrival < 15003 AND seen) < 80 FROM u};
is($primary->safe_psql('postgres', $stamped), '2500|2500|t',
	'recent: every URL stored within the last 4,999 arrivals is seen, the older forgotten (up to false positives)');
# at 06:00 on day 4 the last day holds the batches from 06:00 on day 3,
# whose first arrivals are URLs 7,001..10,250
is($primary->safe_psql('postgres', $seen{daily} . ' WHERE g > 7000 AND g <= 10250'), '3250',
	'daily: every URL first met within the last day is seen');
cmp_ok($primary->safe_psql('postgres', $seen{daily} . ' WHERE g <= 6750'), '<', 80,
	'daily: URLs first met more than a day and a tick before are forgotten (up to false positives)');

# adding on a standby is refused; testing works
SKIP:
{
	skip "the standby: $no_standby", 1 if $no_standby;
	my ($ret, $stdout, $stderr) = $standby->psql('postgres',
		"SELECT shared_test_and_add('recent', 'x')");
	like($stderr, qr/read-only transaction/, 'adding on the standby is refused');
}

# an immediate shutdown: the committed adds and the clock are kept
my %before;
$before{$_} = $primary->safe_psql('postgres', $pages . $_) for ('recent', 'daily');
my $clock = $primary->safe_psql('postgres', "SELECT shared_info('recent')->'clock'");
$primary->stop('immediate');
$primary->start;
for my $filter ('recent', 'daily')
{
	is($primary->safe_psql('postgres', $pages . $filter), $before{$filter},
		"$filter: every page as before the immediate shutdown");
}
is($primary->safe_psql('postgres', "SELECT shared_info('recent')->'clock'"), $clock,
	'recent: the clock is kept');
is($primary->safe_psql('postgres', q{
		SELECT shared_test_and_add('recent', 'https://example.com/after'),
		       shared_test_and_add('recent', 'https://example.com/after')}),
	'f|t', 'recent: adds after recovery');
# the unlogged filter: empty, parameters kept, usable
is($primary->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE shared_contains('scratch', 'u' || g))
		  FROM generate_series(1, 500) g}),
	'0', 'unlogged filter: empty after crash recovery');
is($primary->safe_psql('postgres', q{
		SELECT i->>'window', i->>'clock', i->>'logged' FROM shared_info('scratch') i}),
	'1000|0|false', 'unlogged filter: its parameters survive, its clock starts again');
is($primary->safe_psql('postgres', q{
		SELECT shared_test_and_add('scratch', 'v'), shared_test_and_add('scratch', 'v')}),
	'f|t', 'unlogged filter: usable after crash recovery');

# pg_dump and pg_restore: the same pages, clock and answers
SKIP:
{
	skip "the dump and restore: $no_dump", 11 if $no_dump;
	$primary->safe_psql('postgres', q{
		SELECT shared_test_and_add('scratch', ARRAY(SELECT 'u' || g FROM generate_series(1, 500) g))});
	my $dump = $primary->basedir . '/sliding.dump';
	$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
		'pg_dump of the filters');
	$primary->safe_psql('postgres', 'CREATE DATABASE restored');
	$primary->command_ok([ 'pg_restore', '-d', $primary->connstr('restored'), $dump ],
		'pg_restore of the filters');
	for my $filter ('recent', 'daily', 'scratch')
	{
		is($primary->safe_psql('restored', $pages . $filter),
			$primary->safe_psql('postgres', $pages . $filter),
			"$filter: restored page by page");
		is($primary->safe_psql('restored', "SELECT shared_info('$filter', true) - 'size_bytes'"),
			$primary->safe_psql('postgres', "SELECT shared_info('$filter', true) - 'size_bytes'"),
			"$filter: restored with its parameters and clock");
	}
	for my $filter ('recent', 'daily')
	{
		is($primary->safe_psql('restored', $answers{$filter}),
			$primary->safe_psql('postgres', $answers{$filter}),
			"$filter: the restored filter answers 12,000 values as the original");
	}
	is($primary->safe_psql('restored', q{
			SELECT shared_test_and_add('recent', ARRAY['https://example.com/after', 'https://example.com/new'])}),
		$primary->safe_psql('postgres', q{
			SELECT shared_test_and_add('recent', ARRAY['https://example.com/after', 'https://example.com/new'])}),
		'recent: the restored filter goes on as the original');
}

# the false-positive rate at capacity is the one asked for: 300,000
# arrivals into a window of 100,000 at 1%, and 96,000 URLs a day (2,000
# every half hour) into a daily window sized for 100,000
$primary->safe_psql('postgres', q{
	SELECT shared_slidingbloom_create('accuracy', 100000, 0.01);
	SELECT shared_slidingbloom_create('accuracy_daily', interval '1 day', 0.01, 100000);
	SELECT count(*) FROM generate_series(0, 29) b,
		unnest(shared_test_and_add('accuracy', ARRAY(SELECT 'u' || (b * 10000 + g) FROM generate_series(1, 10000) g)));
	SELECT count(*) FROM generate_series(0, 95) b,
		unnest(shared_test_and_add('accuracy_daily', ARRAY(SELECT 'u' || (b * 2000 + g) FROM generate_series(1, 2000) g),
		                           timestamptz '2026-01-01 00:00+00' + b * interval '30 minutes'));
});
my $fpr = $primary->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE shared_contains('accuracy', 'absent' || g))::float8 / 200000
	  FROM generate_series(1, 200000) g});
ok($fpr > 0.005 && $fpr < 0.013, "window of arrivals: false-positive rate $fpr at capacity, asked 0.01");
$fpr = $primary->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE shared_contains('accuracy_daily', 'absent' || g, '2026-01-02 23:30+00'))::float8 / 200000
	  FROM generate_series(1, 200000) g});
ok($fpr > 0.004 && $fpr < 0.013, "window of time: false-positive rate $fpr near capacity, asked 0.01");

SbfTest::no_crash($primary);
SKIP:
{
	skip "the standby: $no_standby", 1 if $no_standby;
	SbfTest::no_crash($standby);
}
done_testing();
