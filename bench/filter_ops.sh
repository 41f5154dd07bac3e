#!/usr/bin/env bash
# Per-element cost of bloom and stablebloom in C, outside PostgreSQL: builds
# bench/filter_ops.c against sbf's own hashing and insertion code and runs
# it for filters of 1 MB, 64 MB and 512 MB (bloom k = 7; stablebloom k = 8,
# Max = 1, P = 4).  Prints ns per element and the ratio to hashing alone.
#
#   bash bench/filter_ops.sh [elements]      (default 4000000; ~1 minute)
. "$(dirname "$0")/../scripts/lib.sh"

ensure_packages
BIN=$(mktemp -d)/filter_ops
# --gc-sections drops hash.c's Datum entry points, which need a backend
gcc -O2 -Wall -I"$("$PG_CONFIG" --includedir-server)" -I"$SBF_ROOT/src/common" -I"$SBF_ROOT/src/filters" -I"$SBF_ROOT/src/shared" \
	-ffunction-sections -fdata-sections \
	"$SBF_ROOT/bench/filter_ops.c" "$SBF_ROOT/src/common/hash.c" \
	-Wl,--gc-sections -o "$BIN" || die "cannot build the driver"
"$BIN" "${1:-4000000}" | awk '
	NR == 1 { print $0 "   add/hash  test/hash"; next }
	$1 == "(hash" { hash = $5; print; next }
	{ printf "%s %10.1f %10.1f\n", $0, $5 / hash, $6 / hash }'
rm -rf "$(dirname "$BIN")"
