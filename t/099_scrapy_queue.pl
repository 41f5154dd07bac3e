
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# What scrapy-redis users rely on besides a shared filter, in the Scrapy
# client: URLs pushed into a running crawl from SQL (sbf_frontier_push, as
# scrapy-redis's LPUSH of start URLs), crawlers that wait for work instead
# of closing (SBF_IDLE_BEFORE_CLOSE), the order rows are claimed in
# (SBF_QUEUE_ORDER: priority, fifo, lifo), and re-crawls from scratch
# (SBF_FLUSH_ON_START, SBF_PERSIST).  On a generated local site
# (clients/scrapy/tests/scenario_site.py: /wide.html links to /w0.html ...
# /w39.html in that order; /u0.html ... are linked from nowhere).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = SbfTest::new_node('scrapy_queue', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 40,
	'--redirects', 0, '--forms', 0, '--unlinked', 5);
my $base = "http://127.0.0.1:$port";
my @linked = sort map { "$base/$_" }
  (qw(index.html wide.html forms.html lang.html missing.html),
	map { "w$_.html" } 0 .. 39);

sub crawl
{
	my ($name, @args) = @_;
	return $scrapy->crawl($name, "$base/index.html", '--strip-params', 'utm_*',
		@args);
}

sub column
{
	my ($sql) = @_;
	return [ split(/\n/, $scrapy->query($sql)) ];
}

