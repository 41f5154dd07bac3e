--
-- bloom: a classic Bloom filter.  What a user types, with its answers.
--

-- Plan memory before building anything: bits for 1M URLs at 1%, the best
-- number of hashes for that size, and the false-positive rate it reaches.
SELECT bloom_optimal_bits(1000000, 0.01) AS bits;
SELECT bloom_optimal_hashes(9585088, 1000000) AS hashes;
SELECT round(bloom_expected_fpr(9585088, 7, 1000000)::numeric, 5) AS fpr_at_capacity;
SELECT round(bloom_expected_fpr(9585088, 7, 2000000)::numeric, 5) AS fpr_at_twice_capacity;
-- The planning helpers answer for any size, also beyond the 1 GB one bloom
-- value holds: 300M URLs at one in a million need 8.6e9 bits (1028 MB)
SELECT bloom_optimal_bits(300000000, 1e-6) AS bits,
	   pg_size_pretty(bloom_optimal_bits(300000000, 1e-6) / 8) AS size,
	   bloom_optimal_hashes(bloom_optimal_bits(300000000, 1e-6), 300000000) AS hashes,
	   round((1e6 * bloom_expected_fpr(bloom_optimal_bits(300000000, 1e-6), 20, 300000000))::numeric, 3) AS fpr_per_million;

-- bloom_sized picks exactly those parameters
SELECT bloom_info(bloom_sized(1000000, 0.01)) - 'size_bytes' AS info;
-- An empty filter is stored as its 32-byte header; its bits take their
-- 1.2 MB once the first element is added
SELECT (bloom_info(bloom_sized(1000000, 0.01)) ->> 'size_bytes')::int AS empty_size_bytes,
	   (bloom_info(bloom_add(bloom_sized(1000000, 0.01), 'x')) ->> 'size_bytes')::int AS size_bytes;

-- bloom_empty takes them directly; a filter is a value like any other
CREATE TABLE filters (name text PRIMARY KEY, filter bloom);
INSERT INTO filters VALUES
	('small', bloom_empty(1024, 3)),
	('seeded', bloom_empty(1024, 3, 42));
SELECT name, bloom_info(filter) ->> 'bits' AS bits,
	   bloom_info(filter) ->> 'hashes' AS hashes,
	   bloom_info(filter) ->> 'seed' AS seed
FROM filters ORDER BY name;

-- Adding returns a new filter; the input is untouched
UPDATE filters SET filter = bloom_add(bloom_add(filter, 'https://www.postgresql.org/'),
									  'https://docs.python.org/3/');
SELECT name,
	   bloom_contains(filter, 'https://www.postgresql.org/') AS has_pg,
	   bloom_contains(filter, 'https://docs.python.org/3/') AS has_python,
	   bloom_contains(filter, 'https://www.rust-lang.org/') AS has_rust
FROM filters ORDER BY name;

-- Adding NULL leaves the filter as it was; testing NULL answers NULL
SELECT bloom_add(filter, NULL::text) = filter AS unchanged,
	   bloom_contains(filter, NULL::text) AS contains_null
FROM filters WHERE name = 'small';

-- The same seed and parameters give the same bits; another seed, others
SELECT a.filter = bloom_add(bloom_add(bloom_empty(1024, 3), 'https://www.postgresql.org/'),
							'https://docs.python.org/3/') AS same_seed_same_bits,
	   a.filter = b.filter AS other_seed_same_bits
FROM filters a, filters b WHERE a.name = 'small' AND b.name = 'seeded';

-- text, bytea and bigint elements; text and bytea hash their bytes alike
SELECT bloom_contains(bloom_add(bloom_empty(1024, 3), 'abc'::text), 'abc'::bytea) AS text_is_bytea,
	   bloom_contains(bloom_add(bloom_empty(1024, 3), 42::bigint), 42::bigint) AS has_42,
	   bloom_contains(bloom_add(bloom_empty(1024, 3), 42::bigint), 43::bigint) AS has_43;

-- Operators: @> and <@ test membership
SELECT filter @> 'https://www.postgresql.org/'::text AS contains,
	   'https://www.rust-lang.org/'::text <@ filter AS contained
FROM filters WHERE name = 'small';

-- Union and intersection of filters with equal parameters
WITH f AS (
	SELECT bloom_add(bloom_add(bloom_empty(4096, 4), 'a'), 'b') AS ab,
		   bloom_add(bloom_add(bloom_empty(4096, 4), 'b'), 'c') AS bc
)
SELECT bloom_contains(ab | bc, 'a') AS union_has_a,
	   bloom_contains(ab | bc, 'c') AS union_has_c,
	   bloom_contains(ab & bc, 'b') AS both_have_b,
	   bloom_contains(ab & bc, 'a') AS both_have_a,
	   bloom_union(ab, bc) = (ab | bc) AS union_is_operator,
	   bloom_intersect(ab, bc) = (ab & bc) AS intersect_is_operator,
	   (ab | bc) = bloom_add(ab, 'c') AS union_is_filter_of_union
FROM f;

-- Statistics: the cardinality estimate, the current false-positive rate
WITH f AS (
	SELECT bloom_agg('https://example.org/' || i, 10000, 0.01) AS filter
	FROM generate_series(1, 5000) i
)
SELECT round(bloom_cardinality(filter)) AS estimated_urls,
	   round(bloom_fpr(filter)::numeric, 4) AS fpr_now,
	   (bloom_info(filter) ->> 'bits_set')::bigint > 0 AS some_bits_set
FROM f;

-- A full filter: every element tests present, the cardinality is unknown
SELECT bloom_cardinality(f), bloom_fpr(f), bloom_info(f) -> 'estimated_cardinality' AS in_json
FROM (SELECT bloom_agg(i, bloom_empty(64, 1)) AS f FROM generate_series(1, 2000) i) s;

-- The text form is "\x" and the hexadecimal bytes of the stored format
-- (docs/format.md): magic "SBFb", version 1, 3 hashes, flags (1: empty,
-- no words stored), 64 bits, seed 0, then the words
SELECT bloom_empty(64, 3);
SELECT bloom_add(bloom_empty(64, 3), 'a');
-- An all-zero filter with its words equals the empty form
SELECT '\x534246620100030000000000400000000000000000000000000000000000000000000000'::bloom
	= bloom_empty(64, 3) AS parsed;

-- It round-trips exactly through text (binary COPY: t/021_binary_copy.pl)
SELECT filter::text::bloom = filter AS text_round_trip FROM filters;
