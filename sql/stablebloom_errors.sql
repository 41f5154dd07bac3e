--
-- Bad input to stablebloom: an ERROR with an errcode, never a crash.
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

-- Parameters
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(0, 3, 1, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(-5, 3, 1, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(3, 3, 1, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(1000, 0, 1, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(1000, 3, 0, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(1000, 3, 256, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(1000, 3, 1, -1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(1000, 3, 1, 1001) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(9000000000, 3, 1, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_empty(2000000000, 3, 255, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_sized(1000, 0, 3) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_sized(1000, 1, 3) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_sized(1000, 'NaN', 3) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_sized(1000, 1e-12, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_p(0.05, 8, 8, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_p(-0.05, 8, 1000, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_stable_zeros(1000, 4, -1, 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_fpr(1000, 4, 'NaN', 1) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_fpr(1000, 4, 2, 0) $$);
SELECT pg_temp.error_of($$ SELECT stablebloom_agg(g, NULL::stablebloom) FROM generate_series(1, 3) g $$);
SELECT pg_temp.error_of($$ SELECT is_duplicate(g, NULL::stablebloom) OVER (ORDER BY g) FROM generate_series(1, 3) g $$);

-- Malformed text
SELECT pg_temp.error_of($$ SELECT 'x'::stablebloom $$);
SELECT pg_temp.error_of($$ SELECT '\x53424673'::stablebloom $$);
-- a bloom value is not a stablebloom value
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', bloom_empty(64, 3)::text));
-- a good value to corrupt: 16 cells of Max 3 (2 bits), k = 2, P = 1, one
-- insertion (so its cells are stored)
SELECT stablebloom_add(stablebloom_empty(16, 2, 3, 1), 'x')::text AS good \gset
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '02' from 7 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '00' from 19 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '03' from 21 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '04' from 23 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '01' from 23 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '11' from 27 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', overlay(:'good' placing '40' from 43 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', :'good' || '00'));
SELECT pg_temp.error_of(format('SELECT %L::stablebloom', left(:'good', -2)));
-- Max 5 in 3 bits: a cell holding 7 is out of range
SELECT pg_temp.error_of(format('SELECT %L::stablebloom',
	overlay(stablebloom_add(stablebloom_empty(16, 2, 5, 1), 'x')::text placing '07' from 107 for 2)));

SELECT stablebloom_contains(stablebloom_add(stablebloom_empty(64, 3, 1, 1), 'still'), 'still') AS alive;