# fetched(from): the paths the site was asked for from line from on
sub fetched
{
	my ($from) = @_;
	my @lines = $scrapy->requests('site');
	return [ map { (split(/ /, $_))[1] } @lines[ $from .. $#lines ] ];
}

# 1. A crawler that waits for work (SBF_IDLE_BEFORE_CLOSE -1: until it is
# stopped), and URLs pushed into its crawl from SQL
# (one page at a time, so that the order of fetches is the order of claims)
# (with shared stats, which SBF_FLUSH_ON_START empties below)
my $waiting = crawl('waiting', '--set', 'SBF_IDLE_BEFORE_CLOSE=-1',
	'--concurrency', '1', '--set', 'SBF_CLAIM_BATCH=1',
	'--set', 'STATS_CLASS=sbf_scrapy.SharedStatsCollector');
$scrapy->poll('the site to be crawled',
	sub {
		$scrapy->query(q{SELECT count(*) FROM sbf_frontier WHERE state = 'done'}) ==
		  scalar(@linked);
	});
# the crawler stays, with nothing to do, past several of its polls (0.5 s)
# and one of Scrapy's idle checks (5 s)
usleep(6_000_000);
is(waitpid($waiting, POSIX::WNOHANG()), 0, 'push: the crawler waits for work');
# two pushes in one transaction (psql runs each statement in its own
# unless told: the waiting crawler would take u0 before u2 is pushed): the
# second's URLs have a higher priority
is( $scrapy->query(
		qq{BEGIN;
		   SELECT sbf_frontier_push(ARRAY['$base/u0.html', '$base/u1.html?utm_source=x',
		   '$base/u0.html', '$base/index.html', 'not a URL']);
		   SELECT sbf_frontier_push(ARRAY['$base/u2.html', '$base/u3.html', '$base/u4.html'],
		   priority => 5);
		   COMMIT;}),
	"2\n3",
	'push: two URLs queued (a repeat, a URL seen and an invalid one are not),'
	  . ' then three with a priority');
$scrapy->poll('the pushed URLs to be done',
	sub {
		$scrapy->query(
			q{SELECT count(*) FROM sbf_frontier WHERE url ~ '/u[0-9]\.html$' AND state = 'done'})
		  == 5;
	});
is_deeply(
	column(q{SELECT url FROM sbf_frontier WHERE url ~ '/u[0-9]\.html$' ORDER BY done_at, id}),
	[ map { "$base/u$_.html" } 2, 3, 4, 0, 1 ],
	'push: the pushed URLs are fetched by the waiting crawler, by priority');
is($scrapy->query(q{SELECT count(*) FROM sbf_frontier WHERE error IS NOT NULL AND url ~ '/u'}),
	0, 'push: the pushed pages were fetched without an error');
kill('TERM', $waiting);
is($scrapy->finish($waiting), 0, 'push: the waiting crawler stops on SIGTERM, status 0');
is($scrapy->stats('waiting')->{finish_reason}, 'shutdown', 'push: its finish reason');

# a crawler that waits 1 s: it closes on its own, "finished"
my $brief = crawl('brief', '--set', 'SBF_IDLE_BEFORE_CLOSE=1');
is($scrapy->finish($brief), 0, 'idle 1 s: the crawler closes on its own');
is($scrapy->stats('brief')->{finish_reason}, 'finished', 'idle 1 s: finished');

# 2. SBF_FLUSH_ON_START: the same crawl from scratch (every page fetched
# again); without it, a crawl of a done frontier fetches nothing
my $from = scalar($scrapy->requests('site'));
my $again = crawl('again');
is($scrapy->finish($again), 0, 'persist: a crawl of a done frontier finished');
is_deeply(fetched($from), [], 'persist: it fetched nothing');

# the order rows are claimed in, one at a time: the /wN.html pages are
# queued in that order by one batch, so their fetches show the order
for my $order (qw(fifo lifo))
{
	$from = scalar($scrapy->requests('site'));
	my $pid = crawl("flush_$order", '--concurrency', '1',
		'--set', 'SBF_FLUSH_ON_START=true', '--set', 'SBF_CLAIM_BATCH=1',
		'--set', "SBF_QUEUE_ORDER=$order",
		'--set', 'STATS_CLASS=sbf_scrapy.SharedStatsCollector');
	is($scrapy->finish($pid), 0, "flush, $order: the crawl finished");
	like($scrapy->log("flush_$order"), qr/SBF_FLUSH_ON_START: the frontier and the filter emptied/,
		"flush, $order: the crawler says it emptied the frontier");
	my @w = grep { m{^/w\d+\.html} } @{ fetched($from) };
	my @numbers = map { m{^/w(\d+)} ? $1 : () } @w;
	is_deeply(\@numbers, [ $order eq 'fifo' ? (0 .. 39) : reverse(0 .. 39) ],
		"flush, $order: every /wN.html fetched again, in $order order");
	is_deeply(column(q{SELECT url FROM sbf_frontier WHERE state = 'done' ORDER BY url}),
		\@linked, "flush, $order: the frontier has the site's pages, once");
	is( $scrapy->query(
			q{SELECT value FROM sbf_frontier_stats WHERE key = 'response_received_count'}),
		scalar(@linked),
		"flush, $order: the shared stats count this crawl's responses only");
}

# an order that does not exist: an error at start
my $bad = crawl('bad_order', '--set', 'SBF_QUEUE_ORDER=random');
isnt($scrapy->finish($bad), 0, 'an unknown SBF_QUEUE_ORDER: the crawler fails');
like($scrapy->log('bad_order'), qr/SBF_QUEUE_ORDER must be one of priority, fifo, lifo, not 'random'/,
	'an unknown SBF_QUEUE_ORDER: the error says which are known');

# 3. SBF_PERSIST false: at the end of a finished crawl, the frontier and the
# filter are emptied
my $once = crawl('once', '--set', 'SBF_PERSIST=false', '--set', 'SBF_FLUSH_ON_START=true');
is($scrapy->finish($once), 0, 'no persist: the crawl finished');
is($scrapy->stats('once')->{item_scraped_count}, scalar(@linked) - 1,
	'no persist: it crawled the site (a page an item, but the 404)');
is($scrapy->query(q{SELECT count(*) FROM sbf_frontier}), 0,
	'no persist: the frontier is empty at its end');
is($scrapy->query(qq{SELECT shared_contains('sbf_scrapy_seen', '$base/index.html')}),
	'f', 'no persist: the filter is empty at its end');

$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
