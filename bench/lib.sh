# Shared by the benchmarks: scripts/lib.sh, and how they measure.
#
# With PG_CONFIG set, the benchmarks build sbf for that PostgreSQL (15 to
# 18) and run its programs (initdb, pg_ctl, postgres, psql, pgbench), not
# the system's:
#
#   PG_CONFIG=/path/to/bin/pg_config bash bench/shared.sh
if [ -n "${PG_CONFIG:-}" ] && [ -z "${PG_BINDIR:-}" ]; then
	PG_BINDIR=$("$PG_CONFIG" --bindir)
fi
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
PATH=$PG_BINDIR:$PATH

command -v bc >/dev/null || ensure_packages bc
BENCH_TMP=$(mktemp -d /tmp/sbf-bench.XXXXXX)

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# measure SETTINGS SQL: runs SQL after SETTINGS in a fresh backend and
# prints "seconds peak_kB", the wall time and the backend's peak private
# memory (RssAnon, sampled every 20 ms from /proc: shared buffers excluded)
measure() {
	local fifo=$BENCH_TMP/pid pid client peak=0 kb start end
	rm -f "$fifo"
	mkfifo "$fifo"
	command psql -X -q -A -t -v ON_ERROR_STOP=1 >/dev/null <<SQL &
\\o $fifo
SELECT pg_backend_pid();
\\o /dev/null
$1;
$2;
SQL
	client=$!
	read -r pid <"$fifo"
	start=$(date +%s.%N)
	while kill -0 "$client" 2>/dev/null; do
		kb=$(awk '/^RssAnon/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
		[ "${kb:-0}" -gt "$peak" ] && peak=$kb
		sleep 0.02
	done
	end=$(date +%s.%N)
	wait "$client" || die "failed: $2"
	printf '%.2f %d\n' "$(echo "$end - $start" | bc -l)" "$peak"
}

# synthetic_seen URLS: SQL making plain_seen (sig bigint PRIMARY KEY), the
# signatures of URLS synthetic URLs (those of synthetic_crawl, numbered 1 to
# URLS), and the compressed seen zseen imported from it
synthetic_seen() {
	cat <<SQL
CREATE TABLE plain_seen (sig bigint PRIMARY KEY);
INSERT INTO plain_seen
	SELECT url_signature('https://www.example' || (g % 1000) || '.gov/path/' || g || '/page.html')
	FROM generate_series(1, $1) g;
\o /dev/null
SELECT sieve_seen_create('zseen');
SET work_mem = '64MB';
SELECT sieve_seen_import('zseen', 'plain_seen');
\o
VACUUM ANALYZE zseen, plain_seen;
SQL
}

# cpu_seconds SQL: runs SQL (one query, its rows discarded) in a fresh
# backend and prints the backend's CPU seconds for it (utime + stime of
# /proc/self/stat, in ticks of 1/CLK_TCK s), which the other jobs of a
# shared machine do not add to as they do to the wall time
cpu_seconds() {
	local cpu="(SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s)"
	command psql -X -q -A -t -v ON_ERROR_STOP=1 <<SQL
SELECT $cpu AS t0 \gset
$1 \g /dev/null
SELECT round(($cpu - :t0)::numeric / $(getconf CLK_TCK), 2);
SQL
}

# synthetic_crawl TABLE ROWS: SQL making TABLE (pos bigint PRIMARY KEY, url
# text) of ROWS crawl rows with a fixed seed; URL ids drawn as
# floor(4.4M * r^2): a few pages linked very often, most rarely (3.6M
# distinct URLs in 10M rows)
synthetic_crawl() {
	cat <<SQL
DROP TABLE IF EXISTS $1;
CREATE TABLE $1 (pos bigint PRIMARY KEY, url text NOT NULL);
SELECT setseed(0.42);
INSERT INTO $1
	SELECT g, 'https://www.example' || (h % 1000) || '.gov/path/' || h || '/page.html'
	FROM (SELECT g, floor(4400000 * power(random(), 2))::bigint AS h
		  FROM generate_series(1, $2) g) s;
VACUUM ANALYZE $1;
SQL
}

# builds_beside REV NAME: build sbf at commit REV beside the tree, build and
# install the tree, and start the throwaway cluster; the two libraries are
# kept as $BENCH_TMP/base.so and $BENCH_TMP/NAME.so, for use_build to swap
# between runs of one cluster (the benchmarks that compare a change with
# the commit before it, in the same run).  The tree's build is installed
# again at exit.
builds_beside() {
	local rev=$1 name=$2 lib
	lib=$("$PG_CONFIG" --pkglibdir)/sbf.so
	say "building $rev"
	mkdir "$BENCH_TMP/base"
	git -C "$SBF_ROOT" archive "$rev" | tar -x -C "$BENCH_TMP/base"
	make -C "$BENCH_TMP/base" -s -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || die "build of $rev failed"
	cp "$BENCH_TMP/base/sbf.so" "$BENCH_TMP/base.so"
	build_and_install
	cp "$lib" "$BENCH_TMP/$name.so"
	start_cluster
	BUILD_LIB=$lib
	trap "use_build $name; stop_cluster; rm -rf \"\$BENCH_TMP\"" EXIT
}

# use_build NAME: the library that new backends load.  install replaces the
# file (a new inode): a running backend keeps its copy
use_build() { install -m 755 "$BENCH_TMP/$1.so" "$BUILD_LIB"; }

# restart_cluster: restart the throwaway cluster (scripts/lib.sh)
restart_cluster() { restart_server "$SBF_CLUSTER"; }
