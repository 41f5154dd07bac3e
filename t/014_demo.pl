
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The main job (scripts/demo.sh) on a slice of its stream, run against this
# test's node: every row of its table agrees with counts made here
# independently (TP + FN = the true repeats, counted in Perl from the file;
# TP + FP = the rows the method flagged, counted from its marks), and the
# picture is a PNG.  The live crawl through a shared filter is checked for
# what two concurrent sessions must give: every row answered once, each URL
# answered "new" at most once, and so exactly as many "new" answers as
# distinct URLs, less the few that the filter's false positives hid.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX qw(ceil floor);

my $rows = 20000;
my $live_batch = 1000;
my $live_fpr = 0.01;
my $stream = SbfTest::data_file('doccrawl-pg-python.tsv.gz');
my $node = SbfTest::new_node('demo');
my $out = PostgreSQL::Test::Utils::tempdir;

# --database takes a libpq connection string: the node's
my $demo_log = '';
my $demo_ok = IPC::Run::run(
	[
		'bash', "$SbfTest::ROOT/scripts/demo.sh",
		'--database', $node->connstr('postgres'), '--rows', $rows, '--keep',
		'--out', $out, $stream
	],
	'>', \$demo_log, '2>&1');
unless (ok($demo_ok, "scripts/demo.sh --rows $rows ran"))
{
	my @lines = split(/\n/, $demo_log);
	diag(join("\n", @lines > 5 ? @lines[ -5 .. -1 ] : @lines));
	SbfTest::no_crash($node);
	done_testing();
	exit;
}

# the true repeats of the first ROWS lines, independently of PostgreSQL
my %seen;
my $repeats =
  grep { $seen{ $_->[1] }++ } SbfTest::stream_rows($stream, $rows);
my $distinct = keys %seen;

my $methods = 0;
my %result;
open(my $results, '<', "$out/results.tsv")
  or die "cannot read $out/results.tsv: $!";
while (my $line = <$results>)
{
	chomp $line;
	my ($method, $memory, $parameters, $tp, $fp, $fn, $flagged, $seconds) =
	  split(/\t/, $line);
	next if $method eq 'method';
	$methods++;
	$result{$method} = {
		memory => $memory,
		parameters => $parameters,
		fp => $fp,
		fn => $fn
	};
	my $marked = $node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE flagged) FROM sbf_demo.marks WHERE method = '$method'"
	);
	is($tp + $fn, $repeats,
		"$method: TP + FN = " . ($tp + $fn) . " = the $repeats true repeats");
	is($tp + $fp, $marked,
		"$method: TP + FP = " . ($tp + $fp) . " = the $marked rows it flagged");
	is($fn, 0, "$method: no repeat missed (FN = $fn)")
	  if $method =~ /^(exact|sieve_flush|bloom)/;
	is($fp, 0, "$method: exact (FP = $fp)")
	  if $method =~ /^(exact|sieve_flush)$/;
	if ($method =~ /^slidingbloom / && $parameters =~ /^window=([0-9]+) /)
	{
		# with refresh, no URL met within the window before is missed
		my $window = $1;
		my $missed = $node->safe_psql(
			'postgres', qq{
			SELECT count(*)
			FROM (SELECT pos, i - lag(i) OVER (PARTITION BY url ORDER BY pos) AS gap
				  FROM (SELECT pos, url, row_number() OVER (ORDER BY pos) AS i
						FROM sbf_demo.crawl) c) g
			JOIN sbf_demo.marks m ON m.method = '$method' AND m.pos = g.pos
			WHERE gap < $window AND NOT m.flagged});
		is($missed, 0,
			"$method: no repeat within its window of $window missed ($missed)");
	}
}
close($results);
is($methods, 12,
	"the table has a row for exact, 3 x bloom, 3 x stablebloom, 3 x slidingbloom, the sieve and the shared bloom filter ($methods)"
);

