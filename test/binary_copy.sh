#!/usr/bin/env bash
# Text and binary round trips give identical values; send is the stored
# payload that the text form spells in hexadecimal.
. "$(dirname "$0")/lib.sh"
fresh_db

q <<'SQL'
CREATE TABLE filters (id int PRIMARY KEY, filter bloom);
INSERT INTO filters VALUES
	(1, bloom_empty(64, 3)),
	(2, bloom_empty(60, 1, -7)),
	(3, (SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 700) i)),
	(4, (SELECT bloom_agg('https://example.org/' || i, bloom_sized(200000, 0.001, 12345))
		 FROM generate_series(1, 150000) i)),
	(5, NULL);
CREATE TABLE via_text (LIKE filters);
CREATE TABLE via_binary (LIKE filters);
SQL

q -c "\\copy filters TO '$TEST_TMP/filters.txt'"
q -c "\\copy via_text FROM '$TEST_TMP/filters.txt'"
q -c "\\copy filters TO '$TEST_TMP/filters.bin' WITH (FORMAT binary)"
q -c "\\copy via_binary FROM '$TEST_TMP/filters.bin' WITH (FORMAT binary)"

check_sql "text COPY round trip gives identical values (5 rows, one NULL, one 360 KB)" \
	"SELECT count(*) = 5 AND bool_and(f.filter IS NOT DISTINCT FROM t.filter)
	 FROM filters f JOIN via_text t USING (id)"
check_sql "binary COPY round trip gives identical values" \
	"SELECT count(*) = 5 AND bool_and(f.filter IS NOT DISTINCT FROM b.filter)
	 FROM filters f JOIN via_binary b USING (id)"
check_sql "the binary form is the text form's hexadecimal bytes" \
	"SELECT bool_and(bloom_send(filter) = decode(substr(filter::text, 3), 'hex'))
	 FROM filters WHERE filter IS NOT NULL"
check_sql "values read back keep answering: the 150000 URLs are all present" \
	"SELECT count(*) = 150000 FROM via_binary, generate_series(1, 150000) i
	 WHERE id = 4 AND filter @> ('https://example.org/' || i)"
check_sql "cast through text round-trips every stored value" \
	"SELECT bool_and(filter::text::bloom = filter) FROM filters WHERE filter IS NOT NULL"

finish
