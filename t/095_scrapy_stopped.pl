
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# A crawler that stops without dying (SIGSTOP here; a hung machine, a
# process swapped out) does not hold up the others: its claims have a
# lease (SBF_CLAIM_TIMEOUT, 3 s here) that a running crawler renews, and a
# claim whose lease ran out is taken by another crawler.  The stopped one,
# resumed, finishes what it had in hand without undoing anything: a page
# is done once, whoever does it.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('scrapy_stopped', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $tmp = $scrapy->tmp;
# /w150.html is held by the site until the test releases it: crawler a
# has it in hand when it is stopped
my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 200,
	'--redirects', 0, '--forms', 0, '--hold', '/w150.html', '--hold-dir', $tmp);
my $base = "http://127.0.0.1:$port";
my @pages = sort map { "$base/$_" }
  (qw(index.html wide.html forms.html lang.html missing.html),
	map { "w$_.html" } 0 .. 199);

sub crawl
{
	my ($name) = @_;
	return $scrapy->crawl($name, "$base/index.html", '--concurrency', '4',
		'--strip-params', 'utm_*', '--set', 'SBF_CLAIM_TIMEOUT=3');
}

my $crawler_a = crawl('a');
$scrapy->poll('crawler a to fetch /w150.html',
	sub { grep { m{^HOLD /w150\.html } } $scrapy->requests('site') });
kill('STOP', $crawler_a);
my $a_pid = $scrapy->idle('a');
my @held = split(/\n/,
	$scrapy->query(
		"SELECT url FROM sbf_frontier WHERE state = 'claimed' AND claimed_by = $a_pid ORDER BY url"));
ok(grep({ $_ eq "$base/w150.html" } @held), 'crawler a holds /w150.html when it is stopped');
note(scalar(@held) . ' rows held by the stopped crawler');

# crawler b takes a's claims once their lease has run out
my $crawler_b = crawl('b');
$scrapy->poll('crawler b to take /w150.html',
	sub {
		$scrapy->query(
			"SELECT claims FROM sbf_frontier WHERE url = '$base/w150.html'") eq '2';
	});
open(my $fh, '>', "$tmp/release") or die "release: $!";
close($fh);
is($scrapy->finish($crawler_b), 0, 'crawler b finished while crawler a is stopped');
ok(kill(0, $crawler_a), 'crawler a is still there, stopped');
is_deeply(
	[
		split(/\n/,
			$scrapy->query(q{SELECT url FROM sbf_frontier WHERE state = 'done' ORDER BY url}))
	],
	\@pages,
	'every page is done, once, before crawler a resumes');
is_deeply(
	[
		split(/\n/,
			$scrapy->query(
				"SELECT url FROM sbf_frontier WHERE claims > 1 AND url <> ALL (ARRAY['"
				  . join("','", @held) . "']) ORDER BY url"))
	],
	[],
	'only the rows crawler a held were claimed twice');

# crawler a resumes: it finishes what it had, and changes nothing
kill('CONT', $crawler_a);
is($scrapy->finish($crawler_a), 0, 'crawler a, resumed, finished');
for my $name ('a', 'b')
{
	my $stats = $scrapy->stats($name);
	is($stats->{finish_reason}, 'finished', "crawler $name: finish reason");
	is($stats->{'log_count/ERROR'} // 0, 0, "crawler $name: no error logged");
}
is($scrapy->query(q{SELECT count(*) FROM sbf_frontier}), scalar(@pages),
	'one row a page');
is($scrapy->query(q{SELECT count(*) FROM sbf_frontier WHERE state <> 'done'}),
	0, 'no row is left queued or claimed');

$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
