
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The offline sieve on a real Citus cluster (docs/sieve.md, "On Citus"): a
# coordinator and two workers, seen, discovered and frontier hash-distributed
# by sig and colocated.  The doc crawl goes through in four batches, each
# flushed three ways: sieve_flush on one server, sieve_flush on the
# coordinator, and sieve_flush_shards (every shard group on its worker, the
# workers at once).  Checks that
#  - each flush appends as many URLs as on one server, and at the end the
#	 frontiers hold the same (pos, url, sig) rows, seen the same signatures,
#	 and discovered nothing;
#  - the coordinator never looks signatures up in seen's shell: a shell that
#	 kept its local rows on disk after create_distributed_table would have
#	 made sbf 1.0 probe its stale index;
#  - every layout it cannot handle is an ERROR naming the table and the
#	 problem, and leaves the tables as they were;
#  - shard groups flushed by hand on both workers at once, and flushes of
#	 the whole started on both workers at once (which deadlocked before
#	 sieve_flush took its lock on seen on every node), all finish, with the
#	 single-server result.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use SbfCitus;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

SbfCitus::skip_unless_installed();

my ($coordinator, @workers) = SbfCitus::new_cluster('sieve', 2);
my $single = SbfTest::new_node('sieve_single');

# Seeds: signatures in seen before the crawl (60,000, so that seen is large
# beside a batch, where a flush on one server probes seen's index)
my $seeds =
  q{SELECT url_signature('https://seed.invalid/' || g) FROM generate_series(1, 60000) g};

$single->safe_psql(
	'postgres', qq{
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL, sig bigint);
INSERT INTO seen $seeds;
});

