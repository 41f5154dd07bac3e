#!/usr/bin/env bash
# Corrupted binary COPY input and random text are rejected with an ERROR
# (or, where the corruption leaves a well-formed value, accepted as one),
# and no backend ever crashes.
. "$(dirname "$0")/lib.sh"
fresh_db

q <<'SQL'
CREATE TABLE good (filter bloom);
INSERT INTO good SELECT bloom_add(bloom_add(bloom_empty(128, 3, 99), 'a'), 'b');
CREATE TABLE target (filter bloom);
SQL
q -c "\\copy good TO '$TEST_TMP/good.bin' WITH (FORMAT binary)"

# Binary COPY file: 19-byte signature and header, then per row an int16
# field count, an int32 field length and the field's bytes, then int16 -1.
python3 - "$TEST_TMP" <<'PY'
import struct, sys, os
tmp = sys.argv[1]
data = open(os.path.join(tmp, "good.bin"), "rb").read()
head, row = data[:19], data[19:-2]
nfields, length = struct.unpack(">hi", row[:6])
payload = row[6:6 + length]
def write(name, body):
    open(os.path.join(tmp, name), "wb").write(head + struct.pack(">hi", 1, len(body)) + body + b"\xff\xff")
# every byte of the payload inverted, one file each
for i in range(len(payload)):
    b = bytearray(payload); b[i] ^= 0xff
    write("flip-%03d.bin" % i, bytes(b))
# every truncation, and one byte too many
for n in range(0, len(payload)):
    write("cut-%03d.bin" % n, payload[:n])
write("long.bin", payload + b"\x00")
PY

flips=0; cuts=0; rejected=0; accepted=0; wrong_code=0
for f in "$TEST_TMP"/flip-*.bin "$TEST_TMP"/cut-*.bin "$TEST_TMP"/long.bin; do
	q -c "TRUNCATE target"
	if out=$(psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=sqlstate -d "$TEST_DB" \
			  -c "\\copy target FROM '$f' WITH (FORMAT binary)" 2>&1); then
		# accepted: never a truncated or overlong value, and it must be a
		# well-formed filter that works
		case $(basename "$f") in cut-* | long.bin) fail "$(basename "$f") was accepted" ;; esac
		if q -c "SELECT bloom_info(filter), filter @> 'a'::text FROM target" >/dev/null 2>&1; then
			accepted=$((accepted + 1))
		else
			fail "$(basename "$f") was accepted but the value does not work"
		fi
	else
		rejected=$((rejected + 1))
		grep -q "ERROR:  22P03" <<<"$out" || { wrong_code=$((wrong_code + 1)); fail "$(basename "$f"): $out"; }
	fi
done
check "corrupted binary input: $rejected rejected with 22P03, $accepted accepted as valid filters, $wrong_code other errors" \
	[ "$wrong_code" -eq 0 -a "$rejected" -ge 40 ]

# Random text after "\x"
bad_text=0
for i in $(seq 1 200); do
	hex=$(head -c $((RANDOM % 80)) /dev/urandom | od -An -tx1 | tr -d ' \n')
	if out=$(psql -X -q -v VERBOSITY=sqlstate -d "$TEST_DB" -c "SELECT '\\x$hex'::bloom" 2>&1); then
		:
	else
		grep -q "ERROR:  22P02" <<<"$out" || { bad_text=$((bad_text + 1)); fail "random text \\x$hex: $out"; }
	fi
done
check "200 random hexadecimal strings: all rejected with 22P02 or valid" [ "$bad_text" -eq 0 ]

check_sql "the server is still up" "SELECT true"
check "no backend crashed (server log)" bash -c "! grep -E 'terminated by signal|was terminated|PANIC' '$PGHOST/server.log'"

finish
