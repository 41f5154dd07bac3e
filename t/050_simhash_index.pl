
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# simhash: the GIN index simhash_ops is exact, and the documented
# tokenization is reproducible outside PostgreSQL.
#
# - Exactness: 100,000 pseudo-random fingerprints plus, for 200 of them,
#   planted near-duplicates with 0, 1, 2, 3 and 4 random bits flipped (as
#   in Manku et al.'s experiment).  For each block layout (the default,
#   2 blocks, and blocks = 2, 3, 4, 5, 6, 8: every layout bench/simhash.sh
#   measures; and 1) and each distance d (sbf.simhash_max_distance) from 0
#   to 5, the 200 queries' indexed result set (a Bitmap Index Scan on the
#   GIN index, as EXPLAIN shows) equals the sequential scan's, and the
#   sequential scan finds exactly the planted copies within d.  Layouts
#   with fewer than d + 1 blocks (2 blocks at d = 2 to 5, 4 blocks at
#   d = 4 and 5, 1 block at d = 1) are searched with flipped block keys
#   (2 blocks at d = 4: 1,058 keys); 1 block at d = 3 needs more lookups
#   than the index allows (43,745) and reads the whole index instead:
#   still exact.
# - Reproducibility: an independent Perl tokenizer (words = maximal runs of
#   ASCII letters, digits and bytes >= 0x80 of the UTF-8 text, ASCII
#   lower-cased; shingles = n consecutive words joined by one space)
#   produces features whose simhash(features text[]) equals
#   simhash(document, n), on hand-written and random documents.

use strict;
use warnings;
use utf8;
no warnings 'portable';		# 64-bit hexadecimal numbers

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use Encode qw(decode encode);
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('simhash_index');
my $rows = 100_000;
my $seeds = 200;
my $max_flips = 4;

# A database whose text is UTF-8 whatever the environment's locale
$node->safe_psql('postgres',
	"CREATE DATABASE u8 TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'");
$node->safe_psql('u8', 'CREATE EXTENSION sbf');

sub sql
{
	my ($query) = @_;
	return $node->safe_psql('u8', $query);
}

#
# Exactness
#

