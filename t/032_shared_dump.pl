
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
use IPC::Run;

my $source = SbfTest::new_node('source');

# A dump reads every table under one snapshot.  A page whose room for
# pending adds fills while an older snapshot runs keeps the adds that
# snapshot does not see in overflow pages: a scan under it still reads the
# page as of its snapshot, however much was added since.  (In a database
# of its own, which no dump below takes; it needs no pg_dump, and runs
# where the rest of the file is skipped.)
$source->safe_psql('postgres', 'CREATE DATABASE snapshots');
$source->safe_psql('snapshots', 'CREATE EXTENSION sbf');
$source->safe_psql('snapshots', q{SELECT shared_bloom_create('tiny', 1000, 0.01)});
my $old = $source->background_psql('snapshots', on_error_stop => 0);
$old->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ;');
# (the data pages: page 0 counts every add, as shared_info does)
my $rows = q{SELECT md5(string_agg(page || ':' || md5(data), ',' ORDER BY page)) FROM tiny WHERE page > 0};
my $rows_before = $old->query_safe($rows);
$source->safe_psql('snapshots', q{
	SELECT shared_test_and_add('tiny', ARRAY(SELECT 'a' || g FROM generate_series(1, 30) g))});
is($old->query_safe($rows), $rows_before,
	'a scan does not see the adds committed after its snapshot');
isnt($source->safe_psql('snapshots', $rows), $rows_before, 'a newer scan sees them');
$source->safe_psql('snapshots', q{
	DO $$
	BEGIN
		FOR b IN 0 .. 9 LOOP
			PERFORM shared_test_and_add('tiny',
				ARRAY(SELECT 'b' || g FROM generate_series(b * 30 + 1, b * 30 + 30) g));
			COMMIT;
		END LOOP;
	END $$});
is($old->query_safe($rows), $rows_before,
	'a scan under a snapshot older than adds past a page\'s room still reads it as of its snapshot');
cmp_ok($source->safe_psql('snapshots', q{SELECT pg_relation_size('tiny') / 8192}), '>',
	1 + $source->safe_psql('snapshots', q{SELECT shared_info('tiny') ->> 'pages'}),
	'those adds went to overflow pages');
$old->quit;
is($source->safe_psql('snapshots', q{
		SELECT count(*) FROM generate_series(1, 300) g
		 WHERE NOT shared_contains('tiny', 'b' || g) OR NOT shared_contains('tiny', 'a' || (g % 30 + 1))}),
	0, 'the adders never waited nor lost a value');
$source->safe_psql('snapshots', 'VACUUM tiny');
like($source->safe_psql('snapshots', 'SELECT count(*) FROM tiny'), qr/^\d+$/,
	'a new snapshot reads the page');

# The rest needs pg_dump and pg_restore: where they are missing (PostgreSQL
# 17 from npm, see docs/upgrading.md) it is skipped
SbfTest::end_unless_programs([ 'pg_dump', 'pg_restore' ], $source);

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

# A dump taken while the crawler loop of docs/shared.md commits batches.
# pg_dump takes its snapshot, then waits for the lock of a table another
# session holds, while crawlers commit batches; then it dumps.  The restored
# frontier holds the batches of its snapshot; every URL the crawl queued
# (every URL of every committed batch, but those the filter took for seen
# when they were added: its false positives, never queued, dump or not)
# must be in it or answered new by the restored filter (the crawler meets
# it again), or that page is never fetched.
$source->safe_psql('postgres', 'CREATE DATABASE loop');
$source->safe_psql('loop', q{
	CREATE EXTENSION sbf;
	CREATE TABLE frontier (url text NOT NULL);
	CREATE TABLE frontier_grown (url text NOT NULL);
	CREATE TABLE gate (x int);
	SELECT shared_bloom_create('crawl_seen', 100000, 0.001);
	SELECT shared_bloom_create('grown_seen', 1, 0.01, growth => 2);
	-- grown to a second sub-filter before the crawl, in committed batches
	DO $$
	BEGIN
		FOR b IN 0 .. 179 LOOP
			PERFORM shared_test_and_add('grown_seen',
				ARRAY(SELECT 'https://seed.example/' || g
				        FROM generate_series(b * 1000 + 1, b * 1000 + 1000) g));
			COMMIT;
		END LOOP;
	END $$;
});
is($source->safe_psql('loop',
		q{SELECT (shared_info('grown_seen', false) ->> 'subfilters')::int > 1}),
	't', 'the growing filter has grown before the crawl (sanity)');

