#!/usr/bin/env bash
# Benchmark: what sieve_contains's checks on a compressed seen cost (the
# chunk it lands on decoded and checked whole, where it used to be decoded
# up to the signature, half a chunk on average; the headers of the chunks
# before and after read through the primary key), against sieve_contains
# of a base commit without them, 26a3fe7 by default.  One run, one cluster,
# one table: the two builds' sbf.so are installed in turn (the SQL is the
# same), each measured in a fresh session, alternating, REPEAT times.
#
#   bash bench/sieve_contains_checks.sh [BASE]
#
# It always starts a throwaway cluster of its own (no SBF_USE_EXISTING):
# it replaces the installed library under it.
#
# The compressed seen holds the signatures of URLS synthetic URLs (2M by
# default, about 7,300 chunks); 200,000 lookups, half of them present, are
# timed each way (the backend's CPU time, not the wall time: the machine
# is shared) against the same URLs' signatures alone, which is subtracted.
# Prints ns a lookup for each build (the best of REPEAT runs, 15 by
# default: what others run only adds) and the ratio, checks over base, and
# that of the medians.  Leaves the current tree's build installed.
. "$(dirname "$0")/lib.sh"

case "${1:-}" in -h | --help) sed -n '2,21p' "$0" >&2; exit 2 ;; esac
BASE=${1:-26a3fe7}
URLS=${URLS:-2000000}
REPEAT=${REPEAT:-15}
builds_beside "$BASE" checks
export PGOPTIONS="-c client_min_messages=warning"
psql() { command psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

say "a compressed seen of $URLS URLs"
psql -c "CREATE EXTENSION sbf"
synthetic_seen "$URLS" | psql

# 200,000 lookups, half present: URLs from 1 to 2 * URLS, evenly spaced
urls="SELECT 'https://www.example' || (h % 1000) || '.gov/path/' || h || '/page.html' AS url FROM generate_series(200, 2 * $URLS, $((URLS / 100000))) h"
lookup() { cpu_seconds "SELECT count(*) FILTER (WHERE $1) FROM ($urls) u"; }
read -r n present < <(psql -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE sieve_contains('zseen', url)) FROM ($urls) u")
printf '%-28s %10s %12s\n' "$n lookups, $present present" "CPU s" "ns a lookup"
base_times=() checks_times=() sig_times=()
for i in $(seq "$REPEAT"); do
	s=$(lookup "url_signature(url) <> 0")
	sig_times+=("$s")
	for build in base checks; do
		use_build "$build"
		s=$(lookup "sieve_contains('zseen', url)")
		printf '%-28s %10s\n' "$build ($i)" "$s"
		if [ "$build" = base ]; then base_times+=("$s"); else checks_times+=("$s"); fi
	done
done
least() { printf '%s\n' "$@" | sort -n | head -1; }
sig=$(least "${sig_times[@]}")
base=$(least "${base_times[@]}")
checks=$(least "${checks_times[@]}")
printf '\n%-28s %10s %12.0f\n' "sieve_contains, $BASE" "$base" "$(echo "($base - $sig) * 1000000000 / $n" | bc -l)"
printf '%-28s %10s %12.0f\n' "sieve_contains, checks" "$checks" "$(echo "($checks - $sig) * 1000000000 / $n" | bc -l)"
printf '%-28s %10s\n' "(the signatures alone)" "$sig"
printf '\nbest of %d: a lookup with the checks takes %.2fx that of %s' \
	"$REPEAT" "$(echo "($checks - $sig) / ($base - $sig)" | bc -l)" "$BASE"
sig=$(median "${sig_times[@]}")
base=$(median "${base_times[@]}")
checks=$(median "${checks_times[@]}")
printf ' (median: %.2fx)\n' "$(echo "($checks - $sig) / ($base - $sig)" | bc -l)"
