
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Crawlers behind PgBouncer in transaction mode, one role each, set up by
# the SQL of docs/scrapy.md ("Behind a connection pooler").  Each role has
# two server connections, taken in turn (server_round_robin), so a
# crawler's transactions move from one to the other, as under load.
# SBF_POOLER ("auto" finds the pooler out) makes a claim record no backend
# (the lease alone decides) and prepares no statement.  Two crawlers do
# every page once; a crawler killed with SIGKILL loses nothing (the other
# takes its claims after their lease); with SBF_POOLER = False the crawl
# stops on psycopg's first prepared statement.

use strict;
use warnings;

use File::Path qw(make_path);
use FindBin;
use lib $FindBin::RealBin;
use SbfScrapy;
use SbfTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $PGBOUNCER = '/usr/sbin/pgbouncer';
plan skip_all => "$PGBOUNCER is missing (the Debian package pgbouncer)"
  if !-x $PGBOUNCER && $ENV{SBF_ALLOW_SKIP};
BAIL_OUT("$PGBOUNCER is missing: install the Debian package pgbouncer")
  unless -x $PGBOUNCER;

my $node = SbfTest::new_node('scrapy_pgbouncer', 'log_statement = none');
my $scrapy = SbfScrapy->new($node);
my $tmp = $scrapy->tmp;

