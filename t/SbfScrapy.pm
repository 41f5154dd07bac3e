
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

=pod

=head1 NAME

SbfScrapy - what the tests of the Scrapy client (clients/scrapy) share

=head1 SYNOPSIS

  use SbfScrapy;

  my $scrapy = SbfScrapy->new($node);      # installs the client with pip
  my $port = $scrapy->serve('site', 'scenario_site.py', '--redirects', 5);
  my $pid = $scrapy->crawl('a', "http://127.0.0.1:$port/index.html", '--concurrency', 4);
  is($scrapy->finish($pid), 0, 'crawler a finished');
  my $stats = $scrapy->stats('a');

=head1 DESCRIPTION

The client is installed as its users install it, with pip and no index,
into a directory of the test's (--no-deps: Scrapy and psycopg come from
Debian, python3-scrapy and python3-psycopg, which scripts/test.sh
installs), and run by Debian's /usr/bin/python3.  Sites are served by the
scripts of clients/scrapy/tests on 127.0.0.1, crawlers are
clients/scrapy/tests/crawl.py, each a process of its own with its output in
a log file of the test's.

=cut

package SbfScrapy;

use strict;
use warnings;

use IPC::Run;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Utils;
use SbfTest;
use Test::More;

our $PYTHON = '/usr/bin/python3';
our $CLIENT = "$SbfTest::ROOT/clients/scrapy";

=pod

=item SbfScrapy->new(node)

Installs the client (a test of its own: "pip installs clients/scrapy") and
returns the harness of a test whose database is node's.

=cut

sub new
{
	my ($class, $node) = @_;
	my $self = bless {
		node => $node,
		tmp => PostgreSQL::Test::Utils::tempdir('scrapy'),
		timeout => $PostgreSQL::Test::Utils::timeout_default,
		servers => [],
	}, $class;
	my ($out, $err) = ('', '');
	my $installed = IPC::Run::run(
		[
			$PYTHON, '-m', 'pip', 'install', '--no-index', '--no-deps',
			'--no-cache-dir', '--disable-pip-version-check', '--target',
			"$self->{tmp}/py", $CLIENT
		],
		'>', \$out, '2>', \$err);
	ok($installed, 'pip installs clients/scrapy without an index')
	  or diag("$out\n$err");
	$ENV{PYTHONPATH} = "$self->{tmp}/py";
	IPC::Run::run([ $PYTHON, '-c', 'import scrapy, psycopg, sbf_scrapy' ],
		'>', \$out, '2>', \$err)
	  or BAIL_OUT("/usr/bin/python3 cannot import scrapy, psycopg and sbf_scrapy: $err");
	return $self;
}

=pod

=item tmp()

The test's directory: logs, stats, the sites' request logs.

=cut

sub tmp { return $_[0]->{tmp} }

=pod

=item spawn(log, command...)

Starts a process, its output in log; its pid.

=cut

sub spawn
{
	my ($self, $log, @cmd) = @_;
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

=pod

=item finish(pid)

Waits for a process to exit (killing it after the timeout); its exit
status ($?), or -1 if it had to be killed.

=cut

sub finish
{
	my ($self, $pid) = @_;
	my $deadline = time() + $self->{timeout};
	while (time() < $deadline)
	{
		return $? if waitpid($pid, WNOHANG) == $pid;
		usleep(50_000);
	}
	kill('KILL', $pid);
	waitpid($pid, 0);
	return -1;
}

=pod

=item poll(description, sub)

Calls sub until it returns true; bails out after the timeout.

=cut

sub poll
{
	my ($self, $what, $check) = @_;
	my $deadline = time() + $self->{timeout};
	while (time() < $deadline)
	{
		return 1 if $check->();
		usleep(20_000);
	}
	BAIL_OUT("timed out waiting for $what");
}

=pod

=item query(sql)

psql's output of sql on the node's database, or undef if it failed.

=cut

sub query
{
	my ($self, $sql) = @_;
	my ($rc, $stdout) = $self->{node}->psql('postgres', $sql);
	return $rc == 0 ? $stdout : undef;
}

=pod

=item serve(name, script, arguments...)

Starts clients/scrapy/tests/script with the arguments, then --log (the
requests it logs: requests(name)) and --port-file; its port once it
serves.  Stopped by stop_servers.

=cut

sub serve
{
	my ($self, $name, $script, @args) = @_;
	my $tmp = $self->{tmp};
	my $pid = $self->spawn(
		"$tmp/$name.log", $PYTHON, "$CLIENT/tests/$script", @args,
		'--log', "$tmp/$name.requests",
		'--port-file', "$tmp/$name.port");
	push @{ $self->{servers} }, $pid;
	$self->poll("the site $name", sub { -s "$tmp/$name.port" });
	chomp(my $port = slurp_file("$tmp/$name.port"));
	return $port;
}

sub stop_servers
{
	my ($self) = @_;
	for my $pid (@{ $self->{servers} })
	{
		kill('TERM', $pid);
		waitpid($pid, 0);
	}
	$self->{servers} = [];
}

=pod

=item requests(name)

The lines the site name logged, one a request.

=cut

sub requests
{
	my ($self, $name) = @_;
	my $file = "$self->{tmp}/$name.requests";
	return () unless -e $file;
	return split(/\n/, slurp_file($file));
}

=pod

=item crawl(name, start URL, [{ dsn => DSN },] arguments of crawl.py...)

Starts a crawler in frontier mode on the node's database (or on DSN's: a
pooler's, say), with application_name name, its log in name.log and its
stats in name.json; its pid.

=cut

sub crawl
{
	my ($self, $name, $start, @args) = @_;
	my $tmp = $self->{tmp};
	my $options = ref($args[0]) eq 'HASH' ? shift(@args) : {};
	my $dsn = $options->{dsn} // $self->{node}->connstr('postgres');
	return $self->spawn(
		"$tmp/$name.log", $PYTHON, "$CLIENT/tests/crawl.py",
		'--start', $start,
		'--mode', 'frontier',
		'--dsn', "$dsn application_name=$name",
		'--log-level', 'INFO',
		'--stats', "$tmp/$name.json", @args);
}

=pod

=item stats(name), log(name)

The crawler's stats (from its JSON, {} if it wrote none), its log.

=cut

sub stats
{
	my ($self, $name) = @_;
	my $file = "$self->{tmp}/$name.json";
	return {} unless -s $file;
	return decode_json(slurp_file($file));
}

sub log
{
	my ($self, $name) = @_;
	return slurp_file("$self->{tmp}/$name.log");
}

=pod

=item backend(name)

The pid of the backend of application_name name, once it has one.

=cut

sub backend
{
	my ($self, $name) = @_;
	my $pid;
	$self->poll(
		"the backend of $name",
		sub {
			$pid = $self->query(
				"SELECT pid FROM pg_stat_activity WHERE application_name = '$name'");
			return defined $pid && $pid =~ /^\d+$/;
		});
	return $pid;
}

=pod

=item idle(name)

Waits until the backend of name is idle twice, 200 ms apart: it has
finished any statement it was running and has not been sent another.

=cut

sub idle
{
	my ($self, $name) = @_;
	my $pid = $self->backend($name);
	my $idle = sub {
		return ($self->query("SELECT state FROM pg_stat_activity WHERE pid = $pid") // '')
		  eq 'idle';
	};
	$self->poll("$name\'s backend to be idle",
		sub { return 0 unless $idle->(); usleep(200_000); return $idle->(); });
	return $pid;
}

1;
