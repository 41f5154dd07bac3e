
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# bloom, stablebloom and slidingbloom values (windows of arrivals and of
# time) copied from one cluster to another, with COPY ... TO on the first
# and COPY ... FROM on the second, in text and in binary format, arrive
# identical; the binary form (send) is the stored
# payload that the text form spells in hexadecimal.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $source = SbfTest::new_node('source');
my $target = SbfTest::new_node('target');
my $dir = PostgreSQL::Test::Utils::tempdir;

# Values of every shape: empty, seeded, small and large, and a NULL
$source->safe_psql(
	'postgres', q{
CREATE TABLE filters (id int PRIMARY KEY, filter bloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3)),
	(2, bloom_empty(60, 1, -7)),
	(3, (SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 700) i)),
	(4, (SELECT bloom_agg('https://example.org/' || i, bloom_sized(200000, 0.001, 12345))
		 FROM generate_series(1, 150000) i)),
	(5, NULL);
CREATE TABLE sfilters (id int PRIMARY KEY, filter stablebloom);
INSERT INTO sfilters VALUES
	(1, stablebloom_empty(16, 2, 3, 1)),
	(2, (SELECT stablebloom_agg(g, stablebloom_empty(1001, 3, 5, 7, -3) ORDER BY g)
		 FROM generate_series(1, 700) g)),
	(3, (SELECT stablebloom_agg('https://example.org/' || g, stablebloom_sized(400000, 0.05, 4, 1) ORDER BY g)
		 FROM generate_series(1, 150000) g)),
	(4, (SELECT stablebloom_agg(g, stablebloom_empty(999, 2, 255, 3) ORDER BY g) FROM generate_series(1, 50) g)),
	(5, NULL);
CREATE TABLE wfilters (id int PRIMARY KEY, filter slidingbloom);
INSERT INTO wfilters VALUES
	(1, slidingbloom_sized(100, 0.01)),
	(2, (SELECT slidingbloom_agg(g, slidingbloom_fit(500, 960, 0, true, 100) ORDER BY g)
		 FROM generate_series(1, 700) g)),
	(3, slidingbloom_sized('7 days', 1000, 0.01, '1 hour', -5)),
	(4, (SELECT slidingbloom_agg('https://example.org/' || g, slidingbloom_sized('1 day', 100000, 0.01),
								 timestamptz '2026-01-01 00:00+00' + g * interval '1 second' ORDER BY g)
		 FROM generate_series(1, 150000) g)),
	(5, NULL);
});

# rows, non-NULL values and a digest of the stored bytes of TABLE
sub fingerprint
{
	my ($node, $table, $send) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT count(*) || ' rows, ' || count(filter) || ' values, md5 '
	   || md5(string_agg(id || ':' || coalesce($send(filter)::text, 'null'), ',' ORDER BY id))
FROM $table
});
}

my %type_of = (filters => 'bloom', sfilters => 'stablebloom', wfilters => 'slidingbloom');
# the large value, whose last 100 URLs are looked up after the trip
my %large_of = (filters => 4, sfilters => 3, wfilters => 4);
foreach my $table ('filters', 'sfilters', 'wfilters')
{
	my $type = $type_of{$table};
	my $send = "${type}_send";
	my $large = $large_of{$table};

	$source->safe_psql(
		'postgres', qq{
COPY $table TO '$dir/$table.txt';
COPY $table TO '$dir/$table.bin' WITH (FORMAT binary);
});
	$target->safe_psql(
		'postgres', qq{
CREATE TABLE ${table}_via_text (id int PRIMARY KEY, filter $type);
CREATE TABLE ${table}_via_binary (id int PRIMARY KEY, filter $type);
COPY ${table}_via_text FROM '$dir/$table.txt';
COPY ${table}_via_binary FROM '$dir/$table.bin' WITH (FORMAT binary);
});

	my $sent = fingerprint($source, $table, $send);
	my $via_text = fingerprint($target, "${table}_via_text", $send);
	my $via_binary = fingerprint($target, "${table}_via_binary", $send);
	ok( $sent =~ /^5 rows, 4 values, md5 / && $via_text eq $sent,
		"$table: text COPY to a second cluster gives identical values ($sent = $via_text)"
	);
	ok( $sent =~ /^5 rows, 4 values, md5 / && $via_binary eq $sent,
		"$table: binary COPY to a second cluster gives identical values ($sent = $via_binary)"
	);

	# the type's own equality agrees, NULL for NULL, on the second cluster
	my $equal = $target->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE t.filter IS NOT DISTINCT FROM b.filter)
FROM ${table}_via_text t JOIN ${table}_via_binary b USING (id)
});
	is($equal, 5,
		"$table: the values read from text and from binary are equal ($equal of 5 rows)"
	);

	my $hex = $source->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE $send(filter) = decode(substr(filter::text, 3), 'hex'))
FROM $table WHERE filter IS NOT NULL
});
	is($hex, 4,
		"$table: the binary form is the text form's hexadecimal bytes ($hex of 4 values)"
	);

	my $found = $target->safe_psql(
		'postgres', qq{
SELECT count(*) FROM ${table}_via_binary, generate_series(149901, 150000) i
WHERE id = $large AND filter @> ('https://example.org/' || i)
});
	is($found, 100,
		"$table: values read back keep answering: $found of the last 100 URLs of row $large are present"
	);
}

SbfTest::no_crash($source);
SbfTest::no_crash($target);

done_testing();
