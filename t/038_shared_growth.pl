
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# A growing shared filter under load, across crashes, on a standby and
# through pg_dump.  Four crawlers add the same 64,000 URLs at once, in
# batches of 20 a transaction, two in one order and two in the other, while
# the filter grows twice: each URL must be answered new exactly once.  The
# growth is one WAL record: a crash right after it leaves the filter grown
# and sound; a standby replaying it all with wal_consistency_checking
# answers as the primary; pg_dump carries the sub-filters.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The standby is a copy that pg_basebackup makes, the dump needs pg_dump and
# pg_restore: where they are missing (PostgreSQL 17 from npm, see
# docs/upgrading.md) their checks are skipped, and the crawl, the growth
# and the crash are checked on the primary
my $no_standby = SbfTest::missing_programs('pg_basebackup');
my $no_dump = SbfTest::missing_programs('pg_dump', 'pg_restore');

my $node = SbfTest::new_node('growth', 'wal_level = replica',
	'max_wal_senders = 4', 'max_replication_slots = 4',
	'wal_consistency_checking = generic', 'deadlock_timeout = 50ms');
my $standby;
unless ($no_standby)
{
	# the crawl's WAL (a full-page image in every record, for the checks)
	# runs far ahead of the standby: a slot keeps it until the standby has it
	$node->safe_psql('postgres',
		q{SELECT pg_create_physical_replication_slot('growth_standby', true)});
	$node->backup('base');
	$standby = PostgreSQL::Test::Cluster->new('growth_standby');
	$standby->init_from_backup($node, 'base', has_streaming => 1);
	$standby->append_conf('postgresql.conf', "primary_slot_name = 'growth_standby'");
	$standby->start;
}

# growth 1: every sub-filter has the first's capacity, at half the rate of
# the one before (about 27,000 URLs each at this rate)
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('crawl_seen', 1, 1e-8, growth => 1);
	CREATE TABLE answers (client int, url text, seen boolean);
	-- batches of 20 URLs; a batch that deadlocks with another crawler's is
	-- rolled back (its adds with it) and made again
	CREATE PROCEDURE crawl(client int) LANGUAGE plpgsql AS $$
	DECLARE
		batch int;
		urls text[];
	BEGIN
		FOR i IN 0 .. 3199 LOOP
			batch := CASE WHEN client % 2 = 0 THEN i ELSE 3199 - i END;
			urls := ARRAY(SELECT 'https://example.com/' || g
							FROM generate_series(batch * 20, batch * 20 + 19) g);
			LOOP
				BEGIN
					INSERT INTO answers
					SELECT client, u, s FROM unnest(urls, shared_test_and_add('crawl_seen', urls)) x(u, s);
					EXIT;
				EXCEPTION WHEN deadlock_detected THEN
				END;
			END LOOP;
			COMMIT;
		END LOOP;
	END $$;});
my $capacity = $node->safe_psql('postgres',
	q{SELECT shared_info('crawl_seen', false) ->> 'capacity'});
cmp_ok($capacity * 2, '<', 64000, 'the crawl is more than two sub-filters\' worth');

my @crawlers;
for my $client (0 .. 3)
{
	my $out = '';
	push @crawlers,
	  IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
			'-c', "CALL crawl($client)" ],
		'>', \$out, '2>', \$out);
}
$_->finish or die "a crawler failed" for @crawlers;

is($node->safe_psql('postgres', q{SELECT count(*) FROM answers}), 4 * 64000,
	'every crawler was answered for every URL');
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT url FROM answers GROUP BY url
		                      HAVING count(*) FILTER (WHERE NOT seen) <> 1) x}),
	'0', 'each URL was answered new exactly once, across the growth');
is( $node->safe_psql('postgres', q{
		SELECT (info ->> 'subfilters') || ' ' || (info ->> 'adds')
		  FROM (SELECT shared_info('crawl_seen', false) AS info) i}),
	'3 64000', 'the filter grew twice and counted each URL once');

sub missing
{
	my ($n, $filter, $count) = @_;
	return $n->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE NOT shared_contains('$filter', 'https://example.com/' || g))
		  FROM generate_series(0, $count - 1) g});
}
is(missing($node, 'crawl_seen', 64000), '0', 'no false negatives');

