
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# What the Scrapy client counts as one request.  A GET without a body is
# its canonical URL, as before; any other request is the crawler's request
# fingerprint of the request at its canonical URL: two POSTs to one URL
# with other bodies are two requests, and a custom
# REQUEST_FINGERPRINTER_CLASS decides for every request.  The site
# (clients/scrapy/tests/scenario_site.py) has three POST forms to /search,
# fields page=1, 2 and 3, and two links to /lang.html with hreflang "en"
# and "fr", which the test's spider requests with that Accept-Language;
# and a link with a stray %, which is requested as written (url_canonical
# keeps it, as browsers and WHATWG do).  (An empty query, which
# url_canonical keeps too, never reaches sbf_scrapy: Scrapy's Request drops
# it.)

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('scrapy_keys', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 0,
	'--redirects', 0, '--forms', 3, '--spellings');
my $base = "http://127.0.0.1:$port";

# requests(from): the site's requests from line from on, counted by
# "METHOD PATH BODY" and, for /lang.html, "METHOD PATH BODY LANGUAGE"
# (Scrapy asks for "en" unless told otherwise)
sub requests
{
	my ($from) = @_;
	my @lines = $scrapy->requests('site');
	my %count;
	for my $line (@lines[ $from .. $#lines ])
	{
		$line =~ s/ [^ ]+$// unless $line =~ m{^GET /lang\.html };
		$count{$line}++;
	}
	return \%count;
}

# crawl(name, frontier, arguments...): a crawl to its end, with its own
# frontier and filter; the requests the site saw for it
sub crawl
{
	my ($name, $frontier, @args) = @_;
	my $from = scalar($scrapy->requests('site'));
	my $pid = $scrapy->crawl($name, "$base/index.html", '--concurrency', '4',
		'--frontier', $frontier, '--filter', "${frontier}_seen", @args);
	is($scrapy->finish($pid), 0, "$name: the crawl finished")
	  or diag($scrapy->log($name));
	return requests($from);
}

# Scrapy's fingerprinter: three POSTs, each once; /lang.html once
my $seen = crawl('default', 'by_default');
is_deeply([ map { $seen->{"POST /search page=$_"} } 1 .. 3 ],
	[ 1, 1, 1 ], 'default: each POST body is fetched once');
is_deeply([ map { $seen->{"GET /result-$_.html -"} } 1 .. 3 ],
	[ 1, 1, 1 ], 'default: each POST\'s result page is fetched once');
is( scalar(grep { m{^GET /lang\.html } } keys %$seen) + 0,
	1, 'default: /lang.html, asked for in two languages, is one request');
is($scrapy->query(
		q{SELECT count(*) FROM by_default WHERE url LIKE '%/search' AND state = 'done'}),
	3, 'default: the frontier has a done row for each POST');
is($scrapy->query(q{SELECT count(*) FROM by_default WHERE state <> 'done'}),
	0, 'default: nothing is left queued or claimed');

# the filter's keys: a GET's is its canonical URL, a POST's is not
is($scrapy->query(qq{SELECT shared_contains('by_default_seen', '$base/forms.html')}),
	't', 'default: a GET is keyed by its canonical URL');
is($scrapy->query(qq{SELECT shared_contains('by_default_seen', '$base/search')}),
	'f', 'default: a POST is not keyed by its URL');

# a URL as a browser sends it: a stray % as it is
is($seen->{'GET /100%zz.html -'}, 1, 'default: a stray % is requested as written, once');
is($seen->{'GET /100%25zz.html -'}, undef, 'default: the stray % is not escaped');

# A fingerprinter that adds Accept-Language: /lang.html twice, once in each
my $language = crawl('language', 'by_language', '--fingerprinter', 'language');
is_deeply(
	[ map { $language->{"GET /lang.html - $_"} } qw(en fr) ],
	[ 1, 1 ],
	'custom fingerprinter: /lang.html is fetched once in each language');
is_deeply([ map { $language->{"POST /search page=$_"} } 1 .. 3 ],
	[ 1, 1, 1 ], 'custom fingerprinter: each POST body is fetched once');
is_deeply(
	[ grep { $language->{$_} > 1 } sort keys %$language ],
	[], 'custom fingerprinter: no request is made twice');

# the dupefilter alone (Scrapy's scheduler): the same keys
my $from = scalar($scrapy->requests('site'));
my $pid = $scrapy->spawn(
	$scrapy->tmp . '/dupefilter.log', $SbfScrapy::PYTHON,
	"$SbfScrapy::CLIENT/tests/crawl.py",
	'--start', "$base/index.html", '--mode', 'dupefilter',
	'--dsn', $node->connstr('postgres'), '--filter', 'dupefilter_seen');
is($scrapy->finish($pid), 0, 'dupefilter: the crawl finished');
my $dupefilter = requests($from);
is_deeply([ map { $dupefilter->{"POST /search page=$_"} } 1 .. 3 ],
	[ 1, 1, 1 ], 'dupefilter: each POST body is fetched once');
is( scalar(grep { m{^GET /lang\.html } } keys %$dupefilter) + 0,
	1, 'dupefilter: /lang.html is one request');

$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
