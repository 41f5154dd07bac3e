
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# A text is hashed as its characters in UTF-8, whatever the database
# encoding, so a filter or a url_signature made in a UTF8 database answers
# alike in a LATIN1 (or SQL_ASCII) database it is copied or restored into:
# no false negative for a non-ASCII URL.  A bytea is hashed as its bytes.
# url_canonical and url_host canonicalise a URL's characters in UTF-8 too:
# the same ASCII bytes in UTF8, LATIN1, EUC_JP and SQL_ASCII databases.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use Encode qw(encode);
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('encodings');
my $dir = PostgreSQL::Test::Utils::tempdir;

my $nurls = 5;

foreach my $encoding ('UTF8', 'LATIN1', 'SQL_ASCII', 'EUC_JP')
{
	my $db = lc($encoding) . 'db';
	$node->safe_psql('postgres',
		"CREATE DATABASE $db ENCODING '$encoding' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
	);
	$node->safe_psql($db, 'CREATE EXTENSION sbf');
}

# In the UTF8 database: the URLs, typed as Unicode escapes (all but the
# last have a non-ASCII character, and all are LATIN1 characters), filters
# of them (the stable Bloom filter fed in the order of the URLs' UTF-8
# bytes, the same in every database), and their signatures, as sieve_flush
# would store them in "seen"
$node->safe_psql(
	'utf8db', q{
CREATE TABLE urls (url text PRIMARY KEY);
INSERT INTO urls VALUES
	(U&'caf\00E9'),
	(U&'https://m\00FCnchen.example/stra\00DFe'),
	(U&'https://example.org/\00BD-price?q=a\00F1o'),
	(U&'https://example.org/ol\00E9'),
	('https://example.org/plain-ascii');
CREATE TABLE filters (name text PRIMARY KEY, b bloom, s stablebloom);
INSERT INTO filters
SELECT 'binary COPY', bloom_agg(url, 1000, 0.001),
	   stablebloom_agg(url, stablebloom_sized(10000, 0.01, 3, 3) ORDER BY convert_to(url, 'UTF8'))
FROM urls;
CREATE TABLE seen (url text PRIMARY KEY, sig bigint NOT NULL);
INSERT INTO seen SELECT url, url_signature(url) FROM urls;
});
my $text_forms = $node->safe_psql('utf8db',
	"SELECT format('(%L, %L::bloom, %L::stablebloom)', 'text form', b, s) FROM filters");

# Moved out: the filters through binary COPY, the URLs and signatures
# through text COPY in UTF-8, each database holding the same characters in
# its own encoding (a SQL_ASCII database holds the UTF-8 bytes as they are)
$node->safe_psql(
	'utf8db', qq{
COPY filters TO '$dir/filters.bin' (FORMAT binary);
COPY urls TO '$dir/urls.txt' (ENCODING 'UTF8');
COPY seen TO '$dir/seen.txt' (ENCODING 'UTF8');
});

# Each URL present, in each filter; the signatures computed in UTF8 equal
# the ones computed here
my $checks = q{
SELECT name,
	   count(*) FILTER (WHERE b @> url) AS bloom,
	   count(*) FILTER (WHERE s @> url) AS stablebloom,
	   count(*) FILTER (WHERE b @> convert_to(url, 'UTF8')) AS utf8_bytea,
	   (SELECT count(*) FROM seen WHERE sig = url_signature(url)) AS signatures
FROM filters, urls
GROUP BY name ORDER BY name
};

foreach my $db ('latin1db', 'sql_asciidb')
{
	$node->safe_psql(
		$db, qq{
CREATE TABLE urls (url text PRIMARY KEY);
COPY urls FROM '$dir/urls.txt' (ENCODING 'UTF8');
CREATE TABLE filters (name text PRIMARY KEY, b bloom, s stablebloom);
COPY filters FROM '$dir/filters.bin' (FORMAT binary);
INSERT INTO filters VALUES $text_forms;
CREATE TABLE seen (url text PRIMARY KEY, sig bigint NOT NULL);
COPY seen FROM '$dir/seen.txt' (ENCODING 'UTF8');
});
	my $found = $node->safe_psql($db, $checks) =~ s/\n/; /gr;
	is( $found,
		"binary COPY|$nurls|$nurls|$nurls|$nurls; text form|$nurls|$nurls|$nurls|$nurls",
		"$db: the $nurls URLs are present in the UTF8 database's bloom and stablebloom moved by binary COPY and by their text form, and their url_signature is the one computed in UTF8 ($found)"
	);

	# the same filters, built here
	my $same = $node->safe_psql(
		$db, q{
SELECT bloom_agg(url, 1000, 0.001) = (SELECT b FROM filters WHERE name = 'binary COPY'),
	   stablebloom_agg(url, stablebloom_sized(10000, 0.01, 3, 3) ORDER BY convert_to(url, 'UTF8'))
		 = (SELECT s FROM filters WHERE name = 'binary COPY')
FROM urls});
	is($same, 't|t',
		"$db: bloom_agg and stablebloom_agg of the URLs build the UTF8 database's very filters ($same)"
	);

	# is_duplicate marks every URL of the moved filter a duplicate
	my $duplicates = $node->safe_psql(
		$db, q{
SELECT count(*) FILTER (WHERE d)
FROM (SELECT is_duplicate(url, (SELECT b FROM filters WHERE name = 'binary COPY')) OVER () AS d
	  FROM urls) s});
	is($duplicates, $nurls,
		"$db: is_duplicate over the moved bloom finds the $nurls URLs ($duplicates)");
}

