
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The main job (scripts/demo.sh) on a slice of its stream, run against this
# test's node: every row of its table agrees with counts made here
# independently (TP + FN = the true repeats, counted in Perl from the file;
# TP + FP = the rows the method flagged, counted from its marks), and the
# picture is a PNG.  The near-duplicate section's figures agree with
# counts made here: md5 in Perl, distances with bit_count, the Jaccard
# similarity of the closest pairs in Perl.  The live crawl through a shared filter is checked for
# what two concurrent sessions must give: every row answered once, each URL
# answered "new" at most once, and so exactly as many "new" answers as
# distinct URLs, less the few that the filter's false positives hid; the
# same crawl through the exact online store, exactly as many.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX qw(ceil floor);
use Digest::MD5 qw(md5_hex);

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
	  if $method =~ /^(exact|sieve|bloom)/ && $method ne 'exact online';
	is($fp, 0, "$method: exact (FP = $fp)")
	  if $method =~ /^(exact|sieve_flush|sieve, compressed)$/;
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
is($methods, 14,
	"the table has a row for exact, 3 x bloom, 3 x stablebloom, 3 x slidingbloom, the sieve with a plain and with a compressed seen, the shared bloom filter and the exact online store ($methods)"
);

# The compressed seen holds the same signatures as the plain one, in far
# fewer bytes per URL
my ($plain_b, $compressed_b) =
  map { /\(seen, ([0-9]+) B\/URL\)$/ ? $1 : -1 }
  map { $result{$_}{memory} // '' } ('sieve_flush', 'sieve, compressed');
ok( $compressed_b > 0 && $compressed_b < $plain_b,
	"sieve, compressed: fewer bytes a URL on disk than a plain seen ($compressed_b against $plain_b)"
);
is( $node->safe_psql(
		'postgres', q{
	SELECT (SELECT array_agg(sig ORDER BY sig) FROM sbf_demo.seen)
		 = (SELECT array_agg(s) FROM sieve_signatures('sbf_demo.compressed_seen') s)}),
	't',
	'sieve, compressed: the same signatures as the plain seen');

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

# The same live crawl through the exact online store (seen_test_and_add
# on a compressed seen): one answer per row, and each distinct URL answered
# new exactly once, none hidden (FP = FN: a URL told new on a later row
# than its first, the other session having taken the first)
my $online = $result{'exact online'} // {};
like(
	$online->{parameters} // '',
	qr/^2 sessions, batches of $live_batch, seen_test_and_add: [0-9,]+ URLs\/s$/,
	"exact online: URLs per second shown (" . ($online->{parameters} // 'no row') . ")");
like($online->{memory} // '', qr/\(seen, [0-9]+ B\/URL\)$/,
	"exact online: the seen's size and bytes a URL shown (" . ($online->{memory} // '') . ")");
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) || ' rows at ' || count(DISTINCT pos) || ' positions, '
		   || count(*) FILTER (WHERE NOT flagged) || ' new, '
		   || count(DISTINCT c.url) FILTER (WHERE NOT flagged) || ' distinct new'
	FROM sbf_demo.marks m JOIN sbf_demo.crawl c USING (pos) WHERE method = 'exact online'}),
	"$rows rows at $rows positions, $distinct new, $distinct distinct new",
	"exact online: one answer per row, each of the $distinct distinct URLs new exactly once");
is($online->{fp} // -1, $online->{fn} // -2,
	"exact online: FP = FN, no URL hidden (" . ($online->{fp} // '') . ")");

# Near-duplicate pages: the re-crawl of every 5th page of the manual (in
# byte order of the names, as the file is), changed in turn in four ways;
# what md5 and simhash recognize, counted again here: md5 in Perl from the
# file's texts, distances with bit_count of the XOR of fingerprints
# recomputed from the texts (neither <~>, % nor the index)
my @pages;
{
	my $path = SbfTest::data_file('pgdoc15-pages.tsv.gz');
	open(my $in, '-|', 'gzip', '-dc', $path) or die "cannot read $path: $!";
	binmode($in, ':raw');
	while (my $line = <$in>)
	{
		chomp $line;
		my ($name, $text) = split(/\t/, $line, 2);
		push @pages, [ $name, $text ];
	}
	close($in);
}
my %text = map { $_->[0] => $_->[1] } @pages;
my @changes = ('unchanged', 'a date added', 'a counter added', '3 words changed');
my %expected_change;
for (my $i = 0; $i < @pages; $i += 5)
{
	$expected_change{ $pages[$i][0] } = $changes[ ($i / 5) % 4 ];
}

my %near;
open(my $near_tsv, '<', "$out/near_duplicates.tsv")
  or die "cannot read $out/near_duplicates.tsv: $!";
while (my $line = <$near_tsv>)
{
	chomp $line;
	my ($change, @figures) = split(/\t/, $line);
	next if $change eq 'change';
	@{ $near{$change} }{qw(pages md5 simhash other median)} = @figures;
}
close($near_tsv);

my $psql_out = $node->safe_psql('postgres',
	'SELECT name, change, body FROM sbf_demo.recrawl');
my (%refetched, %count);
foreach my $row (split /\n/, $psql_out)
{
	my ($name, $change, $body) = split(/\|/, $row, 3);
	$refetched{$name} = $change;
	$count{$change}{pages}++;
	$count{$change}{md5}++
	  if md5_hex($body) eq md5_hex($text{$name} // '');
}
is( join(',', map { "$_=$refetched{$_}" } sort keys %refetched),
	join(',', map { "$_=$expected_change{$_}" } sort keys %expected_change),
	scalar(keys %refetched) . " pages re-fetched: every 5th page of the "
	  . scalar(@pages) . ", changed in turn");

my %distances;
foreach my $row (split /\n/, $node->safe_psql('postgres', q{
	SELECT r.name, r.change, bit_count((simhash(r.body)::bigint # simhash(p.body)::bigint)::bit(64)),
		   (SELECT count(*) FROM sbf_demo.pages q
			WHERE q.name <> r.name
			  AND bit_count((simhash(r.body)::bigint # simhash(q.body)::bigint)::bit(64)) <= 3)
	FROM sbf_demo.recrawl r JOIN sbf_demo.pages p USING (name)}))
{
	my ($name, $change, $bits, $others) = split(/\|/, $row);
	push @{ $distances{$change} }, $bits;
	$count{$change}{simhash}++ if $bits <= 3;
	$count{$change}{other} += $others;
}
foreach my $change (@changes)
{
	my $shown = $near{$change} // {};
	my @bits = sort { $a <=> $b } @{ $distances{$change} // [] };
	my %mine = (
		pages => $count{$change}{pages} // 0,
		md5 => $count{$change}{md5} // 0,
		simhash => $count{$change}{simhash} // 0,
		other => $count{$change}{other} // 0,
		median => @bits ? $bits[ int(($#bits) / 2) ] : -1);
	is( join(' ', map { $shown->{$_} // '?' } qw(pages md5 simhash other median)),
		join(' ', map { $mine{$_} } qw(pages md5 simhash other median)),
		"near-duplicates, $change: $mine{pages} pages, md5 recognizes $mine{md5}, "
		  . "simhash within 3 bits $mine{simhash}, other pages within 3 bits $mine{other}, median $mine{median} bits");
}
is($near{unchanged}{md5}, $near{unchanged}{pages},
	'md5 recognizes every unchanged page');
is(join(',', map { $near{$_}{md5} } @changes[ 1 .. 3 ]),
	'0,0,0', 'md5 recognizes no changed page');

# the closest pairs of the manual: distances by brute force with bit_count,
# the Jaccard similarity of the shingle sets in Perl
my $closest = $node->safe_psql('postgres', q{
	WITH f AS (SELECT name, simhash(body)::bigint AS v FROM sbf_demo.pages)
	SELECT string_agg(a || ' ' || b || ' ' || d, ',' ORDER BY d, a COLLATE "C", b COLLATE "C")
	FROM (SELECT a.name AS a, b.name AS b, bit_count((a.v # b.v)::bit(64)) AS d
		  FROM f a JOIN f b ON a.name < b.name
		  ORDER BY d, a.name COLLATE "C", b.name COLLATE "C" LIMIT 5) s});
sub shingles
{
	my @words = map { tr/A-Z/a-z/r } $_[0] =~ /[A-Za-z0-9\x80-\xff]+/g;
	return { map { join(' ', @words[ $_ .. $_ + 2 ]) => 1 } 0 .. @words - 3 };
}
my (@shown_pairs, @my_pairs);
open(my $pairs_tsv, '<', "$out/closest_pairs.tsv")
  or die "cannot read $out/closest_pairs.tsv: $!";
while (my $line = <$pairs_tsv>)
{
	chomp $line;
	my ($pa, $pb, $d, $jaccard) = split(/\t/, $line);
	next if $pa eq 'a';
	push @shown_pairs, "$pa $pb $d $jaccard";
	my ($x, $y) = (shingles($text{$pa} // ''), shingles($text{$pb} // ''));
	my $common = grep { $y->{$_} } keys %$x;
	my $union = keys(%$x) + keys(%$y) - $common;
	push @my_pairs, "$pa $pb $d " . sprintf('%.3f', $union ? $common / $union : 0);
}
close($pairs_tsv);
is(join(',', map { join ' ', (split / /)[ 0 .. 2 ] } @shown_pairs), $closest,
	"the 5 closest pairs of the manual and their distances ($closest)");
is(join(',', @shown_pairs), join(',', @my_pairs),
	'their Jaccard similarities, computed again in Perl');

my $png = -r "$out/duplicates.png" ? slurp_file("$out/duplicates.png") : '';
is(substr($png, 0, 8), "\x89PNG\r\n\x1a\n", 'the picture is a PNG');
like($demo_log, qr/^Picture: \Q$out\E\/duplicates\.png$/m,
	'the demo printed where the picture is');

SbfTest::no_crash($node);
done_testing();
