-- One query of each kind, against sbf installed from its Debian package
-- (scripts/test-package.sh compares the output with smoke.out)
CREATE EXTENSION sbf;
SELECT extversion FROM pg_extension WHERE extname = 'sbf';
-- bloom
SELECT bloom_contains(bloom_add(bloom_sized(1000, 0.01), 'https://a.example/'),
					  'https://a.example/') AS bloom;
-- stablebloom
SELECT stablebloom_contains(stablebloom_add(stablebloom_sized(1000, 0.01, 3, 3),
											'https://a.example/'),
							'https://a.example/') AS stablebloom;
-- slidingbloom
SELECT slidingbloom_contains(slidingbloom_add(slidingbloom_sized(100, 0.01),
											  'https://a.example/'),
							 'https://a.example/') AS slidingbloom;
-- marking duplicates in a stream
SELECT pos, is_duplicate(url, bloom_sized(1000, 0.01)) OVER (ORDER BY pos)
FROM (VALUES (1, 'https://a.example/'), (2, 'https://b.example/'),
			 (3, 'https://a.example/')) crawl(pos, url);
-- the offline sieve
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
INSERT INTO discovered VALUES (1, 'https://a.example/'), (2, 'https://b.example/'),
							  (3, 'https://a.example/');
SELECT sieve_flush('seen', 'discovered', 'frontier');
TABLE frontier;
-- a shared filter
SELECT shared_bloom_create('crawl_seen', 100000, 0.01);
SELECT shared_test_and_add('crawl_seen', ARRAY['https://a.example/', 'https://a.example/']);
-- near-duplicate pages
SELECT simhash('the quick brown fox jumps over the lazy dog', 2) AS dog,
	   hamming_distance(simhash('the quick brown fox jumps over the lazy dog', 2),
						simhash('the quick brown fox jumps over the lazy cat', 2)) AS bits_apart;
