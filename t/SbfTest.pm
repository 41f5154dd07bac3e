
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

1;
