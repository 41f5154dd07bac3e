
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# A crawl sharded across servers (docs/distributed.md): two shard clusters
# hold the crawl split by url_signature(url), reached from a coordinator
# through postgres_fdw with extensions 'sbf'.  Checks that
#  (a) bloom_union_agg of the shards' bloom_agg (computed on the shards)
#	   equals bloom_agg over the whole crawl on one server;
#  (b) is_duplicate ... OVER (PARTITION BY shard ORDER BY pos) on each shard
#	   finds every true duplicate, with false positives within theory;
#  (c) sieve_flush run on each shard gives the single-server frontier;
# and that binary COPY from one cluster to another gives identical values.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $coordinator = SbfTest::new_node('coordinator');
my @shards = map { SbfTest::new_node("shard$_") } (1, 2);

foreach my $shard (@shards)
{
	$shard->safe_psql(
		'postgres', q{
CREATE TABLE crawl (pos bigint PRIMARY KEY, url text NOT NULL, shard int NOT NULL);
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
});
}

# The coordinator: the whole crawl locally (the single-server reference),
# and the same rows partitioned by url_signature over the shards
SbfTest::load_stream($coordinator, 'whole',
	SbfTest::data_file('doccrawl-pg-python.tsv.gz'));
$coordinator->safe_psql(
	'postgres', q{
CREATE EXTENSION postgres_fdw;
CREATE TABLE crawl (pos bigint NOT NULL, url text NOT NULL, shard int NOT NULL)
	PARTITION BY LIST (shard);
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
});
foreach my $i (1, 2)
{
	my $shard = $shards[ $i - 1 ];
	my $host = $shard->host;
	my $port = $shard->port;
	my $key = $i - 1;
	my $user = $shard->safe_psql('postgres', 'SELECT current_user');
	$coordinator->safe_psql(
		'postgres', qq{
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$host', port '$port', dbname 'postgres', extensions 'sbf');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i OPTIONS (user '$user');
CREATE FOREIGN TABLE crawl_$i PARTITION OF crawl FOR VALUES IN ($key)
	SERVER shard$i OPTIONS (table_name 'crawl');
CREATE FOREIGN TABLE frontier_$i (pos bigint, url text)
	SERVER shard$i OPTIONS (table_name 'frontier');
});
}
$coordinator->safe_psql('postgres',
	'INSERT INTO crawl SELECT pos, url, (url_signature(url) & 1)::int FROM whole'
);

my @rows =
  map { $_->safe_psql('postgres', 'SELECT count(*) FROM crawl') } @shards;
my $sharded = $coordinator->safe_psql('postgres', 'SELECT count(*) FROM crawl');
my $whole = $coordinator->safe_psql('postgres', 'SELECT count(*) FROM whole');
is($sharded, $whole,
	"the crawl is split over 2 shards by url_signature (rows: @rows; $sharded of $whole)"
);

# (a) per-shard aggregates, pushed down, merged on the coordinator
my $agg = q{
SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(url, 10000, 0.01) AS f FROM crawl_1
	 UNION ALL SELECT bloom_agg(url, 10000, 0.01) FROM crawl_2) s
};
my $plan =
  $coordinator->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $agg");
like(
	$plan,
	qr/Remote SQL: SELECT public\.bloom_agg\(url, 10000::bigint, 0\.01::double precision\)/,
	'bloom_agg is computed on the shards (pushed down by postgres_fdw)');
my ($same, $bits) = split(
	/\|/,
	$coordinator->safe_psql(
		'postgres', qq{
SELECT ($agg) = (SELECT bloom_agg(url, 10000, 0.01) FROM whole),
	   (bloom_info(($agg))->>'bits_set')::bigint
}));
is($same, 't',
	"(a) bloom_union_agg of the shards' bloom_agg = bloom_agg on one server ($bits bits set)"
);

