--
-- Bad input to slidingbloom: an ERROR with an errcode, never a crash.
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

-- Parameters of slidingbloom_sized and slidingbloom_bytes
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(0, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(-10, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(1000, 0) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(1000, -0.5) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(1000, 1) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(1000, 'NaN') $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(1000, 'Infinity') $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_sized(9000000000000, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_bytes(0, 0.01) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_bytes(1000, 2) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_stale_rate(slidingbloom_sized(1000, 0.01), 0) $$);

-- Parameters of slidingbloom_fit: a window, a budget that holds a header
-- and two slices of one word, distinct values within the window; a NULL
-- but distinct_values gives NULL
SELECT pg_temp.error_of($$ SELECT slidingbloom_fit(0, 1000) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_fit(500, 87) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_fit(500, -1) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_fit(500, 1000, 0, true, 0) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_fit(500, 1000, 0, true, 501) $$);
SELECT slidingbloom_fit(NULL, 1000) IS NULL AS null_window,
	   slidingbloom_fit(500, NULL) IS NULL AS null_budget,
	   slidingbloom_fit(500, 1000, NULL) IS NULL AS null_seed,
	   slidingbloom_fit(500, 1000, 0, NULL) IS NULL AS null_refresh,
	   slidingbloom_fit(500, 88, 0, true, NULL) IS NOT NULL AS null_distinct_is_unknown;
-- a window so long that no layout's generations fit a bigint of arrivals
SELECT pg_temp.error_of($$ SELECT slidingbloom_fit(9223372036854775807, 1000) $$);
-- the largest budget takes the largest value there is, and stays fast
SELECT (slidingbloom_info(slidingbloom_fit(9000000000000, 2147483647)) ->> 'slices')::int > 1 AS largest;

-- Parameters of slidingbloom_empty: slice_bits, hashes, slices, generation
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(0, 2, 5, 3) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(1024, 0, 5, 3) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(1024, 257, 300, 3) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(1024, 5, 5, 3) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(1024, 2, 257, 3) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(1024, 2, 5, 0) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(1024, 2, 5, 9000000000000000000) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_empty(2000000000, 2, 5, 3) $$);
SELECT pg_temp.error_of($$ SELECT slidingbloom_agg(g, NULL::slidingbloom) FROM generate_series(1, 3) g $$);
SELECT pg_temp.error_of($$ SELECT is_duplicate(g, NULL::slidingbloom) OVER (ORDER BY g) FROM generate_series(1, 3) g $$);

-- Malformed text
SELECT pg_temp.error_of($$ SELECT 'x'::slidingbloom $$);
SELECT pg_temp.error_of($$ SELECT '\x53424677'::slidingbloom $$);
SELECT pg_temp.error_of($$ SELECT '\x5342467701'::slidingbloom $$);
-- a stablebloom value is not a slidingbloom value
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', stablebloom_empty(16, 2, 3, 1)::text));

-- A good value to corrupt: 2 slices of 64 bits, 1 hash, generation 1, one
-- arrival.  Its hex digits: magic 3..10, version 11..14, hashes 15..18,
-- slices 19..22, flags 23..26, slice_bits 27..42, generation 43..58, window
-- 59..74, seed 75..90, arrivals 91..106, generation_fill 107..122, newest
-- 123..138, then the two slices of 16 digits each.
SELECT slidingbloom_add(slidingbloom_empty(64, 1, 2, 1), 'x')::text AS good \gset
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', :'good')) AS good_value;
-- unknown version 2
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '02' from 11 for 2)));
-- hashes 0, hashes = slices, 300 slices
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '00' from 15 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '02' from 15 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '2c01' from 19 for 4)));
-- unknown flag; the empty flag on a value with slices
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '08' from 23 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '01' from 23 for 2)));
-- slice_bits 0; 65 (two words per slice: the length no longer matches)
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '00' from 27 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '41' from 27 for 2)));
-- generation 0; window 0 and 2 (more than l g = 1)
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '00' from 43 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '00' from 59 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '02' from 59 for 2)));
-- a generation already full; a newest slice that does not exist
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '01' from 107 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'good' placing '02' from 123 for 2)));
-- too long, too short
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', :'good' || '00'));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', left(:'good', -2)));
-- 60 bits per slice: a bit set past the end of a slice
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom',
	overlay(slidingbloom_add(slidingbloom_empty(60, 1, 2, 1), 'x')::text placing '10' from 153 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom',
	overlay(slidingbloom_add(slidingbloom_empty(60, 1, 2, 1), 'x')::text placing '08' from 153 for 2)));

