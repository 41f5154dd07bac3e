
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The install steps of docs/scrapy.md run as written.  The ```sh blocks of
# its "## Install" section are run, in page order, as one `bash -e` script:
# as the OS user the tests run as, in the repository's top directory (the
# clone the page speaks of), with HOME a new empty directory (so ~/ is the
# test's), a plain Debian PATH and nothing else in the environment (no
# PYTHONPATH, no pip configuration, no index reachable).  The one line not
# run is the apt-get install, which needs root: the test checks instead
# that dpkg has each package it names installed.
#
# The section ends by crawling with the project ~/myproject and its spider
# myspider; the test makes them first: `scrapy startproject myproject`, the
# settings of the page's "## Use" section (the first ```python block) with
# SBF_DSN pointing at a throwaway cluster, and a spider that follows every
# link of a local site of three pages (python3 -m http.server).  Then it
# checks that the venv the section made imports sbf_scrapy, that Debian's
# python3 does not (so the venv is what the crawl ran in), and that the
# crawl went through sbf_scrapy's frontier: one done row per page, by
# canonical URL, and nothing else.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IO::Socket::INET;
use IPC::Run;
use POSIX qw(WNOHANG);
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $page = "$SbfTest::ROOT/docs/scrapy.md";
my $tmp = PostgreSQL::Test::Utils::tempdir('scrapy_install');
my $home = "$tmp/home";
my $timeout = $PostgreSQL::Test::Utils::timeout_default;
mkdir($home) or die "$home: $!";

# The environment of a fresh login on Debian 12, with HOME the test's.
# PIP_CONFIG_FILE=/dev/null: no pip configuration of this machine counts;
# the index is a closed port, so a step that needs one fails here as it
# would offline.
my @env = (
	'env', '-i',
	"HOME=$home",
	'PATH=/usr/local/bin:/usr/bin:/bin',
	'LANG=C.UTF-8',
	'PIP_CONFIG_FILE=/dev/null',
	'PIP_INDEX_URL=http://127.0.0.1:9/simple/');

