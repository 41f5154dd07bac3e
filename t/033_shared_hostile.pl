
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Shared filters against a hostile or careless world: bytes of their files
# overwritten while the server is down (metapage, data page headers, whole
# pages, a file cut short or gone), restarts in the middle of prepared
# transactions, a restore that is only a page 0, and a hot standby asked
# to do what only a primary can.  Every call, SELECT, COPY, VACUUM FULL
# and pg_dump on a corrupted filter is an ERROR or a right answer, never a
# crash, a hang, or a value silently lost.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The pg_dump of each damaged filter needs pg_dump, the hot standby at the
# end pg_basebackup: where they are missing (PostgreSQL 17 from npm, see
# docs/upgrading.md) only what needs them is skipped
my $no_dump = SbfTest::missing_programs('pg_dump');

# the WAL writer is slowed down so that only a commit's own flush makes a
# change durable before an immediate shutdown
my $node = SbfTest::new_node('hostile', 'max_prepared_transactions = 5',
	'autovacuum = off', "wal_writer_delay = '10s'", 'wal_level = replica',
	'max_wal_senders = 4');
# pages are damaged on disk below: sbf's checks must catch them, not the
# checksums
SbfTest::without_checksums($node);

# The result of one statement: "ok: <output>" or "ERROR: <message>", or
# "timed out"; never dies
sub run_sql
{
	my ($sql) = @_;
	my ($stdout, $stderr, $timed_out);
	my $ret = $node->psql(
		'postgres', $sql,
		stdout => \$stdout,
		stderr => \$stderr,
		timeout => 180,
		timed_out => \$timed_out);
	return 'timed out' if $timed_out;
	return "ok: $stdout" if $ret == 0;
	my ($message) = $stderr =~ /(ERROR:.*)/;
	return $message // "failed ($ret): $stderr";
}

# pg_dump of one table: [exit status, its stderr]
sub dump_table
{
	my ($table) = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_dump', '-d', $node->connstr('postgres'), '-t', $table ],
		'>', \$stdout, '2>', \$stderr,
		IPC::Run::timeout(180));
	return [ $?, $stderr ];
}

# Overwrite bytes of block $block of the main fork of $table (server down)
sub overwrite
{
	my ($path, $block, $offset, $bytes) = @_;
	open(my $fh, '+<', $path) or die "cannot open $path: $!";
	binmode $fh;
	sysseek($fh, $block * 8192 + $offset, 0) or die "seek: $!";
	syswrite($fh, $bytes) == length($bytes) or die "write: $!";
	close($fh);
	return;
}

sub file_of
{
	my ($table) = @_;
	return $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$table')");
}

# Every value 'v1' .. 'v3000' tested one by one, errors caught: how many
# are reported present, absent, and how many calls were refused
sub tally_of
{
	my ($filter) = @_;
	my ($stdout, $stderr);
	$node->psql('postgres', "SET client_min_messages = warning; " . tally_sql($filter),
		stdout => \$stdout, stderr => \$stderr);
	my ($present, $absent, $refused) =
	  $stderr =~ /present (\d+) absent (\d+) refused (\d+)/
	  or return (-1, -1, -1);
	return ($present, $absent, $refused);
}

sub tally_sql
{
	my ($filter) = @_;
	return qq{
		DO \$\$
		DECLARE
			present int := 0;
			absent int := 0;
			refused int := 0;
		BEGIN
			FOR g IN 1 .. 3000 LOOP
				BEGIN
					IF shared_contains('$filter', 'v' || g) THEN
						present := present + 1;
					ELSE
						absent := absent + 1;
					END IF;
				EXCEPTION WHEN data_corrupted OR io_error OR undefined_file THEN
					refused := refused + 1;
				END;
			END LOOP;
			RAISE WARNING 'present % absent % refused %', present, absent, refused;
		END \$\$};
}

