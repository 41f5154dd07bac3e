#!/usr/bin/env bash
# Corrupted binary COPY input and random text are rejected with an ERROR
# (or, where the corruption leaves a well-formed value, accepted as one),
# and no backend ever crashes.  For bloom and stablebloom.
#
# The random values come from bash's $RANDOM with a seed it prints, so a
# failure can be replayed: SBF_SEED=<seed> bash test/bad_input.sh
. "$(dirname "$0")/lib.sh"
fresh_db

SEED=${SBF_SEED:-$$}
RANDOM=$SEED
echo "random values from seed $SEED"

# random_hex N: N random bytes as hexadecimal, in $hex (no subshell: bash
# reseeds $RANDOM in each one)
random_hex() {
	local i
	hex=
	for ((i = 0; i < $1; i++)); do
		printf -v hex '%s%02x' "$hex" $((RANDOM % 256))
	done
}

q <<'SQL'
CREATE TABLE good_bloom (filter bloom);
INSERT INTO good_bloom SELECT bloom_add(bloom_add(bloom_empty(128, 3, 99), 'a'), 'b');
CREATE TABLE good_stablebloom (filter stablebloom);
-- Max 5 in 3-bit cells, so that cells can hold out-of-range values
INSERT INTO good_stablebloom
	SELECT stablebloom_add(stablebloom_add(stablebloom_empty(40, 3, 5, 2, 99), 'a'), 'b');
CREATE TABLE target_bloom (filter bloom);
CREATE TABLE target_stablebloom (filter stablebloom);
SQL

for type in bloom stablebloom; do
	q -c "\\copy good_$type TO '$TEST_TMP/$type-good.bin' WITH (FORMAT binary)"

	# Binary COPY file: 19-byte signature and header, then per row an int16
	# field count, an int32 field length and the field's bytes, then int16 -1.
	python3 - "$TEST_TMP" "$type" <<'PY'
import os, struct, sys
tmp, typ = sys.argv[1], sys.argv[2]
data = open(os.path.join(tmp, typ + "-good.bin"), "rb").read()
head, row = data[:19], data[19:-2]
nfields, length = struct.unpack(">hi", row[:6])
payload = row[6:6 + length]
def write(name, body):
    with open(os.path.join(tmp, "%s-%s.bin" % (typ, name)), "wb") as f:
        f.write(head + struct.pack(">hi", 1, len(body)) + body + b"\xff\xff")
for i in range(len(payload)):            # every byte inverted, one at a time
    b = bytearray(payload); b[i] ^= 0xff
    write("flip-%03d" % i, bytes(b))
for i in range(len(payload)):            # every byte set to 0x01 (small values)
    b = bytearray(payload); b[i] = 0x01
    write("one-%03d" % i, bytes(b))
for n in range(len(payload)):            # every truncation
    write("cut-%03d" % n, payload[:n])
write("long", payload + b"\x00")         # one byte too many
PY

	rejected=0; accepted=0; other=0
	for f in "$TEST_TMP/$type"-flip-*.bin "$TEST_TMP/$type"-one-*.bin "$TEST_TMP/$type"-cut-*.bin "$TEST_TMP/$type"-long.bin; do
		name=$(basename "$f" .bin)
		q -c "TRUNCATE target_$type"
		if out=$(psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=sqlstate -d "$TEST_DB" \
				  -c "\\copy target_$type FROM '$f' WITH (FORMAT binary)" 2>&1); then
			# accepted: never a truncated or overlong value, and it must work
			case $name in *-cut-* | *-long) fail "$name was accepted" ;; esac
			if q -c "SELECT ${type}_info(filter), filter @> 'a'::text,
							${type}_add(filter, 'c') @> 'c'::text FROM target_$type" >/dev/null 2>&1; then
				accepted=$((accepted + 1))
			else
				fail "$name was accepted but the value does not work"
			fi
		else
			rejected=$((rejected + 1))
			grep -q "ERROR:  22P03" <<<"$out" || { other=$((other + 1)); fail "$name: $out"; }
		fi
	done
	check "$type: corrupted binary input: $rejected rejected with 22P03, $accepted accepted as valid filters, $other other errors" \
		[ "$other" -eq 0 -a "$rejected" -ge 60 ]

	# Random bytes after "\x", and the good value with random bytes changed
	good=$(q -c "SELECT filter::text FROM good_$type")
	bad_text=0
	for i in $(seq 1 100); do
		random_hex $((RANDOM % 80))
		pos=$((3 + 2 * (RANDOM % ((${#good} - 2) / 2))))
		for text in "\\x$hex" "${good:0:$((pos - 1))}${hex:0:2}${good:$((pos + 1))}"; do
			[ ${#text} -ge 4 ] || continue
			if ! out=$(psql -X -q -v VERBOSITY=sqlstate -d "$TEST_DB" \
						-c "SELECT ${type}_info('$text'::$type)" 2>&1); then
				grep -q "ERROR:  22P02" <<<"$out" || { bad_text=$((bad_text + 1)); fail "text $text: $out"; }
			fi
		done
	done
	check "$type: 200 random and randomly corrupted text values: all rejected with 22P02 or valid" [ "$bad_text" -eq 0 ]
done

check_sql "the server is still up" "SELECT true"
check "no backend crashed (server log)" bash -c "! grep -E 'terminated by signal|was terminated|PANIC' '$PGHOST/server.log'"

finish