SELECT slidingbloom_contains(slidingbloom_add(slidingbloom_sized(100, 0.01), 'still'), 'still') AS alive;

-- A good stamped value to corrupt (its fields in the same places, read as
-- format.h says: slices the bits of a cell, slice_bits the cells,
-- generation the sweep step, newest the sweep): 48 cells of 4 bits, 16
-- hashes, a window of 10, one arrival
SELECT slidingbloom_add(slidingbloom_fit(10, 96, 0, true, 2), 'x')::text AS stamped \gset
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', :'stamped')) AS good_stamped_value;
-- cells of 1 bit, of 33 bits
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '01' from 19 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '21' from 19 for 2)));
-- a window the stamps of 4 bits cannot tell (15), and window 0
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '0f' from 59 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '00' from 59 for 2)));
-- a sweep step that would let stamps wrap around (5 instead of 10)
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '05' from 43 for 2)));
-- 0 cells; 49 cells (the sweep step still 10, but four words, not three)
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '00' from 27 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '31' from 27 for 2)));
-- a generation fill; a sweep past the last cell
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '01' from 107 for 2)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '30' from 123 for 2)));
-- too long
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', :'stamped' || '00'));
-- an arrival count past 2^63 - 1 (stamps would jump where it wraps at 2^64)
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'stamped' placing '80' from 105 for 2)));
-- 70,000 cells of 2 bits for a window of 2, in the empty form: a valid
-- step, but a sweep of every cell at every arrival
SELECT pg_temp.error_of($$ SELECT '\x5342467701000100020005007011010000000000701101000000000002000000000000000000000000000000000000000000000000000000000000000000000000000000'::slidingbloom $$);
-- 25 cells of 5 bits in two words: bits past the last cell set
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom',
	overlay(slidingbloom_add(slidingbloom_fit(20, 88, 0, true, 2), 'x')::text placing 'f0' from 169 for 2)));
SELECT slidingbloom_info(slidingbloom_fit(20, 88, 0, true, 2)) ->> 'cells' AS cells;

-- A good value of a window of time to corrupt: the stamped layout (flags
-- 0x0c), then its clock after the cells: window (microseconds) at 235,
-- tick at 251, tolerance (ticks) at 267, clock (the newest tick) at 283,
-- capacity at 299, in the text form's hex digits
SELECT slidingbloom_add(slidingbloom_fit(interval '1 hour', 160, 10), 'x',
                        timestamptz '2026-01-01 00:00+00')::text AS timed \gset
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', :'timed')) AS good_timed_value;
-- a window of time without the stamped layout
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing '08' from 23 for 2)));
-- its clock cut short; one byte too many
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', left(:'timed', -16)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', :'timed' || '00'));
-- a tick that is not the window's 64th; a window of 0
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing '914e5a03' from 251 for 8)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing '0000000000000000' from 235 for 16)));
-- a negative tolerance; one the 9-bit stamps cannot hold; capacity 0
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing 'ffffffffffffffff' from 267 for 16)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing '00010000' from 267 for 8)));
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing '00' from 299 for 2)));
-- a sweep step that would let stamps wrap around
SELECT pg_temp.error_of(format('SELECT %L::slidingbloom', overlay(:'timed' placing '00' from 43 for 2)));
-- a clock at either end of a bigint is valid, and an arrival at a real
-- time either clears every cell (a move past the horizon) or is too late
SELECT slidingbloom_contains(slidingbloom_add(overlay(:'timed' placing '0000000000000080' from 283 for 16)::slidingbloom,
                                              'y', timestamptz '2026-01-01 00:00+00'), 'x') AS x_after_jump;
SELECT pg_temp.error_of(format($$ SELECT slidingbloom_add(%L::slidingbloom, 'y', timestamptz '2026-01-01 00:00+00') $$,
	overlay(:'timed' placing 'ffffffffffffff7f' from 283 for 16)));
SELECT pg_temp.error_of(format($$ SELECT slidingbloom_contains(%L::slidingbloom, 'x', timestamptz '2026-01-01 00:00+00') $$,
	overlay(:'timed' placing 'ffffffffffffff7f' from 283 for 16)));
