# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# simhash on real pages: how well "within 3 bits" finds the pages whose
# shingle sets are nearly the same.
#
# The pages: data/pgdoc15-pages.tsv.gz, the visible text of the 1,169 HTML
# pages of the PostgreSQL 15 manual.  The manual alone has no pair within
# 3 bits, so the test builds a crawl that has some: the pages, plus a
# re-fetched copy of every 5th page (234 copies) in which a fraction f of
# the words is replaced by new words, f = 0, 0.5%, 1%, 2%, 5%, 10% and 20%
# in turn (at least one word when f > 0; a fixed seed of Perl's PRNG, so
# the crawl is the same on every run).
#
# - Exactness on real fingerprints: simhash(body, 3) of every page; the
#   pairs within 3 bits found through the GIN index (one search a page)
#   are exactly those of a brute-force scan of all pairs, and exactly those
#   of the equi-join on simhash_keys(fp, 3, 5).
# - Quality: the truth is every pair whose sets of 3-word shingles (the
#   tokenization of simhash, computed here in Perl) have a Jaccard
#   similarity of at least 0.9, over all 983,503 pairs (exactly: candidates
#   pruned by the size bound and prefix filtering, then the Jaccard
#   computed).  Precision: the share of the pairs within 3 bits whose
#   Jaccard is >= 0.9; recall: the share of the true pairs within 3 bits.
#   Both are in the test names, and for each f the copies found.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use List::Util qw(max min sum);
use POSIX qw(ceil);
use PostgreSQL::Test::Utils;
use Test::More;

my $shingle = 3;
my $distance = 3;
my $threshold = 0.9;
my @levels = (0, 0.005, 0.01, 0.02, 0.05, 0.10, 0.20);

my $node = SbfTest::new_node('simhash_quality');
$node->safe_psql('postgres',
	"CREATE DATABASE u8 TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'");
$node->safe_psql('u8', 'CREATE EXTENSION sbf');
sub sql { return $node->safe_psql('u8', $_[0]); }

