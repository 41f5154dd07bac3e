
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# A compressed seen damaged where it is stored: every lookup of
# sieve_contains answers right or is an ERROR (XX001), never a wrong
# answer (a stored URL answered f, an unstored one t) and never a crash.
#
# 1. Chunk rows mutated through SQL (a binary-coercible cast from bytea
#    skips sieve_chunk's input checks, as a bad disk or a foreign tool
#    might): every bit and byte of a chunk's header flipped or set, bits of
#    its codes flipped, truncations, appended bytes; then its head moved by
#    each of its 64 bits.  A head moved between its neighbours' is caught
#    by the lookups; one moved past them is a chunk gone from where a
#    lookup looks, which only a read of the whole table (sieve_signatures,
#    a flush) can see, and does.  sieve_chunk_count refuses each mutated
#    chunk rather than read its count.
# 2. Bits flipped in the table's pages on disk, checksums off (initdb's
#    default before PostgreSQL 18): rounds of one flip in the stored chunk
#    of every row, then rounds of one flip anywhere in every row (its tuple
#    header and head too: a flip there can hide or move a row, as in any
#    table, so those rounds check only that nothing crashes).
#
# Every lookup is of a URL whose signature is stored or not, checked one
# by one (each in a subtransaction, so an ERROR does not hide the answers
# after it).  A fixed seed: the same flips each run.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('damaged');
SbfTest::without_checksums($node);

$node->safe_psql(
	'postgres', q{
-- 3,000 stored URLs (odd g) and 3,000 not stored (even g), interleaved
CREATE TABLE urls AS
	SELECT g, 'https://example.org/' || g AS url,
		   url_signature('https://example.org/' || g) AS sig, g % 2 = 1 AS stored
	FROM generate_series(1, 6000) g;
CREATE INDEX ON urls (sig);
CREATE TABLE pseen (sig bigint PRIMARY KEY);
INSERT INTO pseen SELECT sig FROM urls WHERE stored;
SELECT sieve_seen_create('zseen');
SELECT sieve_seen_import('zseen', 'pseen');

-- The lookups of the URLs whose signatures are in [lo, hi] (those marked
-- probe only, if asked): how many answered wrong, answered right, were
-- XX001, and any other error
ALTER TABLE urls ADD COLUMN probe boolean NOT NULL DEFAULT false;
CREATE FUNCTION lookups(lo bigint, hi bigint, probes_only boolean DEFAULT false,
						OUT wrong int, OUT right_ int, OUT corrupted int, OUT other text)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	wrong := 0; right_ := 0; corrupted := 0;
	FOR r IN SELECT url, stored FROM urls
			 WHERE sig BETWEEN lo AND hi AND (probe OR NOT probes_only) LOOP
		BEGIN
			IF sieve_contains('zseen', r.url) = r.stored THEN
				right_ := right_ + 1;
			ELSE
				wrong := wrong + 1;
			END IF;
		EXCEPTION
			WHEN data_corrupted THEN
				corrupted := corrupted + 1;
			WHEN OTHERS THEN
				other := coalesce(other || '; ', '') || SQLSTATE || ': ' || SQLERRM;
		END;
	END LOOP;
END $$;

-- sieve_chunk from bytes, unchecked: the cast wants bytea's alignment
UPDATE pg_type SET typalign = 'i' WHERE oid = 'sieve_chunk'::regtype;
CREATE CAST (bytea AS sieve_chunk) WITHOUT FUNCTION;
UPDATE pg_type SET typalign = 'd' WHERE oid = 'sieve_chunk'::regtype;
});

my ($chunks, $per_chunk) = split(
	/\|/,
	$node->safe_psql(
		'postgres',
		'SELECT count(*), sum(sieve_chunk_count(chunk)) / count(*) FROM zseen'));
cmp_ok($chunks, '>=', 7, "the compressed seen has $chunks chunks of about $per_chunk signatures");
is( $node->safe_psql('postgres', 'SELECT * FROM lookups(-9223372036854775808, 9223372036854775807)'),
	'0|6000|0|', 'undamaged, all 6,000 lookups answer right');

