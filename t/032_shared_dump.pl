
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# pg_dump and pg_restore move shared filters as they move any table: the
# table's rows are the filter's pages (page 0 the parameters, then every
# page that is not all zeros), COPY writes them back.  The restored filter
# answers exactly as the original, logged or unlogged, bloom or stable,
# and keeps its privileges.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $source = SbfTest::new_node('source');
my $target = PostgreSQL::Test::Cluster->new('target');
$target->init;
$target->start;

my $present = q{'https://site' || (g % 97) || '.example/' || g};
my $absent  = q{'https://absent' || (g % 97) || '.example/' || g};

$source->safe_psql('postgres', qq{
	CREATE ROLE crawler;
	CREATE SCHEMA crawl;
	SELECT shared_bloom_create('crawl.urls', 100000, 0.01, 17);
	SELECT shared_bloom_create('crawl.scratch', 100000, 0.01, unlogged => true);
	SELECT shared_stablebloom_create('crawl.recent', 200000, 0.01, 3, max => 3);
	SELECT shared_stablebloom_create('crawl.recent_unlogged', 200000, 0.02, 4, unlogged => true);
	-- a big, nearly empty filter: only its written pages are dumped
	SELECT shared_bloom_create('crawl.sparse', 100000000, 0.01);
	GRANT USAGE ON SCHEMA crawl TO crawler;
	GRANT SELECT, UPDATE ON crawl.urls TO crawler;
	GRANT SELECT ON crawl.recent TO crawler;
	-- in batches of 500, each committed, as a crawler adds
	DO \$\$
	BEGIN
		FOR b IN 0 .. 199 LOOP
			PERFORM shared_test_and_add(f,
				ARRAY(SELECT $present FROM generate_series(b * 500 + 1, b * 500 + 500) g))
			  FROM unnest(ARRAY['crawl.urls', 'crawl.scratch', 'crawl.recent',
			                    'crawl.recent_unlogged']::regclass[]) f;
			COMMIT;
		END LOOP;
	END \$\$;
	SELECT shared_test_and_add('crawl.sparse', ARRAY['a', 'b', 'c']);
});

my $dump = $source->basedir . '/shared.dump';
$source->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('postgres') ],
	'pg_dump -Fc');
$target->safe_psql('postgres', 'CREATE ROLE crawler');
$target->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $target->connstr('postgres'), $dump ],
	'pg_restore');

# the same answer for every value, present and absent, on both
sub answers
{
	my ($node, $filter) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT md5(string_agg(shared_contains('$filter', v)::text, ',' ORDER BY n))
		  FROM (SELECT g AS n, $present AS v FROM generate_series(1, 100000) g
		        UNION ALL
		        SELECT -g, $absent FROM generate_series(1, 100000) g) vals});
}

for my $filter ('crawl.urls', 'crawl.scratch', 'crawl.recent', 'crawl.recent_unlogged')
{
	is(answers($target, $filter), answers($source, $filter),
		"$filter: the restored filter answers 100k present and 100k absent values as the original");
	is($target->safe_psql('postgres', "SELECT shared_info('$filter', true) - 'size_bytes'"),
		$source->safe_psql('postgres', "SELECT shared_info('$filter', true) - 'size_bytes'"),
		"$filter: same parameters and fill");
}
is($target->safe_psql('postgres', q{
		SELECT string_agg(relname || ':' || relpersistence::text, ' ' ORDER BY relname)
		  FROM pg_class WHERE relnamespace = 'crawl'::regnamespace}),
	'recent:p recent_unlogged:u scratch:u sparse:p urls:p',
	'logged and unlogged filters restored as such');
is($target->safe_psql('postgres',
		"SELECT md5(shared_stablebloom_snapshot('crawl.recent')::text)"),
	$source->safe_psql('postgres',
		"SELECT md5(shared_stablebloom_snapshot('crawl.recent')::text)"),
	'stable filter: every cell restored');

# the sparse filter: three values, three pages at most in the dump
is($source->safe_psql('postgres', 'SELECT count(*) FROM crawl.sparse WHERE page > 0'),
	3, 'a sparse filter for 100M values with 3 added dumps 3 data pages');
is($target->safe_psql('postgres',
		"SELECT shared_contains('crawl.sparse', 'a') AND shared_contains('crawl.sparse', 'c')
		        AND NOT shared_contains('crawl.sparse', 'd')"),
	't', 'the sparse filter restored');

# privileges survive: crawler may add to urls, only test recent
is($target->safe_psql('postgres', q{
		SET ROLE crawler;
		SELECT shared_test_and_add('crawl.urls', 'https://new.example/')::text
		       || shared_contains('crawl.recent', 'https://new.example/')::text}),
	'falsefalse', 'GRANT SELECT, UPDATE survives: the role adds and tests');
my ($ret, $stdout, $stderr) = $target->psql('postgres', q{
	SET ROLE crawler;
	SELECT shared_test_and_add('crawl.recent', 'x')});
like($stderr, qr/permission denied for table recent/,
	'GRANT SELECT only survives: the role cannot add');

# the restored filter keeps adding as the original would
is($target->safe_psql('postgres',
		"SELECT shared_test_and_add('crawl.urls', ARRAY['https://site1.example/1', 'https://new2.example/'])"),
	$source->safe_psql('postgres',
		"SELECT shared_test_and_add('crawl.urls', ARRAY['https://site1.example/1', 'https://new2.example/'])"),
	'the restored filter adds as the original');

# bad rows are refused, never a crash
($ret, $stdout, $stderr) = $target->psql('postgres', q{
	CREATE TABLE crawl.broken (page bigint, data bytea) USING sbf_filter;
	INSERT INTO crawl.broken SELECT page, substr(data, 1, 60) FROM crawl.urls WHERE page = 0});
like($stderr, qr/invalid page 0 for shared filter "broken"/, 'a short page 0 is refused');
($ret, $stdout, $stderr) = $target->psql('postgres', q{
	INSERT INTO crawl.broken SELECT page, overlay(data placing '\x00000000' from 1) FROM crawl.urls WHERE page = 0});
like($stderr, qr/The magic number is 0x00000000/, 'a page 0 of the wrong magic is refused');
($ret, $stdout, $stderr) = $target->psql('postgres', q{
	INSERT INTO crawl.broken SELECT * FROM crawl.urls ORDER BY page DESC});
like($stderr, qr/page 0 of shared filter "broken" must be inserted first/,
	'data pages before page 0 are refused');

SbfTest::no_crash($source);
SbfTest::no_crash($target);
done_testing();