#
# A restore of page 0 alone is durable once committed
#
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('source', 1000000, 0.01);
	SELECT shared_test_and_add('source', ARRAY(SELECT 'v' || g FROM generate_series(1, 3000) g));
	CREATE TABLE meta_only (page bigint, data bytea) USING sbf_filter;
});
$node->safe_psql('postgres', 'INSERT INTO meta_only SELECT * FROM source WHERE page = 0');
$node->stop('immediate');
$node->start;
is(run_sql('SELECT count(*) FROM meta_only'), 'ok: 1',
	'page 0 restored alone by a committed INSERT is there after an immediate shutdown');
is(run_sql(q{
		INSERT INTO meta_only SELECT * FROM source WHERE page > 0;
		SELECT count(*) FROM generate_series(1, 3000) g WHERE NOT shared_contains('meta_only', 'v' || g)}),
	'ok: 0', 'the data pages restored after it: no false negative among 3000 values');

# A crash in the middle of a restore, before its page 0 reached the WAL on
# disk: the relation was extended, its block 0 is zeros.  It has no
# metapage then, as an empty one: its rows are none, and the restore can
# be run again.
$node->safe_psql('postgres',
	'CREATE TABLE interrupted (page bigint, data bytea) USING sbf_filter');
my $session = $node->background_psql('postgres');
my $flushed = $session->query_safe(q{
	BEGIN;
	INSERT INTO interrupted SELECT * FROM source WHERE page = 0;
	SELECT pg_current_wal_flush_lsn() >= pg_current_wal_insert_lsn();
});
$node->stop('immediate');
eval { $session->quit; };
$node->start;
SKIP:
{
	skip "the WAL of page 0 was flushed before the crash ($flushed)", 3
	  if $flushed ne 'f';
	like(run_sql(q{SELECT shared_contains('interrupted', 'v1')}),
		qr/shared filter "interrupted" has no metapage/,
		'after a crash in the middle of restoring page 0: no metapage');
	is(run_sql('SELECT count(*) FROM interrupted'), 'ok: 0',
		'it has no rows, so the database can be dumped');
	is(run_sql(q{
			INSERT INTO interrupted SELECT * FROM source ORDER BY page;
			SELECT count(*) FROM generate_series(1, 3000) g WHERE NOT shared_contains('interrupted', 'v' || g)}),
		'ok: 0', 'the restore runs again: no false negative');
}

#
# Prepared transactions across a restart
#
$node->safe_psql('postgres', q{
	SELECT shared_bloom_create('prep', 20000, 0.01);
	CREATE TABLE prep_restored (page bigint, data bytea) USING sbf_filter;
	BEGIN;
	SELECT shared_test_and_add('prep', ARRAY['prepared 1', 'prepared 2']);
	PREPARE TRANSACTION 'adds';
	BEGIN;
	SELECT shared_bloom_create('prep_made', 100, 0.01);
	SELECT shared_test_and_add('prep_made', 'x');
	PREPARE TRANSACTION 'makes';
	BEGIN;
	INSERT INTO prep_restored SELECT * FROM source ORDER BY page;
	PREPARE TRANSACTION 'restores';
});
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres',
		"SELECT shared_contains('prep', 'prepared 1') OR shared_contains('prep', 'prepared 2')"),
	'f', 'values added by a prepared transaction stay pending after an immediate shutdown');
like(run_sql("SET lock_timeout = '100ms'; DROP TABLE prep"),
	qr/lock timeout/, 'the prepared transaction still holds its lock on the filter: DROP waits');
is($node->safe_psql('postgres', q{
		SET lock_timeout = '5s';
		SELECT shared_test_and_add('prep', 'while prepared')}),
	'f', 'other sessions go on adding to a filter a prepared transaction added to');
$node->safe_psql('postgres', "COMMIT PREPARED 'adds'");
is($node->safe_psql('postgres',
		"SELECT shared_contains('prep', 'prepared 1') AND shared_contains('prep', 'prepared 2')"),
	't', 'and count once it is committed');
