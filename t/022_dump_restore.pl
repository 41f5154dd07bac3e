
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# pg_dump -Fc of tables of bloom, stablebloom and slidingbloom values on one cluster, and
# pg_restore of the dump into a new database of a second cluster, give back
# identical values (the restore creates the extension itself).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

SbfTest::require_programs('pg_dump', 'pg_restore');

my $source = SbfTest::new_node('source');
my $target = SbfTest::new_node('target');
my $dump = PostgreSQL::Test::Utils::tempdir . '/sbf.dump';

$source->safe_psql(
	'postgres', q{
CREATE TABLE filters (id int PRIMARY KEY, filter bloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3)),
	(2, (SELECT bloom_agg('https://example.org/' || i, 100000, 0.01) FROM generate_series(1, 50000) i)),
	(3, NULL);
CREATE TABLE sfilters (id int PRIMARY KEY, filter stablebloom);
INSERT INTO sfilters VALUES
	(1, stablebloom_empty(16, 2, 3, 1)),
	(2, (SELECT stablebloom_agg('https://example.org/' || i, stablebloom_sized(100000, 0.05, 4, 3) ORDER BY i)
		 FROM generate_series(1, 50000) i)),
	(3, NULL);
CREATE TABLE wfilters (id int PRIMARY KEY, filter slidingbloom);
INSERT INTO wfilters VALUES
	(1, slidingbloom_empty(64, 1, 2, 1)),
	(2, (SELECT slidingbloom_agg('https://example.org/' || i, slidingbloom_sized(20000, 0.01, 5, true) ORDER BY i)
		 FROM generate_series(1, 50000) i)),
	(3, NULL);
});

# every value of both tables, NULLs included, in their text form
my $fingerprint = q{
SELECT count(*) || ' rows, md5 '
	   || md5(string_agg(t || id || ':' || coalesce(f, 'null'), ',' ORDER BY t, id))
FROM (SELECT 'b' AS t, id, filter::text AS f FROM filters
	  UNION ALL SELECT 's', id, filter::text FROM sfilters
	  UNION ALL SELECT 'w', id, filter::text FROM wfilters) s
};
my $before = $source->safe_psql('postgres', $fingerprint);

$source->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('postgres') ],
	'pg_dump -Fc of the first cluster');
$target->safe_psql('postgres', 'CREATE DATABASE restored');
$target->command_ok(
	[
		'pg_restore', '--exit-on-error',
		'-d', $target->connstr('restored'), $dump
	],
	'pg_restore into a new database of the second cluster');
my $after = $target->safe_psql('restored', $fingerprint);

ok( $before =~ /^9 rows, md5 / && $after eq $before,
	"pg_dump -Fc | pg_restore gives identical bloom, stablebloom and slidingbloom values ($before = $after)"
);

SbfTest::no_crash($source);
SbfTest::no_crash($target);

done_testing();