# sieve_flush in LATIN1 finds the URLs in a "seen" of signatures computed
# in UTF8: nothing new for the frontier
my $appended = $node->safe_psql(
	'latin1db', q{
CREATE TABLE sigs (sig bigint PRIMARY KEY);
INSERT INTO sigs SELECT sig FROM seen;
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO discovered SELECT row_number() OVER (), url FROM urls;
SELECT sieve_flush('sigs', 'discovered', 'frontier');
});
is($appended, 0,
	"latin1db: sieve_flush of the $nurls URLs against the signatures computed in UTF8 appends $appended to the frontier"
);

# A shared filter fed the URLs in LATIN1 is the one fed them in UTF8
my @snapshots = map {
	$node->safe_psql(
		$_, q{
SELECT shared_bloom_create('shared_urls', 1000, 0.001, transactional => false);
SELECT count(*) FROM urls WHERE NOT shared_test_and_add('shared_urls', url);
SELECT md5(shared_bloom_snapshot('shared_urls')::text);
}) =~ s/\n/; /gr
} ('utf8db', 'latin1db');
is($snapshots[1], $snapshots[0],
	"shared_test_and_add of the URLs fills the same shared filter in UTF8 ($snapshots[0]) and in LATIN1 ($snapshots[1])"
);

# url_signature of 'caf\00E9' typed in LATIN1 is the one typed in UTF8
my @signatures =
  map { $node->safe_psql($_, q{SELECT url_signature(U&'caf\00E9')}) }
  ('utf8db', 'latin1db');
is($signatures[1], $signatures[0],
	"url_signature('caf\\00E9') is $signatures[0] in UTF8 and $signatures[1] in LATIN1"
);

# A bytea is its bytes, not characters: a URL's LATIN1 bytes are another
# element than its UTF-8 bytes (only the ASCII URL is found)
my $latin1_bytes = $node->safe_psql('latin1db',
	q{SELECT count(*) FILTER (WHERE b @> convert_to(url, 'LATIN1')) FROM filters, urls WHERE name = 'binary COPY'}
);
is($latin1_bytes, 1,
	"latin1db: the LATIN1 bytes of the URLs, as bytea, are other elements: $latin1_bytes of $nurls found (the ASCII one)"
);

# url_canonical and url_host of the same characters give the same bytes in
# every database that can hold them.  Each URL goes in as its UTF-8 bytes
# converted to the database's encoding (a SQL_ASCII database keeps them as
# they are, and reads them as UTF-8).
my @canonical = (
	[ "https://example.com/stra\x{df}e", 'https://example.com/stra%C3%9Fe', 'example.com' ],
	[ "https://b\x{fc}cher.example/", 'https://xn--bcher-kva.example/', 'xn--bcher-kva.example' ],
	[
		"HTTPS://WWW.B\x{fc}cher.Example:443/caf\x{e9}?q=a\x{f1}o#x",
		'https://www.xn--bcher-kva.example/caf%C3%A9?q=a%C3%B1o',
		'www.xn--bcher-kva.example'
	],
	[ 'http://example.com/%C3%9F', 'http://example.com/%C3%9F', 'example.com' ],
	[ "http://\x{65e5}\x{672c}.jp/\x{30d1}\x{30b9}", 'http://xn--wgv71a.jp/%E3%83%91%E3%82%B9', 'xn--wgv71a.jp', 'not LATIN1' ],
	[ "https://example.org/\x{bd}-price", 'https://example.org/%C2%BD-price', 'example.org', 'not EUC_JP' ]);