is(run_sql('DROP TABLE prep'), 'ok: ', 'after COMMIT PREPARED the filter can be dropped');
$node->safe_psql('postgres', "ROLLBACK PREPARED 'makes'");
is($node->safe_psql('postgres', "SELECT to_regclass('prep_made') IS NULL"),
	't', 'a filter made by a prepared transaction rolled back after a restart is gone');
$node->safe_psql('postgres', "COMMIT PREPARED 'restores'");
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(1, 3000) g WHERE NOT shared_contains('prep_restored', 'v' || g)}),
	'0', 'a restore in a prepared transaction committed after a restart: no false negative');

#
# Corruption: bytes overwritten while the server is down
#
# Each filter is a copy of "source" (173 data pages, 'v1' .. 'v3000' added);
# the stable one has its own values
my @filters = qw(meta_magic meta_special data_special data_lower
  data_garbage data_header_zeroed cut_short gone);
for my $f (@filters)
{
	next if $f eq 'data_special';
	$node->safe_psql('postgres',
		"CREATE TABLE $f USING sbf_filter AS SELECT * FROM source ORDER BY page");
}
$node->safe_psql('postgres', q{
	SELECT shared_stablebloom_create('data_special', 96000, 0.05, 3, max => 3);
	SELECT shared_test_and_add('data_special', ARRAY(SELECT 'v' || g FROM generate_series(1, 3000) g));
	SELECT count(*) FROM data_special WHERE page > 0;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM data_special WHERE page > 0'),
	'3', 'the stable filter has 3 data pages written');

my %file = map { $_ => file_of($_) } @filters;
# how many of 'v1' .. 'v3000' each filter misses before: none for bloom,
# what the stable one has forgotten already
my %absent_before = map { $_ => (tally_of($_))[1] } @filters;
is($absent_before{data_lower}, 0, 'before the corruption, no value missing');
$node->stop('fast');

# the page header: pd_lower at 12, pd_upper at 14, pd_special at 16; the
# metapage's fields start at 24 (magic first)
overwrite($file{meta_magic}, 0, 24, "XXXX");
overwrite($file{meta_special}, 0, 16, pack('v', 8192));
overwrite($file{data_special}, 1, 16, pack('v', 8192));
overwrite($file{data_lower}, 1, 12, pack('v', 24));
overwrite($file{data_garbage}, 2, 0, join('', map { chr(($_ * 37 + 11) % 256) } 0 .. 8191));
overwrite($file{data_header_zeroed}, 1, 0, "\0" x 24);
truncate($file{cut_short}, 8192) or die "truncate: $!";
unlink($file{gone}) or die "unlink: $!";

$node->start;

# without pg_dump the checks below hold for every other call, and one
# skipped test says what they did not check
SKIP:
{
	skip "the pg_dump of each damaged filter: $no_dump", 1 if $no_dump;
}
my %stable = (data_special => 1);
for my $f (@filters)
{
	my $snapshot = $stable{$f} ? 'shared_stablebloom_snapshot' : 'shared_bloom_snapshot';
	my %result;

	# adding first: a write into a page with a bad header must not happen
	# (one value is not added to the stable filter: it would decrement
	# cells of another page, and so may make it forget a value)
	$result{add_one} = run_sql("SELECT shared_test_and_add('$f', 'v1')")
	  unless $stable{$f};
	$result{add_batch} = run_sql(
		"SELECT shared_test_and_add('$f', ARRAY(SELECT 'n' || g FROM generate_series(1, 3000) g)) IS NOT NULL");
	$result{contains} = run_sql("SELECT shared_contains('$f', 'v2')");
	$result{info} = run_sql("SELECT shared_info('$f', true) IS NOT NULL");
	$result{snapshot} = run_sql("SELECT $snapshot('$f') IS NOT NULL");
	$result{select} = run_sql("SELECT count(*), sum(length(data)) FROM $f");
	$result{ctid} = run_sql("SELECT count(*) FROM $f WHERE ctid = ANY (ARRAY['(1,1)', '(2,1)']::tid[])");
	$result{copy} = run_sql("COPY $f TO '/dev/null'");
	unless ($no_dump)
	{
		my $dump = dump_table($f);
		$result{pg_dump} = $dump->[0] == 0 ? 'ok' : ($dump->[1] =~ /(ERROR:.*)/)[0] // "failed: $dump->[1]";
	}
	my ($present, $absent, $refused) = tally_of($f);
	$result{vacuum_full} = run_sql("VACUUM FULL $f");
	# ANALYZE takes no row: a database-wide ANALYZE is not stopped by a
	# damaged filter
	my $analyze = run_sql("ANALYZE $f");
	if ($f eq 'gone')
	{
		like($analyze, qr/could not open file/, "$f: ANALYZE is an ERROR");
	}
	else
	{
		is($analyze, 'ok: ', "$f: ANALYZE works");
	}

	my @timed_out = grep { $result{$_} eq 'timed out' } sort keys %result;
	is_deeply(\@timed_out, [], "$f: no call hangs");
	note("$f: $_ => $result{$_}") for sort keys %result;
	note("$f: v1 .. v3000 present $present, absent $absent, refused $refused");

	if ($f eq 'meta_magic')
	{
		my @wrong = grep { $result{$_} !~ /invalid metapage in shared filter "meta_magic"/ }
		  sort keys %result;
		is_deeply(\@wrong, [], 'metapage with a wrong magic: every call, SELECT, COPY, pg_dump, VACUUM FULL is an ERROR naming it');
	}
	elsif ($f eq 'meta_special')
	{
		my @wrong = grep { $result{$_} !~ /page 0 of shared filter "meta_special" is corrupted/ }
		  sort keys %result;
		is_deeply(\@wrong, [], 'metapage with a bad special space: every call is an ERROR naming page 0');
	}
	elsif ($f eq 'data_special' || $f eq 'data_lower' || $f eq 'data_header_zeroed'
		|| $f eq 'data_garbage')
	{
		my $page = $f eq 'data_garbage' ? 2 : 1;
		my $error = $f =~ /special|lower/
		  ? qr/page $page of shared filter "$f" is corrupted/
		  : qr/invalid page in block $page of relation/;
		my @wrong = grep { $result{$_} !~ $error }
		  qw(add_batch info snapshot select copy vacuum_full), ($no_dump ? () : 'pg_dump');
		is_deeply(\@wrong, [], "$f: what reads page $page is an ERROR ($error)");
		ok($absent <= $absent_before{$f},
			"$f: no value silently lost: $present present, $refused refused on the bad page, $absent absent (as many as $absent_before{$f} before)");
		ok($refused > 0 && $present > 0,
			"$f: values of the bad page refused ($refused), of the others found ($present)");
	}
	elsif ($f eq 'cut_short')
	{
		# pages past the end read as zeros: what they held is lost, which
		# no check can see, but every call works and adding fills them again
		my @failed = grep { $result{$_} !~ /^ok/ } sort keys %result;
		is_deeply(\@failed, [], 'a file cut to its metapage: every call works');
		is($refused, 0, "cut_short: 3000 answers without error ($present present, after re-adding v1)");
	}
	elsif ($f eq 'gone')
	{
		my @wrong = grep { $result{$_} !~ /could not open file/ } sort keys %result;
		is_deeply(\@wrong, [], 'a missing file: every call is an ERROR (could not open file)');
	}
}

# nothing written into a neighbour of the corrupted pages: the catalog and
# the other filters are intact
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(1, 3000) g WHERE NOT shared_contains('source', 'v' || g)}),
	'0', 'the intact filter beside them lost nothing');
