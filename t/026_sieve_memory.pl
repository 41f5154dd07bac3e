
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# sieve_flush's memory follows work_mem, not the length of the URLs: the
# batches it appends to the frontier are bounded by bytes as well as by
# rows, and URLs stored compressed stay compressed through the flush.  When
# batches counted rows only, 10,000 URLs of 120 kB made one batch of 1.2 GB,
# which no array can hold (every retry failed the same way), and 50 kB URLs
# at work_mem = 64kB peaked at hundreds of megabytes.
#
# The peak is the backend's own, read by the backend that flushes from
# /proc/self/status: its peak resident set (VmHWM) after the flush less its
# resident set (VmRSS) before.  That counts the shared buffers and the code
# the flush touches too, so the cluster has only 1 MB of shared buffers and
# the backend has flushed a few URLs before.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'needs /proc/self/status' unless -r '/proc/self/status';

my $node = SbfTest::new_node('sieve_memory', 'shared_buffers = 1MB');

$node->safe_psql(
	'postgres', q{
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE warm_seen (LIKE seen INCLUDING ALL);
CREATE TABLE warm_discovered (LIKE discovered);
CREATE TABLE warm_frontier (LIKE frontier);
});

# The backend's peak resident memory so far (VmHWM) and its resident memory
# now (VmRSS), in kB
sub status_kb
{
	my ($field) = @_;
	return "(regexp_match(pg_read_file('/proc/self/status'), '$field:\\s*(\\d+)'))[1]::bigint";
}

# Flushes at the given work_mem in a new backend that has first flushed a
# few URLs of the same length (so that the code and the catalogs the flush
# uses are loaded already).  Returns psql's exit code, the number of URLs
# appended, the flush's peak (its VmHWM after the flush less its VmRSS
# before, in kB: an upper bound of what the flush added at its peak) and
# psql's error output.
sub flush_peak
{
	my ($work_mem, $url_length) = @_;
	my ($hwm, $rss) = (status_kb('VmHWM'), status_kb('VmRSS'));
	my ($ret, $out, $err) = $node->psql(
		'postgres', qq{
SET work_mem = '$work_mem';
INSERT INTO warm_discovered
	SELECT -i, 'https://warm/' || i || repeat('w', $url_length) FROM generate_series(1, 10) i;
SELECT sieve_flush('warm_seen', 'warm_discovered', 'warm_frontier');
SELECT $rss;
SELECT sieve_flush('seen', 'discovered', 'frontier');
SELECT $hwm;
});
	my ($warm, $before, $appended, $after) = split(/\n/, $out);
	return ($ret, $appended // -1,
		defined $after ? $after - $before : -1, $err);
}

# 10,000 URLs of 120 kB (1.2 GB of text, which compresses) at work_mem = 4MB
$node->safe_psql('postgres',
	"INSERT INTO discovered SELECT i, 'https://x/' || i || repeat('y', 120000) FROM generate_series(1, 10000) i"
);
my ($ret, $appended, $peak, $err) = flush_peak('4MB', 120000);
is($ret, 0, "the flush of 10,000 URLs of 120 kB succeeds at work_mem = 4MB")
  or diag($err);
is($appended, 10000, "it appends the 10,000 URLs ($appended)");
# work_mem, a few copies of one URL (the sort's, the batch's, the
# toaster's) and 4 MB for the rest (the shared buffers and code it touches)
my $bound = 4096 + 8 * 120 + 4096;
ok($peak >= 0 && $peak <= $bound,
	"the flush raises the backend's peak by $peak kB, within $bound kB");
my $intact = $node->safe_psql('postgres',
	"SELECT count(*) FROM frontier WHERE url = 'https://x/' || pos || repeat('y', 120000)"
);
is($intact, 10000, "the frontier holds every URL whole ($intact)");

# 50 kB URLs at the least work_mem (a batch could hold 10,000 of them)
$node->safe_psql(
	'postgres', q{
TRUNCATE seen, discovered, frontier;
INSERT INTO discovered SELECT i, 'https://x/' || i || repeat('z', 50000) FROM generate_series(1, 4000) i;
});
($ret, $appended, $peak, $err) = flush_peak('64kB', 50000);
is($ret, 0, "the flush of 4,000 URLs of 50 kB succeeds at work_mem = 64kB")
  or diag($err);
is($appended, 4000, "it appends the 4,000 URLs ($appended)");
$bound = 64 + 8 * 50 + 4096;
ok($peak >= 0 && $peak <= $bound,
	"the flush raises the backend's peak by $peak kB, within $bound kB");

# 2,000 URLs of 50 kB that do not compress, stored as they are: the bound
# on a batch's bytes holds the memory alone
$node->safe_psql(
	'postgres', q{
TRUNCATE seen, discovered, frontier;
ALTER TABLE discovered ALTER url SET STORAGE EXTERNAL;
INSERT INTO discovered
	SELECT i, 'https://x/' || i || '/' ||
		(SELECT string_agg(md5(i || '.' || j), '') FROM generate_series(1, 1563) j)
	FROM generate_series(1, 2000) i;
});
($ret, $appended, $peak, $err) = flush_peak('64kB', 50000);
is($ret, 0,
	"the flush of 2,000 incompressible URLs of 50 kB succeeds at work_mem = 64kB"
) or diag($err);
is($appended, 2000, "it appends the 2,000 URLs ($appended)");
ok($peak >= 0 && $peak <= $bound,
	"the flush raises the backend's peak by $peak kB, within $bound kB");

SbfTest::no_crash($node);

done_testing();