foreach my $db ('utf8db', 'latin1db', 'sql_asciidb', 'euc_jpdb')
{
	foreach my $case (@canonical)
	{
		my ($url, $canonical, $host, $not) = @$case;
		next if defined $not && $not eq 'not ' . uc($db =~ s/db$//r);
		my $hex = unpack('H*', encode('UTF-8', $url));
		my ($ret, $got, $stderr) = $node->psql($db,
			"SELECT url_canonical(u) || ' ' || url_host(u) FROM convert_from('\\x$hex'::bytea, 'UTF8') u");
		is($got . $stderr, "$canonical $host", "$db: url_canonical and url_host of $canonical");
	}

	# a non-ASCII name of strip_params strips its parameter
	my ($url, $name) = map { unpack('H*', encode('UTF-8', $_)) }
	  ("http://example.com/p?stra\x{df}e=1&x=2&stra\x{df}en_id=3", "stra\x{df}e");
	my ($ret, $stripped, $stderr) = $node->psql($db,
		"SELECT url_canonical(convert_from('\\x$url'::bytea, 'UTF8'), strip_params => ARRAY[convert_from('\\x$name'::bytea, 'UTF8')])"
	);
	is($stripped . $stderr, 'http://example.com/p?x=2&stra%C3%9Fen_id=3',
		"$db: url_canonical with strip_params => '{stra\\00DFe}' strips that parameter only ($stripped)");
}

# A URL that cannot be canonicalised in UTF-8 is an ERROR naming it and its
# character, or NULL with strict => false, as any URL without a canonical
# form (one in a batch does not abort it): bytes that are not UTF-8 in a
# SQL_ASCII database, a character with no UTF-8 form (a user-defined one) in
# EUC_JP.  A strip_params name is the caller's: an ERROR either way.
foreach my $case (
	[
		'sql_asciidb', 'SQL_ASCII', '68747470733a2f2f612e6578616d706c652f78df2f79',
		qr/ERROR:  22021: invalid byte sequence for encoding "UTF8": 0xdf 0x2f\nDETAIL:  It is at byte 20 of the URL "https:\/\/a.example\/x"; in a SQL_ASCII database the bytes of a URL are read as UTF-8/
	],
	[
		'euc_jpdb', 'EUC_JP', '68747470733a2f2f612e6578616d706c652f78f5a12f79',
		qr/ERROR:  22P05: character with byte sequence 0xf5 0xa1 in encoding "EUC_JP" has no equivalent in encoding "UTF8"\nDETAIL:  It is at byte 20 of the URL "https:\/\/a.example\/x"; URLs are canonicalised in UTF-8/
	])
{
	my ($db, $encoding, $hex, $error) = @$case;
	foreach my $call ('url_canonical(u)', 'url_host(u)')
	{
		my ($ret, $stdout, $stderr) = $node->psql($db,
			"\\set VERBOSITY verbose\nSELECT $call FROM convert_from('\\x$hex'::bytea, '$encoding') u");
		like($stderr, $error, "$db: $call of a URL without a UTF-8 form is an ERROR naming it");
	}
	my ($ret, $nulls, $stderr) = $node->psql($db,
		"SELECT count(*) FILTER (WHERE url_canonical(u, strict => false) IS NULL), "
		  . "count(*) FILTER (WHERE url_host(u, strict => false) IS NULL), "
		  . "string_agg(url_canonical(u, strict => false), ' ') "
		  . "FROM (VALUES (convert_from('\\x$hex'::bytea, '$encoding')), ('http://b.example/')) v(u)");
	$nulls .= $stderr;
	is($nulls, '1|1|http://b.example/',
		"$db: with strict => false, url_canonical and url_host of that URL are NULL, and the next URL is canonicalised ($nulls)");
	foreach my $strict ('true', 'false')
	{
		my ($ret, $stdout, $stderr) = $node->psql($db,
			"SELECT url_canonical('http://a.example/', strip_params => ARRAY[u], strict => $strict) FROM convert_from('\\x$hex'::bytea, '$encoding') u"
		);
		like(
			$stderr,
			qr/DETAIL:  It is at byte 20 of the strip_params name "https:\/\/a.example\/x"/,
			"$db: a strip_params name without a UTF-8 form is an ERROR naming it (strict => $strict)");
	}
}

# A URL of 600,000 bytes in LATIN1 is 1.2 MB in UTF-8: the DETAIL says which
# is longer than 1 MB
my ($ret_long, $out_long, $err_long) = $node->psql('latin1db',
	"SELECT url_canonical('http://x/' || repeat(chr(223), 600000))");
like(
	$err_long,
	qr/DETAIL:  The URL is invalid because its UTF-8 form is longer than 1 MB\./,
	'latin1db: a URL of 0.6 MB whose UTF-8 form is 1.2 MB is refused as such');

# A MULE_INTERNAL database: PostgreSQL has no conversion from it to UTF-8.
# An ASCII URL or strip_params name is canonicalised as in every database;
# a non-ASCII one is an ERROR 0A000 in url_canonical's terms (or NULL with
# strict => false), not the filters' "cannot hash" (42883), which hashing
# such a text still is.
$node->safe_psql('postgres',
	"CREATE DATABASE muledb ENCODING 'MULE_INTERNAL' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
$node->safe_psql('muledb', 'CREATE EXTENSION sbf');
my $mule_ascii = $node->safe_psql('muledb',
	q{SELECT url_canonical('HTTP://Example.COM:80/a/./b/../c?utm_id=1&x=%7e#top', strip_params => '{utm_*}') || ' ' || url_host('https://WWW.Example.com/')});
is($mule_ascii, 'http://example.com/a/c?x=~ www.example.com',
	"muledb: url_canonical and url_host of ASCII URLs ($mule_ascii)");

# 'http://x/', then U&'\00DFe' in MULE_INTERNAL (LATIN1's 0xdf, 'ß', after
# its charset byte 0x81)
my $mule = "convert_from('\\x687474703a2f2f782f81df65'::bytea, 'MULE_INTERNAL')";
foreach my $call ('url_canonical', 'url_host')
{
	my ($ret, $stdout, $stderr) = $node->psql('muledb',
		"\\set VERBOSITY verbose\nSELECT $call($mule)");
	like(
		$stderr,
		qr/ERROR:  0A000: $call cannot convert the URL "http:\/\/x\/\.\.\." from encoding "MULE_INTERNAL" to "UTF8"\nDETAIL:  Its character with byte sequence 0x81 0xdf at byte 10 is not ASCII, and PostgreSQL has no conversion from "MULE_INTERNAL" to "UTF8"/,
		"muledb: $call of a non-ASCII URL is an ERROR naming the function, the URL and the encoding");
	my ($ret2, $null, $stderr2) =
	  $node->psql('muledb', "SELECT $call($mule, strict => false) IS NULL");
	is($null . $stderr2, 't', "muledb: $call of a non-ASCII URL with strict => false is NULL");
}
foreach my $strict ('true', 'false')
{
	my ($ret, $stdout, $stderr) = $node->psql('muledb',
		"\\set VERBOSITY verbose\nSELECT url_canonical('http://x/?a=1', strip_params => ARRAY['b', 'a' || $mule], strict => $strict)");
	like(
		$stderr,
		qr/ERROR:  0A000: url_canonical cannot convert the strip_params name "ahttp:\/\/x\/\.\.\." from encoding "MULE_INTERNAL" to "UTF8"/,
		"muledb: a non-ASCII strip_params name is an ERROR (strict => $strict)");
}
my ($ret, $stdout, $stderr) = $node->psql('muledb',
	"\\set VERBOSITY verbose\nSELECT url_signature($mule)");
like($stderr, qr/ERROR:  42883: cannot hash text of encoding "MULE_INTERNAL"/,
	'muledb: url_signature of a non-ASCII text is still the "cannot hash" ERROR');

# What follows needs pg_dump and pg_restore of the server under test
SbfTest::end_unless_programs([ 'pg_dump', 'pg_restore' ], $node);

# A shared filter of canonical URLs made in the UTF8 database, to be asked
# in the LATIN1 database it is restored into ('caf\00E9' has no scheme: NULL)
$node->safe_psql(
	'utf8db', q{
SELECT shared_bloom_create('canonical_urls', 1000, 0.001, transactional => false);
SELECT shared_test_and_add('canonical_urls', url_canonical(url, strict => false)) FROM urls;
});

# pg_dump of the UTF8 database restored into a new LATIN1 database
my $dump = "$dir/utf8db.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('utf8db') ],
	'pg_dump -Fc of the UTF8 database');
$node->safe_psql('postgres',
	"CREATE DATABASE restored ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
);
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dump ],
	'pg_restore into a LATIN1 database');
my $restored = $node->safe_psql(
	'restored', q{
SELECT count(*) FILTER (WHERE b @> seen.url), count(*) FILTER (WHERE s @> seen.url),
	   count(*) FILTER (WHERE shared_contains('shared_urls', seen.url)),
	   count(*) FILTER (WHERE sig = url_signature(seen.url))
FROM filters, seen});
is($restored, "$nurls|$nurls|$nurls|$nurls",
	"restored in LATIN1: the $nurls URLs are in the restored bloom, stablebloom and shared filter, and keep their signatures ($restored)"
);

# and url_canonical of each URL with a scheme, in LATIN1, is in the shared
# filter of the URLs canonicalised in UTF8
my $canonical_found = $node->safe_psql(
	'restored', q{
SELECT count(*) FILTER (WHERE shared_contains('canonical_urls', url_canonical(url, strict => false)))
FROM seen WHERE url LIKE '%://%'});
is($canonical_found, $nurls - 1,
	"restored in LATIN1: url_canonical of the @{[$nurls - 1]} URLs with a scheme is in the shared filter of their canonical forms made in UTF8 ($canonical_found)"
);

SbfTest::no_crash($node);

done_testing();