# The live crawl: two sessions at the same time, batches of 1000 rows dealt
# in turn, through one shared Bloom filter sized for the distinct URLs
my $shared = $result{'shared bloom'} // {};
my ($fp, $fn) = ($shared->{fp} // -1, $shared->{fn} // -1);
like(
	$shared->{parameters} // '',
	qr/^2 sessions, batches of $live_batch, capacity $distinct fpr $live_fpr: [0-9,]+ URLs\/s$/,
	"shared bloom: sized for the $distinct distinct URLs, URLs per second shown ("
	  . ($shared->{parameters} // 'no row') . ")");

my $batches = ceil($rows / $live_batch);
my ($sessions, $dealt, $answered, $overlapped) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	SELECT count(*), string_agg(batches::text, ',' ORDER BY session),
		   sum(rows), max(started) < min(finished)
	FROM sbf_demo.live_sessions}));
is( "$sessions sessions: $dealt batches",
	"2 sessions: " . ceil($batches / 2) . ',' . floor($batches / 2) . ' batches',
	"shared bloom: the $batches batches dealt in turn to 2 sessions ($dealt)");
is($answered, $rows, "shared bloom: the sessions answered the $rows rows ($answered)");
is($overlapped, 't', 'shared bloom: the two sessions ran at the same time');

my ($marked_rows, $positions, $answered_new) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
	SELECT count(*), count(DISTINCT pos), count(*) FILTER (WHERE NOT flagged)
	FROM sbf_demo.marks WHERE method = 'shared bloom'}));
is( "$marked_rows rows at $positions positions",
	"$rows rows at $rows positions",
	"shared bloom: one answer per row ($marked_rows rows at $positions positions)");

# A test-and-add is atomic, so of all the rows of a URL, in either session,
# the first to reach the filter is told "new" and the others "seen" (or that
# first one too, when the bits of other URLs already cover it: the URL is
# hidden).  A URL told "new" on a later row than its first is one FP (its
# first row) and one FN (that later row); a hidden URL is one FP.  Hence
# rows answered new = distinct URLs - FP + FN, and FP - FN URLs are hidden.
my $new_twice = $node->safe_psql(
	'postgres', q{
	SELECT count(*) FROM (
		SELECT c.url FROM sbf_demo.marks m JOIN sbf_demo.crawl c USING (pos)
		WHERE m.method = 'shared bloom' AND NOT m.flagged
		GROUP BY c.url HAVING count(*) > 1) s});
is($new_twice, 0, "shared bloom: no URL answered new twice ($new_twice)");
is($answered_new, $distinct - $fp + $fn,
	"shared bloom: $answered_new rows answered new = $distinct distinct URLs - $fp FP + $fn FN"
);
ok( $answered_new <= $distinct && $answered_new >= $distinct - $fp,
	"shared bloom: $distinct - $fp FP <= $answered_new rows answered new <= $distinct distinct URLs"
);

# A hidden URL is a false positive of the filter itself, whose rate stays
# under 1% until all the distinct URLs are in: on average fewer than 1% of
# them are hidden (bound: that plus 4 standard deviations of a Poisson count)
my $hidden = $distinct - $answered_new;
my $expected = $live_fpr * $distinct;
my $bound = ceil($expected + 4 * sqrt($expected));
ok($hidden <= $bound,
	"shared bloom: $hidden URLs hidden by the filter's false positives, at most $bound"
);

# its memory is the filter's size, as numfmt --to=iec writes it
my $filter_bytes = $node->safe_psql('postgres',
	"SELECT shared_info('sbf_demo.live_seen')->>'size_bytes'");
my $memory = $shared->{memory} // '';
my %unit = ('' => 1, K => 1024, M => 1024**2, G => 1024**3);
my $memory_bytes =
  $memory =~ /^([0-9.]+)([KMG]?)B$/ ? $1 * $unit{$2} : -1;
ok( $filter_bytes > 0 && abs($memory_bytes - $filter_bytes) <= 0.1 * $filter_bytes,
	"shared bloom: memory $memory is the filter's $filter_bytes bytes");

my $png = -r "$out/duplicates.png" ? slurp_file("$out/duplicates.png") : '';
is(substr($png, 0, 8), "\x89PNG\r\n\x1a\n", 'the picture is a PNG');
like($demo_log, qr/^Picture: \Q$out\E\/duplicates\.png$/m,
	'the demo printed where the picture is');

SbfTest::no_crash($node);
done_testing();
