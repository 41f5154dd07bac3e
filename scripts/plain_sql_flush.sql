-- The plain-SQL flush of docs/sieve.md as a procedure: the baseline that
-- t/024_sieve_scale.pl and bench/sieve_flush.sh compare sieve_flush with.
--
--   CALL plain_sql_flush('seen', 'discovered', 'frontier');
CREATE OR REPLACE PROCEDURE plain_sql_flush(seen regclass, discovered regclass,
											frontier regclass)
LANGUAGE plpgsql AS $proc$
BEGIN
	EXECUTE format($flush$
		WITH batch AS (
			DELETE FROM %2$s RETURNING pos, url
		), firsts AS (
			SELECT DISTINCT ON (url_signature(url)) url_signature(url) AS sig, pos, url
			FROM batch ORDER BY url_signature(url), pos
		), fresh AS (
			INSERT INTO %1$s (sig)
			SELECT sig FROM firsts f WHERE NOT EXISTS (SELECT FROM %1$s s WHERE s.sig = f.sig)
			ORDER BY sig
			RETURNING sig
		)
		INSERT INTO %3$s (pos, url)
		SELECT f.pos, f.url FROM firsts f JOIN fresh USING (sig) ORDER BY f.pos
	$flush$, seen, discovered, frontier);
END
$proc$;
