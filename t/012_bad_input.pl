
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Corrupted binary COPY input and random text are rejected with an ERROR
# (or, where the corruption leaves a well-formed value, accepted as one),
# and no backend ever crashes.  For bloom and stablebloom.
#
# The random values come from Perl's rand() with a seed the test prints
# (1 unless SBF_SEED is set), so a run can be replayed:
#
#   SBF_SEED=<seed> make prove_installcheck PROVE_TESTS=t/012_bad_input.pl

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{SBF_SEED} // 1;
BAIL_OUT("SBF_SEED must be a non-negative integer, not '$seed'")
  unless $seed =~ /^[0-9]+$/;
srand($seed);
diag("random values from seed $seed (replay with SBF_SEED=$seed)");

my $node = SbfTest::new_node('bad_input');
my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql(
	'postgres', q{
	CREATE TABLE good_bloom (filter bloom);
	INSERT INTO good_bloom SELECT bloom_add(bloom_add(bloom_empty(128, 3, 99), 'a'), 'b');
	CREATE TABLE good_stablebloom (filter stablebloom);
	-- Max 5 in 3-bit cells, so that cells can hold out-of-range values
	INSERT INTO good_stablebloom
		SELECT stablebloom_add(stablebloom_add(stablebloom_empty(40, 3, 5, 2, 99), 'a'), 'b');
	CREATE TABLE target_bloom (filter bloom);
	CREATE TABLE target_stablebloom (filter stablebloom);});

# random_hex(n): n random bytes as hexadecimal
sub random_hex
{
	my ($n) = @_;
	return join('', map { sprintf('%02x', int(rand(256))) } 1 .. $n);
}

sub write_file
{
	my ($path, $bytes) = @_;
	open(my $out, '>:raw', $path) or die "cannot write $path: $!";
	print $out $bytes;
	close($out) or die "cannot write $path: $!";
	return;
}

foreach my $type ('bloom', 'stablebloom')
{
	$node->safe_psql('postgres',
		"\\copy good_$type TO '$tmp/$type-good.bin' WITH (FORMAT binary)");

	# Binary COPY file: 19-byte signature and header, then per row an int16
	# field count, an int32 field length and the field's bytes, then int16 -1.
	my $data = slurp_file("$tmp/$type-good.bin");
	my $head = substr($data, 0, 19);
	my $row = substr($data, 19, length($data) - 21);
	my ($nfields, $length) = unpack('s> l>', $row);
	my $payload = substr($row, 6, $length);
	is($nfields, 1, "$type: the binary COPY of the good value has one field");

	my @files;
	my $write = sub {
		my ($name, $body) = @_;
		my $path = "$tmp/$type-$name.bin";
		write_file($path,
			$head . pack('s> l>', 1, length($body)) . $body . "\xff\xff");
		push @files, [ "$type-$name", $path ];
	};
	for my $i (0 .. length($payload) - 1)    # every byte inverted, one at a time
	{
		my $b = $payload;
		substr($b, $i, 1) = chr(ord(substr($b, $i, 1)) ^ 0xff);
		$write->(sprintf('flip-%03d', $i), $b);
	}
	for my $i (0 .. length($payload) - 1)    # every byte set to 0x01 (small values)
	{
		my $b = $payload;
		substr($b, $i, 1) = "\x01";
		$write->(sprintf('one-%03d', $i), $b);
	}
	for my $n (0 .. length($payload) - 1)    # every truncation
	{
		$write->(sprintf('cut-%03d', $n), substr($payload, 0, $n));
	}
	$write->('long', $payload . "\x00");     # one byte too many

	my ($rejected, $accepted) = (0, 0);
	my (@other, @wrongly_accepted, @not_working);
	foreach my $file (@files)
	{
		my ($name, $path) = @$file;
		my ($ret, $out, $err) = $node->psql('postgres',
			"TRUNCATE target_$type;\n\\copy target_$type FROM '$path' WITH (FORMAT binary)\n",
			extra_params => [ '-v', 'VERBOSITY=sqlstate' ]);
		if ($ret == 0)
		{
			# accepted: never a truncated or overlong value, and it must work
			push @wrongly_accepted, $name if $name =~ /-cut-|-long$/;
			my ($vret, $vout, $verr) = $node->psql(
				'postgres', "SELECT ${type}_info(filter), filter @> 'a'::text,
							${type}_add(filter, 'c') @> 'c'::text FROM target_$type");
			if ($vret == 0)
			{
				$accepted++;
			}
			else
			{
				push @not_working, "$name: $verr";
			}
		}
		else
		{
			$rejected++;
			push @other, "$name: $err" unless $err =~ /ERROR:  22P03/;
		}
	}
	my $tried = scalar(@files);
	is(scalar(@other), 0,
		"$type: corrupted binary input ($tried files): $rejected rejected with 22P03, $accepted accepted as valid filters, "
		  . scalar(@other)
		  . " other errors")
	  or diag(join("\n", @other));
	cmp_ok($rejected, '>=', 60,
		"$type: at least 60 of the $tried corrupted binary inputs rejected ($rejected)");
	is(scalar(@wrongly_accepted), 0,
		"$type: no truncated or overlong binary value accepted")
	  or diag(join("\n", @wrongly_accepted));
	is(scalar(@not_working), 0,
		"$type: every accepted binary value works ($accepted)")
	  or diag(join("\n", @not_working));

	# Random bytes after "\x", and the good value with random bytes changed
	my $good = $node->safe_psql('postgres', "SELECT filter::text FROM good_$type");
	my $texts = 0;
	my @bad_text;
	for my $i (1 .. 100)
	{
		my $hex = random_hex(int(rand(80)));
		my $pos = 3 + 2 * int(rand(int((length($good) - 2) / 2)));
		foreach my $text ("\\x$hex",
			substr($good, 0, $pos - 1) . substr($hex, 0, 2) . substr($good, $pos + 1))
		{
			next if length($text) < 4;
			$texts++;
			my ($ret, $out, $err) = $node->psql(
				'postgres', "SELECT ${type}_info('$text'::$type)",
				extra_params => [ '-v', 'VERBOSITY=sqlstate' ]);
			push @bad_text, "text $text: $err"
			  if $ret != 0 && $err !~ /ERROR:  22P02/;
		}
	}
	is(scalar(@bad_text), 0,
		"$type: 200 random and randomly corrupted text values ($texts long enough to try): all rejected with 22P02 or valid"
	) or diag(join("\n", @bad_text));
}

is($node->safe_psql('postgres', 'SELECT true'), 't', 'the server is still up');

SbfTest::no_crash($node);
done_testing();
