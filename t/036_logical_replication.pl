
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Logical replication and shared filters.  A filter changes through generic
# WAL, which logical decoding does not see: a subscription would copy its
# pages at the initial sync and nothing after, so the two copies would drift
# apart without a word.  The subscriber refuses the copy with a clear error
# instead (in its log, as every error of a replication worker), and the
# rest of the subscription goes on.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $publisher = SbfTest::new_node('publisher', 'wal_level = logical',
	'max_wal_senders = 4', 'max_replication_slots = 4');
my $subscriber = SbfTest::new_node('subscriber');

$publisher->safe_psql('postgres', q{
	SELECT shared_bloom_create('seen', 10000, 0.01, transactional => false);
	SELECT shared_test_and_add('seen', ARRAY(SELECT 'v' || g FROM generate_series(1, 1000) g));
	CREATE TABLE pages (id int PRIMARY KEY, url text);
	INSERT INTO pages SELECT g, 'v' || g FROM generate_series(1, 100) g;
	CREATE PUBLICATION crawl FOR TABLE seen, pages;
});
$subscriber->safe_psql('postgres', q{
	CREATE TABLE seen (page bigint, data bytea) USING sbf_filter;
	CREATE TABLE pages (id int PRIMARY KEY, url text);
});
my $offset = -s $subscriber->logfile;
my $connstr = $publisher->connstr . ' dbname=postgres';
$subscriber->safe_psql('postgres',
	"CREATE SUBSCRIPTION crawl CONNECTION '$connstr' PUBLICATION crawl");

ok($subscriber->poll_query_until('postgres', 'SELECT count(*) = 100 FROM pages'),
	'the plain table of the publication is copied');
$subscriber->wait_for_log(
	qr/logical replication does not carry shared filter "seen"/, $offset);
pass('the subscriber refuses to copy the shared filter, in its log');
is($subscriber->safe_psql('postgres', 'SELECT count(*) FROM seen'), 0,
	'and the filter has no page on the subscriber');

# later changes of the plain table still arrive
$publisher->safe_psql('postgres', q{INSERT INTO pages VALUES (101, 'v101')});
ok($subscriber->poll_query_until('postgres', 'SELECT count(*) = 101 FROM pages'),
	'the subscription goes on for the other tables');

$subscriber->safe_psql('postgres', 'DROP SUBSCRIPTION crawl');
SbfTest::no_crash($subscriber);
done_testing();
