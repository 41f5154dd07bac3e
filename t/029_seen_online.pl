# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The exact online store (seen_test_and_add, docs/sieve.md) through what a
# server does to its tables: a crash keeps every committed add and forgets
# the uncommitted ones; a hot standby (WAL checked by
# wal_consistency_checking) answers as its primary at the same LSN;
# pg_dump and pg_restore carry the adds not yet folded, and the restored
# seen goes on taking adds and folding them.  On the first 60,000 rows of
# the shipped eot2024 stream.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = SbfTest::new_node('primary', 'wal_level = replica',
	'max_wal_senders = 4', "wal_consistency_checking = 'heap,btree'");
SbfTest::load_stream($primary, 'stream',
	SbfTest::data_file('eot2024-sitemaps-300k.txt.gz'), 60000);

# Z holds the first 20,000 rows' URLs (imported), the next 20,000 rows are
# added online in batches of 1,000, committed; what each batch answered
# new is kept, to compare with an exact table of the same URLs
$primary->safe_psql('postgres', q{
	SELECT sieve_seen_create('oseen');
	CREATE TABLE z0 AS SELECT DISTINCT url_signature(url) AS sig FROM stream WHERE pos <= 20000;
	SELECT sieve_seen_import('oseen', 'z0');
	CREATE TABLE answered (pos bigint, seen boolean);
	INSERT INTO answered
	SELECT pos, seen
	FROM generate_series(20001, 39001, 1000) b,
		 LATERAL (SELECT array_agg(pos ORDER BY pos) AS p, array_agg(url ORDER BY pos) AS u
				  FROM stream WHERE pos >= b AND pos < b + 1000) batch,
		 LATERAL unnest(p, seen_test_and_add('oseen', u)) AS a(pos, seen);
});
is($primary->safe_psql('postgres', q{
	SELECT count(*) FROM answered a JOIN stream s USING (pos)
	WHERE a.seen <> EXISTS (SELECT FROM stream e WHERE e.url = s.url AND e.pos < s.pos)
}), '0', 'each online add answered new exactly where the URL was first met');

my $state = q{
	SELECT count(*), md5(string_agg(s::text, ',')) FROM sieve_signatures('oseen') s
};
my $committed = $primary->safe_psql('postgres', $state);
my $online = $primary->safe_psql('postgres',
	'SELECT count(*) FROM oseen WHERE chunk IS NULL');
cmp_ok($online, '>', 1000, "the committed adds are rows of their own ($online)");

# 1. A crash: a transaction in progress adds the URLs of rows 40,001 to
# 41,000; the server dies before it commits
my $bg = $primary->background_psql('postgres');
$bg->query_safe(q{
	BEGIN;
	SELECT seen_test_and_add('oseen', array_agg(url)) FROM stream
	WHERE pos > 40000 AND pos <= 41000;
});
$primary->stop('immediate');
$bg->quit;
$primary->start;
is($primary->safe_psql('postgres', $state), $committed,
	'after a crash the seen holds every committed add and no uncommitted one');
is($primary->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE a) FROM stream s,
		unnest(sieve_contains('oseen', ARRAY[s.url])) a WHERE pos <= 40000
}), '40000', 'every URL of the rows added and imported is seen after the crash');

# parts 2 and 3 need pg_basebackup, pg_dump and pg_restore
SbfTest::end_unless_programs([ 'pg_basebackup', 'pg_dump', 'pg_restore' ], $primary);

# 2. A hot standby answers as its primary: adds after the backup, a
# compaction, and adds after it
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->safe_psql('postgres', q{
	SELECT seen_test_and_add('oseen', array_agg(url)) FROM stream
	WHERE pos > 40000 AND pos <= 45000;
});
$primary->wait_for_catchup($standby);
my $lookups = q{
	SELECT count(*) FILTER (WHERE a) FROM (SELECT array_agg(url) AS u FROM stream) s,
		unnest(sieve_contains('oseen', s.u)) a
};
is($standby->safe_psql('postgres', $state), $primary->safe_psql('postgres', $state),
	'the standby reads the same seen as the primary, online adds included');
is($standby->safe_psql('postgres', $lookups), $primary->safe_psql('postgres', $lookups),
	'sieve_contains answers on the standby as on the primary');
$primary->safe_psql('postgres', q{
	SELECT sieve_seen_compact('oseen');
	SELECT seen_test_and_add('oseen', array_agg(url)) FROM stream
	WHERE pos > 45000 AND pos <= 50000;
});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $state), $primary->safe_psql('postgres', $state),
	'and after a compaction and more adds');
my ($code, $out, $err) = $standby->psql('postgres',
	q{SELECT seen_test_and_add('oseen', ARRAY['https://standby.example/'])});
like($err, qr/read-only transaction|during recovery/,
	'seen_test_and_add is refused on the standby');

# 3. pg_dump and pg_restore carry the adds not yet folded
my $before_dump = $primary->safe_psql('postgres', $state);
SbfTest::dump_restore($primary, 'restored');
is($primary->safe_psql('restored', $state), $before_dump,
	'the restored seen holds the same signatures, its online adds included');
is($primary->safe_psql('restored', q{
	SELECT seen_test_and_add('oseen', ARRAY['https://after-restore.example/', 'https://after-restore.example/'])
}), '{f,t}', 'the restored seen takes adds');
$primary->safe_psql('restored', q{SELECT sieve_seen_compact('oseen')});
is($primary->safe_psql('restored', q{
	SELECT count(*) FILTER (WHERE chunk IS NULL),
		   sieve_contains('oseen', 'https://after-restore.example/')
	FROM oseen
}), '0|t', 'and folds them into chunks');

SbfTest::no_crash($primary);
done_testing();
