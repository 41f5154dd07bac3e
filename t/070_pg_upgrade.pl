
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# pg_upgrade from an older major to this one, in --copy and in --link mode.
# The old cluster holds every kind of sbf object: bloom, stablebloom,
# slidingbloom and simhash values in a table, a logged and an unlogged
# shared filter of each kind, a simhash GIN index, and the offline sieve's
# three tables with URLs discovered since the last flush; and a database
# still at 1.1 with a simhash index made without "blocks".  After the
# upgrade and a crash before any session opens a filter, every query
# answers as before, the pending flush gives the frontier the old server
# gave, the shared filters go on taking values (also after another
# crash), and ALTER EXTENSION sbf UPDATE has nothing to do; in the
# database at 1.1 the index keeps its layout (4 blocks, 1.1's default)
# before and after the update to 1.2 writes it into its options.
#
# The old major is the installation SBF_UPGRADE_FROM names (its prefix, with
# sbf installed in it: scripts/test-matrix.sh sets it to the machine's
# PostgreSQL 15 when it runs the suite on 18); without it the test skips.

use strict;
use warnings;

use File::Path qw(rmtree);
use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $from = $ENV{SBF_UPGRADE_FROM};
plan skip_all => 'SBF_UPGRADE_FROM names no older PostgreSQL to upgrade from'
  unless defined $from && $from ne '';
plan skip_all => "SBF_UPGRADE_FROM=$from has no pg_ctl"
  unless -x "$from/bin/pg_ctl";
# asked only once there is something to upgrade from: without
# SBF_UPGRADE_FROM the file skips on any server, pg_upgrade or not
SbfTest::require_programs('pg_upgrade');

# pg_upgrade writes its logs beside the new data directory's
chdir $PostgreSQL::Test::Utils::tmp_check;

# Both clusters with data checksums, which 18's initdb turns on by default
# and pg_upgrade requires to match
sub new_cluster
{
	my ($name, @install) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name, @install);
	$node->init(extra => ['--data-checksums']);
	$node->append_conf('postgresql.conf', "client_min_messages = warning\n");
	return $node;
}

my $old = new_cluster('old', install_path => $from);
$old->start;
my $old_version = $old->safe_psql('postgres', 'SHOW server_version_num');
note "upgrading from $old_version";

$old->safe_psql('postgres', q{
	CREATE EXTENSION sbf;

	-- values of every type, in a table
	CREATE TABLE vals AS
	SELECT bloom_agg(u, 1000, 0.01) AS b,
		   stablebloom_agg(u, stablebloom_sized(4096, 0.02, 3, 3) ORDER BY i) AS s,
		   slidingbloom_agg(u, slidingbloom_sized(500, 0.01) ORDER BY i) AS w
	FROM (SELECT i, 'https://a.example/' || (i % 700) AS u
		  FROM generate_series(1, 3000) i) x;

	CREATE TABLE docs (id int PRIMARY KEY, body text, fp simhash64);
	INSERT INTO docs
	SELECT i, repeat('word' || (i % 50) || ' page ' || i || ' of the manual ', 30), NULL
	FROM generate_series(1, 2000) i;
	UPDATE docs SET fp = simhash(body, 3);
	CREATE INDEX docs_fp ON docs USING gin (fp simhash_ops (blocks = 4));

	-- shared filters: logged and unlogged, of each kind
	SELECT shared_bloom_create('sb_logged', 1000000, 0.01);
	SELECT shared_bloom_create('sb_unlogged', 1000000, 0.01, unlogged => true);
	SELECT shared_stablebloom_create('ss_logged', 200000, 0.02, 3, max => 3);
	SELECT shared_stablebloom_create('ss_unlogged', 200000, 0.02, 3, max => 3,
									 unlogged => true);
	SELECT count(*) FROM (VALUES ('sb_logged'), ('sb_unlogged'), ('ss_logged'), ('ss_unlogged')) f(n),
		LATERAL (SELECT shared_test_and_add(n,
			ARRAY(SELECT 'https://old.example/' || g FROM generate_series(1, 5000) g))) x;

	-- the sieve, one flush done and more URLs discovered since
	CREATE TABLE seen (sig bigint PRIMARY KEY);
	CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
	CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
	INSERT INTO discovered
	SELECT i, 'https://s.example/' || (i % 1500) FROM generate_series(1, 3000) i;
	SELECT sieve_flush('seen', 'discovered', 'frontier');
	INSERT INTO discovered
	SELECT i, 'https://s.example/' || (i % 2500) FROM generate_series(3001, 6000) i;

	-- and the same with a compressed seen
	SELECT sieve_seen_create('zseen');
	SELECT sieve_seen_import('zseen', 'seen');
	CREATE TABLE discovered_z AS TABLE discovered;
	CREATE TABLE frontier_z AS TABLE frontier;

	-- and the exact online store, its adds not folded yet
	SELECT sieve_seen_create('oseen');
	SELECT sieve_seen_import('oseen', 'seen');
	SELECT seen_test_and_add('oseen',
		ARRAY(SELECT 'https://o.example/' || g FROM generate_series(1, 2000) g));
});