# The pages, as UTF-8 bytes
my $path = SbfTest::data_file('pgdoc15-pages.tsv.gz');
open(my $in, '-|', 'gzip', '-dc', $path) or die "cannot read $path: $!";
binmode($in, ':raw');
my @pages;
while (my $line = <$in>)
{
	chomp $line;
	my ($name, $text) = split(/\t/, $line, 2);
	push @pages, { name => $name, text => $text // '' };
}
close($in);
my $npages = @pages;
ok($npages > 1000, "$npages pages of the manual");

# The re-fetched copies: every 5th page, f of its words replaced
srand(51);
my @crawl = map { { %$_, copy_of => 0, f => -1 } } @pages;
my $word = qr/([A-Za-z0-9\x80-\xff]+)/;
for (my $i = 0; $i < $npages; $i += 5)
{
	my $f = $levels[ ($i / 5) % @levels ];
	my @parts = split($word, $pages[$i]{text}, -1);
	my @words = grep { $_ % 2 == 1 } 0 .. $#parts;
	my $replace = $f > 0 ? max(1, int($f * @words + 0.5)) : 0;
	my %chosen;
	$chosen{ $words[ int(rand(@words)) ] } = 1
	  while keys %chosen < min($replace, scalar @words);
	$parts[$_] = sprintf('w%07d', int(rand(1e7)))
	  foreach sort { $a <=> $b } keys %chosen;
	push @crawl,
	  {
		name => "$pages[$i]{name} (re-fetched)",
		text => join('', @parts),
		copy_of => $i + 1,
		f => $f
	  };
}
my $ncopies = @crawl - $npages;

# into PostgreSQL: id is the position in @crawl, from 1
sql("CREATE TABLE crawl (id int PRIMARY KEY, name text, copy_of int, f float8, body text)");
my $copy = '';
foreach my $id (1 .. @crawl)
{
	my $p = $crawl[ $id - 1 ];
	(my $body = $p->{text}) =~ s/\\/\\\\/g;
	$copy .= join("\t", $id, $p->{name}, $p->{copy_of}, $p->{f}, $body) . "\n";
}
sql("COPY crawl FROM STDIN;\n$copy\\.\n");
sql("ALTER TABLE crawl ADD fp simhash64;
	 UPDATE crawl SET fp = simhash(body, $shingle);
	 CREATE INDEX crawl_fp ON crawl USING gin (fp simhash_ops);
	 VACUUM ANALYZE crawl");

#
# Exactness: the index, brute force and the join on simhash_keys agree
#

my $indexed_query = "SELECT string_agg(a.id || ':' || b.id || ':' || (a.fp <~> b.fp), ',' ORDER BY a.id, b.id)
	FROM crawl a JOIN LATERAL (SELECT id, fp FROM crawl WHERE fp % a.fp) b ON b.id > a.id";
my $set = "SET sbf.simhash_max_distance = $distance; SET enable_seqscan = off;";
like(sql("$set EXPLAIN (COSTS OFF) $indexed_query"),
	qr/Bitmap Index Scan on crawl_fp/, 'the pairs are searched through the GIN index');
my $indexed = sql("$set $indexed_query");
my $brute = sql(
	"SELECT string_agg(a.id || ':' || b.id || ':' || (a.fp <~> b.fp), ',' ORDER BY a.id, b.id)
	 FROM crawl a JOIN crawl b ON a.id < b.id WHERE a.fp <~> b.fp <= $distance");
my $joined = sql(
	"WITH k AS (SELECT id, fp, simhash_keys(fp, $distance, 5) AS key FROM crawl)
	 SELECT string_agg(x || ':' || y || ':' || d, ',' ORDER BY x, y)
	 FROM (SELECT DISTINCT a.id AS x, b.id AS y, a.fp <~> b.fp AS d
		   FROM k a JOIN k b ON a.key = b.key AND a.id < b.id
		   WHERE a.fp <~> b.fp <= $distance) s");
my @found = map { [ split /:/ ] } split /,/, $indexed;
my $nfound = @found;
my $npairs = @crawl * (@crawl - 1) / 2;
is($indexed, $brute,
	"the index finds the $nfound pairs within $distance bits of all $npairs pairs, as brute force does");
is($joined, $brute,
	"the equi-join on simhash_keys(fp, $distance, 5) finds the same $nfound pairs");

#
# The truth: every pair of pages whose shingle sets have Jaccard >= 0.9
#

# the sets of shingles, as sorted lists of ids numbered in order of
# increasing document frequency (rare shingles first: short prefixes)
my (%shingle_id, @sets);
foreach my $p (@crawl)
{
	my @words = map { tr/A-Z/a-z/r } $p->{text} =~ /[A-Za-z0-9\x80-\xff]+/g;
	my @features =
	    @words < $shingle ? (@words ? (join ' ', @words) : ())
	  : map { join ' ', @words[ $_ .. $_ + $shingle - 1 ] } 0 .. @words - $shingle;
	my %set;
	$set{ $shingle_id{$_} //= scalar keys %shingle_id } = 1 foreach @features;
	push @sets, [ keys %set ];
}
my @df;
foreach my $s (@sets) { $df[$_]++ foreach @$s; }
my @rank;
my @by_df = sort { $df[$a] <=> $df[$b] || $a <=> $b } 0 .. $#df;
$rank[ $by_df[$_] ] = $_ foreach 0 .. $#by_df;
@sets = map { [ sort { $a <=> $b } map { $rank[$_] } @$_ ] } @sets;

sub jaccard
{
	my ($x, $y) = @_;
	my ($a, $b) = ($sets[$x], $sets[$y]);
	return 1 if !@$a && !@$b;
	my %in = map { $_ => 1 } @$a;
	my $common = grep { $in{$_} } @$b;
	return $common / (@$a + @$b - $common);
}

# prefix filtering: a pair with Jaccard >= t shares at least ceil(t * |A|)
# shingles, so their prefixes of |A| - ceil(t * |A|) + 1 rarest shingles
# meet; and |B| >= t * |A|
my (%postings, %truth);
my $candidates = 0;
foreach my $x (sort { @{ $sets[$a] } <=> @{ $sets[$b] } || $a <=> $b } 0 .. $#sets)
{
	my $s = $sets[$x];
	my $prefix = @$s - ceil($threshold * @$s - 1e-9) + 1;
	my %seen;
	foreach my $token (@$s[ 0 .. min($prefix, scalar @$s) - 1 ])
	{
		foreach my $y (@{ $postings{$token} // [] })
		{
			next if $seen{$y}++;
			next if @{ $sets[$y] } < $threshold * @$s - 1e-9;
			$candidates++;
			my $j = jaccard($x, $y);
			$truth{ join ':', sort { $a <=> $b } $x + 1, $y + 1 } = $j
			  if $j >= $threshold;
		}
		push @{ $postings{$token} }, $x;
	}
	# an empty set: Jaccard 1 with other empty sets (none in the manual)
}
my $ntrue = keys %truth;

# Precision and recall of "within 3 bits" against Jaccard >= 0.9
my $true_found = grep { exists $truth{"$_->[0]:$_->[1]"} } @found;
my $precision = $nfound ? $true_found / $nfound : 0;
my $recall = $ntrue ? $true_found / $ntrue : 0;
my $natural_true = grep { $crawl[ (split /:/)[1] - 1 ]{copy_of} == 0 } keys %truth;
note("$candidates candidate pairs after the size and prefix filters, $ntrue with Jaccard >= $threshold ($natural_true between pages of the manual)");
ok( $precision >= 0.8,
	sprintf("precision %.2f: %d of the %d pairs within %d bits have Jaccard >= %.1f",
		$precision, $true_found, $nfound, $distance, $threshold));
ok( $recall >= 0.5,
	sprintf("recall %.2f: %d of the %d pairs with Jaccard >= %.1f are within %d bits",
		$recall, $true_found, $ntrue, $threshold, $distance));

# the false positives are still similar pages
my @false = map { jaccard($_->[0] - 1, $_->[1] - 1) }
  grep { !exists $truth{"$_->[0]:$_->[1]"} } @found;
my $lowest = @false ? min(@false) : 1;
ok($lowest >= 0.5,
	sprintf("the %d pairs within %d bits below Jaccard %.1f are still at Jaccard >= %.2f",
		scalar @false, $distance, $threshold, $lowest));

# For each f: the copies within 3 bits of their page, and their Jaccard
my %near = map { ("$_->[0]:$_->[1]" => $_->[2]) } @found;
my %bits = map { split /\|/ } split /\n/,
  sql("SELECT b.id, a.fp <~> b.fp FROM crawl a JOIN crawl b ON a.id = b.copy_of");
my %level;
foreach my $id ($npages + 1 .. scalar @crawl)
{
	my $p = $crawl[ $id - 1 ];
	my $l = $level{ $p->{f} } //= { copies => 0, found => 0, jaccard => [], bits => [] };
	$l->{copies}++;
	$l->{found}++ if defined $near{"$p->{copy_of}:$id"};
	push @{ $l->{jaccard} }, jaccard($p->{copy_of} - 1, $id - 1);
	push @{ $l->{bits} }, $bits{$id};
}
foreach my $f (@levels)
{
	my $l = $level{$f};
	my @bits = sort { $a <=> $b } @{ $l->{bits} };
	note(sprintf("f = %4.1f%%: %2d of %2d copies within %d bits; mean Jaccard %.3f; median distance %d bits",
		100 * $f, $l->{found}, $l->{copies}, $distance,
		sum(@{ $l->{jaccard} }) / @{ $l->{jaccard} }, $bits[ $#bits / 2 ]));
}
is($level{0}{found}, $level{0}{copies},
	"every exact copy (f = 0) is found: $level{0}{found} of $level{0}{copies}");
cmp_ok($level{0.005}{found}, '>', $level{0.02}{found},
	"more copies found at f = 0.5% ($level{0.005}{found} of $level{0.005}{copies}) than at 2% ($level{0.02}{found} of $level{0.02}{copies}): "
	  . "found at 1%: $level{0.01}{found} of $level{0.01}{copies}");
is($level{0.2}{found}, 0,
	"no copy with 20% of its words replaced is within $distance bits ($level{0.2}{found} of $level{0.2}{copies}; mean Jaccard "
	  . sprintf('%.2f', sum(@{ $level{0.2}{jaccard} }) / @{ $level{0.2}{jaccard} }) . ')');

SbfTest::no_crash($node);
done_testing();
