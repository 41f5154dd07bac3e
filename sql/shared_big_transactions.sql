--
-- Big transactions on a transactional shared filter.  A transaction, a
-- statement, a trigger or a single shared_test_and_add(filter, values[])
-- may add any number of values, with the guarantees of a small one: its
-- adds are present to itself at once and to everyone once it commits, and
-- a rollback (of the transaction, or to a savepoint) forgets every one of
-- them.  A page has room for 79 adds of transactions that have not
-- committed; past that they go to overflow pages of the filter.  (Before,
-- one more was an ERROR, "too many uncommitted adds to page N": a
-- transaction could add about 1% of a filter's capacity.)
--
-- Each case below adds more than ten times that old limit (10 x 79 x the
-- filter's pages) in one transaction: first rolled back, then the same
-- again and committed.  (Sessions that wait for a big transaction:
-- specs/shared_big_transaction.spec.)
--
CREATE EXTENSION IF NOT EXISTS sbf;
SET extra_float_digits = 0;
-- in a schema of its own: the other tests' filters keep their names
CREATE SCHEMA big_transactions;
SET search_path = big_transactions, public;

-- n URLs: https://<site>/<first> .. https://<site>/<first + n - 1>
CREATE FUNCTION pg_temp.links(site text, n int, first int DEFAULT 1) RETURNS text[]
LANGUAGE sql AS $$
	SELECT array_agg('https://' || site || '/' || g ORDER BY g)
	  FROM generate_series(first, first + n - 1) g
$$;
-- how many of urls the filter has (shared_contains only tests)
CREATE FUNCTION pg_temp.present(f regclass, urls text[]) RETURNS bigint
LANGUAGE sql AS $$
	SELECT count(*) FILTER (WHERE shared_contains(f, u)) FROM unnest(urls) u
$$;
-- every tenth of urls (where testing them all one by one would be slow)
CREATE FUNCTION pg_temp.every_tenth(urls text[]) RETURNS text[]
LANGUAGE sql AS $$
	SELECT array_agg(u ORDER BY n) FROM unnest(urls) WITH ORDINALITY AS t(u, n) WHERE n % 10 = 0
$$;
-- the filter's data pages, and what one transaction could add to them
-- before (79 uncommitted adds a page)
CREATE FUNCTION pg_temp.old_limit(f regclass, OUT pages int, OUT old_limit int)
LANGUAGE sql AS $$
	SELECT (shared_info(f) ->> 'pages')::int, 79 * (shared_info(f) ->> 'pages')::int
$$;
-- the adds of transactions still open, read from every page
CREATE FUNCTION pg_temp.uncommitted(f regclass) RETURNS bigint
LANGUAGE sql AS $$
	SELECT (shared_info(f, read_pages => true) ->> 'uncommitted_adds')::bigint
$$;

--
-- 1. A filter for 10,000 URLs and one batch of 2,000 links (2 pages: a
-- batch of 1,000 was already past the old limit)
--
SELECT shared_bloom_create('f1', 10000, 0.01);
SELECT * FROM pg_temp.old_limit('f1');

-- in a transaction that rolls back: the transaction sees all its adds, a
-- repeat is seen; after the rollback nothing of them is left
BEGIN;
SELECT count(*) AS links, count(*) FILTER (WHERE NOT seen) AS new
  FROM unnest(shared_test_and_add('f1', pg_temp.links('one.example', 2000))) seen;
SELECT pg_temp.present('f1', pg_temp.links('one.example', 2000)) AS present_to_itself,
	   pg_temp.uncommitted('f1') AS uncommitted_adds;
SELECT bool_and(seen) AS repeats_seen
  FROM unnest(shared_test_and_add('f1', pg_temp.links('one.example', 2000))) seen;
-- a link twice in one batch: the second time it is seen
SELECT count(*) FILTER (WHERE n <= 1000 AND NOT seen) AS new,
	   count(*) FILTER (WHERE n > 1000 AND seen) AS repeats_seen
  FROM unnest(shared_test_and_add('f1', pg_temp.links('twice.example', 1000) ||
										pg_temp.links('twice.example', 1000)))
	   WITH ORDINALITY AS t(seen, n);
ROLLBACK;
SELECT pg_temp.present('f1', pg_temp.links('one.example', 2000)) AS present,
	   pg_temp.uncommitted('f1') AS uncommitted_adds;

-- the same batch again, committed: every link is new once, and present
-- to every session once the transaction has committed
BEGIN;
SELECT count(*) AS links, count(*) FILTER (WHERE NOT seen) AS new
  FROM unnest(shared_test_and_add('f1', pg_temp.links('one.example', 2000))) seen;
COMMIT;
SELECT pg_temp.present('f1', pg_temp.links('one.example', 2000)) AS present,
	   pg_temp.uncommitted('f1') AS uncommitted_adds;
-- page 0 counts the values answered new, those rolled back too: the
-- count errs high (docs/shared.md)
SELECT shared_info('f1') -> 'adds' AS adds;
SELECT bool_and(seen) AS all_seen_again
  FROM unnest(shared_test_and_add('f1', pg_temp.links('one.example', 2000))) seen;
-- links never added are new (but for the filter's false positives)
SELECT count(*) FILTER (WHERE seen) <= 10 AS few_false_positives
  FROM unnest(shared_test_and_add('f1', pg_temp.links('other.example', 1000))) seen;
-- VACUUM folds the committed adds into the bits: the answers stay
VACUUM f1;
SELECT pg_temp.present('f1', pg_temp.links('one.example', 2000)) AS present_after_vacuum,
	   pg_temp.uncommitted('f1') AS uncommitted_adds;

--
-- 2. A filter that starts small and grows (growth => 2): its first
-- sub-filter has 32 pages; one transaction adds 200,000 URLs in five
-- batches, and the filter grows inside it
--
SELECT shared_bloom_create('g1', 10000, 0.01, growth => 2);
SELECT * FROM pg_temp.old_limit('g1');

-- (a value can be answered seen because the values added before it,
-- this transaction's too, set its bits: a false positive, as rare as the
-- filter's rate)
BEGIN;
SELECT b AS batch, count(*) AS links,
	   count(*) FILTER (WHERE seen) <= 0.01 * 40000 AS few_false_positives
  FROM generate_series(0, 4) b,
	   unnest(shared_test_and_add('g1', pg_temp.links('grow.example', 40000, b * 40000))) seen
 GROUP BY b ORDER BY b;
SELECT shared_info('g1') -> 'subfilters' AS subfilters,
	   pg_temp.present('g1', pg_temp.every_tenth(pg_temp.links('grow.example', 200000, 0))) AS present_to_itself;
ROLLBACK;
-- the growth stays (the count of adds errs high, docs/shared.md), the
-- values do not
SELECT shared_info('g1') -> 'subfilters' AS subfilters,
	   pg_temp.present('g1', pg_temp.every_tenth(pg_temp.links('grow.example', 200000, 0))) AS present,
	   pg_temp.uncommitted('g1') AS uncommitted_adds;

BEGIN;
SELECT count(*) FILTER (WHERE seen) <= 0.01 * 200000 AS few_false_positives
  FROM unnest(shared_test_and_add('g1', pg_temp.links('grow.example', 200000, 0))) seen;
COMMIT;
SELECT pg_temp.present('g1', pg_temp.every_tenth(pg_temp.links('grow.example', 200000, 0))) AS present,
	   pg_temp.uncommitted('g1') AS uncommitted_adds;
SELECT bool_and(seen) AS all_seen_again
  FROM unnest(shared_test_and_add('g1', pg_temp.links('grow.example', 200000, 0))) seen;
SELECT count(*) FILTER (WHERE seen) <= 10 + 3 * 0.01 * 10000 AS few_false_positives
  FROM unnest(shared_test_and_add('g1', pg_temp.links('other.example', 10000))) seen;
VACUUM g1;
SELECT pg_temp.present('g1', pg_temp.every_tenth(pg_temp.links('grow.example', 200000, 0))) AS present_after_vacuum;

-- a new growing filter given more than its first capacity in one array
-- grows as the array goes, and every value of it is there after
SELECT shared_bloom_create('g2', 10000, 0.01, growth => 2);
SELECT count(*) FILTER (WHERE seen) <= 0.01 * 200000 AS few_false_positives
  FROM unnest(shared_test_and_add('g2', pg_temp.links('grow.example', 200000, 0))) seen;
SELECT shared_info('g2') -> 'subfilters' AS subfilters,
	   pg_temp.present('g2', pg_temp.every_tenth(pg_temp.links('grow.example', 200000, 0))) AS present;

--
-- 3. A filter for a million URLs (173 pages) and 150,000 URLs in one
-- statement
--
SELECT shared_bloom_create('f2', 1000000, 0.01);
SELECT * FROM pg_temp.old_limit('f2');

BEGIN;
SELECT count(*) FILTER (WHERE NOT seen) AS new
  FROM unnest(shared_test_and_add('f2', pg_temp.links('million.example', 150000))) seen;
SELECT pg_temp.present('f2', pg_temp.every_tenth(pg_temp.links('million.example', 150000))) AS present_to_itself;
ROLLBACK;
SELECT pg_temp.present('f2', pg_temp.every_tenth(pg_temp.links('million.example', 150000))) AS present;

BEGIN;
SELECT count(*) FILTER (WHERE NOT seen) AS new
  FROM unnest(shared_test_and_add('f2', pg_temp.links('million.example', 150000))) seen;
COMMIT;
SELECT pg_temp.present('f2', pg_temp.every_tenth(pg_temp.links('million.example', 150000))) AS present;
SELECT bool_and(seen) AS all_seen_again
  FROM unnest(shared_test_and_add('f2', pg_temp.links('million.example', 150000))) seen;
SELECT count(*) FILTER (WHERE seen) <= 10 + 3 * 0.01 * 10000 AS few_false_positives
  FROM unnest(shared_test_and_add('f2', pg_temp.links('other.example', 10000))) seen;

--
-- 4. A bulk load: the 50,000 URLs a crawl already fetched, into a filter
-- for 200,000, in one statement
--
CREATE TABLE crawled (url text NOT NULL);
INSERT INTO crawled SELECT unnest(pg_temp.links('crawled.example', 50000));
SELECT shared_bloom_create('f3', 200000, 0.01);
SELECT * FROM pg_temp.old_limit('f3');

BEGIN;
SELECT count(*) FILTER (WHERE NOT seen) AS new
  FROM unnest(shared_test_and_add('f3', ARRAY(SELECT url FROM crawled))) seen;
SELECT count(*) FILTER (WHERE shared_contains('f3', url)) AS present_to_itself FROM crawled;
ROLLBACK;
SELECT count(*) FILTER (WHERE shared_contains('f3', url)) AS present FROM crawled;

BEGIN;
SELECT count(*) FILTER (WHERE NOT seen) AS new
  FROM unnest(shared_test_and_add('f3', ARRAY(SELECT url FROM crawled))) seen;
COMMIT;
SELECT count(*) FILTER (WHERE shared_contains('f3', url)) AS present FROM crawled;
SELECT bool_and(seen) AS all_seen_again
  FROM unnest(shared_test_and_add('f3', ARRAY(SELECT url FROM crawled))) seen;
SELECT count(*) FILTER (WHERE seen) <= 10 + 3 * 0.01 * 10000 AS few_false_positives
  FROM unnest(shared_test_and_add('f3', pg_temp.links('other.example', 10000))) seen;

--
-- 5. A crawl: the crawler loop of docs/shared.md, twelve fetched pages of
-- 521 links each, in one transaction.  Every page links to the site's 21
-- menu entries (with its own utm_ parameters, which url_canonical strips)
-- and to 500 pages of its own
--
SELECT shared_bloom_create('site_seen', 20000, 0.01);
SELECT * FROM pg_temp.old_limit('site_seen');
CREATE TABLE frontier (url text NOT NULL);
CREATE FUNCTION pg_temp.page_links(p int) RETURNS text[]
LANGUAGE sql AS $$
	SELECT (SELECT array_agg(l || '?utm_source=page' || p)
			  FROM unnest(pg_temp.links('site.example/menu', 21)) l)
		   || pg_temp.links('site.example/page' || p, 500)
$$;
CREATE PROCEDURE pg_temp.crawl(pages int) LANGUAGE plpgsql AS $$
BEGIN
	FOR p IN 1 .. pages LOOP
		WITH links AS (
			SELECT array_agg(url_canonical(l, strip_params => '{utm_*}', strict => false)
							 ORDER BY n) AS urls
			  FROM unnest(pg_temp.page_links(p)) WITH ORDINALITY AS t(l, n))
		INSERT INTO frontier (url)
		SELECT u.url
		  FROM links, unnest(links.urls, shared_test_and_add('site_seen', links.urls)) AS u(url, seen)
		 WHERE NOT u.seen;
	END LOOP;
END $$;

-- the crawler's transaction dies: the frontier and the filter lose the
-- same links
BEGIN;
CALL pg_temp.crawl(12);
SELECT count(*) >= 0.99 * (21 + 12 * 500) AS all_queued_but_false_positives,
	   count(DISTINCT url) = count(*) AS each_once,
	   count(*) FILTER (WHERE url LIKE '%/menu/%') AS menu_entries_queued
  FROM frontier;
ROLLBACK;
SELECT count(*) AS queued FROM frontier;
SELECT count(*) FILTER (WHERE shared_contains('site_seen', l)) AS present
  FROM generate_series(1, 12) p, unnest(pg_temp.page_links(p)) l0,
	   url_canonical(l0, strip_params => '{utm_*}') l;

-- it runs again and commits: each link queued once, every one seen after
BEGIN;
CALL pg_temp.crawl(12);
COMMIT;
SELECT count(*) >= 0.99 * (21 + 12 * 500) AS all_queued_but_false_positives,
	   count(DISTINCT url) = count(*) AS each_once,
	   count(*) FILTER (WHERE url LIKE '%/menu/%') AS menu_entries_queued
  FROM frontier;
SELECT bool_and(shared_contains('site_seen', url)) AS all_queued_present FROM frontier;
-- crawled again, nothing is queued again
CALL pg_temp.crawl(12);
SELECT count(*) - count(DISTINCT url) AS queued_twice FROM frontier;

--
-- 6. The trigger of docs/shared.md, "mark each new row as it is
-- inserted", and an INSERT ... SELECT of 20,000 links into a table whose
-- filter is for 100,000
--
SELECT shared_bloom_create('crawl_seen', 100000, 0.01);
SELECT * FROM pg_temp.old_limit('crawl_seen');
CREATE TABLE links (url text NOT NULL, found_at timestamptz DEFAULT now(),
					seen_before boolean);
CREATE FUNCTION links_mark_seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.url := url_canonical(NEW.url, strip_params => '{utm_*}');
	NEW.seen_before := shared_test_and_add('crawl_seen', NEW.url);
	RETURN NEW;
END $$;
CREATE TRIGGER mark_seen BEFORE INSERT ON links
	FOR EACH ROW EXECUTE FUNCTION links_mark_seen();

BEGIN;
INSERT INTO links (url) SELECT unnest(pg_temp.links('trigger.example', 20000));
SELECT count(*) AS inserted, count(*) FILTER (WHERE NOT seen_before) AS new FROM links;
ROLLBACK;
SELECT pg_temp.present('crawl_seen', pg_temp.links('trigger.example', 20000)) AS present;

BEGIN;
INSERT INTO links (url) SELECT unnest(pg_temp.links('trigger.example', 20000));
COMMIT;
SELECT count(*) AS inserted, count(*) FILTER (WHERE NOT seen_before) AS new FROM links;
SELECT pg_temp.present('crawl_seen', pg_temp.links('trigger.example', 20000)) AS present;
-- the same links inserted again are all marked seen before
INSERT INTO links (url) SELECT unnest(pg_temp.links('trigger.example', 20000));
SELECT count(*) FILTER (WHERE seen_before) AS marked_seen_before,
	   count(*) FILTER (WHERE NOT seen_before) AS marked_new
  FROM links;

--
-- 7. A savepoint: ROLLBACK TO SAVEPOINT forgets exactly the adds made
-- after it, however many; those before it, and after, commit.  An error
-- caught by a PL/pgSQL block does the same to the block's adds
--
SELECT shared_bloom_create('sp', 10000, 0.01);
SELECT * FROM pg_temp.old_limit('sp');
BEGIN;
SELECT count(*) FILTER (WHERE NOT seen) AS new_before
  FROM unnest(shared_test_and_add('sp', pg_temp.links('before.example', 2000))) seen;
SAVEPOINT big;
SELECT count(*) FILTER (WHERE seen) <= 10 AS few_false_positives
  FROM unnest(shared_test_and_add('sp', pg_temp.links('inside.example', 4000))) seen;
SELECT pg_temp.present('sp', pg_temp.links('inside.example', 4000)) AS inside_present;
ROLLBACK TO SAVEPOINT big;
-- (but for false positives: the bits of the adds before the savepoint
-- may cover a value)
SELECT pg_temp.present('sp', pg_temp.links('before.example', 2000)) AS before_present,
	   pg_temp.present('sp', pg_temp.links('inside.example', 4000)) <= 10 AS inside_forgotten;
-- some of the same values again after the rollback to the savepoint: new
SELECT count(*) FILTER (WHERE NOT seen) AS new_after
  FROM unnest(shared_test_and_add('sp', pg_temp.links('inside.example', 1000, 3001))) seen;
DO $$
BEGIN
	BEGIN
		PERFORM shared_test_and_add('sp', pg_temp.links('failed.example', 2000));
		RAISE EXCEPTION 'the page failed';
	EXCEPTION WHEN raise_exception THEN
		RAISE NOTICE 'caught: %', SQLERRM;
	END;
END $$;
SELECT pg_temp.present('sp', pg_temp.links('failed.example', 2000)) <= 10 AS failed_forgotten;
COMMIT;
SELECT pg_temp.present('sp', pg_temp.links('before.example', 2000)) AS before_present,
	   pg_temp.present('sp', pg_temp.links('inside.example', 3000)) <= 10 AS inside_forgotten,
	   pg_temp.present('sp', pg_temp.links('inside.example', 1000, 3001)) AS after_present,
	   pg_temp.present('sp', pg_temp.links('failed.example', 2000)) <= 10 AS failed_forgotten;

--
-- 8. A subtransaction a link: a loop that catches each link's error in
-- its own PL/pgSQL block, 3,000 links in one transaction, every third
-- failing after its add.  The failed ones are forgotten, the others commit
--
SELECT shared_bloom_create('loop_seen', 10000, 0.01);
SELECT * FROM pg_temp.old_limit('loop_seen');
BEGIN;
DO $$
BEGIN
	FOR g IN 1 .. 3000 LOOP
		BEGIN
			PERFORM shared_test_and_add('loop_seen', 'https://loop.example/' || g);
			IF g % 3 = 0 THEN
				RAISE EXCEPTION 'link % failed', g;
			END IF;
		EXCEPTION WHEN raise_exception THEN
			NULL;
		END;
	END LOOP;
END $$;
SELECT count(*) FILTER (WHERE g % 3 <> 0) AS kept_present,
	   count(*) FILTER (WHERE g % 3 = 0) <= 10 AS failed_forgotten
  FROM generate_series(1, 3000) g
 WHERE shared_contains('loop_seen', 'https://loop.example/' || g);
COMMIT;
SELECT count(*) FILTER (WHERE g % 3 <> 0) AS kept_present,
	   count(*) FILTER (WHERE g % 3 = 0) <= 10 AS failed_forgotten
  FROM generate_series(1, 3000) g
 WHERE shared_contains('loop_seen', 'https://loop.example/' || g);

DROP TABLE f1, g1, g2, f2, f3, crawled, site_seen, frontier, crawl_seen, links, sp, loop_seen;
DROP FUNCTION links_mark_seen();
DROP SCHEMA big_transactions;
RESET search_path;
