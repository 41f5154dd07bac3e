
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# What drivers send: parameters without a type.  psycopg 3 sends a Python
# str, and a list of them, untyped, and so does libpq when a client passes
# no parameter types (pgbench -M extended here).  The server then picks an
# overload by the literal rules: an untyped list reaches the one-value
# function, which must refuse it rather than add '{u1,u2}' as one URL;
# simhash($1) and url_canonical($1) must hash and canonicalise the text.
# A tuple (psycopg 3 sends a record literal), a list literal with
# whitespace around it, and bytes cast to text (their hex digits) are
# refused the same way, with nothing added; None is answered None.
# Needs python3-psycopg (the test command installs it).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('drivers');
my $connstr = $node->connstr('postgres');

# psycopg 3, through Debian's python3 (not another python on PATH)
my ($out, $err) = ('', '');
my $ok = IPC::Run::run([ '/usr/bin/python3', "$FindBin::RealBin/drivers/psycopg_untyped.py", $connstr ],
	'>', \$out, '2>', \$err);
ok($ok, 'the psycopg 3 client ran') or diag($err);
my %got = map { /^([^:]+): (.*)$/ ? ($1 => $2) : () } split(/\n/, $out);

my %expected = (
	'list untyped' =>
	  q|InvalidParameterValue: value "{https://example.com/1,https://example.c..." looks like an array literal, not one value|,
	'list as text[]' => '[False, False, True]',
	'contains list untyped' =>
	  q|InvalidParameterValue: value "{https://example.com/1}" looks like an array literal, not one value|,
	'str untyped' => 'True',
	'bytes' => 'False',
	'list of bytes' => '[True, False]',
	'list of int' => '[False, False, True]',
	'simhash untyped' => 'True',
	'url_canonical untyped' => q{'http://example.com/b'},
	'url_canonical batch' => '[True, False, None]',
	# (1.2) what 1.1 let through: a tuple (a record literal), a list
	# literal with whitespace around it, bytes cast to text; each refused,
	# nothing added
	'tuple untyped' =>
	  q|InvalidParameterValue: value "(https://example.com/5,https://example.c..." looks like a record literal, not one value|,
	'tuple untyped adds' => '0',
	'contains tuple untyped' =>
	  q|InvalidParameterValue: value "(https://example.com/5)" looks like a record literal, not one value|,
	'list with leading space' =>
	  q|InvalidParameterValue: value " {https://example.com/5,https://example...." looks like an array literal, not one value|,
	'list with leading space adds' => '0',
	'list with trailing newline' =>
	  q|InvalidParameterValue: value "{https://example.com/5,https://example.c..." looks like an array literal, not one value|,
	'list with trailing newline adds' => '0',
	'bytes as text' =>
	  q|InvalidParameterValue: value "\x68747470733a2f2f6578616d706c652e636f6d..." looks like bytea in hex, not text|,
	'bytes as text adds' => '0',
	'list of bytes as text[]' =>
	  q|InvalidParameterValue: element 1 of the array, "\x68747470733a2f2f6578616d706c652e636f6d...", looks like bytea in hex, not text|,
	'list of bytes as text[] adds' => '0',
	# None is NULL: answered NULL (never False), nothing added
	'None' => 'None',
	'None adds' => '0',
	'None in a list' => '[False, None]',
	'None in a list adds' => '1',
	'None contains' => 'None');
foreach my $case (sort keys %expected)
{
	is($got{$case}, $expected{$case}, "psycopg 3: $case");
}

# libpq with untyped parameters: pgbench -M extended sends each :variable
# as a parameter of no type
my $script = "$PostgreSQL::Test::Utils::tmp_check/drivers.sql";
open(my $fh, '>', $script) or die "$script: $!";
print $fh "SELECT shared_test_and_add('pg_seen', :links) AS r\n\\gset\n";
close($fh);
$node->safe_psql('postgres', q{SELECT shared_bloom_create('pg_seen', 10000, 0.001)});

my @pgbench = ('pgbench', '-n', '-M', 'extended', '-t', '1',
	'-h', $node->host, '-p', $node->port, '-f', $script);
($out, $err) = ('', '');
IPC::Run::run([ @pgbench, '-D', 'links={https://example.com/a,https://example.com/b}', 'postgres' ],
	'>', \$out, '2>', \$err);
like($err, qr/looks like an array literal, not one value/,
	'libpq, untyped: a list literal is refused by the one-value function');
is($node->safe_psql('postgres',
		q{SELECT shared_contains('pg_seen', '{https://example.com/a,https://example.com/b}'::bytea)}),
	'f', 'libpq, untyped: nothing was added for the list');

# the same statement with one URL adds it
($out, $err) = ('', '');
$ok = IPC::Run::run([ @pgbench, '-D', 'links=https://example.com/a', 'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'libpq, untyped: one URL is one value') or diag($err);
is($node->safe_psql('postgres', q{SELECT shared_contains('pg_seen', 'https://example.com/a')}),
	't', 'libpq, untyped: the URL was added');

SbfTest::no_crash($node);
done_testing();
