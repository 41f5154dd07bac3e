
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Logical replication and shared filters.  A filter changes through generic
# WAL, which logical decoding does not see: a subscription would copy its
# pages at the initial sync and nothing after, so the two copies would drift
# apart without a word.  The subscriber refuses the copy with a clear error
# instead (in its log, as every error of a replication worker), and the
# rest of the subscription goes on.
#
# Logical replication and the sieve.  A plain seen is flushed by INSERTs,
# which replicate.  A flush replaces a compressed seen by a new heap, which
# logical decoding does not carry either: the publisher refuses that flush,
# naming the publication, so the subscriber's seen never silently stays at
# its initial sync while its discovered and frontier move on.

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

# The sieve, in a database of its own, published FOR ALL TABLES: a plain
# seen and a compressed one, each with its discovered and frontier, flushed
# once before the publication is made (after sieve_seen_create, then)
my $tables = q{
	CREATE EXTENSION sbf;
	CREATE TABLE pseen (sig bigint PRIMARY KEY);
	CREATE TABLE discovered (pos bigint PRIMARY KEY, url text NOT NULL);
	CREATE TABLE frontier (pos bigint PRIMARY KEY, url text NOT NULL);
	SELECT sieve_seen_create('zseen');
	CREATE TABLE zdiscovered (pos bigint PRIMARY KEY, url text NOT NULL);
	CREATE TABLE zfrontier (pos bigint PRIMARY KEY, url text NOT NULL);
};
for my $node ($publisher, $subscriber)
{
	$node->safe_psql('postgres', 'CREATE DATABASE sieve');
	$node->safe_psql('sieve', $tables);
}
$publisher->safe_psql('sieve', q{
	INSERT INTO discovered SELECT g, 'https://example.org/' || (g % 700) FROM generate_series(1, 1000) g;
	INSERT INTO zdiscovered TABLE discovered;
	SELECT sieve_flush('pseen', 'discovered', 'frontier');
	SELECT sieve_flush('zseen', 'zdiscovered', 'zfrontier');
	CREATE PUBLICATION sieve FOR ALL TABLES;
});
$subscriber->safe_psql('sieve',
	"CREATE SUBSCRIPTION sieve CONNECTION '"
	  . $publisher->connstr . " dbname=sieve' PUBLICATION sieve");
$subscriber->wait_for_subscription_sync($publisher, 'sieve', 'sieve');

# what each side holds: the seens' signatures, the other tables' rows
my %state = (
	pseen => 'SELECT count(*), md5(string_agg(sig::text, \',\' ORDER BY sig)) FROM pseen',
	zseen => 'SELECT count(*), md5(string_agg(s::text, \',\' ORDER BY s)) FROM sieve_signatures(\'zseen\') s',
	map { $_ => "SELECT count(*), md5(string_agg(pos || url, ',' ORDER BY pos)) FROM $_" }
	  qw(discovered frontier zdiscovered zfrontier));
sub same_on_both
{
	my ($what) = @_;
	for my $table (sort keys %state)
	{
		is($subscriber->safe_psql('sieve', $state{$table}),
			$publisher->safe_psql('sieve', $state{$table}),
			"$table: the same on the subscriber, $what");
	}
}
same_on_both('after the initial sync');
is($subscriber->safe_psql('sieve', 'SELECT count(*) FROM sieve_signatures(\'zseen\')'),
	700, 'the compressed seen was copied at the initial sync');

# A second batch, 300 new URLs among 1,000 rows
$publisher->safe_psql('sieve', q{
	INSERT INTO discovered SELECT g, 'https://example.org/' || (g % 1200) FROM generate_series(1001, 2000) g;
	INSERT INTO zdiscovered SELECT * FROM discovered WHERE pos > 1000;
});
is($publisher->safe_psql('sieve', q{SELECT sieve_flush('pseen', 'discovered', 'frontier')}),
	300, 'the plain seen is flushed on the publisher');
my ($rc, $out, $err) = $publisher->psql('sieve',
	q{SELECT sieve_flush('zseen', 'zdiscovered', 'zfrontier')});
isnt($rc, 0, 'the flush into the compressed seen is refused');
like($err, qr/ERROR:  compressed seen relation "zseen" is in publication "sieve"/,
	'naming the publication');
like($err, qr/HINT:  Leave the compressed seen out of every publication/, 'with a hint');
($rc, $out, $err) = $publisher->psql('sieve', q{SELECT sieve_seen_create('zlater')});
like($err, qr/ERROR:  compressed seen relation "zlater" is in publication "sieve"/,
	'and so is a compressed seen made while the publication publishes all tables');
$publisher->wait_for_catchup('sieve');
same_on_both('after the second batch');
is($subscriber->safe_psql('sieve', 'SELECT count(*) FROM pseen'), 1000,
	'the plain seen replicated its flush');
is($subscriber->safe_psql('sieve', 'SELECT count(*) FROM zdiscovered'), 1000,
	'the refused batch waits in zdiscovered, on both sides');

$subscriber->safe_psql('sieve', 'DROP SUBSCRIPTION sieve');
SbfTest::no_crash($subscriber);
SbfTest::no_crash($publisher);
done_testing();
