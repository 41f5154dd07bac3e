#!/usr/bin/env bash
# Text and binary round trips of bloom and stablebloom values give identical
# values; send is the stored payload that the text form spells in hex.
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
CREATE TABLE sfilters (id int PRIMARY KEY, filter stablebloom);
INSERT INTO sfilters VALUES
	(1, stablebloom_empty(16, 2, 3, 1)),
	(2, (SELECT stablebloom_agg(g, stablebloom_empty(1001, 3, 5, 7, -3) ORDER BY g)
		 FROM generate_series(1, 700) g)),
	(3, (SELECT stablebloom_agg('https://example.org/' || g, stablebloom_sized(400000, 0.05, 4, 1) ORDER BY g)
		 FROM generate_series(1, 150000) g)),
	(4, (SELECT stablebloom_agg(g, stablebloom_empty(999, 2, 255, 3) ORDER BY g) FROM generate_series(1, 50) g)),
	(5, NULL);
SQL

for table in filters sfilters; do
	q -c "CREATE TABLE ${table}_via_text (LIKE $table)"
	q -c "CREATE TABLE ${table}_via_binary (LIKE $table)"
	q -c "\\copy $table TO '$TEST_TMP/$table.txt'"
	q -c "\\copy ${table}_via_text FROM '$TEST_TMP/$table.txt'"
	q -c "\\copy $table TO '$TEST_TMP/$table.bin' WITH (FORMAT binary)"
	q -c "\\copy ${table}_via_binary FROM '$TEST_TMP/$table.bin' WITH (FORMAT binary)"

	check_sql "$table: text COPY round trip gives identical values (5 rows, one NULL)" \
		"SELECT count(*) = 5 AND bool_and(f.filter IS NOT DISTINCT FROM t.filter)
		 FROM $table f JOIN ${table}_via_text t USING (id)"
	check_sql "$table: binary COPY round trip gives identical values" \
		"SELECT count(*) = 5 AND bool_and(f.filter IS NOT DISTINCT FROM b.filter)
		 FROM $table f JOIN ${table}_via_binary b USING (id)"
	send=$([ $table = filters ] && echo bloom_send || echo stablebloom_send)
	check_sql "$table: the binary form is the text form's hexadecimal bytes" \
		"SELECT bool_and($send(filter) = decode(substr(filter::text, 3), 'hex'))
		 FROM $table WHERE filter IS NOT NULL"
	check_sql "$table: values read back keep answering: the last 100 URLs of row 3 or 4 are present" \
		"SELECT count(*) = 100 FROM ${table}_via_binary, generate_series(149901, 150000) i
		 WHERE id = CASE WHEN '$table' = 'filters' THEN 4 ELSE 3 END AND filter @> ('https://example.org/' || i)"
done

finish
