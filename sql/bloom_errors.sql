--
-- Bad input is an ERROR with an errcode and a message naming the problem,
-- never a crash.  Each case shows the SQLSTATE, the message and the
-- detail, if any.
--

CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || coalesce(E'\n       ' || nullif(detail, ''), '');
END $$;

-- Parameters: zero, negative, NaN, out of range, too large for 1 GB
SELECT pg_temp.error_of($$ SELECT bloom_empty(0, 3) $$);
SELECT pg_temp.error_of($$ SELECT bloom_empty(-64, 3) $$);
SELECT pg_temp.error_of($$ SELECT bloom_empty(1024, 0) $$);
SELECT pg_temp.error_of($$ SELECT bloom_empty(1024, -1) $$);
SELECT pg_temp.error_of($$ SELECT bloom_empty(1024, 257) $$);
SELECT pg_temp.error_of($$ SELECT bloom_empty(9000000000, 3) $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(0, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(-1, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(1000, 0) $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(1000, 1) $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(1000, -0.5) $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(1000, 'NaN') $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(1000, 'Infinity') $$);
SELECT pg_temp.error_of($$ SELECT bloom_sized(1000000000, 0.000001) $$);
SELECT pg_temp.error_of($$ SELECT bloom_optimal_bits(9223372036854775807, 1e-300) $$);
SELECT pg_temp.error_of($$ SELECT bloom_optimal_bits(0, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT bloom_optimal_bits(100, 1) $$);
SELECT pg_temp.error_of($$ SELECT bloom_optimal_hashes(0, 100) $$);
SELECT pg_temp.error_of($$ SELECT bloom_optimal_hashes(1024, 0) $$);
SELECT pg_temp.error_of($$ SELECT bloom_expected_fpr(1024, 3, -1) $$);
SELECT pg_temp.error_of($$ SELECT bloom_expected_fpr(0, 3, 1) $$);
SELECT pg_temp.error_of($$ SELECT bloom_intersect_agg(f) FROM (VALUES (bloom_empty(64, 3)), (bloom_empty(64, 3, 1))) v(f) $$);
SELECT pg_temp.error_of($$ SELECT bloom_agg(g, 0, 0.01) FROM generate_series(1, 3) g $$);
SELECT pg_temp.error_of($$ SELECT bloom_agg(g, 100, 'NaN') FROM generate_series(1, 3) g $$);
SELECT pg_temp.error_of($$ SELECT bloom_agg(g, NULL, 0.01) FROM generate_series(1, 3) g $$);
SELECT pg_temp.error_of($$ SELECT bloom_agg(g, NULL::bloom) FROM generate_series(1, 3) g $$);

-- Filters that do not match
SELECT pg_temp.error_of($$ SELECT bloom_union(bloom_empty(64, 3), bloom_empty(128, 3)) $$);
SELECT pg_temp.error_of($$ SELECT bloom_intersect(bloom_empty(64, 3), bloom_empty(64, 4)) $$);
SELECT pg_temp.error_of($$ SELECT bloom_empty(64, 3) | bloom_empty(64, 3, 1) $$);

-- Malformed text: no \x, odd length, not hex, truncated, trailing bytes
SELECT pg_temp.error_of($$ SELECT 'hello'::bloom $$);
SELECT pg_temp.error_of($$ SELECT ''::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x534'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x53zz'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x5342'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x53424662010003000000000040000000000000000000000000000000'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x534246620100030000000000400000000000000000000000000000000000000000000000ff'::bloom $$);
-- wrong magic (a stable bloom filter's), unknown version, bad fields
SELECT pg_temp.error_of($$ SELECT '\x534246730100030000000000400000000000000000000000000000000000000000000000'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x534246620200030000000000400000000000000000000000000000000000000000000000'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x534246620100000000000000400000000000000000000000000000000000000000000000'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x534246620100030004000000400000000000000000000000000000000000000000000000'::bloom $$);
-- the empty flag with words, and without the flag but without words
SELECT pg_temp.error_of($$ SELECT '\x534246620100030001000000400000000000000000000000000000000000000000000000'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x53424662010003000000000040000000000000000000000000000000'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x534246620100030000000000000000000000000000000000000000000000000000000000'::bloom $$);
-- 60 bits: bits 0..59 of the last word may be set, bits 60..63 may not
SELECT pg_temp.error_of($$ SELECT '\x5342466201000300000000003c000000000000000000000000000000000000000000000f'::bloom $$);
SELECT pg_temp.error_of($$ SELECT '\x5342466201000300000000003c0000000000000000000000000000000000000000000010'::bloom $$);

-- After all that, the server is still here
SELECT bloom_contains(bloom_add(bloom_empty(64, 3), 'still'), 'still') AS alive;
