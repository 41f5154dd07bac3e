
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The compressed seen (sieve_seen_create) through what a server does to
# its tables: a crash in the middle of a flush leaves the old Z, never a
# half-merged one, and the flush done again gives the frontier a plain
# seen gives; a hot standby (WAL checked by wal_consistency_checking)
# reads the primary's Z; pg_dump and pg_restore carry it, and a flush goes
# on in the restored database.  On the first 100,000 rows of the shipped
# eot2024 stream.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = SbfTest::new_node('primary', 'wal_level = replica',
	'max_wal_senders = 4', "wal_consistency_checking = 'heap,btree'");
SbfTest::load_stream($primary, 'stream',
	SbfTest::data_file('eot2024-sitemaps-300k.txt.gz'), 100000);

# the compressed seen and, beside it, a plain one fed the same rows
$primary->safe_psql('postgres', q{
	SELECT sieve_seen_create('zseen');
	CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
	CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
	CREATE TABLE pseen (sig bigint PRIMARY KEY);
	CREATE TABLE pdiscovered (LIKE discovered);
	CREATE TABLE pfrontier (LIKE frontier);
	INSERT INTO discovered SELECT pos, url FROM stream WHERE pos <= 50000;
	INSERT INTO pdiscovered TABLE discovered;
	SELECT sieve_flush('zseen', 'discovered', 'frontier');
	SELECT sieve_flush('pseen', 'pdiscovered', 'pfrontier');

	-- a flush that sets sieve_test.pause sleeps before it appends to the
	-- frontier: it has read discovered and written the new Z by then
	CREATE FUNCTION pause() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF current_setting('sieve_test.pause', true) = 'on' THEN
			PERFORM pg_sleep(3600);
		END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER pause BEFORE INSERT ON frontier
		FOR EACH STATEMENT EXECUTE FUNCTION pause();
});

my $z = q{
	SELECT count(*), md5(string_agg(s::text, ',')) FROM sieve_signatures('zseen') s
};
my $z_before = $primary->safe_psql('postgres', $z);
like($z_before, qr/^\d{5}\|/, "the first flush filled the compressed seen ($z_before)");

# 1. A crash while a flush sleeps half-way
$primary->safe_psql('postgres', q{
	INSERT INTO discovered SELECT pos, url FROM stream WHERE pos BETWEEN 50001 AND 100000;
	INSERT INTO pdiscovered TABLE discovered;
});
my ($out, $err) = ('', '');
my $flush = IPC::Run::start(
	[
		'psql', '-X', '-d', $primary->connstr('postgres'),
		'-c', 'SET sieve_test.pause = on',
		'-c', "SELECT sieve_flush('zseen', 'discovered', 'frontier')"
	],
	'>', \$out, '2>', \$err);
$primary->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE wait_event = 'PgSleep' AND query LIKE '%sieve_flush%'
}) or die 'the flush did not reach its pause';
$primary->stop('immediate');
$flush->finish;
$primary->start;

is($primary->safe_psql('postgres', $z), $z_before,
	'after a crash half-way through a flush, the compressed seen is the old Z');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM discovered'), '50000',
	'and discovered still holds the 50,000 rows the flush had deleted');

# the flush, done again, gives what the plain seen gives
$primary->safe_psql('postgres', q{
	SELECT sieve_flush('zseen', 'discovered', 'frontier');
	SELECT sieve_flush('pseen', 'pdiscovered', 'pfrontier');
});
my $same = q{
	SELECT (SELECT count(*) FROM (TABLE frontier EXCEPT ALL TABLE pfrontier) a)
		 + (SELECT count(*) FROM (TABLE pfrontier EXCEPT ALL TABLE frontier) b),
		   (SELECT array_agg(s) FROM sieve_signatures('zseen') s)
		 = (SELECT array_agg(sig ORDER BY sig) FROM pseen),
		   (SELECT count(*) FROM frontier)
};
like($primary->safe_psql('postgres', $same), qr/^0\|t\|\d+$/,
	'the flush done again gives the plain seen\'s frontier and signatures');
my $z_after = $primary->safe_psql('postgres', $z);

# parts 2 and 3 need pg_basebackup, pg_dump and pg_restore
SbfTest::end_unless_programs([ 'pg_basebackup', 'pg_dump', 'pg_restore' ], $primary);

# 2. A hot standby reads the primary's Z
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->safe_psql('postgres', q{
	INSERT INTO discovered VALUES (200001, 'https://after-the-backup.example/');
	SELECT sieve_flush('zseen', 'discovered', 'frontier');
});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $z), $primary->safe_psql('postgres', $z),
	'the standby reads the same compressed seen as the primary');
my $lookups = q{
	SELECT count(*) FILTER (WHERE sieve_contains('zseen', url)),
		   sieve_contains('zseen', 'https://after-the-backup.example/'),
		   sieve_contains('zseen', 'https://never.example/')
	FROM stream
};
is($standby->safe_psql('postgres', $lookups), '100000|t|f',
	'sieve_contains on the standby finds every URL of the stream and the one flushed after the backup');

# 3. pg_dump and pg_restore carry it
SbfTest::dump_restore($primary, 'restored');
is($primary->safe_psql('restored', $z), $primary->safe_psql('postgres', $z),
	'the restored compressed seen holds the same signatures');
$primary->safe_psql('restored', q{
	INSERT INTO discovered VALUES (200002, 'https://www.example.gov/'),
								  (200003, 'https://after-the-backup.example/');
});
is($primary->safe_psql('restored', q{SELECT sieve_flush('zseen', 'discovered', 'frontier')}),
	'1', 'a flush in the restored database appends only the new URL');

SbfTest::no_crash($primary);
done_testing();
