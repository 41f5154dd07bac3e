
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Shared stats: with STATS_CLASS = "sbf_scrapy.SharedStatsCollector", the
# crawler processes of a crawl flush their stats into one table,
# {SBF_FRONTIER}_stats, every SBF_STATS_INTERVAL seconds and at close.
# Two crawlers crawl the site together: the table's counts are the sum of
# their own (crawl.py --process-stats) and what the site saw; a third
# crawler, started after them, sees the whole crawl's counts in its stats.
# A database that refuses the flushes does not stop a crawl.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('scrapy_stats', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $tmp = $scrapy->tmp;
# /index.html is held until the test releases it: both crawlers are
# running before there is work to share
my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 150,
	'--redirects', 5, '--forms', 3, '--hold', '/index.html', '--hold-dir', $tmp);
my $base = "http://127.0.0.1:$port";

sub crawl
{
	my ($name, @more) = @_;
	return $scrapy->crawl($name, "$base/index.html", '--concurrency', '4',
		'--strip-params', 'utm_*',
		'--set', 'STATS_CLASS=sbf_scrapy.SharedStatsCollector',
		'--set', 'SBF_STATS_INTERVAL=0.2',
		'--set', 'SBF_CLAIM_BATCH=2',
		'--set', 'SBF_IDLE_POLL=0.1',
		'--process-stats', "$tmp/$name.own.json", @more);
}

# a stat of the table, as psql prints its JSON value
sub shared
{
	my ($key, $table) = @_;
	$table //= 'sbf_frontier_stats';
	return $scrapy->query("SELECT value FROM $table WHERE key = '$key'");
}

sub own
{
	my ($name) = @_;
	my $file = "$tmp/$name.own.json";
	return {} unless -s $file;
	return decode_json(slurp_file($file));
}

my $crawler_a = crawl('a');
$scrapy->poll('crawler a to ask for /index.html',
	sub { grep { m{^HOLD /index\.html } } $scrapy->requests('site') });
# a's flushes come every 0.2 s, not only at its close
$scrapy->poll('a flush of crawler a while it waits',
	sub { (shared('sbf/claimed') || 0) >= 1 });
pass('crawler a flushed its stats while it was running');
my $crawler_b = crawl('b');
$scrapy->backend('b');
open(my $fh, '>', "$tmp/release") or die "release: $!";
close($fh);
is($scrapy->finish($crawler_a), 0, 'crawler a finished');
is($scrapy->finish($crawler_b), 0, 'crawler b finished');

# what the site saw: each request once (no retry here), HOLD lines aside.
# A 301 is no response_received (RedirectMiddleware takes it), a 404 is
# one but no item.
my @lines = grep { !/^HOLD / } $scrapy->requests('site');
my $responses = grep { !m{^GET /r\d+\.html } } @lines;
my @pages = grep { !m{^GET /(r\d+|missing)\.html } } @lines;
note(scalar(@lines) . " requests, $responses responses, " . scalar(@pages) . ' items');

