
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Corrupted values already stored in a table (written by a binary-coercible
# cast from bytea, which skips the input checks, as a bad disk or a foreign
# tool might): every function that reads them must answer or raise an
# ERROR, never crash, never read out of bounds.  The format version is
# checked on read.
#
# CREATE CAST ... WITHOUT FUNCTION wants bytea's alignment: the catalog is
# bent for the moment the casts are created, then put back.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('corruption');

$node->safe_psql(
	'postgres', q{
UPDATE pg_type SET typalign = 'i' WHERE oid IN ('bloom'::regtype, 'stablebloom'::regtype, 'slidingbloom'::regtype);
CREATE CAST (bytea AS bloom) WITHOUT FUNCTION;
CREATE CAST (bytea AS stablebloom) WITHOUT FUNCTION;
CREATE CAST (bytea AS slidingbloom) WITHOUT FUNCTION;
UPDATE pg_type SET typalign = 'd' WHERE oid IN ('bloom'::regtype, 'stablebloom'::regtype, 'slidingbloom'::regtype);

-- Good values of every shape, as their stored bytes
CREATE TABLE good (kind text, bytes bytea);
INSERT INTO good VALUES
	('bloom', bloom_send(bloom_empty(1000, 3, 7))),
	('bloom', bloom_send(bloom_add(bloom_add(bloom_empty(130, 3, 7), 'a'), 'b'))),
	('stablebloom', stablebloom_send(stablebloom_empty(40, 3, 5, 2, 9))),
	('stablebloom', stablebloom_send(stablebloom_add(stablebloom_add(stablebloom_empty(40, 3, 5, 2, 9), 'a'), 'b'))),
	('stablebloom', stablebloom_send(stablebloom_add(stablebloom_empty(100, 2, 255, 7), 'a'))),
	('slidingbloom', slidingbloom_send(slidingbloom_empty(100, 2, 5, 3, 9))),
	('slidingbloom', slidingbloom_send(slidingbloom_add(slidingbloom_add(slidingbloom_empty(60, 1, 3, 1, 9, true), 'a'), 'b')));

-- Mutations: every byte set to 0x00, 0x01, 0x7f, 0xff and inverted, every
-- truncation, and appended bytes
CREATE TABLE bad (id serial, kind text, bytes bytea);
INSERT INTO bad (kind, bytes)
	SELECT kind, set_byte(bytes, i, v)
	FROM good, generate_series(0, length(bytes) - 1) i, unnest(ARRAY[0, 1, 127, 255]) v
	UNION ALL
	SELECT kind, set_byte(bytes, i, get_byte(bytes, i) # 255)
	FROM good, generate_series(0, length(bytes) - 1) i
	UNION ALL
	SELECT kind, substr(bytes, 1, n) FROM good, generate_series(0, length(bytes) - 1) n
	UNION ALL
	SELECT kind, bytes || '\x00ff00ff00ff00ff'::bytea FROM good;

CREATE TABLE stored_bloom AS SELECT id, bytes::bloom AS f FROM bad WHERE kind = 'bloom';
CREATE TABLE stored_stablebloom AS SELECT id, bytes::stablebloom AS f FROM bad WHERE kind = 'stablebloom';
CREATE TABLE stored_slidingbloom AS SELECT id, bytes::slidingbloom AS f FROM bad WHERE kind = 'slidingbloom';

-- Run a statement on one stored value; 'ok' or the SQLSTATE
CREATE FUNCTION outcome(query text, id int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query USING id;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	IF SQLSTATE = 'XX000' THEN
		RETURN SQLSTATE || ' ' || SQLERRM;
	END IF;
	RETURN SQLSTATE;
END $$;

CREATE TABLE outcomes (kind text, query text, id int, result text);
});

# Every reader of each type, on the stored value whose id is $1
my %queries = (
	bloom => [
		q{SELECT bloom_info(f) FROM stored_bloom WHERE id = $1},
		q{SELECT f::text FROM stored_bloom WHERE id = $1},
		q{SELECT bloom_send(f) FROM stored_bloom WHERE id = $1},
		q{SELECT bloom_contains(f, 'a'::text), f @> 42::bigint FROM stored_bloom WHERE id = $1},
		q{SELECT bloom_add(f, 'c'::text) FROM stored_bloom WHERE id = $1},
		# (one filter a row: a row of two filters of 512 MB is over 1 GB,
		# which PostgreSQL refuses, as 54000 up to 17 and XX000 in 18)
		q{SELECT bloom_union(f, f) FROM stored_bloom WHERE id = $1},
		q{SELECT bloom_intersect(f, f), f = f FROM stored_bloom WHERE id = $1},
		q{SELECT bloom_cardinality(f), bloom_fpr(f) FROM stored_bloom WHERE id = $1},
		q{SELECT bloom_agg(g::text, f) FROM stored_bloom, generate_series(1, 5) g WHERE id = $1},
		q{SELECT bloom_union_agg(f) FROM stored_bloom WHERE id = $1 OR id = $1},
		q{SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(g::text, f) OVER (ORDER BY g) AS d FROM stored_bloom, generate_series(1, 5) g WHERE id = $1) s},
	],
	stablebloom => [
		q{SELECT stablebloom_info(f) FROM stored_stablebloom WHERE id = $1},
		q{SELECT f::text FROM stored_stablebloom WHERE id = $1},
		q{SELECT stablebloom_send(f) FROM stored_stablebloom WHERE id = $1},
		q{SELECT stablebloom_contains(f, 'a'::text), f @> 42::bigint FROM stored_stablebloom WHERE id = $1},
		q{SELECT stablebloom_add(f, 'c'::text) FROM stored_stablebloom WHERE id = $1},
		q{SELECT f = f, stablebloom_fpr(f) FROM stored_stablebloom WHERE id = $1},
		q{SELECT stablebloom_agg(g::text, f ORDER BY g) FROM stored_stablebloom, generate_series(1, 5) g WHERE id = $1},
		q{SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(g::text, f) OVER (ORDER BY g) AS d FROM stored_stablebloom, generate_series(1, 5) g WHERE id = $1) s},
	],
	slidingbloom => [
		q{SELECT slidingbloom_info(f) FROM stored_slidingbloom WHERE id = $1},
		q{SELECT f::text FROM stored_slidingbloom WHERE id = $1},
		q{SELECT slidingbloom_send(f) FROM stored_slidingbloom WHERE id = $1},
		q{SELECT slidingbloom_contains(f, 'a'::text), f @> 42::bigint FROM stored_slidingbloom WHERE id = $1},
		q{SELECT slidingbloom_add(f, 'c'::text) FROM stored_slidingbloom WHERE id = $1},
		q{SELECT f = f, slidingbloom_stale_rate(f, 10) FROM stored_slidingbloom WHERE id = $1},
		q{SELECT slidingbloom_agg(g::text, f ORDER BY g) FROM stored_slidingbloom, generate_series(1, 5) g WHERE id = $1},
		q{SELECT count(*) FILTER (WHERE d) FROM (SELECT is_duplicate(g::text, f) OVER (ORDER BY g) AS d FROM stored_slidingbloom, generate_series(1, 5) g WHERE id = $1) s},
	]);

foreach my $kind ('bloom', 'stablebloom', 'slidingbloom')
{
	foreach my $query (@{ $queries{$kind} })
	{
		$node->safe_psql('postgres',
			"INSERT INTO outcomes SELECT '$kind', \$q\$$query\$q\$, id, outcome(\$q\$$query\$q\$, id) FROM stored_$kind"
		);
	}
}

my ($total, $oks, $errors) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
SELECT count(*), count(*) FILTER (WHERE result = 'ok'), count(*) FILTER (WHERE result <> 'ok')
FROM outcomes
}));
cmp_ok($total, '>', 5000,
	"$total reads of corrupted stored values: $oks answered, $errors raised an ERROR"
);
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

