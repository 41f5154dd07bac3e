--
-- sieve_contains on a batch (1.2): sieve_contains(seen, urls text[]) and
-- sieve_contains(seen, signatures bigint[]) answer, in input order and
-- with the input's dimensions, what the single form answers for each
-- element; a NULL element is answered NULL, an empty array gives an empty
-- array, and a seen the single form refuses is refused alike
--

CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	answer text;
BEGIN
	EXECUTE query INTO answer;
	RETURN coalesce(answer, 'no error');
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- A plain seen and a compressed one of the same 7,000 URLs
CREATE TABLE bpseen (sig bigint PRIMARY KEY);
INSERT INTO bpseen SELECT DISTINCT url_signature('https://example.org/' || g) FROM generate_series(1, 7000) g;
SELECT sieve_seen_create('bzseen');
SELECT sieve_seen_import('bzseen', 'bpseen');
SELECT count(*) > 20 AS many_chunks FROM bzseen;

-- A few URLs, present and not, repeated and NULL, in input order
SELECT sieve_contains('bzseen', ARRAY['https://example.org/1', 'https://example.org/0',
                                      NULL, 'https://example.org/7000', 'https://example.org/1',
                                      'https://example.org/7001']) AS compressed,
       sieve_contains('bpseen', ARRAY['https://example.org/1', 'https://example.org/0',
                                      NULL, 'https://example.org/7000', 'https://example.org/1',
                                      'https://example.org/7001']) AS plain;
-- the bigint[] form takes the signatures themselves
SELECT sieve_contains('bzseen', ARRAY[url_signature('https://example.org/2'), NULL, 42,
                                      url_signature('https://example.org/2')]) AS compressed,
       sieve_contains('bpseen', ARRAY[url_signature('https://example.org/2'), NULL, 42,
                                      url_signature('https://example.org/2')]) AS plain;
-- empty arrays, all NULLs, a one-element batch
SELECT sieve_contains('bzseen', '{}'::text[]) AS text_empty,
       sieve_contains('bpseen', '{}'::bigint[]) AS bigint_empty,
       sieve_contains('bzseen', ARRAY[NULL, NULL]::text[]) AS all_null,
       sieve_contains('bpseen', ARRAY['https://example.org/3']) AS one;
-- a NULL array or seen is NULL (strict)
SELECT sieve_contains('bzseen', NULL::text[]) IS NULL AS null_array,
       sieve_contains(NULL, ARRAY['https://example.org/3']) IS NULL AS null_seen;
-- the input's dimensions and bounds
SELECT sieve_contains('bzseen', '[0:1][1:2]={{https://example.org/4,https://example.org/x},{NULL,https://example.org/5}}'::text[]);
SELECT sieve_contains('bpseen', ARRAY[[url_signature('https://example.org/4')], [7]]);
-- an untyped literal is one URL, as for shared_test_and_add
SELECT sieve_contains('bzseen', '{https://example.org/4}');

-- Batches spanning every chunk, each answer the single form's, in input
-- order: 15,013 places in a shuffled order, 15 of them NULL, the others
-- over 14,000 URLs (half of them present), so with repeats
CREATE TABLE batch AS
  SELECT row_number() OVER (ORDER BY (g * 7919) % 15013) AS pos,
         CASE WHEN g % 997 = 0 THEN NULL ELSE 'https://example.org/' || (g % 14000) END AS url
  FROM generate_series(1, 15013) g;
SELECT count(*) AS urls, count(url) AS not_null, count(DISTINCT url) AS distinct_urls,
       count(*) FILTER (WHERE sieve_contains('bzseen', url)) AS present
FROM batch;
WITH answers AS (
  SELECT sieve_contains('bzseen', array_agg(url ORDER BY pos)) AS compressed,
         sieve_contains('bpseen', array_agg(url ORDER BY pos)) AS plain,
         sieve_contains('bzseen', array_agg(url_signature(url) ORDER BY pos)) AS compressed_sig,
         sieve_contains('bpseen', array_agg(url_signature(url) ORDER BY pos)) AS plain_sig,
         array_agg(sieve_contains('bzseen', url) ORDER BY pos) AS single
  FROM batch)
SELECT cardinality(compressed) AS n,
       compressed IS NOT DISTINCT FROM single AS compressed_same,
       plain IS NOT DISTINCT FROM single AS plain_same,
       compressed_sig IS NOT DISTINCT FROM single AS compressed_sig_same,
       plain_sig IS NOT DISTINCT FROM single AS plain_sig_same
