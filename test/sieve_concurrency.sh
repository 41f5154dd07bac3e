#!/usr/bin/env bash
# sieve_flush under concurrency, made deterministic with an advisory lock
# that pauses a flush half-way (a trigger on the frontier waits for it):
#  1. rows inserted into discovered while a flush runs are neither lost nor
#	  counted twice: they stay for the next flush;
#  2. a second flush on the same tables waits for the first, then takes
#	  only what is left;
#  3. under REPEATABLE READ the waiting flush fails with a serialization
#	  error instead, and changes nothing;
#  4. so does a REPEATABLE READ flush of another discovered table sharing
#	  seen, rather than failing on the unique index;
#  5. under READ COMMITTED, a row of discovered that another transaction
#	  deletes while the flush's DELETE runs is left to it, and a row it
#	  updates is flushed as updated (a second lock, 43, pauses the flush
#	  inside its DELETE).
. "$(dirname "$0")/lib.sh"
fresh_db

q <<'SQL'
CREATE TABLE seen (sig bigint PRIMARY KEY);
CREATE TABLE discovered (pos bigint NOT NULL, url text NOT NULL);
CREATE TABLE frontier (pos bigint NOT NULL, url text NOT NULL);
-- A flush pauses before appending to the frontier while lock 42 is held
CREATE FUNCTION pause_on_42() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_lock_shared(42);
	PERFORM pg_advisory_unlock_shared(42);
	RETURN NULL;
END $$;
CREATE TRIGGER pause BEFORE INSERT ON frontier
	FOR EACH STATEMENT EXECUTE FUNCTION pause_on_42();
INSERT INTO discovered SELECT g, 'https://example.org/' || (g % 700) FROM generate_series(1, 1000) g;
SQL

# The controller session holds lock 42 while the others are set up
# bash unsets CTL and CTL_PID as soon as the coprocess exits, so keep
# copies of the pid and the descriptors
coproc CTL { psql -X -q -A -t -d "$TEST_DB" 2>&1; }
ctl_pid=$CTL_PID
ctl_in=${CTL[1]}
ctl_out=${CTL[0]}
ctl() { echo "$1" >&"$ctl_in"; echo "SELECT 'done';" >&"$ctl_in"; local line; while read -r line <&"$ctl_out"; do [ "$line" = done ] && break; done; }

# wait_for "SQL condition": poll until it is true (at most 60 s)
wait_for() {
	local i
	for i in $(seq 1 600); do
		[ "$(q -c "SELECT $1")" = t ] && return 0
		sleep 0.1
	done
	return 1
}
# paused_flush LOCK DISCOVERED OUT WHAT: the controller takes advisory lock
# LOCK, a flush of DISCOVERED starts in the background (its output to OUT,
# its pid in $flush_pid) and must be waiting for that lock: "WHAT is paused"
paused_flush() {
	ctl "SELECT pg_advisory_lock($1);"
	q -c "SELECT sieve_flush('seen', '$2', 'frontier')" >"$3" 2>&1 &
	flush_pid=$!
	check "$4 is paused" \
		wait_for "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted) = 1"
}

# 1 and 2
paused_flush 42 discovered "$TEST_TMP/a.out" "the first flush"
a=$flush_pid
q -c "INSERT INTO discovered SELECT g, 'https://example.org/' || (g % 700) FROM generate_series(1001, 1100) g"
q -c "INSERT INTO discovered SELECT g, 'https://example.org/new/' || g FROM generate_series(1101, 1150) g"
q -c "SELECT sieve_flush('seen', 'discovered', 'frontier')" >"$TEST_TMP/b.out" 2>&1 &
b=$!
check "a second flush waits for the first (lock on seen)" \
	wait_for "EXISTS (SELECT FROM pg_locks WHERE relation = 'seen'::regclass AND NOT granted)"
ctl "SELECT pg_advisory_unlock(42);"
wait $a || true
wait $b || true
check "the first flush appended the 700 URLs of rows 1..1000 ($(cat "$TEST_TMP/a.out"))" [ "$(cat "$TEST_TMP/a.out")" = 700 ]
check "the second flush appended only the 50 new URLs of rows inserted meanwhile ($(cat "$TEST_TMP/b.out"))" \
	[ "$(cat "$TEST_TMP/b.out")" = 50 ]
check_sql "nothing lost, nothing twice: 750 URLs, each once, discovered empty" \
	"SELECT count(*) = 750 AND count(DISTINCT url) = 750
		AND (SELECT count(*) FROM discovered) = 0
		AND (SELECT count(*) FROM seen) = 750
	 FROM frontier"