like(run_sql('SELECT count(*) FROM pg_class'), qr/^ok: \d+/, 'the catalog reads');
is(run_sql('CHECKPOINT'), 'ok: ', 'a checkpoint writes every dirty page');

#
# The largest filter: 2^32 - 3 data pages (32 TB), sparse
#
is(run_sql(q{SELECT shared_stablebloom_create('largest', 64000 * 4294967293::bigint, 0.5, 3)}),
	'ok: largest', 'a filter of 2^32 - 3 data pages (32 TB) is made');
is(run_sql(q{SELECT pg_relation_size('largest') / 8192 - 1}), 'ok: 4294967293',
	'its relation has the metapage and 2^32 - 3 data pages');
is(run_sql(q{SELECT shared_test_and_add('largest', ARRAY['a', 'b', 'a'])::text || shared_contains('largest', 'b')}),
	'ok: {f,f,t}true', 'it adds and tests');
like(run_sql(q{SELECT shared_stablebloom_snapshot('largest')}),
	qr/shared filter "largest" is too large for a stablebloom value/,
	'its snapshot is refused: it does not fit a value');
like(run_sql(q{SET statement_timeout = '2s'; SELECT shared_info('largest', true)}),
	qr/canceling statement due to statement timeout/,
	'shared_info, which reads every page, can be cancelled');
