
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The Scrapy client (clients/scrapy, docs/scrapy.md) in a real crawl: a
# local site of the 1,169 pages of the PostgreSQL 15 manual, linked to one
# another in forms that only canonicalisation makes one (and one broken
# link, answered 404), crawled by two
# Scrapy processes that share one filter and one frontier table.  One of
# them is killed with SIGKILL a third of the way through and started again.
# Every page must be done exactly once and fetched at least once; a page is
# fetched twice only if the killed crawler held it at the moment it died.
#
# Then the same crawl-and-kill with SBF_STORE = "exact" (the exact online
# store, a compressed seen) on a site of a third of the pages (every third
# page and index.html), in tables of its own: the same guarantees, and the
# store holds exactly the site's URLs, every page done (none skipped), its
# online adds folded into chunks by the last crawler to close.  A crawler
# whose SBF_STORE is not the kind of the table SBF_FILTER names stops at
# start, an unknown one is a ValueError; SBF_FLUSH_ON_START empties the
# exact store, the push function tests and adds to it, and SbfDupeFilter
# uses it, as a role that may not compact it.
#
# The client is installed as its users install it, with pip and no index;
# the test fails if /usr/bin/python3 lacks Scrapy or psycopg (python3-scrapy
# and python3-psycopg, which scripts/test.sh installs).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $pages_file = SbfTest::data_file('pgdoc15-pages.tsv.gz');
my $node = SbfTest::new_node('scrapy', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $tmp = $scrapy->tmp;
sub query { return $scrapy->query(@_) }

# The names of a pages file's pages, in file order
sub page_names
{
	my ($file) = @_;
	my @names;
	open(my $in, '-|', 'gzip', '-dc', $file) or die "$file: $!";
	while (my $line = <$in>)
	{
		push @names, (split(/\t/, $line, 2))[0];
	}
	close($in);
	return @names;
}

# A crawl of the site of a pages file by two crawlers sharing a filter and a
# frontier, one of them killed a third of the way through and started
# again, and what it must leave.  Options: label (of the tests), pages (the
# file), pages_count, prefix (of the crawlers' names, and the site's),
# frontier, filter, contains (the SQL function asked whether the filter
# holds a URL), args (more arguments of crawl.py).  Returns the URLs of the
# site (canonical) in a hash.
sub crawl_and_kill
{
	my (%o) = @_;
	my ($label, $frontier, $prefix) = @o{qw(label frontier prefix)};

	# The site, served on a free port; each GET's path goes to
	# <prefix>_site.requests
	my $port = $scrapy->serve("${prefix}_site", 'testsite.py', 'serve',
		'--pages', $o{pages},
		'--dir', "$tmp/${prefix}_site",
		'--latency', '0.005');

	my @names = page_names($o{pages});
	is(scalar(@names), $o{pages_count}, "$label: the site has its $o{pages_count} pages");
	# the URLs of the crawl: the pages, and the broken link's
	my $missing = "http://127.0.0.1:$port/not-found.html";
	my %expected = map { ("http://127.0.0.1:$port/$_" => 1) } @names;
	$expected{$missing} = 1;
	my $total = scalar(keys %expected);

	my $crawler = sub {
		my ($name) = @_;
		return $scrapy->crawl("${prefix}_$name", "http://127.0.0.1:$port/index.html",
			'--strip-params', 'utm_*', '--concurrency', '16',
			'--frontier', $frontier, '--filter', $o{filter}, @{ $o{args} // [] });
	};

	my $crawler_a = $crawler->('a');
	my $crawler_b = $crawler->('b');

	# A third of the way through, with crawler a having done some pages:
	# stop it, wait until its backend has finished any statement it was
	# running (and has not been sent another: idle twice, 200 ms apart),
	# note what it holds (claimed and not done), then kill it
	$scrapy->poll(
		"$label: a third of the pages done",
		sub {
			my $done = query(
				qq{SELECT count(*) FILTER (WHERE f.state = 'done')
				        >= } . int($total / 3) . qq{
				    AND count(*) FILTER (WHERE a.application_name = '${prefix}_a') > 0
				    FROM $frontier f
				    LEFT JOIN pg_stat_activity a ON a.pid = f.done_by});
			return defined $done && $done eq 't';
		});
	kill('STOP', $crawler_a);
	my $a_pid = $scrapy->idle("${prefix}_a");
	my @held = split(
		/\n/,
		query(
			"SELECT url FROM $frontier WHERE state = 'claimed' AND claimed_by = $a_pid"
		));
	my %held = map { ($_ => 1) } @held;
	my $a_done =
	  query("SELECT count(*) FROM $frontier WHERE done_by = $a_pid");
	kill('KILL', $crawler_a);
	waitpid($crawler_a, 0);
	note(sprintf('%s: crawler a killed after %d pages done, holding %d',
			$label, $a_done, scalar(@held)));
	ok($a_done > 0 && $a_done < $total, "$label: crawler a was killed in the middle of its crawl");
	ok(@held > 0, "$label: crawler a held pages when it was killed");

	my $crawler_a2 = $crawler->('a2');
	is($scrapy->finish($crawler_b), 0, "$label: crawler b finished");
	is($scrapy->finish($crawler_a2), 0, "$label: crawler a started again finished");
	$scrapy->stop_servers;

	for my $name ("${prefix}_b", "${prefix}_a2")
	{
		my $stats = $scrapy->stats($name);
		is($stats->{finish_reason}, 'finished', "$label: $name: finish reason");
		is($stats->{'log_count/ERROR'} // 0, 0, "$label: $name: no error logged")
		  or diag($scrapy->log($name));
	}

	# The frontier: every page done exactly once, nothing left
	my @done = split(/\n/,
		query(qq{SELECT url FROM $frontier WHERE state = 'done' ORDER BY url}));
	my %done_count;
	$done_count{$_}++ for @done;
	is(scalar(@done), $total, "$label: the frontier has a done row per page");
	is_deeply([ sort keys %done_count ], [ sort keys %expected ],
		"$label: the done rows are the URLs of the site, canonical");
	is_deeply([ grep { $done_count{$_} > 1 } keys %done_count ],
		[], "$label: no page is done twice");
	is(query(qq{SELECT count(*) FROM $frontier WHERE state <> 'done'}),
		0, "$label: no row is left queued or claimed");
	is( query(qq{SELECT string_agg(url || ': ' || error, ', ') FROM $frontier
				 WHERE error IS NOT NULL}),
		"$missing: HTTP 404",
		"$label: the broken link's row is done with its error, and no other row has one");
	is_deeply(
		[
			grep { !$held{$_} } split(
				/\n/, query(qq{SELECT url FROM $frontier WHERE claims > 1})
			)
		],
		[],
		"$label: only rows crawler a held were claimed twice");
	is(query(qq{SELECT count(*) FROM $frontier WHERE claims > 2}),
		0, "$label: no row was claimed more than twice");

	# The site's log: each page fetched once, the held ones at most twice
	my %fetches;
	for my $path ($scrapy->requests("${prefix}_site"))
	{
		$path =~ s/[?#].*//;
		$fetches{"http://127.0.0.1:$port$path"}++;
	}
	is_deeply([ grep { !$expected{$_} } sort keys %fetches ],
		[], "$label: nothing but the pages was fetched");
	is_deeply([ grep { !$fetches{$_} } sort keys %expected ],
		[], "$label: every page was fetched");
	my @twice = grep { $fetches{$_} > 1 } sort keys %fetches;
	note(sprintf('%s: %d pages fetched twice, of %d held',
			$label, scalar(@twice), scalar(@held)));
	is_deeply([ grep { !$held{$_} || $fetches{$_} > 2 } @twice ],
		[], "$label: a page was fetched twice only if crawler a held it when killed");

	# The filter holds every canonical URL
	my $urls = join(',', map { "'$_'" } sort keys %expected);
	is( query(
			"SELECT count(*) FROM unnest(ARRAY[$urls]) u
			  WHERE NOT $o{contains}('$o{filter}', u)"),
		0,
		"$label: the filter holds every page's canonical URL");
	return %expected;
}

# The shared Bloom filter (SBF_STORE's default), on the whole manual
crawl_and_kill(
	label => 'bloom',
	pages => $pages_file,
	pages_count => 1169,
	prefix => 'crawler',
	frontier => 'sbf_frontier',
	filter => 'sbf_scrapy_seen',
	contains => 'shared_contains');

# The exact store, on every third page of the manual and index.html (a
# crawl of a third of the length, which still kills and restarts a crawler)
my $exact_pages = "$tmp/pgdoc15-third.tsv.gz";
system("gzip -dc '$pages_file' | awk 'NR % 3 == 1 || /^index\\.html\\t/' | gzip > '$exact_pages'") == 0
  or die "cannot write $exact_pages";
my $exact_count = scalar(page_names($exact_pages));
my %exact = crawl_and_kill(
	label => 'exact',
	pages => $exact_pages,
	pages_count => $exact_count,
	prefix => 'exact',
	frontier => 'exact_frontier',
	filter => 'exact_seen',
	contains => 'sieve_contains',
	args => [ '--set', 'SBF_STORE=exact' ]);
my $exact_total = scalar(keys %exact);
ok($exact_count > 300 && $exact_count < 1169, "exact: a smaller site ($exact_count pages)");

# The store is a compressed seen that holds the site's URLs and nothing
# else: every page done, none answered seen wrongly (a false positive would
# have left its page out of the frontier, a false negative queued it twice)
is(query(q{SELECT count(*) FROM sieve_signatures('exact_seen')}),
	$exact_total, 'exact: the store holds as many signatures as the site has URLs');
is(query(q{SELECT count(*) FROM exact_frontier}),
	$exact_total, 'exact: one frontier row per URL of the site, no more');
# The last crawler to close folded the online adds into chunks: the
# crawlers' compactions folded every URL once
like(
	query(q{SELECT count(*) FILTER (WHERE chunk IS NULL) || ' '
			   || count(*) FILTER (WHERE chunk IS NOT NULL) FROM exact_seen}),
	qr/^0 [1-9][0-9]*$/,
	'exact: no online add is left, the store is chunks');
is( ($scrapy->stats('exact_b')->{'sbf/compacted'} // 0)
	  + ($scrapy->stats('exact_a2')->{'sbf/compacted'} // 0),
	$exact_total,
	'exact: the crawlers that closed folded each online add once');
like(
	$scrapy->log('exact_b') . $scrapy->log('exact_a2'),
	qr/the exact store 'exact_seen' compacted: \d+ online adds folded/,
	'exact: the compaction is logged');

# A crawler whose SBF_STORE is not the kind of the table SBF_FILTER names
# stops at start, with an error that says so, and changes nothing
my $base = 'http://127.0.0.1:1/index.html';
my @wrong = (
	[ 'wrong_bloom', 'exact_seen', [], qr/SBF_STORE is 'bloom' but SBF_FILTER 'exact_seen' is an exact store/ ],
	[ 'wrong_exact', 'sbf_scrapy_seen', [ '--set', 'SBF_STORE=exact' ],
		qr/SBF_STORE is 'exact' but SBF_FILTER 'sbf_scrapy_seen' is a shared Bloom filter/ ],
);
for my $w (@wrong)
{
	my ($name, $filter, $args, $message) = @$w;
	my $pid = $scrapy->crawl($name, $base, '--frontier', 'wrong_frontier',
		'--filter', $filter, @$args);
	isnt($scrapy->finish($pid), 0, "$name: the crawler fails");
	like($scrapy->log($name), $message, "$name: the error says why");
}
is(query(q{SELECT count(*) FROM sieve_signatures('exact_seen')}),
	$exact_total, 'the exact store is as it was');
# an unknown SBF_STORE: Config's ValueError, as for SBF_QUEUE_ORDER (t/099
# runs such a crawler)
my ($out, $err) = ('', '');
IPC::Run::run(
	[
		$SbfScrapy::PYTHON, '-c',
		'from sbf_scrapy import Config; Config(store="fuzzy")'
	],
	'>', \$out, '2>', \$err);
like($err, qr/ValueError: SBF_STORE must be one of bloom, exact, not 'fuzzy'/,
	'an unknown SBF_STORE: a ValueError that says which are known');
is(query(q{SELECT to_regclass('wrong_frontier') IS NULL}), 't',
	'no frontier was made by a crawler that stopped at start');

# SBF_FLUSH_ON_START empties the exact store (TRUNCATE): with the site gone,
# the crawl is the start page alone, whose fetch fails; the push function
# tests and adds to the exact store
my $flush = $scrapy->crawl('exact_flush', $base, '--frontier', 'exact_frontier',
	'--filter', 'exact_seen', '--set', 'SBF_STORE=exact',
	'--set', 'SBF_FLUSH_ON_START=true', '--set', 'RETRY_ENABLED=false');
is($scrapy->finish($flush), 0, 'exact, flush: the crawl finished');
like($scrapy->log('exact_flush'),
	qr/SBF_FLUSH_ON_START: the frontier and the filter emptied/,
	'exact, flush: the frontier and the store were emptied');
is( query(q{SELECT (SELECT count(*) FROM sieve_signatures('exact_seen')) || ' '
			 || (SELECT count(*) FROM exact_frontier)}),
	'1 1', 'exact, flush: the store and the frontier hold the start page alone');
is( query(
		qq{SELECT exact_frontier_push(ARRAY['$base', 'http://127.0.0.1:1/new.html',
			'http://127.0.0.1:1/new.html#top', 'not a url'])}),
	1, 'exact: the push function queues the new URL alone, once');
is( query(q{SELECT seen_test_and_add('exact_seen', 'http://127.0.0.1:1/new.html')}),
	't', 'exact: the pushed URL is in the store');

# SbfDupeFilter on the exact store, as a role that may add to it but does
# not own it: the start page is tested and added; at close the store is
# not compacted, with a warning that says why
query(q{CREATE ROLE exact_other LOGIN; GRANT SELECT, INSERT ON exact_seen TO exact_other});
my $other = $scrapy->crawl('exact_other', 'http://127.0.0.1:1/other.html',
	{ dsn => $node->connstr('postgres') . ' user=exact_other' },
	'--mode', 'dupefilter', '--filter', 'exact_seen', '--set', 'SBF_STORE=exact',
	'--set', 'RETRY_ENABLED=false');
is($scrapy->finish($other), 0, 'exact, dupefilter: the crawl finished');
is( query(q{SELECT sieve_contains('exact_seen', 'http://127.0.0.1:1/other.html')
			 AND (SELECT count(*) FROM exact_seen WHERE chunk IS NULL) = 2}),
	't', 'exact, dupefilter: the start page was added, online');
like($scrapy->log('exact_other'),
	qr/WARNING: sbf_scrapy: the exact store 'exact_seen' is not compacted: only its owner may/,
	'exact, dupefilter: a role that does not own the store does not compact it, and says so');

SbfTest::no_crash($node);
done_testing();
