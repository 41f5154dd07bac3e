
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

=pod

=head1 NAME

SbfTest - what the TAP tests of sbf share

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use SbfTest;

  my $node = SbfTest::new_node('main');
  SbfTest::load_stream($node, 'crawl', SbfTest::data_file('doccrawl-pg-python.tsv.gz'));

=head1 DESCRIPTION

Each TAP test starts clusters of its own with PostgreSQL::Test::Cluster (as
PostgreSQL's own TAP tests do: a private port and a socket in a temporary
directory, removed at the end) against the sbf installed in the server of
pg_config.  Tests read only what the repository ships (data/) or what they
generate.

=cut

package SbfTest;

use strict;
use warnings;

use Cwd qw(abs_path);
use IPC::Run;
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The repository's root: t/ is beside data/, scripts/ and src/
our $ROOT = abs_path(dirname(__FILE__) . '/..');

=pod

=item new_node(name, extra configuration lines...)

A new cluster, started, with sbf created in its database "postgres".
Parallel query has workers enough for the parallel-plan tests.

=cut

sub new_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		join("\n",
			'max_worker_processes = 8',
			'max_parallel_workers = 4',
			'client_min_messages = warning',
			@conf)
		  . "\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION sbf');
	return $node;
}

=pod

=item missing_programs(program...)

Undef when the PostgreSQL under test (the bin directory of the pg_config
first on PATH, as PGXS runs the TAP tests) has each PROGRAM; otherwise the
reason to skip what needs them.  Only the programs of that bin directory
count: a pg_dump of another major found elsewhere on PATH cannot dump this
server.  A missing program is an error (the test dies) unless SBF_ALLOW_SKIP
is set, as scripts/test-matrix.sh sets it for PostgreSQL 17 only (an npm
package without pg_dump, pg_restore, pg_basebackup or pg_upgrade): a test
can never be skipped silently where every program exists.

A file whose checks here and there need the programs (a standby made by
pg_basebackup, a dump) gives the reason to a SKIP block around each:

  my $no_standby = SbfTest::missing_programs('pg_basebackup');
  SKIP:
  {
      skip "the standby: $no_standby", 1 if $no_standby;
      is(...);
  }

=cut

sub missing_programs
{
	my @programs = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_config', '--bindir', '--version' ], '>', \$stdout, '2>', \$stderr)
	  or die "pg_config failed: $stderr";
	my ($bindir, $version) = split(/\n/, $stdout);
	my @missing = grep { !-x "$bindir/$_" } @programs;
	return unless @missing;
	my $reason = "no " . join(', ', @missing) . " in the $version under test";
	die "$reason (set SBF_ALLOW_SKIP=1 to skip what needs them)\n"
	  unless $ENV{SBF_ALLOW_SKIP};
	return $reason;
}

=pod

=item require_programs(program...)

Skips the whole test file, with the reason, when the PostgreSQL under test
lacks one of the programs (see missing_programs); call it before any test.
PostgreSQL::Test::Cluster's backup() and init_from_backup() need pg_basebackup.

=cut

sub require_programs
{
	my $reason = missing_programs(@_);
	plan skip_all => $reason if defined $reason;
	return;
}

=pod

=item end_unless_programs([program...], node...)

For a file whose last parts need the programs: when the PostgreSQL under
test lacks one (see missing_programs), checks that no backend of the NODEs
crashed, records the rest of the file as one skipped test with the reason,
and ends the file there.

=cut

sub end_unless_programs
{
	my ($programs, @nodes) = @_;
	my $reason = missing_programs(@$programs);
	return unless defined $reason;
	no_crash($_) for @nodes;
  SKIP:
	{
		skip "the rest of the file: $reason", 1;
	}
	done_testing();
	exit 0;
}

=pod

=item without_checksums(node)

Turn data checksums off in a running node (and restart it), for tests that
damage pages on disk to exercise sbf's own page checks: with checksums on,
as initdb makes a cluster from PostgreSQL 18 on, the buffer manager refuses
such a page first.