my $unexpected = $node->safe_psql(
	'postgres', q{
SELECT coalesce(string_agg(result || ' x' || n, ', ' ORDER BY result), '')
FROM (SELECT result, count(*) AS n FROM outcomes
	  WHERE result NOT IN ('ok', 'XX001', '22023', '54000') GROUP BY result) s
});
is($unexpected, '',
	'every ERROR is data_corrupted (XX001) or a parameter error (22023, 54000), never internal'
) or diag $node->safe_psql(
	'postgres', q{
SELECT string_agg(DISTINCT kind || ': ' || query || ' -> ' || result, E'\n')
FROM outcomes WHERE result NOT IN ('ok', 'XX001', '22023', '54000')
});

# a value whose version bytes (4 and 5) are not 1, 0 is refused, whatever
# the reader
my ($changed, $refused) = split(
	/\|/,
	$node->safe_psql(
		'postgres', q{
SELECT count(*), count(*) FILTER (WHERE result = 'XX001')
FROM outcomes o JOIN bad b USING (id)
WHERE b.kind = o.kind
  AND length(b.bytes) >= 6
  AND (get_byte(b.bytes, 4) <> 1 OR get_byte(b.bytes, 5) <> 0)
}));
ok( $changed > 0 && $refused == $changed,
	"an unknown format version is refused on read ($refused of $changed reads refused)"
);

SbfTest::no_crash($node);

done_testing();