# (b) marking on each shard, against the exact answer of the whole crawl
$coordinator->safe_psql('postgres',
	'CREATE TABLE exact AS SELECT pos, row_number() OVER (PARTITION BY url ORDER BY pos) > 1 AS dup FROM whole'
);
my ($fp, $fn, $bound, $dups) = (0, 0, 0, 0);
foreach my $i (1, 2)
{
	$shards[ $i - 1 ]->safe_psql(
		'postgres', q{
CREATE TABLE marked AS
	SELECT pos, is_duplicate(url, bloom_sized(3000, 0.01))
				OVER (PARTITION BY shard ORDER BY pos) AS flagged
	FROM crawl
});
	my ($f, $n, $b, $d) = split(
		/\|/,
		$coordinator->safe_psql(
			'postgres', qq{
CREATE FOREIGN TABLE marked_$i (pos bigint, flagged bool)
	SERVER shard$i OPTIONS (table_name 'marked');
SELECT count(*) FILTER (WHERE m.flagged AND NOT e.dup),
	   count(*) FILTER (WHERE NOT m.flagged AND e.dup),
	   ceil(1.5 * count(*) FILTER (WHERE NOT e.dup)
				* bloom_expected_fpr(bloom_optimal_bits(3000, 0.01),
									 bloom_optimal_hashes(bloom_optimal_bits(3000, 0.01), 3000),
									 count(*) FILTER (WHERE NOT e.dup)) + 3),
	   count(*) FILTER (WHERE e.dup)
FROM marked_$i m JOIN exact e USING (pos)
}));
	$fp += $f;
	$fn += $n;
	$bound += $b;
	$dups += $d;
}
is($fn, 0,
	"(b) marking on each shard misses none of the $dups true duplicates (false negatives: $fn)"
);
cmp_ok($fp, '<=', $bound,
	"(b) false positives on the shards ($fp) within 1.5x the theory's final rate + 3 per shard ($bound)"
);

# (c) the offline sieve, run on each shard, against one server
$coordinator->safe_psql(
	'postgres', q{
INSERT INTO discovered SELECT pos, url FROM whole;
SELECT sieve_flush('seen', 'discovered', 'frontier');
});
foreach my $shard (@shards)
{
	$shard->safe_psql(
		'postgres', q{
INSERT INTO discovered SELECT pos, url FROM crawl;
SELECT sieve_flush('seen', 'discovered', 'frontier');
});
}
my ($frontier, $differ) = split(
	/\|/,
	$coordinator->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM frontier),
	   (SELECT count(*) FROM (SELECT pos, url FROM frontier EXCEPT ALL
							  (SELECT pos, url FROM frontier_1 UNION ALL SELECT pos, url FROM frontier_2)) c)
	   + (SELECT count(*) FROM ((SELECT pos, url FROM frontier_1 UNION ALL SELECT pos, url FROM frontier_2)
								EXCEPT ALL SELECT pos, url FROM frontier) s)
}));
ok( $differ == 0 && $frontier == 5473,
	"(c) the shards' frontiers together are the single-server frontier of $frontier rows (5473 expected; $differ rows differ)"
);

# Binary COPY from the coordinator to a shard gives identical values
my $file = PostgreSQL::Test::Utils::tempdir . '/filters.bin';
my $fingerprint = q{
SELECT md5(string_agg(id || ':' || coalesce(b::text, '-') || ':' || coalesce(s::text, '-'), ',' ORDER BY id))
FROM filters
};
$coordinator->safe_psql(
	'postgres', qq{
CREATE TABLE filters (id int, b bloom, s stablebloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3), stablebloom_empty(16, 2, 3, 1)),
	(2, (SELECT bloom_agg(url, 10000, 0.01) FROM whole),
		(SELECT stablebloom_agg(url, stablebloom_sized(20000, 0.05, 4, 3) ORDER BY pos) FROM whole)),
	(3, NULL, NULL);
COPY filters TO '$file' WITH (FORMAT binary);
});
$shards[0]->safe_psql(
	'postgres', qq{
CREATE TABLE filters (id int, b bloom, s stablebloom);
COPY filters FROM '$file' WITH (FORMAT binary);
});
my $here = $coordinator->safe_psql('postgres', $fingerprint);
my $there = $shards[0]->safe_psql('postgres', $fingerprint);
ok( $here ne '' && $here eq $there,
	"binary COPY to another cluster gives identical bloom and stablebloom values ($here = $there)"
);

SbfTest::no_crash($_) foreach ($coordinator, @shards);

done_testing();
