#!/usr/bin/env bash
# pg_dump and pg_restore of a table of filters give back identical values.
. "$(dirname "$0")/lib.sh"
fresh_db
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

q <<'SQL'
CREATE TABLE filters (id int PRIMARY KEY, filter bloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3)),
	(2, (SELECT bloom_agg('https://example.org/' || i, 100000, 0.01) FROM generate_series(1, 50000) i)),
	(3, NULL);
SQL
before=$(q -c "SELECT md5(string_agg(id || ':' || coalesce(filter::text, 'null'), ',' ORDER BY id)) FROM filters")

"$PG_BINDIR/pg_dump" -Fc -d "$TEST_DB" -f "$TEST_TMP/dump"
psql -X -q -d postgres -c "DROP DATABASE ${TEST_DB}_restored" >/dev/null 2>&1 || true
psql -X -q -d postgres -c "CREATE DATABASE ${TEST_DB}_restored"
"$PG_BINDIR/pg_restore" -d "${TEST_DB}_restored" "$TEST_TMP/dump"
after=$(psql -X -A -t -q -d "${TEST_DB}_restored" \
	-c "SELECT md5(string_agg(id || ':' || coalesce(filter::text, 'null'), ',' ORDER BY id)) FROM filters")
psql -X -q -d postgres -c "DROP DATABASE ${TEST_DB}_restored"

check "pg_dump -Fc | pg_restore gives identical filters ($before = $after)" [ "$before" = "$after" ]

finish