# The roles, as docs/scrapy.md sets them up: its one ```sql block of the
# section "Behind a connection pooler"
my $page = slurp_file("$SbfTest::ROOT/docs/scrapy.md");
my ($section) = $page =~ /^## Behind a connection pooler\n(.*?)^## /ms;
my @blocks = ($section // '') =~ /^```sql\n(.*?)^```$/msg;
is(scalar(@blocks), 1, 'docs/scrapy.md sets up the roles in one SQL block');
$node->safe_psql('postgres', $blocks[0]);

# PgBouncer, as the test's user, on a port and in a directory of its own
my $bouncer_port = PostgreSQL::Test::Cluster::get_free_port();
my $server_host = $node->host;
my $server_port = $node->port;
open(my $users, '>', "$tmp/users.txt") or die "users.txt: $!";
print $users qq{"crawler1" ""\n"crawler2" ""\n};
close($users);
open(my $ini, '>', "$tmp/pgbouncer.ini") or die "pgbouncer.ini: $!";
print $ini <<"EOF";
[databases]
postgres = host=$server_host port=$server_port dbname=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir = $tmp
auth_type = trust
auth_file = $tmp/users.txt
pool_mode = transaction
default_pool_size = 2
min_pool_size = 2
server_round_robin = 1
max_client_conn = 50
logfile = $tmp/pgbouncer.log
pidfile = $tmp/pgbouncer.pid
EOF
close($ini);
my $bouncer = $scrapy->spawn("$tmp/pgbouncer.out", $PGBOUNCER, "$tmp/pgbouncer.ini");
$scrapy->poll('PgBouncer to listen',
	sub { -e "$tmp/pgbouncer.log" && slurp_file("$tmp/pgbouncer.log") =~ /listening on 127\.0\.0\.1/ });
sub dsn { return "host=127.0.0.1 port=$bouncer_port dbname=postgres user=$_[0]"; }

my $port = $scrapy->serve('site', 'scenario_site.py', '--wide', 200,
	'--redirects', 0, '--forms', 0);
my $base = "http://127.0.0.1:$port";
my @pages = sort map { "$base/$_" }
  (qw(index.html wide.html forms.html lang.html missing.html),
	map { "w$_.html" } 0 .. 199);

# crawl(name, role, base, frontier, settings...): a crawler through
# PgBouncer as role, on its own frontier and filter (a lease of 3 s unless
# the settings say otherwise)
sub crawl
{
	my ($name, $role, $start, $frontier, @set) = @_;
	return $scrapy->crawl($name, "$start/index.html", { dsn => dsn($role) },
		'--concurrency', '4', '--strip-params', 'utm_*',
		'--frontier', $frontier, '--filter', "${frontier}_seen",
		'--set', 'SBF_CLAIM_TIMEOUT=3', map { ('--set', $_) } @set);
}

sub rows
{
	my ($sql) = @_;
	return [ split(/\n/, $scrapy->query($sql) // '') ];
}

sub finished
{
	my ($name) = @_;
	my $stats = $scrapy->stats($name);
	is($stats->{finish_reason}, 'finished', "crawler $name: finish reason");
	is($stats->{'log_count/ERROR'} // 0, 0, "crawler $name: no error logged");
}

# Two crawlers, two roles: crawler1 finds the pooler out (SBF_POOLER is
# "auto" by default), crawler2 is told.  Their leases are long: a claim is
# taken twice only if it looks dead
my $crawler_a = crawl('a', 'crawler1', $base, 'pooled', 'SBF_CLAIM_TIMEOUT=60');
my $crawler_b = crawl('b', 'crawler2', $base, 'pooled', 'SBF_CLAIM_TIMEOUT=60',
	'SBF_POOLER=true');
is($scrapy->finish($crawler_a), 0, 'crawler a (crawler1) finished');
is($scrapy->finish($crawler_b), 0, 'crawler b (crawler2) finished');
finished($_) for ('a', 'b');
like($scrapy->log('a'), qr/connected through a connection pooler/,
	'crawler a found the pooler out');
is_deeply(rows(q{SELECT url FROM pooled WHERE state = 'done' ORDER BY url}),
	\@pages, 'every page is done, once');
is($scrapy->query(q{SELECT count(*) FROM pooled WHERE state <> 'done'}),
	0, 'no row is left queued or claimed');
is($scrapy->query(q{SELECT count(*) FROM pooled WHERE claims <> 1}),
	0, 'no row was claimed twice');
is($scrapy->query(q{SELECT count(*) FROM pooled WHERE claimed_by IS NOT NULL}),
	0, 'claims record no backend');
is_deeply(
	rows(
		q{SELECT DISTINCT tableowner FROM pg_tables
		   WHERE tablename IN ('pooled', 'pooled_hosts', 'pooled_seen')}),
	['sbf_crawl'],
	'the filter and the tables are owned by the group role');
is_deeply(
	rows(
		q{SELECT DISTINCT usename FROM pg_stat_activity
		   WHERE usename LIKE 'crawler%' ORDER BY 1}),
	[ 'crawler1', 'crawler2' ],
	"PgBouncer's server connections log in as each crawler's role");
ok( $scrapy->stats('a')->{'sbf/claimed'} && $scrapy->stats('b')->{'sbf/claimed'},
	'both crawlers claimed rows');

# A crawler killed with SIGKILL behind the pooler: its server connections
# live on, so its claims are taken once their lease (3 s) runs out.
# /w150.html is held by the site until the test releases it: crawler c has
# it in hand.  Crawler d's own claims have a long lease
make_path("$tmp/hold");
my $held_port = $scrapy->serve('held', 'scenario_site.py', '--wide', 200,
	'--redirects', 0, '--forms', 0, '--hold', '/w150.html', '--hold-dir', "$tmp/hold");
my $held_base = "http://127.0.0.1:$held_port";
my $crawler_c = crawl('c', 'crawler1', $held_base, 'killed');
$scrapy->poll('crawler c to fetch /w150.html',
	sub { grep { m{^HOLD /w150\.html } } $scrapy->requests('held') });
kill('KILL', $crawler_c);
waitpid($crawler_c, 0);
my $held = rows(
	qq{SELECT url FROM killed
	    WHERE state = 'claimed'
	      AND claimer = (SELECT claimer FROM killed WHERE url = '$held_base/w150.html')
	    ORDER BY url});
ok(grep({ $_ eq "$held_base/w150.html" } @$held),
	'crawler c held /w150.html when it was killed');
note(scalar(@$held) . ' rows held by the killed crawler');
my $crawler_d = crawl('d', 'crawler2', $held_base, 'killed', 'SBF_CLAIM_TIMEOUT=60');
$scrapy->poll('crawler d to take /w150.html',
	sub {
		($scrapy->query("SELECT claims FROM killed WHERE url = '$held_base/w150.html'")
			  // '') eq '2';
	});
open(my $fh, '>', "$tmp/hold/release") or die "release: $!";
close($fh);
is($scrapy->finish($crawler_d), 0, 'crawler d (crawler2) finished the crawl');
finished('d');
is_deeply(rows(q{SELECT url FROM killed WHERE state = 'done' ORDER BY url}),
	[ sort map { s/^\Q$base\E/$held_base/r } @pages ],
	'every page is done, once, after the kill');
is($scrapy->query(q{SELECT count(*) FROM killed WHERE state <> 'done'}),
	0, 'no row is left queued or claimed');
is_deeply(
	rows(
		"SELECT url FROM killed WHERE claims > 1 AND url <> ALL (ARRAY['"
		  . join("','", @$held) . "']) ORDER BY url"),
	[],
	'only the rows the killed crawler held were claimed twice');

# The same crawl told there is no pooler: psycopg prepares a statement it
# has run five times, and the next server connection does not have it
my $crawler_e = crawl('e', 'crawler1', $base, 'unpooled', 'SBF_POOLER=false');
isnt($scrapy->finish($crawler_e), 0, 'with SBF_POOLER = False, the crawl fails');
is($scrapy->stats('e')->{finish_reason}, 'sbf_error', 'crawler e: finish reason');
like($scrapy->log('e'), qr/prepared statement "_pg3_\d+" (does not exist|already exists)/,
	"crawler e: PgBouncer's server connection lacks the prepared statement");

kill('TERM', $bouncer);
waitpid($bouncer, 0);
$scrapy->stop_servers;
SbfTest::no_crash($node);
done_testing();