=cut

sub without_checksums
{
	my ($node) = @_;
	return if $node->safe_psql('postgres', 'SHOW data_checksums') eq 'off';
	$node->stop;
	PostgreSQL::Test::Utils::system_or_bail('pg_checksums', '--disable',
		'--pgdata', $node->data_dir);
	$node->start;
	return;
}

=pod

=item data_file(name)

The path of a stream shipped in data/; the test fails when it is missing.

=cut

sub data_file
{
	my ($name) = @_;
	my $path = "$ROOT/data/$name";
	BAIL_OUT("missing data file $path") unless -r $path;
	return $path;
}

=pod

=item stream_rows(path [, max rows])

A URL stream (gzipped or not; "pos<TAB>url" lines, or one URL a line
numbered from 1) as a list of [pos, url] pairs.  A CR at the end of a line
(CRLF files) is dropped.

=cut

sub stream_rows
{
	my ($path, $max) = @_;
	open(my $in, '-|', 'gzip', '-dcf', $path) or die "cannot read $path: $!";
	my @rows;
	my $tsv;
	while (my $line = <$in>)
	{
		chomp $line;
		$line =~ s/\r$//;
		$tsv = ($line =~ /^[0-9]+\t/) ? 1 : 0 unless defined $tsv;
		if ($tsv)
		{
			my ($pos, $url) = split(/\t/, $line, 2);
			push @rows, [ $pos, $url ];
		}
		else
		{
			push @rows, [ scalar(@rows) + 1, $line ];
		}
		last if defined $max && @rows >= $max;
	}
	close($in);
	return @rows;
}

=pod

=item copy_rows(node, table, rows, [database])

COPY the [pos, url] rows into TABLE (pos bigint, url text), escaping what
COPY's text format needs escaped.

=cut

sub copy_rows
{
	my ($node, $table, $rows, $db) = @_;
	my $data = join('',
		map {
			my $url = $_->[1];
			$url =~ s/\\/\\\\/g;
			$url =~ s/\t/\\t/g;
			$url =~ s/\r/\\r/g;
			"$_->[0]\t$url\n"
		} @$rows);
	$node->safe_psql($db // 'postgres', "COPY $table FROM STDIN;\n$data\\.\n");
	return scalar(@$rows);
}

=pod

=item load_stream(node, table, path, [max rows], [database])

Creates TABLE (pos bigint PRIMARY KEY, url text NOT NULL) and loads the
stream into it; returns the number of rows loaded.

=cut

sub load_stream
{
	my ($node, $table, $path, $max, $db) = @_;
	my @rows = stream_rows($path, $max);
	$node->safe_psql($db // 'postgres',
		"CREATE TABLE $table (pos bigint PRIMARY KEY, url text NOT NULL)");
	return copy_rows($node, $table, \@rows, $db);
}

=pod

=item no_crash(node)

Passes when the server log of NODE has no backend that died of a signal,
no PANIC and no failed assertion.

=cut

sub no_crash
{
	my ($node) = @_;
	my $log = slurp_file($node->logfile);
	my @bad = grep { /terminated by signal|was terminated|PANIC|TRAP:/ }
	  split(/\n/, $log);
	is(scalar(@bad), 0, $node->name . ': no backend crashed')
	  or diag(join("\n", @bad));
	return;
}

=item dump_restore(node, database)

pg_dump -Fc of database "postgres" of NODE, restored with pg_restore
--exit-on-error into DATABASE, made anew on NODE: two passing tests.

=cut

sub dump_restore
{
	my ($node, $database) = @_;
	my $dump = $node->basedir . "/$database.dump";
	$node->command_ok(
		[ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ],
		'pg_dump');
	$node->safe_psql('postgres', "CREATE DATABASE $database");
	$node->command_ok(
		[ 'pg_restore', '--exit-on-error', '-d', $node->connstr($database), $dump ],
		'pg_restore');
	return;
}

1;