# 1. Mutations of one chunk's row, the fourth: the lookups that can land on
# it or take it as a neighbour are those from the head of the third to the
# last signature of the fifth.  Each mutation is probed by every lookup
# that lands on the fourth and by 40 of those that land on a neighbour.
$node->safe_psql(
	'postgres', q{
CREATE TABLE victim AS
	SELECT head, chunk, sieve_chunk_send(chunk) AS bytes, lag(head) OVER w AS lo
	FROM zseen WINDOW w AS (ORDER BY head) ORDER BY head OFFSET 3 LIMIT 1;
CREATE TABLE neighbours AS
	SELECT (SELECT lo FROM victim) AS lo,
		   coalesce((SELECT min(head) FROM zseen WHERE head > (SELECT head FROM zseen WHERE head > v.head ORDER BY head LIMIT 1)) - 1,
					9223372036854775807) AS hi
	FROM victim v;
UPDATE urls SET probe = true
	WHERE sig >= (SELECT head FROM victim)
	  AND sig < coalesce((SELECT min(head) FROM zseen WHERE head > (SELECT head FROM victim)), 9223372036854775807);
UPDATE urls SET probe = true
	WHERE g IN (SELECT g FROM urls u, neighbours n WHERE u.sig BETWEEN n.lo AND n.hi AND NOT u.probe ORDER BY g LIMIT 40);

-- every byte of the header set to 0 and 0xff and inverted, every bit of
-- the header flipped, every 37th bit of the codes flipped, every 64th
-- truncation and the last three, bytes appended
CREATE TABLE mutations AS
	SELECT 'header byte ' || i || ' = ' || v AS what, set_byte(bytes, i, v) AS bytes
	FROM victim, generate_series(0, 27) i, unnest(ARRAY[0, 255]) v
	UNION ALL
	SELECT 'header byte ' || i || ' inverted', set_byte(bytes, i, get_byte(bytes, i) # 255)
	FROM victim, generate_series(0, 27) i
	UNION ALL
	SELECT 'bit ' || b || ' flipped', set_bit(bytes, b, 1 - get_bit(bytes, b))
	FROM victim, generate_series(0, 8 * length(bytes) - 1) b
	WHERE b < 8 * 28 OR b % 37 = 0
	UNION ALL
	SELECT 'truncated to ' || n, substr(bytes, 1, n)
	FROM victim, generate_series(0, length(bytes) - 1) n WHERE n % 64 = 0 OR n > length(bytes) - 4
	UNION ALL
	SELECT 'appended ' || x, bytes || x::bytea
	FROM victim, unnest(ARRAY['\x00', '\x01', '\x0000000000000000', '\xff']) x;
DELETE FROM mutations m USING victim v WHERE m.bytes = v.bytes;

CREATE FUNCTION mutate(OUT mutations int, OUT wrong int, OUT right_ int,
					   OUT corrupted int, OUT other text, OUT first_wrong text,
					   OUT counts_refused int)
LANGUAGE plpgsql AS $$
DECLARE
	m record;
	l record;
	v record;
BEGIN
	SELECT * INTO v FROM victim;
	mutations := 0; wrong := 0; right_ := 0; corrupted := 0; counts_refused := 0;
	FOR m IN SELECT * FROM mutations LOOP
		BEGIN
			PERFORM sieve_chunk_count(m.bytes::sieve_chunk);
		EXCEPTION WHEN data_corrupted THEN
			counts_refused := counts_refused + 1;
		END;
		UPDATE zseen SET chunk = m.bytes::sieve_chunk WHERE head = v.head;
		SELECT * INTO l FROM lookups((SELECT lo FROM neighbours), (SELECT hi FROM neighbours), true);
		mutations := mutations + 1;
		wrong := wrong + l.wrong;
		right_ := right_ + l.right_;
		corrupted := corrupted + l.corrupted;
		IF l.other IS NOT NULL THEN
			other := coalesce(other || '; ', '') || m.what || ': ' || l.other;
		END IF;
		IF l.wrong > 0 AND first_wrong IS NULL THEN
			first_wrong := m.what;
		END IF;
	END LOOP;
	UPDATE zseen SET chunk = v.chunk WHERE head = v.head;
END $$;
});

my ($mutations, $wrong, $right, $corrupted, $other, $first_wrong, $counts_refused) =
  split(/\|/, $node->safe_psql('postgres', 'SELECT * FROM mutate()'), -1);
note("chunk mutations: $mutations, lookups right $right, XX001 $corrupted, wrong $wrong");
cmp_ok($mutations, '>', 400, "$mutations mutations of a stored chunk");
is($wrong, 0, 'no lookup answered wrong from a mutated chunk')
  or diag("first: $first_wrong");
is($other, '', 'every refusal is data_corrupted');
cmp_ok($corrupted, '>', 0, 'the mutations were seen');
is($counts_refused, $mutations, 'sieve_chunk_count refuses every mutated chunk');

# The head moved by each of its 64 bits: between the neighbours' heads the
# lookups see it; past them, sieve_signatures does
my $heads = $node->safe_psql(
	'postgres', q{
CREATE TABLE head_moves AS
	SELECT b, head # (1::bigint << b) AS moved,
		   (head # (1::bigint << b)) > (SELECT lo FROM neighbours)
		   AND (head # (1::bigint << b)) < (SELECT min(head) FROM zseen WHERE head > v.head) AS between
	FROM victim v, generate_series(0, 63) b;
CREATE FUNCTION move_heads(OUT between_wrong int, OUT between_lookups int,
						   OUT past int, OUT past_seen int, OUT other text)
LANGUAGE plpgsql AS $$
DECLARE
	m record;
	l record;
	v record;
BEGIN
	SELECT * INTO v FROM victim;
	between_wrong := 0; between_lookups := 0; past := 0; past_seen := 0;
	FOR m IN SELECT * FROM head_moves LOOP
		UPDATE zseen SET head = m.moved WHERE head = v.head;
		SELECT * INTO l FROM lookups((SELECT lo FROM neighbours), (SELECT hi FROM neighbours));
		IF l.other IS NOT NULL THEN
			other := coalesce(other || '; ', '') || m.b || ': ' || l.other;
		END IF;
		IF m.between THEN
			between_wrong := between_wrong + l.wrong;
			between_lookups := between_lookups + l.wrong + l.right_ + l.corrupted;
		ELSE
			past := past + 1;
			BEGIN
				PERFORM count(*) FROM sieve_signatures('zseen');
			EXCEPTION WHEN data_corrupted THEN
				past_seen := past_seen + 1;
			END;
		END IF;
		UPDATE zseen SET head = v.head WHERE head = m.moved;
	END LOOP;
END $$;
SELECT * FROM move_heads();
});
my ($between_wrong, $between_lookups, $past, $past_seen, $head_other) =
  split(/\|/, $heads, -1);
note("head moves: " . (64 - $past) . " between the neighbours ($between_lookups lookups, $between_wrong wrong), $past past them");
is($between_wrong, 0, 'no lookup answered wrong with a head moved between its neighbours');
is($past_seen, $past, 'sieve_signatures refuses each head moved past a neighbour');
is($head_other, '', 'every refusal is data_corrupted');
is( $node->safe_psql('postgres', 'SELECT * FROM lookups(-9223372036854775808, 9223372036854775807)'),
	'0|6000|0|', 'the chunk put back, all 6,000 lookups answer right');

# 2. Bits flipped in the pages on disk, of the table rewritten without the
# dead rows of the mutations, in every other row: a lookup lands on a
# damaged chunk or beside one
$node->safe_psql('postgres', 'VACUUM FULL zseen; CHECKPOINT');
my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('zseen')");
my $pristine = slurp_file($file);
my $blcksz = 8192;

# The rows of the heap file: [offset of the tuple, offset of its chunk's
# varlena header, length of the tuple]
sub rows
{
	my ($bytes) = @_;
	my @rows;
	for (my $page = 0; $page < length($bytes); $page += $blcksz)
	{
		my $lower = unpack('v', substr($bytes, $page + 12, 2));
		for (my $lp = 24; $lp < $lower; $lp += 4)
		{
			my $item = unpack('V', substr($bytes, $page + $lp, 4));
			my ($off, $flags, $len) = ($item & 0x7fff, ($item >> 15) & 3, $item >> 17);
			next unless $flags == 1;    # LP_NORMAL
			my $hoff = unpack('C', substr($bytes, $page + $off + 22, 1));
			# head bigint at t_hoff, then the chunk (double-aligned)
			push @rows, [ $page + $off, $page + $off + $hoff + 8, $len ];
		}
	}
	return @rows;
}

my @rows = rows($pristine);
is(scalar(@rows), $chunks, "the heap file holds the $chunks rows");

srand(20261127);
my %total = (wrong => 0, right => 0, corrupted => 0, flips => 0);
my $other_errors = '';
foreach my $round (1 .. 36)
{
	# rounds 1-28 in the chunks, 29-36 anywhere in the rows
	my $in_chunk = $round <= 28;
	$node->stop;
	my $bytes = $pristine;
	foreach my $i (0 .. $#rows)
	{
		next if $i % 2 != $round % 2;
		my ($tuple, $chunk, $len) = @{ $rows[$i] };
		my ($from, $to) = $in_chunk ? ($chunk, $tuple + $len) : ($tuple, $tuple + $len);
		my $bit = int(rand(8 * ($to - $from)));
		my $at = $from + int($bit / 8);
		substr($bytes, $at, 1) = chr(ord(substr($bytes, $at, 1)) ^ (1 << ($bit % 8)));
		$total{flips}++ if $in_chunk;
	}
	open(my $fh, '>', $file) or die "$file: $!";
	binmode($fh);
	print $fh $bytes;
	close($fh);
	$node->start;
	my ($w, $r, $c, $o) = split(/\|/,
		$node->safe_psql('postgres', 'SELECT * FROM lookups(-9223372036854775808, 9223372036854775807)'), -1);
	if ($in_chunk)
	{
		$total{wrong} += $w;
		$total{right} += $r;
		$total{corrupted} += $c;
		$other_errors .= "round $round: $o\n" if $o ne '';
	}
	else
	{
		note("round $round, a flip anywhere in each row: $r right, $c XX001, $w wrong, other: $o");
	}
}
$node->stop;
open(my $fh, '>', $file) or die "$file: $!";
binmode($fh);
print $fh $pristine;
close($fh);
$node->start;

note("flips in stored chunks: $total{flips}, lookups right $total{right}, XX001 $total{corrupted}, wrong $total{wrong}");
is($total{wrong}, 0, "no lookup answered wrong after $total{flips} bits flipped in stored chunks");
cmp_ok($total{corrupted}, '>', 0, 'the flips were seen');
is($other_errors, '', 'every refusal of a flipped chunk is data_corrupted');
is( $node->safe_psql('postgres', 'SELECT * FROM lookups(-9223372036854775808, 9223372036854775807)'),
	'0|6000|0|', 'the pages put back, all 6,000 lookups answer right');
SbfTest::no_crash($node);

done_testing();
