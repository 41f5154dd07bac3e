#!/usr/bin/env bash
# pg_dump and pg_restore of tables of bloom and stablebloom values give back
# identical values.
. "$(dirname "$0")/lib.sh"
fresh_db
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

q <<'SQL'
CREATE TABLE filters (id int PRIMARY KEY, filter bloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3)),
	(2, (SELECT bloom_agg('https://example.org/' || i, 100000, 0.01) FROM generate_series(1, 50000) i)),
	(3, NULL);
CREATE TABLE sfilters (id int PRIMARY KEY, filter stablebloom);
INSERT INTO sfilters VALUES
	(1, stablebloom_empty(16, 2, 3, 1)),
	(2, (SELECT stablebloom_agg('https://example.org/' || i, stablebloom_sized(100000, 0.05, 4, 3) ORDER BY i)
		 FROM generate_series(1, 50000) i)),
	(3, NULL);
SQL
FINGERPRINT="SELECT md5(string_agg(t || id || ':' || coalesce(f, 'null'), ',' ORDER BY t, id))
	FROM (SELECT 'b' AS t, id, filter::text AS f FROM filters
		  UNION ALL SELECT 's', id, filter::text FROM sfilters) s"
before=$(q -c "$FINGERPRINT")

"$PG_BINDIR/pg_dump" -Fc -d "$TEST_DB" -f "$TEST_TMP/dump"
psql -X -q -d postgres -c "DROP DATABASE ${TEST_DB}_restored" >/dev/null 2>&1 || true
psql -X -q -d postgres -c "CREATE DATABASE ${TEST_DB}_restored"
"$PG_BINDIR/pg_restore" -d "${TEST_DB}_restored" "$TEST_TMP/dump"
after=$(psql -X -A -t -q -d "${TEST_DB}_restored" -c "$FINGERPRINT")
psql -X -q -d postgres -c "DROP DATABASE ${TEST_DB}_restored"

check "pg_dump -Fc | pg_restore gives identical bloom and stablebloom values ($before = $after)" [ "$before" = "$after" ]

finish
