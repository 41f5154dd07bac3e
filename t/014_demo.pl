
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The main job (scripts/demo.sh) on a slice of its stream, run against this
# test's node: every row of its table agrees with counts made here
# independently (TP + FN = the true repeats, counted in Perl from the file;
# TP + FP = the rows the method flagged, counted from its marks), and the
# picture is a PNG.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $rows = 20000;
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

my $methods = 0;
open(my $results, '<', "$out/results.tsv")
  or die "cannot read $out/results.tsv: $!";
while (my $line = <$results>)
{
	chomp $line;
	my ($method, $memory, $parameters, $tp, $fp, $fn, $flagged, $seconds) =
	  split(/\t/, $line);
	next if $method eq 'method';
	$methods++;
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
}
close($results);
is($methods, 8,
	"the table has a row for exact, 3 x bloom, 3 x stablebloom and the sieve ($methods)"
);

my $png = -r "$out/duplicates.png" ? slurp_file("$out/duplicates.png") : '';
is(substr($png, 0, 8), "\x89PNG\r\n\x1a\n", 'the picture is a PNG');
like($demo_log, qr/^Picture: \Q$out\E\/duplicates\.png$/m,
	'the demo printed where the picture is');

SbfTest::no_crash($node);
done_testing();
