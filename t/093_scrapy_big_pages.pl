
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The Scrapy client with a filter sized for the crawl and pages of many
# links (clients/scrapy/tests/scenario_site.py: /wide.html has 1,200 links
# to 600 pages), and what it does when PostgreSQL refuses a statement for
# good: the crawl stops with an ERROR in Scrapy's log, the finish reason
# "sbf_error" and exit status 1, and loses nothing (the page whose batch
# failed is fetched again once the cause is gone).  A filter given more
# values than its capacity says so in Scrapy's log.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('scrapy_big', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 600,
	'--redirects', 0, '--forms', 0);
my $start = "http://127.0.0.1:$port/index.html";
my $base = "http://127.0.0.1:$port";

# the pages of the site: index, wide, forms, lang, missing (404), w0..w599
my @pages = map { "$base/$_" }
  (qw(index.html wide.html forms.html lang.html missing.html),
	map { "w$_.html" } 0 .. 599);

# done_rows(): the done rows' URLs, sorted
sub done_rows
{
	return [ split(/\n/,
		$scrapy->query(q{SELECT url FROM sbf_frontier WHERE state = 'done' ORDER BY url})) ];
}

# 1. A filter sized for the crawl, 1,000 (605 URLs), with pages of 1,200
# links: every page done, nothing left
my $crawler = $scrapy->crawl('sized', $start, '--strip-params', 'utm_*',
	'--concurrency', '8', '--set', 'SBF_FILTER_CAPACITY=1000');
is($scrapy->finish($crawler), 0, 'sized: the crawl finished, status 0')
  or diag($scrapy->log('sized'));
my $stats = $scrapy->stats('sized');
is($stats->{finish_reason}, 'finished', 'sized: finish reason');
is($stats->{'log_count/ERROR'} // 0, 0, 'sized: no error logged');
is_deeply(done_rows(), [ sort @pages ], 'sized: every page is done, once');
is($scrapy->query(q{SELECT count(*) FROM sbf_frontier WHERE state <> 'done'}),
	0, 'sized: no row is left queued or claimed');
is($scrapy->query(
		q{SELECT (shared_info('sbf_scrapy_seen') ->> 'adds')::int}),
	scalar(@pages), 'sized: the filter was given each URL once');

# 2. A filter of capacity 100: the server's WARNING (more values than its
# capacity) is a WARNING in Scrapy's log
$scrapy->query('DROP TABLE sbf_frontier, sbf_frontier_hosts, sbf_scrapy_seen');
$crawler = $scrapy->crawl('small', $start, '--strip-params', 'utm_*',
	'--concurrency', '8', '--set', 'SBF_FILTER_CAPACITY=100');
is($scrapy->finish($crawler), 0, 'small: the crawl finished');
like($scrapy->log('small'),
	qr/\[sbf_scrapy\.store\] WARNING: sbf_scrapy: PostgreSQL WARNING: shared filter "sbf_scrapy_seen" has been given more values than its capacity/,
	'small: the filter\'s warning is in Scrapy\'s log, as a warning');

# 3. PostgreSQL refuses the batch of /wide.html (a constraint the test
# adds): an ERROR in Scrapy's log, the spider closed with "sbf_error", exit
# status 1 from `scrapy runspider` itself; the page stays for the next run
$scrapy->query('DROP TABLE sbf_frontier, sbf_frontier_hosts, sbf_scrapy_seen');
my $tmp = $scrapy->tmp;
# the tables, made as a crawler makes them
my $dsn = $node->connstr('postgres');
my ($out, $err) = ('', '');
ok( IPC::Run::run(
		[
			$SbfScrapy::PYTHON, '-c',
			'import sys, sbf_scrapy; sbf_scrapy.Store(sbf_scrapy.Config(dsn=sys.argv[1], capacity=10000)).open()',
			$dsn
		],
		'>', \$out, '2>', \$err),
	'refused: the store makes the tables') or diag($err);
my @runspider = (
	$SbfScrapy::PYTHON, '-m', 'scrapy', 'runspider',
	"$SbfScrapy::CLIENT/tests/crawl.py",
	'-s', 'SCHEDULER=sbf_scrapy.FrontierScheduler',
	'-s', 'SPIDER_MIDDLEWARES={"sbf_scrapy.FrontierSpiderMiddleware": 10}',
	'-s', 'DOWNLOADER_MIDDLEWARES={"sbf_scrapy.FrontierDownloaderMiddleware": 10}',
	'-s', "SBF_DSN=$dsn application_name=refused",
	'-s', 'SBF_STRIP_PARAMS=utm_*',
	'-s', 'SBF_FILTER_CAPACITY=10000',
	'-s', 'LOG_LEVEL=INFO',
	'-s', 'TELNETCONSOLE_ENABLED=0');
$scrapy->query(
	q{ALTER TABLE sbf_frontier ADD CONSTRAINT no_w599 CHECK (url !~ '/w599\.html$')});
$crawler = $scrapy->spawn("$tmp/refused.log", @runspider, '-a', "start=$start");
my $status = $scrapy->finish($crawler);
is($status >> 8, 1, 'refused: scrapy runspider exits with status 1');
my $log = slurp_file("$tmp/refused.log");
like($log,
	qr/\[sbf_scrapy\.store\] ERROR: sbf_scrapy: PostgreSQL refused a statement, the crawl stops .*CheckViolation: new row for relation "sbf_frontier" violates check constraint "no_w599"/,
	'refused: the error is in Scrapy\'s log as an ERROR');
like($log, qr/'finish_reason': 'sbf_error'/, 'refused: the spider closed with "sbf_error"');
unlike($log, qr/trying again/, 'refused: the statement was not sent again');
is($scrapy->query(
		qq{SELECT state FROM sbf_frontier WHERE url = '$base/wide.html'}),
	'queued', 'refused: the page whose batch failed is queued again');
is($scrapy->query(
		q{SELECT count(*) FROM sbf_frontier WHERE url ~ '/w[0-9]+\.html$'}),
	0, 'refused: none of its links was queued');
is($scrapy->query(qq{SELECT shared_contains('sbf_scrapy_seen', '$base/w0.html')}), 'f',
	'refused: none of its links is in the filter') ;

# the cause gone, the same crawl again: every page, once
$scrapy->query('ALTER TABLE sbf_frontier DROP CONSTRAINT no_w599');
$crawler = $scrapy->spawn("$tmp/again.log", @runspider, '-a', "start=$start");
is($scrapy->finish($crawler), 0, 'again: the crawl finished, status 0');
is_deeply(done_rows(), [ sort @pages ], 'again: every page is done, once');

$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
