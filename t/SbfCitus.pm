
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

=pod

=head1 NAME

SbfCitus - a real Citus cluster for the TAP tests of sbf

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use SbfTest;
  use SbfCitus;

  SbfCitus::skip_unless_installed();
  my ($coordinator, @workers) = SbfCitus::new_cluster('citus', 2);

=head1 DESCRIPTION

Citus is not in Debian's packages, and sbf does not build it: the tests use
a Citus installed into the PostgreSQL of pg_config, if there is one.  A
test that needs it calls skip_unless_installed() first, which skips the
whole test, saying why, when citus.so is not installed.

new_cluster starts a coordinator and workers, each a PostgreSQL::Test::Cluster
with shared_preload_libraries = 'citus' on a private port and socket, creates
the citus and sbf extensions in database "postgres" of every node, and
registers the workers with the coordinator.

=cut

package SbfCitus;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

=pod

=item installed()

True when citus.so is in the server's library directory.

=cut

sub installed
{
	my $pkglibdir = `pg_config --pkglibdir`;
	chomp $pkglibdir;
	return -f "$pkglibdir/citus.so";
}

=pod

=item skip_unless_installed()

Skips the whole test, with the reason, when Citus is not installed.

=cut

sub skip_unless_installed
{
	plan skip_all =>
	  'Citus is not installed (citus.so not found in the PostgreSQL of pg_config)'
	  unless installed();
	return;
}

=pod

=item new_cluster(name, number of workers, extra configuration lines...)

Starts a coordinator and the workers, and returns them (coordinator first).
Every node has citus and sbf created in database "postgres"; the workers
are added to the coordinator's metadata, and the coordinator is in it as
the node of group 0 (so that reference tables have a placement there).

=cut

sub new_cluster
{
	my ($name, $nworkers, @conf) = @_;
	my @nodes;
	for my $i (0 .. $nworkers)
	{
		my $node = PostgreSQL::Test::Cluster->new(
			$i == 0 ? "${name}_coordinator" : "${name}_worker$i");
		$node->init;
		$node->append_conf('postgresql.conf',
			join("\n",
				"shared_preload_libraries = 'citus'",
				'max_worker_processes = 16',
				'max_parallel_workers = 4',
				'max_connections = 100',
				'max_prepared_transactions = 20',
				'client_min_messages = warning',
				'citus.enable_statistics_collection = off',
				"citus.node_conninfo = 'sslmode=disable'",
				@conf)
			  . "\n");
		$node->start;
		$node->safe_psql('postgres',
			'CREATE EXTENSION citus; CREATE EXTENSION sbf');
		push @nodes, $node;
	}
	my ($coordinator, @workers) = @nodes;
	my $host = $coordinator->host;
	$coordinator->safe_psql('postgres',
		"SELECT citus_set_coordinator_host('$host', "
		  . $coordinator->port . ")");
	for my $worker (@workers)
	{
		$coordinator->safe_psql('postgres',
			"SELECT citus_add_node('$host', " . $worker->port . ")");
	}
	return @nodes;
}

1;