# Two sets of tables on the cluster: _c flushed on the coordinator, _p per
# shard group.  seen_c gets its seeds before it is distributed: its shell
# keeps them on disk (Citus only hides them), as a shell does after
# create_distributed_table of a loaded table.
$coordinator->safe_psql(
	'postgres', qq{
SET citus.shard_count = 8;
CREATE TABLE incoming (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE seen_c (sig bigint PRIMARY KEY);
INSERT INTO seen_c $seeds;
SELECT create_distributed_table('seen_c', 'sig');
CREATE TABLE discovered_c (pos bigint NOT NULL, url text NOT NULL,
	sig bigint NOT NULL CHECK (sig = url_signature(url)));
CREATE TABLE frontier_c (pos bigint NOT NULL, url text NOT NULL, sig bigint);
SELECT create_distributed_table('discovered_c', 'sig', colocate_with => 'seen_c');
SELECT create_distributed_table('frontier_c', 'sig', colocate_with => 'seen_c');

CREATE TABLE seen_p (sig bigint PRIMARY KEY);
CREATE TABLE discovered_p (pos bigint NOT NULL, url text NOT NULL,
	sig bigint NOT NULL CHECK (sig = url_signature(url)));
CREATE TABLE frontier_p (pos bigint NOT NULL, url text NOT NULL, sig bigint);
SELECT create_distributed_table('seen_p', 'sig', colocate_with => 'none');
SELECT create_distributed_table('discovered_p', 'sig', colocate_with => 'seen_p');
SELECT create_distributed_table('frontier_p', 'sig', colocate_with => 'seen_p');
INSERT INTO seen_p $seeds;
});

my $shell_pages = $coordinator->safe_psql('postgres',
	q{SELECT pg_relation_size('seen_c') / current_setting('block_size')::int});
my $shell_visible =
  $coordinator->safe_psql('postgres', 'SELECT count(*) FROM ONLY seen_c');
cmp_ok($shell_pages, '>', 0,
	"the shell of seen_c keeps $shell_pages pages of local rows on disk ($shell_visible signatures in seen_c through Citus)"
);

# Moves the rows of incoming (pos, url) into a distributed discovered
sub to_discovered
{
	my ($table) = @_;
	return "INSERT INTO $table (pos, url, sig) SELECT pos, url, url_signature(url) FROM incoming";
}

sub timed
{
	my ($node, $sql) = @_;
	my $start = time;
	my $result = $node->safe_psql('postgres', $sql);
	return ($result, time - $start);
}

my @rows =
  SbfTest::stream_rows(SbfTest::data_file('doccrawl-pg-python.tsv.gz'));
my $nbatches = 4;
my $size = int((@rows + $nbatches - 1) / $nbatches);
my ($t_single, $t_coordinator, $t_shards) = (0, 0, 0);
for my $b (0 .. $nbatches - 1)
{
	my $last = ($b + 1) * $size - 1;
	$last = $#rows if $last > $#rows;
	my @batch = @rows[ $b * $size .. $last ];

	SbfTest::copy_rows($single, 'discovered', \@batch);
	SbfTest::copy_rows($coordinator, 'incoming', \@batch);
	$coordinator->safe_psql('postgres',
		    to_discovered('discovered_c') . ';'
		  . to_discovered('discovered_p')
		  . '; TRUNCATE incoming');

	my ($n_single, $s) = timed($single,
		q{SELECT sieve_flush('seen', 'discovered', 'frontier')});
	$t_single += $s;

	my ($n_coordinator, $c);
	if ($b == 0)
	{
		# the first flush says how it looks signatures up
		my $start = time;
		my ($ret, $out, $err) = $coordinator->psql('postgres',
			q{SET client_min_messages = debug1; SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c')}
		);
		$c = time - $start;
		$n_coordinator = $out;
		like(
			$err,
			qr/sieve_flush: querying Citus table seen relation "seen_c"/,
			'the coordinator looks signatures up in seen through SQL, never in its shell'
		);
		unlike($err, qr/probing the index|merging with/,
			'the coordinator neither probes nor reads the shell of seen');
	}
	else
	{
		($n_coordinator, $c) = timed($coordinator,
			q{SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c')});
	}
	$t_coordinator += $c;

	my ($n_shards, $p) = timed($coordinator,
		q{SELECT sieve_flush_shards('seen_p', 'discovered_p', 'frontier_p')});
	$t_shards += $p;

	is( "$n_coordinator $n_shards",
		"$n_single $n_single",
		sprintf(
			'batch %d (%d rows): %d URLs appended on one server (%.2f s), on the coordinator (%.2f s) and per shard group (%.2f s)',
			$b + 1, scalar(@batch), $n_single, $s, $c, $p));
}
diag(
	sprintf(
		'the doc crawl in %d batches: one server %.2f s, coordinator %.2f s (%.1fx), per shard group %.2f s (%.1fx)',
		$nbatches, $t_single, $t_coordinator, $t_coordinator / $t_single,
		$t_shards, $t_shards / $t_single));

#
# Layouts sieve_flush cannot handle: an ERROR naming the table and the
# problem, with a hint giving the supported layout; nothing changes
#
$coordinator->safe_psql(
	'postgres', q{
SET citus.shard_count = 8;
CREATE TABLE discovered_e (pos bigint NOT NULL, url text NOT NULL, sig bigint NOT NULL);
CREATE TABLE frontier_e (pos bigint NOT NULL, url text NOT NULL, sig bigint);
SELECT create_distributed_table('discovered_e', 'sig', colocate_with => 'seen_c');
SELECT create_distributed_table('frontier_e', 'sig', colocate_with => 'seen_c');
INSERT INTO discovered_e SELECT g, 'https://error.invalid/' || g, url_signature('https://error.invalid/' || g)
FROM generate_series(1, 3) g;
CREATE TABLE seen_ref (sig bigint PRIMARY KEY);
SELECT create_reference_table('seen_ref');
CREATE TABLE seen_local (sig bigint PRIMARY KEY);
CREATE TABLE seen_citus_local (sig bigint PRIMARY KEY);
SELECT citus_add_local_table_to_metadata('seen_citus_local');
CREATE TABLE discovered_apart (pos bigint NOT NULL, url text NOT NULL, sig bigint NOT NULL);
SELECT create_distributed_table('discovered_apart', 'sig', colocate_with => 'none');
CREATE TABLE discovered_by_pos (pos bigint NOT NULL, url text NOT NULL, sig bigint);
SELECT create_distributed_table('discovered_by_pos', 'pos');
CREATE TABLE frontier_local (pos bigint NOT NULL, url text NOT NULL, sig bigint);
CREATE TABLE discovered_local (pos bigint NOT NULL, url text NOT NULL);
});

my @refused = (
	[
		q{sieve_flush('seen_ref', 'discovered_e', 'frontier_e')},
		'sieve_flush does not support seen relation "seen_ref": it is a reference table'
	],
	[
		q{sieve_flush('seen_citus_local', 'discovered_e', 'frontier_e')},
		'sieve_flush does not support seen relation "seen_citus_local": it is a Citus table without a distribution column (a Citus local or single-shard table)'
	],
	[
		q{sieve_flush('seen_local', 'discovered_e', 'frontier_e')},
		'sieve_flush does not support seen relation "seen_local": it is a local table, and the others are Citus tables'
	],
	[
		q{sieve_flush('seen_c', 'discovered_e', 'frontier_local')},
		'sieve_flush does not support frontier relation "frontier_local": it is a local table, and the others are Citus tables'
	],
	[
		q{sieve_flush('seen_c', 'discovered_apart', 'frontier_e')},
		'sieve_flush does not support discovered relation "discovered_apart": it is not colocated with seen relation "seen_c"'
	],
	[
		q{sieve_flush('seen_c', 'discovered_by_pos', 'frontier_e')},
		'sieve_flush does not support discovered relation "discovered_by_pos": it is distributed by column "pos", not "sig"'
	],
	[
		q{sieve_flush_shards('seen_ref', 'discovered_e', 'frontier_e')},
		'sieve_flush_shards does not support seen relation "seen_ref": it is a reference table'
	],
	[
		q{sieve_flush_shards('seen_local', 'discovered_local', 'frontier_local')},
		'sieve_flush_shards needs Citus tables, and seen relation "seen_local", discovered relation "discovered_local" and frontier relation "frontier_local" are local tables'
	],);
foreach my $case (@refused)
{
	my ($call, $message) = @$case;
	my ($ret, $out, $err) = $coordinator->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $call");
	like($err, qr/ERROR:  0A000: \Q$message\E/, "$call: $message");
	like(
		$err,
		qr/HINT:  .*(hash-distributed by their column sig and colocated|sieve_flush\(seen, discovered, frontier\))/,
		"$call: the hint gives the supported layout");
}
is( $coordinator->safe_psql(
		'postgres',
		q{SELECT (SELECT count(*) FROM discovered_e) || ' ' || (SELECT count(*) FROM frontier_e)}
	),
	'3 0',
	'the refused flushes changed nothing (3 rows still in discovered, none in the frontier)'
);

#
# A seen whose shards lack the unique index of its shell (created with DDL
# propagation off), so that seen holds every signature twice: asking seen
# which signatures of a batch of 10,000 it has got 20,000 rows back, which
# sbf copied into room for 10,000 (the backend crashed).  Now the flush
# appends exactly the URLs that are not in seen.
#
$coordinator->safe_psql(
	'postgres', q{
SET citus.shard_count = 8;
CREATE TABLE seen_dup (sig bigint NOT NULL);
CREATE TABLE discovered_dup (pos bigint NOT NULL, url text NOT NULL, sig bigint NOT NULL);
CREATE TABLE frontier_dup (pos bigint NOT NULL, url text NOT NULL, sig bigint);
SELECT create_distributed_table('seen_dup', 'sig', colocate_with => 'none');
SELECT create_distributed_table('discovered_dup', 'sig', colocate_with => 'seen_dup');
SELECT create_distributed_table('frontier_dup', 'sig', colocate_with => 'seen_dup');
SET citus.enable_ddl_propagation = off;
CREATE UNIQUE INDEX seen_dup_sig ON seen_dup (sig);
RESET citus.enable_ddl_propagation;
INSERT INTO seen_dup SELECT url_signature('https://dup.invalid/' || g)
FROM generate_series(1, 12000) g, generate_series(1, 2);
INSERT INTO discovered_dup SELECT g, 'https://dup.invalid/' || g, url_signature('https://dup.invalid/' || g)
FROM generate_series(1, 13000) g;
});
is( $coordinator->safe_psql('postgres',
		q{SELECT sieve_flush('seen_dup', 'discovered_dup', 'frontier_dup')})
	  . ' '
	  . $coordinator->safe_psql(
		'postgres',
		q{SELECT count(*) FROM frontier_dup WHERE pos > 12000 AND url = 'https://dup.invalid/' || pos}
	  ),
	'1000 1000',
	'seen with every signature twice (its shards have no unique index): the flush appends the 1000 URLs of 13000 that are not in seen'
);

#
# sieve_flush_shards names the shards schema-qualified, those in public
# too: a worker resolves them on a connection of its own, whose search_path
# starts with "$user".  A table named like a shard of the frontier, in a
# schema named after the user on each worker, got the URLs of that shard
# group (sbf sent the bare names shard_name gives for public).
#
$coordinator->safe_psql(
	'postgres', q{
SET citus.shard_count = 8;
CREATE TABLE seen_sp (sig bigint PRIMARY KEY);
CREATE TABLE discovered_sp (pos bigint NOT NULL, url text NOT NULL, sig bigint NOT NULL);
CREATE TABLE frontier_sp (pos bigint NOT NULL, url text NOT NULL, sig bigint);
SELECT create_distributed_table('seen_sp', 'sig', colocate_with => 'none');
SELECT create_distributed_table('discovered_sp', 'sig', colocate_with => 'seen_sp');
SELECT create_distributed_table('frontier_sp', 'sig', colocate_with => 'seen_sp');
INSERT INTO discovered_sp SELECT g, 'https://path.invalid/' || g, url_signature('https://path.invalid/' || g)
FROM generate_series(1, 1000) g;
});
my %decoys;
foreach my $worker (@workers)
{
	$decoys{ $worker->port } = [
		split(
			/\n/,
			$coordinator->safe_psql(
				'postgres', qq{
SELECT format('%I.%I', current_user, shard_name('frontier_sp', s.shardid))
FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
WHERE s.logicalrelid = 'frontier_sp'::regclass AND n.nodeport = @{[ $worker->port ]}}))
	];
	$worker->safe_psql('postgres',
		join(' ',
			'SET citus.enable_ddl_propagation = off;',
			'CREATE SCHEMA AUTHORIZATION CURRENT_USER;',
			map { "CREATE TABLE $_ (pos bigint, url text, sig bigint);" }
			  @{ $decoys{ $worker->port } }));
}
is( $coordinator->safe_psql('postgres',
		q{SELECT sieve_flush_shards('seen_sp', 'discovered_sp', 'frontier_sp')})
	  . ' '
	  . $coordinator->safe_psql('postgres', 'SELECT count(*) FROM frontier_sp'),
	'1000 1000',
	"sieve_flush_shards beside tables named like the frontier's shards in a schema named after the user: all 1000 URLs reach the frontier"
);
is( join(
		' ',
		map {
			my $worker = $_;
			$worker->safe_psql('postgres',
				'SELECT 0'
				  . join('', map { " + (SELECT count(*) FROM $_)" }
					  @{ $decoys{ $worker->port } }))
		} @workers),
	'0 0',
	"the tables named like the frontier's shards got no rows");
$_->safe_psql('postgres',
	'SET citus.enable_ddl_propagation = off; DROP SCHEMA "' . $_->safe_psql('postgres', 'SELECT current_user') . '" CASCADE')
  foreach @workers;

#
# discovered.sig chooses a row's shard group; discovered_sp has no CHECK
# (sig = url_signature(url)), so a row with another sig lands in a shard
# group where its URL's signature does not belong.  Both flushes refuse it
# (23514, naming the row) and change nothing, rather than put the signature
# in a shard of seen where no later flush looks for it.
#
$coordinator->safe_psql('postgres',
	q{INSERT INTO discovered_sp VALUES (2001, 'https://path.invalid/wrong', 42)});
foreach my $flush ('sieve_flush', 'sieve_flush_shards')
{
	my ($ret, $stdout, $stderr) = $coordinator->psql('postgres',
		"SELECT $flush('seen_sp', 'discovered_sp', 'frontier_sp')");
	like($stderr,
		qr/discovered relation "discovered_sp\w*" has a row whose sig is not the signature of its url/,
		"$flush refuses a discovered row whose sig is not its URL's signature");
}
is( $coordinator->safe_psql('postgres',
		q{SELECT (SELECT count(*) FROM discovered_sp) || ' ' || (SELECT count(*) FROM frontier_sp) || ' ' || (SELECT count(*) FROM seen_sp)}),
	'1 1000 1000',
	'after the refused flushes the wrong row is still in discovered, and frontier and seen are as they were');

#
# Concurrency: a batch of 120,000 rows (one in three a seed, so already in
# seen), flushed on one server, and on the cluster from both workers at once
#
my $batch5 = q{SELECT 1000000 + g,
	CASE WHEN g % 3 = 0 THEN 'https://seed.invalid/' || g
		 ELSE 'https://example.org/crawl/' || (g % 50000) END
FROM generate_series(1, 120000) g};
$single->safe_psql('postgres', "INSERT INTO discovered $batch5");
my ($n_single, $s) = timed($single,
	q{SELECT sieve_flush('seen', 'discovered', 'frontier')});
$coordinator->safe_psql(
	'postgres', qq{
INSERT INTO incoming $batch5;
@{[ to_discovered('discovered_c') ]};
@{[ to_discovered('discovered_p') ]};
TRUNCATE incoming;
});

# A psql session in the background that waits until $at, then runs $sql,
# which returns one value; finish_psql returns its result, the value and
# the times it started and ended
sub start_psql
{
	my ($node, $at, $sql) = @_;
	my %session = (out => '', err => '');
	$session{run} = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'),
			'-c', "SELECT pg_sleep_until('$at')",
			'-c', 'SELECT clock_timestamp()',
			'-c', $sql, '-c', 'SELECT clock_timestamp()'
		],
		'>', \$session{out}, '2>', \$session{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return \%session;
}

sub finish_psql
{
	my ($session) = @_;
	$session->{run}->finish;
	my @lines = split(/\n/, $session->{out});
	return ($session->{run}->result, $session->{err}, @lines[ -3 .. -1 ]);
}

# The shard groups of each worker, flushed by hand on that worker (what
# sieve_flush_shards sends each worker), both workers at once
my %commands = map { split(/\|/, $_, 2) } split(
	/\n/,
	$coordinator->safe_psql(
		'postgres', q{
SELECT n.nodeport,
	   'SELECT sum(sieve_flush(s::regclass, d::regclass, f::regclass)), clock_timestamp() FROM (VALUES '
	   || string_agg(format('(%L, %L, %L)', shard_name('seen_p', s.shardid, false),
							shard_name('discovered_p', d.shardid, false),
							shard_name('frontier_p', f.shardid, false)),
					 ', ' ORDER BY s.shardminvalue::int)
	   || ') AS g (s, d, f)'
FROM pg_dist_shard s
JOIN pg_dist_shard d ON d.logicalrelid = 'discovered_p'::regclass AND d.shardminvalue = s.shardminvalue
JOIN pg_dist_shard f ON f.logicalrelid = 'frontier_p'::regclass AND f.shardminvalue = s.shardminvalue
JOIN pg_dist_placement p ON p.shardid = s.shardid
JOIN pg_dist_node n ON n.groupid = p.groupid
WHERE s.logicalrelid = 'seen_p'::regclass
GROUP BY n.nodeport
}));
is(scalar(keys %commands), 2, 'the shard groups of seen_p are on 2 workers');

# both start at the same moment, two seconds from now
my $at = $coordinator->safe_psql('postgres', q{SELECT now() + interval '2 s'});
my $start = time;
my @sessions =
  map { start_psql($_, $at, $commands{ $_->port }) } @workers;
my ($sum, $ok, @spans) = (0, 0);
foreach my $session (@sessions)
{
	my ($ret, $err, $from, $n, $to) = finish_psql($session);
	$ok++ if $ret == 0;
	diag($err) if $ret != 0;
	$sum += $n // 0;
	push @spans, [ $from, $to ];
}
my $hand = time - $start - 2;
my $overlap = $coordinator->safe_psql('postgres',
	"SELECT tstzrange('$spans[0][0]', '$spans[0][1]') && tstzrange('$spans[1][0]', '$spans[1][1]')"
);
is( "$ok $sum",
	"2 $n_single",
	sprintf(
		'shard groups flushed on both workers at once: both finish, %d URLs appended as on one server (%d; %.2f s against %.2f s there; the flushes overlapped: %s)',
		$sum, $n_single, $hand, $s, $overlap));

# Flushes of the whole started on both workers at once, through their
# shells: they take turns on seen's lock on every node, instead of
# deadlocking on the rows of discovered's shards
$at = $coordinator->safe_psql('postgres', q{SELECT now() + interval '2 s'});
$start = time;
@sessions = map {
	start_psql($_, $at,
		q{SELECT sieve_flush('seen_c', 'discovered_c', 'frontier_c')}
	  )
} @workers;
($sum, $ok) = (0, 0);
my @counts;
foreach my $session (@sessions)
{
	my ($ret, $err, undef, $n) = finish_psql($session);
	$ok++ if $ret == 0;
	diag($err) if $ret != 0;
	$sum += $n // 0;
	push @counts, $n // 'error';
}
my $whole = time - $start - 2;
is( "$ok $sum",
	"2 $n_single",
	sprintf(
		'flushes of the whole from both workers at once: both finish (no deadlock), appending %s (%.2f s in all)',
		join(' and ', @counts), $whole));

#
# The end: the same frontier, seen and discovered everywhere
#
my $frontier_digest = q{SELECT count(*) || ' ' || md5(string_agg(pos || ' ' || url || ' ' || sig, E'\n' ORDER BY pos)) FROM };
my $seen_digest = q{SELECT count(*) || ' ' || md5(string_agg(sig::text, E'\n' ORDER BY sig)) FROM };
my $want_frontier = $single->safe_psql('postgres', $frontier_digest . 'frontier');
my $want_seen = $single->safe_psql('postgres', $seen_digest . 'seen');
my ($frontier_rows) = split(/ /, $want_frontier);
my ($seen_rows) = split(/ /, $want_seen);
foreach my $set ('c', 'p')
{
	my $how = $set eq 'c' ? 'the coordinator' : 'shard group';
	is($coordinator->safe_psql('postgres', $frontier_digest . "frontier_$set"),
		$want_frontier,
		"flushed by $how: the frontier has the single-server (pos, url, sig) rows ($frontier_rows)"
	);
	is($coordinator->safe_psql('postgres', $seen_digest . "seen_$set"),
		$want_seen,
		"flushed by $how: seen has the single-server signatures ($seen_rows)");
	is( $coordinator->safe_psql('postgres',
			"SELECT count(*) FROM discovered_$set"),
		'0',
		"flushed by $how: discovered is empty");
}
is($single->safe_psql('postgres', 'SELECT count(*) FROM discovered'),
	'0', 'one server: discovered is empty');
is( $single->safe_psql(
		'postgres', 'SELECT count(*) FROM frontier WHERE sig <> url_signature(url)'),
	'0',
	'one server: frontier.sig is the signature of every URL');

SbfTest::no_crash($_) foreach ($single, $coordinator, @workers);
done_testing();