sql(
	"CREATE TABLE fps (id bigint PRIMARY KEY, fp simhash64 NOT NULL);
	 INSERT INTO fps SELECT g, hashint8extended(g, 42)::simhash64
	 FROM generate_series(1, $rows) g");

# the planted copies: id = -(seed * 10 + flips), flips distinct random bits
srand(50);
my @seed_fps = split /\n/,
  sql("SELECT id || ' ' || fp FROM fps WHERE id <= $seeds ORDER BY id");
my (@values, %planted);
foreach my $line (@seed_fps)
{
	my ($seed, $hex) = split / /, $line;
	my $fp = hex($hex);
	foreach my $flips (0 .. $max_flips)
	{
		my %bits;
		$bits{ int(rand(64)) } = 1 while keys %bits < $flips;
		my $copy = $fp;
		$copy ^= (1 << $_) foreach keys %bits;
		my $id = -($seed * 10 + $flips);
		push @values, sprintf("(%d, '%016x')", $id, $copy);
		$planted{$flips}++;
	}
}
sql("INSERT INTO fps VALUES " . join(', ', @values) . "; ANALYZE fps");
is(sql("SELECT count(*) FROM fps"), $rows + $seeds * ($max_flips + 1),
	"$rows random fingerprints and " . $seeds * ($max_flips + 1) . " planted copies");

# Every (query, match) pair of the 200 seeds' searches, as sorted text
my $pairs_query =
  "SELECT string_agg(q.id || ':' || f.id, ',' ORDER BY q.id, f.id)
   FROM fps q JOIN LATERAL (SELECT id FROM fps WHERE fp % q.fp) f ON true
   WHERE q.id BETWEEN 1 AND $seeds";

my $seqscan = 'SET enable_indexscan = off; SET enable_bitmapscan = off;';
my $indexscan = 'SET enable_seqscan = off;';

# The truth, by sequential scan, for each d: the seed itself and its
# planted copies with at most d flips (a random pair within 4 bits has
# probability about 1e-14)
my %truth;
foreach my $d (0 .. 5)
{
	my $seq = sql("SET sbf.simhash_max_distance = $d; $seqscan $pairs_query");
	my @pairs = split /,/, $seq;
	my $expected = 0;
	$expected += $planted{$_} foreach grep { $_ <= $d } keys %planted;
	my $mismatched = grep {
		my ($q, $f) = split /:/;
		!($f == $q || ($f < 0 && int(-$f / 10) == $q && -$f % 10 <= $d))
	} @pairs;
	is(scalar(@pairs) . "/$mismatched", ($seeds + $expected) . '/0',
		"sequential scan at d = $d: " . scalar(@pairs)
		  . " pairs, the seeds and exactly the planted copies within d");
	$truth{$d} = $seq;
}

# every layout bench/simhash.sh measures, the default (no option), and
# one block
foreach my $layout ([ 'default', [ 0 .. 5 ] ], [ 2, [ 0 .. 5 ] ],
	[ 3, [ 0 .. 5 ] ], [ 4, [ 0 .. 5 ] ], [ 5, [ 0 .. 5 ] ],
	[ 6, [ 0 .. 5 ] ], [ 8, [ 0 .. 5 ] ], [ 1, [ 0, 1, 3 ] ])
{
	my ($blocks, $distances) = @$layout;
	my $options = $blocks eq 'default' ? '' : " (blocks = $blocks)";

	sql("CREATE INDEX fps_gin ON fps USING gin (fp simhash_ops$options)");
	foreach my $d (@$distances)
	{
		my $set = "SET sbf.simhash_max_distance = $d; $indexscan";
		my $plan = sql("$set EXPLAIN (COSTS OFF) $pairs_query");
		like($plan, qr/Bitmap Index Scan on fps_gin/,
			"blocks = $blocks, d = $d: the plan scans the GIN index");

		my $indexed = sql("$set $pairs_query");
		my $n = () = $indexed =~ /:/g;
		my $n_seq = () = $truth{$d} =~ /:/g;
		ok($indexed eq $truth{$d},
			"blocks = $blocks, d = $d: the index finds $n pairs, the sequential scan's $n_seq exactly");
	}
	sql('DROP INDEX fps_gin');
}

#
# Reproducibility of the tokenization
#

# The documented tokenization, on the UTF-8 bytes of a Perl string
sub features
{
	my ($document, $shingle) = @_;
	my $bytes = encode('UTF-8', $document);
	my @words = $bytes =~ /[A-Za-z0-9\x80-\xff]+/g;
	tr/A-Z/a-z/ foreach @words;
	@words = map { decode('UTF-8', $_) } @words;
	return () unless @words;
	return (join(' ', @words)) if @words < $shingle;
	return map { join(' ', @words[ $_ .. $_ + $shingle - 1 ]) }
	  0 .. @words - $shingle;
}

my @documents = (
	"The Quick Brown Fox -- jumps over the lazy dog.",
	"Crème brûlée costs €4.50; naïve café_au_lait (v2.0)!",
	"tabs\tand\nnewlines\r\nand   spaces, \"quotes\" and 'apostrophes' don't matter",
	"Em\x{2014}dash and non\x{a0}breaking space stay inside words",
	"one",
	"",
	"  ...  ");
my @vocabulary = (qw(page crawl duplicate URL index Postgres 2024 v1 Über naïve),
	"\x{65e5}\x{672c}", "caf\x{e9}");
my @punctuation = (' ', ', ', '. ', "\n", ' - ', '/', '?', '!  ', "\t", '_');
foreach (1 .. 20)
{
	my $document = '';
	$document .= $vocabulary[ rand @vocabulary ] . $punctuation[ rand @punctuation ]
	  foreach 1 .. 5 + int(rand(200));
	push @documents, $document;
}

my ($checked, $same) = (0, 0);
foreach my $document (@documents)
{
	foreach my $shingle (1, 2, 3, 5)
	{
		my @features = features($document, $shingle);
		my $array = @features
		  ? 'ARRAY[' . join(', ', map { "\$f\$$_\$f\$" } @features) . ']'
		  : "'{}'::text[]";
		my $query =
		  "SELECT simhash(\$d\$$document\$d\$::text, $shingle) = simhash($array)";
		$checked++;
		$same++ if sql(encode('UTF-8', $query)) eq 't';
	}
}
is($same, $checked,
	"the Perl tokenizer's features give simhash(document, n) for $same of $checked documents and shingle sizes");

SbfTest::no_crash($node);
done_testing();
