
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# A crawler killed at each stage of a redirect loses no page.  The site
# (clients/scrapy/tests/scenario_site.py) answers /rN.html with a 301 to
# /tN.html.  A redirect elsewhere is a link of its page: the target is
# queued in the transaction that marks the redirecting row done, so there
# is no moment at which the target is in the filter and nobody holds it.
# The kill points, chosen by the test:
#
#   phase 1  /r0.html fetched and not answered yet (the site holds it), and
#            /t1.html fetched and not answered yet (r1's redirect committed,
#            t1 claimed): the crawler is killed
#   phase 2  the transaction that queues /t2.html (r2's redirect) has not
#            committed (a trigger of the test's holds it): the crawler is
#            killed and its backend terminated, as when a machine is lost
#
# After each, a crawler started again must fetch every target and leave
# every row done, once.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('scrapy_redirects', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $tmp = $scrapy->tmp;
my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 0,
	'--redirects', 3, '--forms', 0,
	'--hold', '/r0.html', '--hold', '/t1.html', '--hold-dir', $tmp);
my $base = "http://127.0.0.1:$port";
my @pages = sort map { "$base/$_" }
  (qw(index.html wide.html forms.html lang.html missing.html),
	map { ("r$_.html", "t$_.html") } 0 .. 2);

# crawl(name, frontier): a crawler of the site with its own frontier and
# filter
sub crawl
{
	my ($name, $frontier) = @_;
	return $scrapy->crawl($name, "$base/index.html", '--concurrency', '4',
		'--frontier', $frontier, '--filter', "${frontier}_seen");
}

# check(phase, frontier, first request line): every row done once, every
# target fetched since the given line of the site's log
sub check
{
	my ($phase, $frontier, $from) = @_;
	is_deeply(
		[
			split(/\n/,
				$scrapy->query("SELECT url FROM $frontier WHERE state = 'done' ORDER BY url"))
		],
		\@pages,
		"$phase: every page is done, once");
	is($scrapy->query("SELECT count(*) FROM $frontier WHERE state <> 'done'"),
		0, "$phase: no row is left queued or claimed");
	my @requests = ($scrapy->requests('site'))[ $from .. scalar($scrapy->requests('site')) - 1 ];
	my %got = map { m{^GET (/t\d\.html) } ? ($1 => 1) : () } @requests;
	is_deeply([ sort keys %got ], [qw(/t0.html /t1.html /t2.html)],
		"$phase: each target was fetched after the restart, or before the kill");
	return;
}

# Phase 1: the site holds /r0.html and /t1.html
my $crawler = crawl('held', 'held');
$scrapy->poll('the site to hold /r0.html and /t1.html',
	sub {
		my @held = grep { /^HOLD / } $scrapy->requests('site');
		return grep({ m{^HOLD /r0\.html } } @held) && grep({ m{^HOLD /t1\.html } } @held);
	});
is($scrapy->query(
		"SELECT state FROM held WHERE url IN ('$base/r1.html', '$base/t1.html') ORDER BY url"),
	"done\nclaimed",
	'phase 1: r1 is done and t1 claimed when the crawler is killed');
kill('KILL', $crawler);
waitpid($crawler, 0);
# the held requests are answered to nobody
open(my $fh, '>', "$tmp/release") or die "release: $!";
close($fh);
$crawler = crawl('held_again', 'held');
is($scrapy->finish($crawler), 0, 'phase 1: the crawler started again finished');
check('phase 1', 'held', 0);

# Phase 2: r2's redirect (the statement that queues t2) waits in a trigger
my $from = scalar($scrapy->requests('site'));
# the tables, made by a crawl that is stopped at once: the trigger needs them
$crawler = crawl('trap', 'trapped');
$scrapy->poll('the frontier "trapped"',
	sub { $scrapy->query(q{SELECT to_regclass('trapped') IS NOT NULL}) eq 't' });
$scrapy->query(q{
	CREATE FUNCTION hold_t2() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF NEW.url LIKE '%/t2.html' THEN
			PERFORM pg_sleep(3600);
		END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER hold_t2 BEFORE INSERT ON trapped
		FOR EACH ROW EXECUTE FUNCTION hold_t2();
});
my $pid;
$scrapy->poll('the statement that queues t2 to wait',
	sub {
		$pid = $scrapy->query(
			q{SELECT pid FROM pg_stat_activity
			   WHERE application_name = 'trap' AND wait_event = 'PgSleep'});
		return $pid;
	});
kill('KILL', $crawler);
waitpid($crawler, 0);
is($scrapy->query("SELECT pg_terminate_backend($pid)"), 't',
	'phase 2: the backend of the killed crawler is terminated in the statement');
$scrapy->query('DROP TRIGGER hold_t2 ON trapped');
is($scrapy->query(
		"SELECT count(*) FROM trapped WHERE url = '$base/t2.html'"),
	0, 'phase 2: t2 was not queued');
$crawler = crawl('trap_again', 'trapped');
is($scrapy->finish($crawler), 0, 'phase 2: the crawler started again finished');
check('phase 2', 'trapped', $from);

$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