FROM answers;
-- a batch sees what its transaction wrote to a plain seen, and forgets it
-- with a rollback, as the single form does
BEGIN;
INSERT INTO bpseen VALUES (url_signature('https://example.org/rolled-back'));
SELECT sieve_contains('bpseen', ARRAY['https://example.org/rolled-back']);
ROLLBACK;
SELECT sieve_contains('bpseen', ARRAY['https://example.org/rolled-back']);

-- A larger compressed seen: 200,000 signatures, a batch of 10,000 URLs
-- half present gives exactly the single form's answers
CREATE TABLE bigplain (sig bigint PRIMARY KEY);
INSERT INTO bigplain SELECT url_signature('https://big.example/' || g) FROM generate_series(1, 200000) g;
SELECT sieve_seen_create('bigz');
SELECT sieve_seen_import('bigz', 'bigplain');
CREATE TABLE bigbatch AS
  SELECT g AS pos, 'https://big.example/' || ((g * 40009) % 400000 + 1) AS url
  FROM generate_series(1, 10000) g;
WITH answers AS (
  SELECT sieve_contains('bigz', array_agg(url ORDER BY pos)) AS batch,
         array_agg(sieve_contains('bigz', url) ORDER BY pos) AS single
  FROM bigbatch)
SELECT cardinality(batch) AS n,
       (SELECT count(*) FROM unnest(batch) a WHERE a) AS present,
       batch = single AS same
FROM answers;
-- and a sparse batch, 300 URLs (half present) spread over its chunks,
-- most of them a chunk apart or more, in a shuffled order
WITH sparse AS (
  SELECT g AS pos, 'https://big.example/' || ((g * 1337 * 7) % 400000 + 1) AS url
  FROM generate_series(1, 300) g),
answers AS (
  SELECT sieve_contains('bigz', array_agg(url ORDER BY pos)) AS batch,
         array_agg(sieve_contains('bigz', url) ORDER BY pos) AS single
  FROM sparse)
SELECT cardinality(batch) AS n,
       (SELECT count(*) FROM unnest(batch) a WHERE a) AS present,
       batch = single AS same
FROM answers;

-- Errors: those of the single form, for the whole batch
CREATE TABLE notseen (url text);
CREATE VIEW bpseen_view AS SELECT sig FROM bpseen;
CREATE TABLE wrongsig (sig integer PRIMARY KEY);
SELECT pg_temp.error_of($$ SELECT sieve_contains('notseen', ARRAY['https://example.org/a']) $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('bpseen_view', ARRAY['https://example.org/a']) $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('wrongsig', ARRAY[1::bigint]) $$);
SELECT pg_temp.error_of($$ SELECT sieve_contains('no_such_table', ARRAY['https://example.org/a']) $$);
-- an empty batch checks the seen too
SELECT pg_temp.error_of($$ SELECT sieve_contains('notseen', '{}'::text[]) $$);
-- privileges: SELECT on the table
CREATE ROLE sieve_batch_role;
SET ROLE sieve_batch_role;
SELECT pg_temp.error_of($$ SELECT sieve_contains('bzseen', ARRAY['https://example.org/a']) $$);
RESET ROLE;
GRANT SELECT ON bzseen TO sieve_batch_role;
SET ROLE sieve_batch_role;
SELECT sieve_contains('bzseen', ARRAY['https://example.org/1']);
RESET ROLE;
-- a stored chunk that does not match its row is an ERROR, as for a URL
SELECT sieve_seen_create('bzbad');
INSERT INTO bzbad VALUES (5, '\x5342467a010000000100000000000000000000000000000000000000'::sieve_chunk);
SELECT sieve_contains('bzbad', 'https://www.postgresql.org/');
SELECT sieve_contains('bzbad', ARRAY['https://example.org/1', 'https://www.postgresql.org/']);
-- two chunks that overlap, {0, 2} at head 0 and {1} at head 1: a batch
-- whose signatures are all found answers (a chunk found holding a
-- signature answers alone; 2 is answered from the chunk at head 0, which
-- the batch decoded for 0, where a call for 2 alone lands on the chunk at
-- head 1 and fails); one that lacks a signature checks the chunk before
-- the one it lands on, and fails
TRUNCATE bzbad;
INSERT INTO bzbad VALUES (0, '\x5342467a01000000020000000000000000000000020000000000000002'::sieve_chunk),
                         (1, '\x5342467a010000000100000001000000000000000100000000000000'::sieve_chunk);
SELECT sieve_contains('bzbad', ARRAY[2, 0, 2]::bigint[]);
SELECT sieve_contains('bzbad', ARRAY[0, 1, 3]::bigint[]);
SELECT sieve_contains('bzbad', ARRAY[3]::bigint[]);

DROP TABLE bpseen, bzseen, batch, bigplain, bigz, bigbatch, notseen, wrongsig, bzbad CASCADE;
DROP ROLE sieve_batch_role;