# A crash right after a growth: s1 brings the last sub-filter to its
# capacity in a transaction left open (the growth is logged; a commit of
# another session flushes it), and the server dies
my $to_capacity = $node->safe_psql('postgres', q{
	SELECT (s ->> 'capacity')::bigint - (s ->> 'adds')::bigint
	  FROM (SELECT shared_info('crawl_seen', false) -> 'sub_filters' -> 2 AS s) x});
$node->safe_psql('postgres', qq{
	DO \$\$ BEGIN
		FOR b IN 0 .. ($to_capacity - 2) / 20 LOOP
			PERFORM shared_test_and_add('crawl_seen', ARRAY(
				SELECT 'https://example.com/' || (64000 + g)
				  FROM generate_series(b * 20, least(b * 20 + 19, $to_capacity - 2)) g));
			COMMIT;
		END LOOP;
	END \$\$});
my ($in, $out) = ('', '');
my $open = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$out);
$in .= q{BEGIN;
	SELECT 'added', shared_test_and_add('crawl_seen', 'https://example.com/open');
};
$open->pump until $out =~ /added\|f/;
is($node->safe_psql('postgres', q{SELECT shared_info('crawl_seen', false) ->> 'subfilters'}),
	'4', 'the add that reached the capacity made the filter grow');
# (a commit that wrote WAL flushes it: txid_current() alone would not)
$node->safe_psql('postgres', q{INSERT INTO answers VALUES (-1, 'flush', true)});
$node->stop('immediate');
$open->kill_kill;
$node->start;

is($node->safe_psql('postgres', q{SELECT shared_info('crawl_seen', false) ->> 'subfilters'}),
	'4', 'the growth survives the crash');
is(missing($node, 'crawl_seen', 64000 + $to_capacity - 1), '0',
	'every committed URL is still seen after the crash');
is( $node->safe_psql('postgres', q{
		SELECT shared_test_and_add('crawl_seen', 'https://example.com/open')}),
	'f', 'the URL of the transaction the crash ended is new again');
$node->safe_psql('postgres', q{
	SELECT shared_test_and_add('crawl_seen', ARRAY(
		SELECT 'https://example.com/after/' || g FROM generate_series(1, 1000) g))});
is( $node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE shared_contains('crawl_seen', 'https://example.com/after/' || g))
		  FROM generate_series(1, 1000) g}),
	'1000', 'the grown filter takes adds after the crash');

# the standby replayed it all, every page compared by wal_consistency_checking
SKIP:
{
	skip "the standby: $no_standby", 2 if $no_standby;
	$node->wait_for_catchup($standby);
	is($standby->safe_psql('postgres', q{SELECT shared_info('crawl_seen', false) - 'size_bytes'}),
		$node->safe_psql('postgres', q{SELECT shared_info('crawl_seen', false) - 'size_bytes'}),
		'the standby has the same sub-filters and count');
	is(missing($standby, 'crawl_seen', 64000 + $to_capacity - 1), '0',
		'the standby answers every committed URL seen');
}

# pg_dump and pg_restore carry the sub-filters and the count
SKIP:
{
	skip "the dump and restore: $no_dump", 4 if $no_dump;
	my $dump = $node->basedir . '/growth.dump';
	$node->command_ok(
		[ 'pg_dump', '-Fc', '-t', 'crawl_seen', '-f', $dump, '-d', $node->connstr('postgres') ],
		'pg_dump of a grown filter');
	$node->safe_psql('postgres', q{CREATE DATABASE restored});
	$node->safe_psql('restored', q{CREATE EXTENSION sbf});
	$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dump ],
		'pg_restore of a grown filter');
	is($node->safe_psql('restored', q{SELECT shared_info('crawl_seen', false) - 'size_bytes'}),
		$node->safe_psql('postgres', q{SELECT shared_info('crawl_seen', false) - 'size_bytes'}),
		'the restored filter has the same sub-filters and count');
	is( $node->safe_psql('restored', q{
			SELECT count(*) FILTER (WHERE NOT shared_contains('crawl_seen', 'https://example.com/' || g))
			  FROM generate_series(0, 63999) g}),
		'0', 'the restored filter has no false negatives');
}

done_testing();
