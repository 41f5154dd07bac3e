
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
# its initial sync while its discovered and frontier move on; beside a slot
# that decodes without publications, the flush warns.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $publisher = SbfTest::new_node('publisher', 'wal_level = logical',
	'max_wal_senders = 4', 'max_replication_slots = 6');
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
like($err, qr/HINT:  For a replicated crawl, flush into a plain seen \(sig bigint\), whose flushes replicate\. A compressed seen left out of every publication .* is not on the subscriber at all\./,
	'with a hint to use a plain seen, not to leave the compressed one out');
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

# Logical decoding without publications (test_decoding here; wal2json,
# Debezium's decoderbufs, pglogical alike) does not see a flush's swap
# either, and no publication check covers it: a flush into a compressed
# seen that a slot of a plugin other than pgoutput could decode warns,
# naming the slot; a pgoutput slot (covered by the publication check), a
# slot of another database and an unlogged seen (decoded by none) are not
# named.
$publisher->safe_psql('postgres', q{
	CREATE DATABASE cdc;
	SELECT pg_create_logical_replication_slot('elsewhere', 'test_decoding');
});
$publisher->safe_psql('cdc', q{
	CREATE EXTENSION sbf;
	SELECT sieve_seen_create('z1');
	SELECT sieve_seen_create('zu', unlogged => true);
	CREATE TABLE d1 (pos bigint PRIMARY KEY, url text NOT NULL);
	CREATE TABLE f1 (pos bigint PRIMARY KEY, url text NOT NULL);
	SELECT pg_create_logical_replication_slot('rv_slot', 'test_decoding');
	SELECT pg_create_logical_replication_slot('po_slot', 'pgoutput');
	INSERT INTO d1 SELECT g, 'https://example.org/' || g FROM generate_series(1, 1000) g;
});
($rc, $out, $err) = $publisher->psql('cdc', q{SELECT sieve_flush('z1', 'd1', 'f1')});
is($out, 1000, 'the flush into the compressed seen goes on beside a test_decoding slot');
like($err,
	qr/WARNING:  logical decoding does not carry this sieve_flush's rewrite of compressed seen relation "z1"\nDETAIL:  Logical replication slot "rv_slot" \(plugin "test_decoding"\) decodes this database without a publication, and will see no change to the compressed seen\.\nHINT:  For a crawl that logical decoding must carry, flush into a plain seen \(sig bigint\), whose flushes are inserts\./,
	'with a WARNING naming the slot of this database that decodes without a publication, alone');
is($publisher->safe_psql('cdc', q{
	SELECT count(*) FILTER (WHERE data LIKE 'table public.z1:%'),
		   count(*) FILTER (WHERE data LIKE 'table public.f1:%')
	FROM pg_logical_slot_get_changes('rv_slot', NULL, NULL)}),
	'0|1000', 'as the slot shows: none of the rewrite of z1 is decoded, the frontier is');
($rc, $out, $err) = $publisher->psql('cdc', q{
	SELECT pg_create_logical_replication_slot('another', 'test_decoding');
	CREATE TABLE p1 AS SELECT url_signature('https://example.org/' || g) AS sig FROM generate_series(1001, 1100) g;
	SELECT sieve_seen_import('z1', 'p1')});
like($err, qr/WARNING:  logical decoding does not carry this sieve_seen_import's rewrite of compressed seen relation "z1"\nDETAIL:  Logical replication slots "another" \(plugin "test_decoding"\), "rv_slot" \(plugin "test_decoding"\) decode this database/,
	'sieve_seen_import warns too, naming every such slot');
($rc, $out, $err) = $publisher->psql('cdc', q{
	INSERT INTO d1 SELECT g, 'https://example.org/' || g FROM generate_series(1001, 1100) g;
	SELECT sieve_flush('zu', 'd1', 'f1')});
is($out, 100, 'the flush into an unlogged compressed seen');
is($err, '', 'warns of nothing: logical decoding carries no unlogged table');
$publisher->safe_psql('cdc', q{
	SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = 'cdc';
	INSERT INTO d1 SELECT g, 'https://example.org/' || g FROM generate_series(2001, 2100) g;
});
($rc, $out, $err) = $publisher->psql('cdc', q{SELECT sieve_flush('z1', 'd1', 'f1')});
is($err, '', 'once the slots of the database are dropped, the flush warns no more');
$publisher->safe_psql('postgres', q{SELECT pg_drop_replication_slot('elsewhere')});

SbfTest::no_crash($subscriber);
SbfTest::no_crash($publisher);
done_testing();
