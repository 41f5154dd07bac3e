
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
use SbfTest;
use IPC::Run;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $python = '/usr/bin/python3';
my $client = "$SbfTest::ROOT/clients/scrapy";
my $pages_file = SbfTest::data_file('pgdoc15-pages.tsv.gz');
my $tmp = PostgreSQL::Test::Utils::tempdir('scrapy');
my $timeout = $PostgreSQL::Test::Utils::timeout_default;

# The package, as a user installs it: pip, no index, no build dependency
# (its build backend is in the tree).  --no-deps: Scrapy and psycopg come
# from Debian, which pip --target does not count as installed.
my ($out, $err) = ('', '');
my $installed = IPC::Run::run(
	[
		$python, '-m', 'pip', 'install', '--no-index', '--no-deps',
		'--no-cache-dir', '--disable-pip-version-check', '--target',
		"$tmp/py", $client
	],
	'>', \$out, '2>', \$err);
ok($installed, 'pip installs clients/scrapy without an index')
  or diag("$out\n$err");
$ENV{PYTHONPATH} = "$tmp/py";
ok( IPC::Run::run(
		[ $python, '-c', 'import scrapy, psycopg, sbf_scrapy' ],
		'>', \$out, '2>', \$err),
	'/usr/bin/python3 imports scrapy, psycopg and sbf_scrapy')
  or BAIL_OUT("cannot run the client: $err");

my $node = SbfTest::new_node('scrapy', 'log_statement = none');

# spawn(log, command...): starts a process, its output in log; its pid
sub spawn
{
	my ($log, @cmd) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open(STDOUT, '>', $log) or die "$log: $!";
		open(STDERR, '>&', \*STDOUT) or die "dup: $!";
		exec(@cmd) or die "exec $cmd[0]: $!";
	}
	return $pid;
}

# finish(pid): waits for a process to exit (killing it after the timeout);
# its exit status, or -1 if it had to be killed
sub finish
{
	my ($pid) = @_;
	my $deadline = time() + $timeout;
	while (time() < $deadline)
	{
		return $? if waitpid($pid, WNOHANG) == $pid;
		usleep(50_000);
	}
	kill('KILL', $pid);
	waitpid($pid, 0);
	return -1;
}

# poll(description, sub): calls sub until it returns true, or fails
sub poll
{
	my ($what, $check) = @_;
	my $deadline = time() + $timeout;
	while (time() < $deadline)
	{
		return 1 if $check->();
		usleep(20_000);
	}
	BAIL_OUT("timed out waiting for $what");
}

sub query
{
	my ($sql) = @_;
	my ($rc, $stdout) = $node->psql('postgres', $sql);
	return $rc == 0 ? $stdout : undef;
}

# The site, served on a free port; each GET's path goes to $tmp/fetches
my $server = spawn(
	"$tmp/server.log", $python,
	"$client/tests/testsite.py", 'serve',
	'--pages', $pages_file,
	'--dir', "$tmp/site",
	'--log', "$tmp/fetches",
	'--port-file', "$tmp/port",
	'--latency', '0.005');
poll('the site', sub { -s "$tmp/port" });
chomp(my $port = slurp_file("$tmp/port"));

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
	return spawn(
		"$tmp/$name.log", $python,
		"$client/tests/crawl.py",
		'--start', "http://127.0.0.1:$port/index.html",
		'--mode', 'frontier',
		'--dsn', $node->connstr('postgres') . " application_name=$name",
		'--strip-params', 'utm_*',
		'--concurrency', '16',
		'--log-level', 'INFO',
		'--stats', "$tmp/$name.json");
}

my $crawler_a = crawler('crawler_a');
my $crawler_b = crawler('crawler_b');

# A third of the way through, with crawler_a having done some pages: stop
# it, wait until its backend has finished any statement it was running
# (and has not been sent another: idle twice, 200 ms apart), note what it
# holds (claimed and not done), then kill it
poll(
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
my $a_pid = query(
	q{SELECT pid FROM pg_stat_activity WHERE application_name = 'crawler_a'});
like($a_pid, qr/^\d+$/, 'crawler_a has one backend');
sub a_idle
{
	return (query("SELECT state FROM pg_stat_activity WHERE pid = $a_pid") // '')
	  eq 'idle';
}
poll('crawler_a\'s backend to be idle',
	sub { return 0 unless a_idle(); usleep(200_000); return a_idle(); });
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
is(finish($crawler_b), 0, 'crawler_b finished');
is(finish($crawler_a2), 0, 'crawler_a started again finished');
kill('TERM', $server);
waitpid($server, 0);

for my $name ('crawler_b', 'crawler_a2')
{
	my $stats = decode_json(slurp_file("$tmp/$name.json"));
	is($stats->{finish_reason}, 'finished', "$name: finish reason");
	is($stats->{'log_count/ERROR'} // 0, 0, "$name: no error logged")
	  or diag(slurp_file("$tmp/$name.log"));
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
for my $path (split(/\n/, slurp_file("$tmp/fetches")))
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