is(run_sql('DROP TABLE largest'), 'ok: ', 'and it is dropped');

#
# A hot standby: testing and reading the rows work, changing is refused
# (pg_basebackup makes it: without it, the rest of the file is skipped)
#
SbfTest::end_unless_programs(['pg_basebackup'], $node);
$node->safe_psql('postgres', q{
	DROP TABLE meta_magic, meta_special, data_special, data_lower, data_garbage,
		data_header_zeroed, cut_short, gone;
	SELECT shared_bloom_create('fast', 1000, 0.01, unlogged => true);
	CREATE TABLE empty_copy (page bigint, data bytea) USING sbf_filter;
});
$node->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('hostile_standby');
$standby->init_from_backup($node, 'backup', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);

sub on_standby
{
	my ($sql) = @_;
	my ($stdout, $stderr);
	my $ret = $standby->psql('postgres', $sql, stdout => \$stdout, stderr => \$stderr);
	return "ok: $stdout" if $ret == 0;
	my ($message) = $stderr =~ /(ERROR:.*)/;
	return $message // "failed ($ret): $stderr";
}

is(on_standby(q{SELECT count(*) FROM generate_series(1, 3000) g WHERE NOT shared_contains('source', 'v' || g)}),
	'ok: 0', 'standby: no false negative');
like(on_standby(q{SELECT count(*), sum(length(data)) FROM source}), qr/^ok: 174\|1388040$/,
	'standby: the rows are readable (page 0 and 173 data pages)');
like(on_standby(q{SELECT shared_info('source', true) ->> 'pages_written'}), qr/^ok: 173$/,
	'standby: shared_info reads every page');
like(on_standby(q{COPY source TO '/dev/null'}), qr/^ok/, 'standby: COPY TO works');
like(on_standby(q{INSERT INTO empty_copy SELECT * FROM source WHERE page = 0}),
	qr/cannot execute INSERT in a read-only transaction/, 'standby: inserting rows is refused');
like(on_standby(q{SELECT shared_bloom_create('on_standby', 10, 0.1)}),
	qr/read-only transaction/, 'standby: creating a filter is refused');
like(on_standby(q{SELECT shared_test_and_add('source', ARRAY['x'])}),
	qr/cannot execute shared_test_and_add\(\) in a read-only transaction/,
	'standby: adding a batch is refused');
like(on_standby(q{SELECT count(*) FROM fast}),
	qr/cannot access temporary or unlogged relations during recovery/,
	'standby: the rows of an unlogged filter are not there, and it says so');
like(on_standby(q{SELECT shared_info('fast')}),
	qr/cannot access temporary or unlogged relations during recovery/,
	'standby: shared_info of an unlogged filter is refused');
like(on_standby(q{SELECT shared_contains('meta_only', 'v1')}), qr/^ok: t$/,
	'standby: the filter restored from page 0 is there');

$standby->stop;
SbfTest::no_crash($standby);
SbfTest::no_crash($node);
done_testing();