# What every object answers; the same text before and after the upgrade
my $answers = q{
	SELECT 'values', md5(b::text), md5(s::text), md5(w::text),
		   bloom_contains(b, 'https://a.example/7'),
		   stablebloom_contains(s, 'https://a.example/699'),
		   slidingbloom_contains(w, 'https://a.example/12')
	FROM vals
	UNION ALL
	SELECT 'simhash', md5(string_agg(fp::text, ',' ORDER BY id)),
		   (SELECT string_agg(id::text, ',' ORDER BY id) FROM docs
			 WHERE fp % (SELECT fp FROM docs WHERE id = 17)),
		   NULL, NULL, NULL, NULL
	FROM docs
	UNION ALL
	SELECT n, shared_info(n, true)::text,
		   (SELECT count(*) FROM generate_series(1, 5000) g
			 WHERE shared_contains(n, 'https://old.example/' || g))::text,
		   (SELECT count(*) FROM generate_series(1, 5000) g
			 WHERE shared_contains(n, 'https://never.example/' || g))::text,
		   NULL, NULL, NULL
	FROM (VALUES ('sb_logged'), ('sb_unlogged'), ('ss_logged'), ('ss_unlogged')) f(n)
	UNION ALL
	SELECT 'sieve', (SELECT count(*) FROM seen)::text,
		   (SELECT md5(string_agg(pos || ' ' || url, ',' ORDER BY pos)) FROM frontier),
		   (SELECT count(*) FROM discovered)::text, NULL, NULL, NULL
	UNION ALL
	SELECT 'sieve_z', (SELECT count(*) FROM sieve_signatures('zseen'))::text,
		   (SELECT md5(string_agg(s::text, ',')) FROM sieve_signatures('zseen') s),
		   sieve_contains('zseen', 'https://s.example/7')::text,
		   sieve_contains('zseen', 'https://s.example/2400'), NULL, NULL
	UNION ALL
	SELECT 'sieve_online', (SELECT count(*) FROM oseen WHERE chunk IS NULL)::text,
		   (SELECT md5(string_agg(s::text, ',')) FROM sieve_signatures('oseen') s),
		   sieve_contains('oseen', 'https://o.example/7')::text,
		   sieve_contains('oseen', 'https://o.example/2001'), NULL, NULL
	ORDER BY 1
};
# (array types aside: 17 and later record them as members too)
my $members = q{
	SELECT e.extversion, count(*)
	FROM pg_extension e JOIN pg_depend d
	  ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid AND d.deptype = 'e'
	WHERE e.extname = 'sbf'
	  AND NOT EXISTS (SELECT 1 FROM pg_type t
					  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
						AND t.typcategory = 'A')
	GROUP BY e.extversion
};
# A filter's parameters: shared_info less what reading its pages tells and
# the size of its file (a crash empties an unlogged one)
my $parameters = q{
	SELECT string_agg(n || ' ' || (shared_info(n) - ARRAY['pages_written', 'bits_set', 'size_bytes',
		'fill', 'estimated_cardinality', 'zero_cells', 'zero_fraction',
		'estimated_fpr', 'adds', 'load', 'expected_fpr'])::text, E'\n' ORDER BY n)
	FROM (VALUES ('sb_logged'), ('sb_unlogged'), ('ss_logged'), ('ss_unlogged')) f(n)
};
# A database whose extension is still at 1.1 (the released version), with
# a simhash_ops index made without the option "blocks": 1.1's default
# layout, 4 blocks, which 1.2 changed.  Near-copies of its first 50 rows
# (1, 2 and 3 bits flipped) make the matches.
$old->safe_psql('postgres', 'CREATE DATABASE at_1_1');
$old->safe_psql('at_1_1', q{
	CREATE EXTENSION sbf VERSION '1.1';
	CREATE TABLE fps (id bigint, fp simhash64);
	INSERT INTO fps SELECT g, hashint8extended(g, 7)::simhash64 FROM generate_series(1, 3000) g;
	INSERT INTO fps
	SELECT -10 * id - k, (fp::bigint # m)::simhash64
	FROM fps, (VALUES (1, 1::bigint << 3), (2, (1::bigint << 3) | (1::bigint << 29)),
					  (3, (1::bigint << 3) | (1::bigint << 29) | (1::bigint << 50))) v(k, m)
	WHERE id <= 50;
	CREATE INDEX fps_gin ON fps USING gin (fp simhash_ops);
});
# every match of the first 50 rows, by the index or by sequential scans
my $near_pairs = q{
	SET enable_seqscan = %s; SET enable_bitmapscan = %s;
	SELECT string_agg(a.id || ':' || b.id, ',' ORDER BY a.id, b.id)
	FROM fps a CROSS JOIN LATERAL (SELECT id FROM fps WHERE fp %% a.fp) b
	WHERE a.id BETWEEN 1 AND 50
};
my $pairs_1_1 = $old->safe_psql('at_1_1', sprintf($near_pairs, 'on', 'off'));
is($old->safe_psql('at_1_1', sprintf($near_pairs, 'off', 'on')), $pairs_1_1,
	'at 1.1, the index made without "blocks" finds what the scans find');
is(scalar(() = $pairs_1_1 =~ /:/g), 200, '... the 50 rows and their 150 near-copies');

my $before = $old->safe_psql('postgres', $answers);
my $parameters_before = $old->safe_psql('postgres', $parameters);
# a transactional filter's count of values added is in its metapage
my $counts = q{
	SELECT string_agg(n || ' ' || coalesce(shared_info(n, false) ->> 'adds', '-'), ',' ORDER BY n)
	FROM (VALUES ('sb_logged'), ('sb_unlogged'), ('ss_logged'), ('ss_unlogged')) f(n)
};
my $counts_before = $old->safe_psql('postgres', $counts);
my $members_before = $old->safe_psql('postgres', $members);
like($before, qr/^sb_logged\|.*\|5000\|/m, 'the old cluster answers (sanity)');

# The frontier the pending flush gives on the old server, from copies of
# the sieve's tables made there
$old->safe_psql('postgres', q{
	CREATE TABLE seen_ref (sig bigint PRIMARY KEY);
	INSERT INTO seen_ref SELECT * FROM seen;
	CREATE TABLE discovered_ref AS TABLE discovered;
	CREATE TABLE frontier_ref AS TABLE frontier;
	SELECT sieve_flush('seen_ref', 'discovered_ref', 'frontier_ref');
});
my $flushed_frontier = q{
	SELECT md5(string_agg(pos || ' ' || url, ',' ORDER BY pos)), count(*) FROM %s
};
my $frontier_ref = $old->safe_psql('postgres', sprintf($flushed_frontier, 'frontier_ref'));

# Debian's PostgreSQL 15.20 gives every column an option pg_attver, which
# pg_dump carries and PostgreSQL 18.6 (released before 15.20) refuses
# ("unrecognized parameter"), so that pg_upgrade fails on any table at all.
# When the new server refuses it, the old cluster's columns lose it first:
# it is PostgreSQL's, not sbf's, and docs/upgrading.md says what a user does
my $probe = new_cluster('probe');
$probe->start;
my ($refused) = $probe->psql('postgres',
	'CREATE TABLE p (a int); ALTER TABLE p ALTER COLUMN a SET (pg_attver = 1)');
$probe->stop;
if ($refused != 0
	&& $old->safe_psql('postgres',
		q{SELECT count(*) FROM pg_attribute WHERE attoptions::text LIKE '%pg_attver=%'}) > 0)
{
	note 'clearing the pg_attver column options the new server does not know';
	for my $db ('postgres', 'template1', 'at_1_1')
	{
		$old->safe_psql($db, q{
			UPDATE pg_attribute
			SET attoptions = nullif(array(SELECT o FROM unnest(attoptions) o
										  WHERE o NOT LIKE 'pg_attver=%'), '{}')
			WHERE attoptions::text LIKE '%pg_attver=%'});
	}
}
$old->stop;

my $old_bindir = "$from/bin";
for my $mode ('--copy', '--link')
{
	my $new = new_cluster("new$mode");
	my $new_bindir = $new->config_data('--bindir');
	my @upgrade = (
		"$new_bindir/pg_upgrade", '--no-sync',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $old_bindir, '-B', $new_bindir,
		'-s', $new->host, '-p', $old->port, '-P', $new->port);

	command_ok([ @upgrade, '--check', $mode ],
		"pg_upgrade $mode --check accepts a cluster holding sbf objects");
	command_ok([ @upgrade, $mode ], "pg_upgrade $mode");
	$new->start;

	# a crash right after the upgrade, before any session opens a filter
	# (pg_upgrade carries no init fork): the unlogged filters keep their
	# parameters, and their values (nothing has written them since), with
	# no step for the user
	$new->stop('immediate');
	$new->start;
	my ($rc, $params_out, $params_err) = $new->psql('postgres', $parameters);
	is($params_out, $parameters_before,
		"$mode: after a crash before any open, the unlogged filters keep their parameters")
	  or diag $params_err;

	is($new->safe_psql('postgres', $answers), $before,
		"$mode: every object answers as on the old server, after that crash too");
	is($new->safe_psql('postgres', $members), $members_before,
		"$mode: the extension has the same version and members");

	# ALTER EXTENSION sbf UPDATE: already at the default version (the
	# old cluster made the extension with CREATE EXTENSION sbf)
	my $default = $new->safe_psql('postgres',
		"SELECT default_version FROM pg_available_extensions WHERE name = 'sbf'");
	my ($ret, $stdout, $stderr) = $new->psql('postgres',
		'SET client_min_messages = notice; ALTER EXTENSION sbf UPDATE');
	is($ret, 0, "$mode: ALTER EXTENSION sbf UPDATE succeeds");
	like($stderr, qr/version "\Q$default\E" of extension "sbf" is already installed/,
		"$mode: ALTER EXTENSION sbf UPDATE has nothing to do");
	is($new->safe_psql('postgres', $members), $members_before,
		"$mode: ... and changes nothing");

	# the database at 1.1: its index keeps 4 blocks, before and after
	# ALTER EXTENSION sbf UPDATE writes them into its options
	is($new->safe_psql('at_1_1', sprintf($near_pairs, 'off', 'on')), $pairs_1_1,
		"$mode: the index made at 1.1 without \"blocks\" finds what the scans found");
	$new->safe_psql('at_1_1', 'ALTER EXTENSION sbf UPDATE');
	like($new->safe_psql('at_1_1', q{SELECT pg_get_indexdef('fps_gin'::regclass)}),
		qr/simhash_ops \(blocks='4'\)/,
		"$mode: ALTER EXTENSION sbf UPDATE writes its layout, 4 blocks, into its options");
	is($new->safe_psql('at_1_1', sprintf($near_pairs, 'off', 'on')), $pairs_1_1,
		"$mode: ... and it still finds the same pairs");

	# the index is used, and finds what a sequential scan finds
	like($new->safe_psql('postgres', q{
			SET enable_seqscan = off;
			EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp % '0000000000000000'}),
		qr/Bitmap Index Scan on docs_fp/, "$mode: the simhash index is used");

	# the pending flush, on the new server
	$new->safe_psql('postgres', q{SELECT sieve_flush('seen', 'discovered', 'frontier')});
	is($new->safe_psql('postgres', sprintf($flushed_frontier, 'frontier')),
		$frontier_ref,
		"$mode: the flush left pending gives the frontier the old server gave");
	$new->safe_psql('postgres', q{SELECT sieve_flush('zseen', 'discovered_z', 'frontier_z')});
	is($new->safe_psql('postgres', sprintf($flushed_frontier, 'frontier_z')),
		$frontier_ref,
		"$mode: so does the flush left pending on the compressed seen");

	is($new->safe_psql('postgres', q{
			SELECT count(*) FILTER (WHERE NOT a) FROM unnest(seen_test_and_add('oseen',
				ARRAY(SELECT 'https://o.example/' || g FROM generate_series(1, 3000) g))) a
		}), '1000',
		"$mode: the online store's adds made on the old server are seen, the others new");

	is($new->safe_psql('postgres', $counts), $counts_before,
		"$mode: the filters' counts of values added are carried");

	# the shared filters take values, survive a crash (the unlogged ones
	# come back empty with their parameters, as after any crash) and take
	# values again
	my $add_new = q{
		SELECT n, count(*) FILTER (WHERE NOT seen)
		FROM (VALUES ('sb_logged'), ('sb_unlogged'), ('ss_logged'), ('ss_unlogged')) f(n),
			 LATERAL unnest(shared_test_and_add(n,
				ARRAY(SELECT 'https://new.example/%s/' || g
					  FROM generate_series(1, 1000) g))) seen
		GROUP BY n ORDER BY n
	};
	my $took = $new->safe_psql('postgres', sprintf($add_new, 'a'));
	like($took, qr/^sb_logged\|(9[5-9][0-9]|1000)$/m,
		"$mode: the logged Bloom filter takes new values");
	like($took, qr/^ss_unlogged\|(9[5-9][0-9]|1000)$/m,
		"$mode: the unlogged stable filter takes new values");
	$new->stop('immediate');
	$new->start;
	is($new->safe_psql('postgres', q{
			SELECT count(*) FROM generate_series(1, 5000) g
			 WHERE NOT shared_contains('sb_logged', 'https://old.example/' || g)}),
		0, "$mode: after a crash the logged filter still has every old value");
	is($new->safe_psql('postgres', $parameters), $parameters_before,
		"$mode: after a crash the unlogged filters keep their parameters");
	my $after_crash = $new->safe_psql('postgres', sprintf($add_new, 'b'));
	is(scalar(() = $after_crash =~ /^\w+\|\d+$/mg), 4,
		"$mode: after a crash every filter, logged or unlogged, takes values")
	  or diag $after_crash;

	$new->stop;
	# (--copy leaves the old cluster as it was; --link, the last mode, does
	# not)
}

done_testing();
