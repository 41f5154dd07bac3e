#!/usr/bin/env bash
# The main job (scripts/demo.sh) on a slice of its stream: every row of its
# table agrees with counts made here independently (TP + FN = the true
# repeats, counted with awk from the file; TP + FP = the rows the method
# flagged, counted from its marks), and the picture is a PNG.
. "$(dirname "$0")/lib.sh"
fresh_db

ROWS=20000
STREAM=$SBF_DATA/doccrawl-pg-python.tsv.gz
OUT=$TEST_TMP/out

if ! bash "$(dirname "$0")/../scripts/demo.sh" --database "$TEST_DB" --rows $ROWS --keep \
		--out "$OUT" "$STREAM" >"$TEST_TMP/demo.log" 2>&1; then
	fail "scripts/demo.sh failed: $(tail -5 "$TEST_TMP/demo.log")"
	finish
fi
pass "scripts/demo.sh --rows $ROWS ran"

# the true repeats of the first ROWS lines, independently of PostgreSQL
repeats=$(gzip -dc "$STREAM" | awk -F'\t' -v n=$ROWS 'NR <= n { if (seen[$2]++) r++ } END { print r + 0 }')

methods=0
while IFS=$'\t' read -r method memory parameters tp fp fn flagged seconds; do
	[ "$method" = method ] && continue
	methods=$((methods + 1))
	marked=$(q -c "SELECT count(*) FILTER (WHERE flagged) FROM sbf_demo.marks WHERE method = '$method'")
	check "$method: TP + FN = $((tp + fn)) = the $repeats true repeats" [ $((tp + fn)) -eq "$repeats" ]
	check "$method: TP + FP = $((tp + fp)) = the $marked rows it flagged" [ $((tp + fp)) -eq "$marked" ]
	case $method in
		exact | sieve_flush | bloom*)
			check "$method: no repeat missed (FN = $fn)" [ "$fn" -eq 0 ] ;;
	esac
	case $method in
		exact | sieve_flush)
			check "$method: exact (FP = $fp)" [ "$fp" -eq 0 ] ;;
	esac
done <"$OUT/results.tsv"
check "the table has a row for exact, 3 x bloom, 3 x stablebloom and the sieve ($methods)" [ "$methods" -eq 8 ]
check "the picture is a PNG" bash -c "head -c 8 '$OUT/duplicates.png' | od -An -c | grep -q 'P   N   G'"
check "the demo printed where the picture is" grep -q "Picture: $OUT/duplicates.png" "$TEST_TMP/demo.log"

finish