# section(name): the lines of the page's "## name" section
sub section
{
	my ($name) = @_;
	my @lines = split(/\n/, slurp_file($page));
	my ($in, @section);
	for my $line (@lines)
	{
		if ($line =~ /^## /)
		{
			$in = $line =~ /^## \Q$name\E\s*$/;
			next;
		}
		push @section, $line if $in;
	}
	return @section;
}

# blocks(language, lines): the code blocks of that language in the lines
sub blocks
{
	my ($language, @lines) = @_;
	my (@blocks, $block);
	for my $line (@lines)
	{
		if (!$block && $line =~ /^\s*```\Q$language\E\s*$/)
		{
			$block = [];
		}
		elsif ($block && $line =~ /^\s*```\s*$/)
		{
			push @blocks, $block;
			$block = undef;
		}
		elsif ($block)
		{
			push @$block, $line;
		}
	}
	return @blocks;
}

# The section's commands; the apt-get line is checked, not run
my @sh = blocks('sh', section('Install'));
ok(@sh > 0, 'the Install section has ```sh blocks');
my (@script, @packages);
for my $line (map { @$_ } @sh)
{
	if ($line =~ /^\s*(?:sudo\s+)?apt(?:-get)?\s+install\s+([^#]*)/)
	{
		push @packages, grep { !/^-/ } split(' ', $1);
		next;
	}
	push @script, $line;
}
ok(@packages > 0, 'the Install section names the Debian packages to install');
for my $package (@packages)
{
	my $status = '';
	IPC::Run::run([ 'dpkg-query', '-W', '-f=${db:Status-Status}', $package ],
		'>', \$status, '2>', \my $err);
	is($status, 'installed', "the section's Debian package $package is installed");
}
my $script = join("\n", @script) . "\n";
note("the Install section's commands:\n$script");
my ($venv) = $script =~ /^\s*python3 -m venv\b.*?\s(\S+)\s*$/m;
ok(defined $venv, 'the Install section makes a venv');
$venv =~ s{^~(?=/|$)}{$home} if defined $venv;

my $node = SbfTest::new_node('scrapy_install', 'log_statement = none');

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

# The site: three pages that link to one another, in forms that the Use
# section's settings make one (a fragment, a utm_ parameter)
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $base = "http://127.0.0.1:$port";
my %site = (
	'index.html' => [ 'a.html', './b.html#top' ],
	'a.html' => [ 'b.html', '/index.html' ],
	'b.html' => [ 'a.html?utm_source=nav', "$base/index.html" ],);
mkdir("$tmp/site") or die "$tmp/site: $!";
for my $name (keys %site)
{
	open(my $out, '>', "$tmp/site/$name") or die "$name: $!";
	print $out "<!DOCTYPE html>\n<html><head><title>$name</title></head><body>\n";
	print $out qq{<p><a href="$_">$_</a></p>\n} for @{ $site{$name} };
	print $out "</body></html>\n";
	close($out);
}
my $server = spawn("$tmp/site.log", '/usr/bin/python3', '-m', 'http.server',
	'--bind', '127.0.0.1', '--directory', "$tmp/site", $port);
my $deadline = time() + $timeout;
until (IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port))
{
	BAIL_OUT('the site does not answer') if time() > $deadline;
	usleep(50_000);
}

# ~/myproject, made by Debian's Scrapy (the venv does not exist yet), with
# the Use section's settings and the spider myspider
my ($out, $err) = ('', '');
IPC::Run::run([ @env, '/usr/bin/python3', '-m', 'scrapy', 'startproject', 'myproject' ],
	'>', \$out, '2>', \$err, init => sub { chdir($home) or die "chdir: $!" })
  or BAIL_OUT("scrapy startproject failed: $out$err");
my ($use) = blocks('python', section('Use'));
ok(defined $use, 'the Use section has the settings (a ```python block)');
my $settings = join("\n", @{ $use // [] }) . "\n";
my $dsn = $node->connstr('postgres');
is($settings =~ s/^SBF_DSN\s*=.*$/SBF_DSN = "$dsn"/mg,
	1, 'the Use section\'s settings set SBF_DSN');
note("the Use section's settings:\n$settings");
append_to_file("$home/myproject/myproject/settings.py",
	"\n# docs/scrapy.md, \"Use\"\n${settings}TELNETCONSOLE_ENABLED = False\n");
append_to_file(
	"$home/myproject/myproject/spiders/myspider.py", <<"EOF");
import scrapy


class MySpider(scrapy.Spider):
    name = "myspider"
    start_urls = ["$base/index.html"]

    def start_requests(self):
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
EOF

# The section's commands, as written
append_to_file("$tmp/install.sh", $script);
my $ran = IPC::Run::run(
	[ @env, 'bash', '-e', "$tmp/install.sh" ],
	'>&', \$out,
	init => sub { chdir($SbfTest::ROOT) or die "chdir: $!" },
	IPC::Run::timeout($timeout));
ok($ran, 'the Install section\'s commands run') or diag($out);

SKIP:
{
	skip 'no venv', 1 unless defined $venv;
	ok( IPC::Run::run(
			[ @env, "$venv/bin/python", '-c', 'import sbf_scrapy' ],
			'>', \$out, '2>', \$err),
		'the venv\'s python imports sbf_scrapy')
	  or diag($err);
}
ok( !IPC::Run::run(
		[ @env, '/usr/bin/python3', '-c', 'import sbf_scrapy' ],
		'>', \$out, '2>', \$err),
	'Debian\'s python3 does not: the crawl ran in the venv');

kill('TERM', $server);
waitpid($server, 0);

# The crawl went through the frontier
sub query
{
	my ($sql) = @_;
	my ($rc, $stdout, $stderr) = $node->psql('postgres', $sql);
	return $rc == 0 ? $stdout : $stderr;
}
my @urls = map { "$base/$_" } sort keys %site;
is( query(
		q{SELECT string_agg(url, ' ' ORDER BY url) FROM sbf_frontier
		   WHERE state = 'done' AND error IS NULL}),
	join(' ', @urls),
	'the crawl marked each page done in sbf_frontier, once, by canonical URL');
is( query(
		q{SELECT count(*) FROM sbf_frontier WHERE state <> 'done' OR error IS NOT NULL}),
	0, 'and left nothing else there');

SbfTest::no_crash($node);
done_testing();