my $prepare = q{
	PREPARE add_links(text[]) AS
	WITH links AS (
		SELECT array_agg(url_canonical(l, strip_params => '{utm_*}', strict => false)
		                 ORDER BY n) AS urls
		  FROM unnest($1::text[]) WITH ORDINALITY AS t(l, n))
	INSERT INTO frontier (url)
	SELECT u.url
	  FROM links, unnest(links.urls, shared_test_and_add('crawl_seen', links.urls)) AS u(url, seen)
	 WHERE NOT u.seen;
	PREPARE add_links_grown(text[]) AS
	WITH links AS (
		SELECT array_agg(url_canonical(l, strip_params => '{utm_*}', strict => false)
		                 ORDER BY n) AS urls
		  FROM unnest($1::text[]) WITH ORDINALITY AS t(l, n))
	INSERT INTO frontier_grown (url)
	SELECT u.url
	  FROM links, unnest(links.urls, shared_test_and_add('grown_seen', links.urls)) AS u(url, seen)
	 WHERE NOT u.seen;
};
# the links of batch b: 40, some met before, some spelled another way
sub batch_links
{
	my ($b) = @_;
	return '{' . join(',', map {
		my $p = ($b * 7919 + $_ * 13) % 4000;
		$_ % 5 == 0 ? "HTTPS://loop.example/p$p#top" : "https://loop.example/p$p?utm_source=x"
	} 1 .. 40) . '}';
}
my @committed;
sub crawl
{
	my ($from, $to) = @_;
	for my $b ($from .. $to)
	{
		my $links = batch_links($b);
		$source->safe_psql('loop', qq{$prepare
			EXECUTE add_links('$links');
			EXECUTE add_links_grown('$links');});
		push @committed, $b;
	}
}

crawl(1, 20);
my $frontier_count = q{SELECT (SELECT count(*) FROM frontier) || ' ' || (SELECT count(*) FROM frontier_grown)};
my $before_dump = $source->safe_psql('loop', $frontier_count);

my $gate = $source->background_psql('loop');
$gate->query_safe('BEGIN; LOCK gate IN ACCESS EXCLUSIVE MODE;');
my $loop_dump = $source->basedir . '/loop.dump';
my ($dump_out, $dump_err) = ('', '');
my $pg_dump = IPC::Run::start(
	[ 'pg_dump', '-Fc', '-f', $loop_dump, '-d', $source->connstr('loop') ],
	'>', \$dump_out, '2>', \$dump_err);
$source->poll_query_until('loop', q{
	SELECT count(*) > 0 FROM pg_locks WHERE relation = 'gate'::regclass AND NOT granted})
  or die "pg_dump did not wait for the gate: $dump_err";
# pg_dump has its snapshot: the crawl goes on
crawl(21, 60);
my $during_dump = $source->safe_psql('loop', $frontier_count);
$gate->query_safe('COMMIT');
$gate->quit;
$pg_dump->finish;
is($pg_dump->result(0), 0, 'pg_dump taken during the crawl succeeds') or diag $dump_err;
isnt($during_dump, $before_dump, "batches committed while pg_dump ran queued new URLs (sanity: $before_dump, then $during_dump)");

$target->safe_psql('postgres', 'CREATE DATABASE loop');
$target->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $target->connstr('loop'), $loop_dump ],
	'pg_restore of the dump taken during the crawl');
is($target->safe_psql('loop', $frontier_count), $before_dump,
	'the restored frontiers are those of the dump\'s snapshot');

my $all_links = join(',', map { "'" . batch_links($_) . "'" } @committed);
for my $pair ([ 'crawl_seen', 'frontier' ], [ 'grown_seen', 'frontier_grown' ])
{
	my ($filter, $frontier) = @$pair;
	my $urls = qq{
		SELECT DISTINCT url_canonical(l, strip_params => '{utm_*}', strict => false) AS url
		  FROM unnest(ARRAY[$all_links]::text[]) AS b(links), unnest(links::text[]) AS l};
	my $queued = $source->safe_psql('loop',
		"SELECT string_agg(quote_literal(url), ',') FROM $frontier");
	is($target->safe_psql('loop', qq{
			SELECT count(*) FROM unnest(ARRAY[$queued]) u(url)
			 WHERE shared_contains('$filter', url)
			   AND NOT EXISTS (SELECT 1 FROM $frontier f WHERE f.url = u.url)}),
		0, "$filter: every URL the crawl queued is in the restored frontier or new to the restored filter");
	is($target->safe_psql('loop', qq{
			SELECT count(*) FROM $frontier WHERE NOT shared_contains('$filter', url)}),
		0, "$filter: every URL of the restored frontier is seen by the restored filter");
	is($source->safe_psql('loop', qq{
			SELECT count(*) FROM ($urls) u WHERE NOT shared_contains('$filter', url)}),
		0, "$filter: the source filter holds every URL of every committed batch");
}

SbfTest::no_crash($source);
SbfTest::no_crash($target);
done_testing();
