
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
use Test::More;

my $pages_file = SbfTest::data_file('pgdoc15-pages.tsv.gz');
my $node = SbfTest::new_node('scrapy', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $tmp = $scrapy->tmp;
sub query { return $scrapy->query(@_) }

# The site, served on a free port; each GET's path goes to site.requests
my $port = $scrapy->serve('site', 'testsite.py', 'serve',
	'--pages', $pages_file,
	'--dir', "$tmp/site",
	'--latency', '0.005');

my @names;
{
	open(my $in, '-|', 'gzip', '-dc', $pages_file) or die "$pages_file: $!";
	while (my $line = <$in>)
	{
		push @names, (split(/\t/, $line, 2))[0];
	}
	close($in);
}
is(scalar(@names), 1169, 'the site has the 1,169 pages of the manual');
# the URLs of the crawl: the pages, and the broken link's
my $missing = "http://127.0.0.1:$port/not-found.html";
my %expected = map { ("http://127.0.0.1:$port/$_" => 1) } @names;
$expected{$missing} = 1;
my $total = scalar(keys %expected);

sub crawler
{
	my ($name) = @_;
	return $scrapy->crawl($name, "http://127.0.0.1:$port/index.html",
		'--strip-params', 'utm_*', '--concurrency', '16');
}

my $crawler_a = crawler('crawler_a');
my $crawler_b = crawler('crawler_b');

# A third of the way through, with crawler_a having done some pages: stop
# it, wait until its backend has finished any statement it was running
# (and has not been sent another: idle twice, 200 ms apart), note what it
# holds (claimed and not done), then kill it
$scrapy->poll(
	'a third of the pages done',
	sub {
		my $done = query(
			q{SELECT count(*) FILTER (WHERE f.state = 'done')
			        >= } . int($total / 3) . q{
			    AND count(*) FILTER (WHERE a.application_name = 'crawler_a') > 0
			    FROM sbf_frontier f
			    LEFT JOIN pg_stat_activity a ON a.pid = f.done_by});
		return defined $done && $done eq 't';
	});
kill('STOP', $crawler_a);
my $a_pid = $scrapy->idle('crawler_a');
my @held = split(
	/\n/,
	query(
		"SELECT url FROM sbf_frontier WHERE state = 'claimed' AND claimed_by = $a_pid"
	));
my %held = map { ($_ => 1) } @held;
my $a_done =
  query("SELECT count(*) FROM sbf_frontier WHERE done_by = $a_pid");
kill('KILL', $crawler_a);
waitpid($crawler_a, 0);
note(sprintf('crawler_a killed after %d pages done, holding %d', $a_done, scalar(@held)));
ok($a_done > 0 && $a_done < $total, 'crawler_a was killed in the middle of its crawl');
ok(@held > 0, 'crawler_a held pages when it was killed');

my $crawler_a2 = crawler('crawler_a2');
is($scrapy->finish($crawler_b), 0, 'crawler_b finished');
is($scrapy->finish($crawler_a2), 0, 'crawler_a started again finished');
$scrapy->stop_servers;

for my $name ('crawler_b', 'crawler_a2')
{
	my $stats = $scrapy->stats($name);
	is($stats->{finish_reason}, 'finished', "$name: finish reason");
	is($stats->{'log_count/ERROR'} // 0, 0, "$name: no error logged")
	  or diag($scrapy->log($name));
}

# The frontier: every page done exactly once, nothing left
my @done = split(/\n/,
	query(q{SELECT url FROM sbf_frontier WHERE state = 'done' ORDER BY url}));
my %done_count;
$done_count{$_}++ for @done;
is(scalar(@done), $total, 'the frontier has a done row per page');
is_deeply([ sort keys %done_count ], [ sort keys %expected ],
	'the done rows are the URLs of the site, canonical');
is_deeply([ grep { $done_count{$_} > 1 } keys %done_count ],
	[], 'no page is done twice');
is(query(q{SELECT count(*) FROM sbf_frontier WHERE state <> 'done'}),
	0, 'no row is left queued or claimed');
is( query(q{SELECT string_agg(url || ': ' || error, ', ') FROM sbf_frontier
			 WHERE error IS NOT NULL}),
	"$missing: HTTP 404",
	'the broken link\'s row is done with its error, and no other row has one');
is_deeply(
	[
		grep { !$held{$_} } split(
			/\n/, query(q{SELECT url FROM sbf_frontier WHERE claims > 1})
		)
	],
	[],
	'only rows crawler_a held were claimed twice');
is(query(q{SELECT count(*) FROM sbf_frontier WHERE claims > 2}),
	0, 'no row was claimed more than twice');

# The site's log: each page fetched once, the held ones at most twice
my %fetches;
for my $path ($scrapy->requests('site'))
{
	$path =~ s/[?#].*//;
	$fetches{"http://127.0.0.1:$port$path"}++;
}
is_deeply([ grep { !$expected{$_} } sort keys %fetches ],
	[], 'nothing but the pages was fetched');
is_deeply([ grep { !$fetches{$_} } sort keys %expected ],
	[], 'every page was fetched');
my @twice = grep { $fetches{$_} > 1 } sort keys %fetches;
note(sprintf('%d pages fetched twice, of %d held', scalar(@twice), scalar(@held)));
is_deeply([ grep { !$held{$_} || $fetches{$_} > 2 } @twice ],
	[], 'a page was fetched twice only if crawler_a held it when killed');

# The filter holds every canonical URL
my $urls = join(',', map { "'$_'" } sort keys %expected);
is( query(
		"SELECT count(*) FROM unnest(ARRAY[$urls]) u
		  WHERE NOT shared_contains('sbf_scrapy_seen', u)"),
	0,
	'the filter holds every page\'s canonical URL');

SbfTest::no_crash($node);
done_testing();