# race_repeatable_read NAME SNAPSHOT_QUERY DISCOVERED FIRST: a flush of
# discovered is paused half-way while a second one, of DISCOVERED, starts
# under REPEATABLE READ with its snapshot taken by SNAPSHOT_QUERY, and
# queues for the lock on seen; then the first is let go, and must have
# appended FIRST URLs.  The second's output is left in $TEST_TMP/NAME.out.
race_repeatable_read() {
	local name=$1 first second
	paused_flush 42 discovered "$TEST_TMP/$name.first" "$name: the first flush"
	first=$flush_pid
	psql -X -q -A -t -v ON_ERROR_STOP=1 -v VERBOSITY=sqlstate -d "$TEST_DB" >"$TEST_TMP/$name.out" 2>&1 <<SQL &
BEGIN ISOLATION LEVEL REPEATABLE READ;
$2;
SELECT sieve_flush('seen', '$3', 'frontier');
COMMIT;
SQL
	second=$!
	check "$name: the second flush waits" \
		wait_for "EXISTS (SELECT FROM pg_locks WHERE relation = 'seen'::regclass AND NOT granted)"
	ctl "SELECT pg_advisory_unlock(42);"
	wait $first || true
	wait $second || true
	check "$name: the first flush appended its $4 URLs ($(cat "$TEST_TMP/$name.first"))" \
		[ "$(cat "$TEST_TMP/$name.first")" = "$4" ]
}

# 3. the same discovered, the second flush under REPEATABLE READ: its
# snapshot still sees the rows the first one deleted
q -c "INSERT INTO discovered SELECT g, 'https://example.org/rr/' || g FROM generate_series(2001, 2100) g"
race_repeatable_read same-discovered "SELECT count(*) FROM discovered" discovered 100
check "under REPEATABLE READ the waiting flush fails with a serialization error ($(tr '\n' ' ' <"$TEST_TMP/same-discovered.out"))" \
	grep -q "ERROR:  40001" "$TEST_TMP/same-discovered.out"
check_sql "and changed nothing: 850 URLs, each once" \
	"SELECT count(*) = 850 AND count(DISTINCT url) = 850 AND (SELECT count(*) FROM discovered) = 0
	 FROM frontier"

# 4. two flushes sharing seen but not discovered, the second under
# REPEATABLE READ: its snapshot cannot see the signatures the first one
# inserts, so it fails with a serialization error, not a unique violation
q -c "CREATE TABLE discovered2 (LIKE discovered)"
q -c "INSERT INTO discovered SELECT 3000 + g, 'https://example.org/both/' || g FROM generate_series(1, 10) g"
q -c "INSERT INTO discovered2 SELECT 4000 + g, 'https://example.org/both/' || g FROM generate_series(1, 10) g"
race_repeatable_read shared-seen "SELECT count(*) FROM seen" discovered2 10
check "REPEATABLE READ flush of another discovered table sharing seen fails with 40001 ($(tr '\n' ' ' <"$TEST_TMP/shared-seen.out"))" \
	grep -q "ERROR:  40001" "$TEST_TMP/shared-seen.out"
check_sql "and the first flush's 10 URLs are there once each" \
	"SELECT count(*) = 10 AND (SELECT count(*) FROM discovered2) = 10
	 FROM frontier WHERE url LIKE 'https://example.org/both/%'"

# 5. a flush paused inside its DELETE, at the first of three rows, while
# another session deletes the second and updates the third
q <<'SQL'
CREATE TABLE discovered3 (pos bigint NOT NULL, url text NOT NULL);
CREATE FUNCTION pause_on_43() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.pos = 5001 THEN
		PERFORM pg_advisory_lock_shared(43);
		PERFORM pg_advisory_unlock_shared(43);
	END IF;
	RETURN OLD;
END $$;
CREATE TRIGGER pause BEFORE DELETE ON discovered3
	FOR EACH ROW EXECUTE FUNCTION pause_on_43();
INSERT INTO discovered3 VALUES
	(5001, 'https://example.org/rc/first'),
	(5002, 'https://example.org/rc/deleted'),
	(5003, 'https://example.org/rc/updated');
SQL
paused_flush 43 discovered3 "$TEST_TMP/rc.out" "read committed: the flush, inside its DELETE,"
rc_flush=$flush_pid
q -c "DELETE FROM discovered3 WHERE pos = 5002"
q -c "UPDATE discovered3 SET url = url || '?v=2' WHERE pos = 5003"
ctl "SELECT pg_advisory_unlock(43);"
wait $rc_flush || true
check "read committed: the flush appended 2 URLs ($(tr '\n' ' ' <"$TEST_TMP/rc.out"))" \
	[ "$(cat "$TEST_TMP/rc.out")" = 2 ]
check_sql "read committed: the row deleted meanwhile was left out, the row updated was flushed as updated" \
	"SELECT array_agg(url ORDER BY pos) = ARRAY['https://example.org/rc/first', 'https://example.org/rc/updated?v=2']
	 FROM frontier WHERE url LIKE 'https://example.org/rc/%'"
check_sql "read committed: discovered3 is empty" "SELECT count(*) = 0 FROM discovered3"

exec {ctl_in}>&-
wait "$ctl_pid" 2>/dev/null || true
finish