my ($own_a, $own_b) = (own('a'), own('b'));
for my $key ('response_received_count', 'item_scraped_count')
{
	ok($own_a->{$key} > 0 && $own_b->{$key} > 0,
		"both crawlers counted $key ($own_a->{$key} and $own_b->{$key})");
}
for my $key (
	'response_received_count', 'item_scraped_count',
	'downloader/request_count', 'downloader/response_status_count/200',
	'downloader/response_status_count/301', 'sbf/claimed')
{
	is(shared($key), ($own_a->{$key} // 0) + ($own_b->{$key} // 0),
		"the table's $key is the sum of the two crawlers' own");
}
is(shared('response_received_count'), $responses,
	'the table counts every response the site gave');
is(shared('downloader/response_count'), scalar(@lines),
	'and every request it answered');
is(shared('item_scraped_count'), scalar(@pages),
	'the table counts an item a page');
is(shared('downloader/response_status_count/404'), 1, 'and the one 404');
is(shared('finish_reason'), '"finished"', 'the table has the finish reason');

# start_time is each process's own in its stats; the table has the earliest
sub iso
{
	my ($text) = @_;
	$text =~ s/ /T/;
	$text .= '.000000' unless $text =~ /\./;
	return $text;
}
my ($first) = sort map { iso($_->{start_time}) } $own_a, $own_b;
is($scrapy->query(
		q{SELECT value->>'$datetime' FROM sbf_frontier_stats WHERE key = 'start_time'}),
	$first, "the table's start_time is the earlier crawler's");

# a third crawler finds nothing to do: its stats are the whole crawl's,
# but for its own start time and finish reason
my $crawler_c = crawl('c');
is($scrapy->finish($crawler_c), 0, 'crawler c finished');
my ($view_c, $own_c) = ($scrapy->stats('c'), own('c'));
is($own_c->{response_received_count} // 0, 0, 'crawler c fetched nothing');
is($view_c->{response_received_count}, $responses,
	"crawler c's stats count the whole crawl's responses");
is($view_c->{item_scraped_count}, scalar(@pages),
	"crawler c's stats count the whole crawl's items");
is($view_c->{start_time}, $own_c->{start_time},
	"crawler c's start_time is its own");
cmp_ok(iso($own_c->{start_time}), 'gt', $first, 'later than the crawl\'s');
is($view_c->{finish_reason}, 'finished', "crawler c's finish reason is its own");
is(shared('response_received_count'), $responses,
	'the table counts no response twice');

# A database that refuses every flush (a trigger here): the crawl goes on,
# a warning says so, the process's own stats are whole
$node->safe_psql(
	'postgres', q{
CREATE TABLE refused_stats (key text PRIMARY KEY, value jsonb NOT NULL,
                            updated_at timestamptz NOT NULL DEFAULT now());
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'no stats today'; END $$;
CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON refused_stats
    FOR EACH ROW EXECUTE FUNCTION refuse();
});
my $crawler_d = crawl('d', '--frontier', 'refused', '--filter', 'refused_seen');
is($scrapy->finish($crawler_d), 0, 'crawler d finished though its stats are refused');
my ($view_d, $own_d) = ($scrapy->stats('d'), own('d'));
is($view_d->{finish_reason}, 'finished', 'crawler d: finish reason');
is($own_d->{'log_count/ERROR'} // 0, 0, 'crawler d: no error logged');
like(
	$scrapy->log('d'),
	qr/WARNING: sbf_scrapy: cannot flush the shared stats to refused_stats .*no stats today/,
	'crawler d: the refused flush is a warning in its log');
is($scrapy->query(q{SELECT count(*) FROM refused WHERE state <> 'done'}),
	0, 'crawler d: every row is done');
is($scrapy->query(q{SELECT count(*) FROM refused}),
	scalar(@lines), 'crawler d: one row a request');
is($own_d->{response_received_count}, $responses,
	"crawler d's own stats count every response");
is($view_d->{response_received_count}, $own_d->{response_received_count},
	"crawler d's stats hold what it could not flush");
is($scrapy->query(q{SELECT count(*) FROM refused_stats}), 0,
	'the refused table is empty');

# Values round-trip through the table's JSON, and the table combines two
# processes' changes of one key as Scrapy's collector does within one:
# two collectors of one crawl (no spider runs), b reads what a flushed
my $dsn = $node->connstr('postgres');
my ($out, $err) = ('', '');
IPC::Run::run([ $SbfScrapy::PYTHON, '-c', <<"EOF" ], '>', \$out, '2>', \$err);
import datetime, decimal
from scrapy import Spider
from scrapy.crawler import Crawler
settings = {"STATS_CLASS": "sbf_scrapy.SharedStatsCollector", "SBF_DSN": "$dsn",
            "SBF_FRONTIER": "codec", "SBF_STATS_INTERVAL": 0, "STATS_DUMP": False}
a, b = (Crawler(Spider, settings).stats for _ in range(2))
spider = Spider("s")
a.open_spider(spider); b.open_spider(spider)
a.set_value("when", datetime.datetime(2026, 11, 27, 16, 0, 0))
a.set_value("when_tz", datetime.datetime(2026, 11, 27, 17, 0, 0, 5,
            tzinfo=datetime.timezone(datetime.timedelta(hours=1))))
a.set_value("day", datetime.date(2026, 11, 27))
a.set_value("big", float("inf"))
a.set_value("nested", {"list": (1, 2.5, "x"), "none": None, "yes": True})
a.set_value("money", decimal.Decimal("2.5"))
for c in (a, b):
    c.inc_value("n", 2); c.inc_value("n"); c.inc_value("t", 0.25)
a.max_value("hi", 3); b.max_value("hi", 7); a.min_value("lo", 3); b.min_value("lo", 7)
a.close_spider(spider, "finished"); b.close_spider(spider, "finished")
stats = b.get_stats()
for key in ("when", "when_tz", "day", "big", "nested", "money", "n", "t", "hi", "lo"):
    value = stats[key]
    # jsonb keeps an object's keys in an order of its own
    print(key, repr(dict(sorted(value.items())) if isinstance(value, dict) else value))
EOF
unlike($err, qr/Traceback/, 'the collectors ran') or diag($err);
is($out, <<'EOF', "the shared view of the table's values");
when datetime.datetime(2026, 11, 27, 16, 0)
when_tz datetime.datetime(2026, 11, 27, 16, 0, 0, 5, tzinfo=datetime.timezone.utc)
day datetime.date(2026, 11, 27)
big inf
nested {'list': [1, 2.5, 'x'], 'none': None, 'yes': True}
money 2.5
n 6
t 0.5
hi 7
lo 3
EOF

$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
