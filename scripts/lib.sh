# Shared by the scripts: install what is missing, build and install sbf,
# and run a throwaway PostgreSQL cluster.
#
# The PostgreSQL is the machine's own, Debian 12's PostgreSQL 15, unless
# PG_CONFIG (or PG_BINDIR) names another: scripts/test-matrix.sh runs the
# suite on each major that way.
#
# The cluster runs as the postgres OS user (initdb refuses root) in a
# temporary directory, listening only on a Unix socket in that directory on
# a private port, so it never touches a cluster the user already runs.

set -euo pipefail

SBF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${PG_CONFIG:-}" ] && [ -z "${PG_BINDIR:-}" ] && [ -x "$PG_CONFIG" ]; then
	PG_BINDIR=$("$PG_CONFIG" --bindir)
fi
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PG_CONFIG=${PG_CONFIG:-$PG_BINDIR/pg_config}
export PG_CONFIG PG_BINDIR

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The Debian packages that building sbf and running the main job need:
# the server, its headers and PGXS (postgresql-server-dev-15: pg_config and
# pgxs.mk alone come with the client package and prove nothing), xxHash,
# uriparser and libidn2 (url_canonical), the compiler and make.
SBF_BUILD_PACKAGES=(postgresql-15 postgresql-server-dev-15 libxxhash-dev liburiparser-dev libidn2-dev gcc make)

# What the tests need besides: libipc-run-perl for PostgreSQL::Test::Cluster,
# clang and its sanitizer runtime for the fuzzers, gnuplot for the main job's
# picture, psycopg 3 for the drivers' test (t/091_drivers.pl), Scrapy and
# pip for the Scrapy client's (t/090_scrapy.pl), venv for its install steps
# (t/092_scrapy_install.pl runs those of docs/scrapy.md), PgBouncer for its
# crawlers behind a pooler (t/098_scrapy_pgbouncer.pl runs its own
# pgbouncer on a free port: a system one, on 6432, is not used)
SBF_TEST_PACKAGES=(libipc-run-perl clang-14 libclang-rt-14-dev gnuplot-nox python3-psycopg
	python3-scrapy python3-pip python3-venv pgbouncer)

# package_installed NAME: dpkg has NAME fully installed
package_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# ensure_packages [NAME...]: install the build packages and NAMEs that dpkg
# does not have installed (as root; otherwise say which are missing)
ensure_packages() {
	local missing=() pkg
	for pkg in "${SBF_BUILD_PACKAGES[@]}" "$@"; do
		package_installed "$pkg" || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]} (run as root, or install them)"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# wait for another apt or dpkg (unattended upgrades at boot) to finish:
	# DPkg::Lock::Timeout covers dpkg's lock, the loop the package lists'
	local apt=(apt-get -o DPkg::Lock::Timeout=600) try
	for try in $(seq 1 15); do
		"${apt[@]}" update -qq >/dev/null && break
		[ "$try" -lt 15 ] || die "apt-get update failed"
		say "apt-get update failed (another apt may hold its lock): retrying in 20 s"
		sleep 20
	done
	"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
	for pkg in "${missing[@]}"; do
		package_installed "$pkg" || die "$pkg is still not installed after apt-get install"
	done
}

# build_and_install [make arguments...]: (the Makefile rebuilds objects
# built against another PostgreSQL)
build_and_install() {
	say "building and installing sbf for $("$PG_CONFIG" --version)"
	make -C "$SBF_ROOT" -s PG_CONFIG="$PG_CONFIG" "$@" >/dev/null || die "build failed"
	make -C "$SBF_ROOT" -s PG_CONFIG="$PG_CONFIG" "$@" install >/dev/null || die "install failed"
}

# The one way the scripts and the benchmarks make and run a throwaway
# cluster, as the postgres OS user, listening only on a Unix socket:
#
# init_server DIR: a new cluster's data directory in DIR/data (the postgres
# user gets to own DIR)
init_server() {
	local dir=$1
	chown postgres: "$dir"
	chmod 700 "$dir"
	runuser -u postgres -- "$PG_BINDIR/initdb" -D "$dir/data" \
		--auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
		|| { cat "$dir/initdb.log" >&2; die "initdb failed"; }
}

# run_server DIR PORT [pg_ctl options...]: start the cluster of DIR/data
# (made by init_server, or a base backup) on a socket in DIR on PORT, its
# log in DIR/server.log.  It allows prepared transactions (the isolation
# spec shared_prepared runs them) unless SBF_SERVER_DEFAULTS is set: then
# every setting of postgresql.conf but the port, the socket and
# listen_addresses keeps initdb's default, as on a server a user just made
# (scripts/test-matrix.sh runs the suite so on one major; the cluster is
# still made with the C.UTF-8 locale, UTF8 and trust, as init_server makes
# every one).
run_server() {
	local dir=$1 port=$2 settings
	shift 2
	settings="-p $port -k $dir -c listen_addresses=''"
	[ -n "${SBF_SERVER_DEFAULTS:-}" ] ||
		settings+=" -c max_worker_processes=8 -c max_parallel_workers=4 -c max_prepared_transactions=10"
	runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$dir/data" -w -t 600 \
		-l "$dir/server.log" "$@" -o "$settings" start >/dev/null \
		|| { cat "$dir/server.log" >&2; die "the server in $dir did not start"; }
}

# restart_server DIR: restart it with the same options, to apply settings
# that need it (ALTER SYSTEM SET shared_buffers ...)
restart_server() {
	runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$1/data" -w -t 600 \
		-l "$1/server.log" restart >/dev/null \
		|| { cat "$1/server.log" >&2; die "the server in $1 did not restart"; }
}

# start_server DIR PORT: init_server and run_server
start_server() {
	init_server "$1"
	run_server "$1" "$2"
}

# stop_server DIR: stop the cluster in DIR, if it runs
stop_server() {
	if [ -f "$1/data/postmaster.pid" ]; then
		runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
}

# start_cluster: sets PGHOST, PGPORT, PGUSER, PGDATABASE and SBF_CLUSTER
start_cluster() {
	id postgres >/dev/null 2>&1 || die "no postgres OS user (is postgresql-15 installed?)"
	SBF_CLUSTER=$(mktemp -d /tmp/sbf-cluster.XXXXXX)
	PGPORT=${SBF_PORT:-$((20000 + RANDOM % 10000))}
	say "starting a throwaway $("$PG_CONFIG" --version) cluster in $SBF_CLUSTER (port $PGPORT, socket only)"
	start_server "$SBF_CLUSTER" "$PGPORT"
	export PGHOST=$SBF_CLUSTER PGPORT PGUSER=postgres PGDATABASE=postgres SBF_CLUSTER
	trap stop_cluster EXIT
}

stop_cluster() {
	[ -n "${SBF_CLUSTER:-}" ] || return 0
	stop_server "$SBF_CLUSTER"
	if [ -n "${SBF_KEEP_CLUSTER:-}" ]; then
		say "kept the cluster in $SBF_CLUSTER"
	else
		rm -rf "$SBF_CLUSTER"
	fi
	SBF_CLUSTER=
}

# result RC WHAT: one check of a script that counts its own (the package's,
# the archive's): "ok: WHAT" if RC is 0, else "FAILED: WHAT", added to
# the caller's passed and failed
result() {
	if [ "$1" -eq 0 ]; then
		echo "ok: $2"
		passed=$((passed + 1))
	else
		echo "FAILED: $2"
		failed=$((failed + 1))
	fi
}

# A backend that crashed leaves this line in the server log
server_crashed() {
	grep -E "terminated by signal|server process .* was terminated|PANIC" "$SBF_CLUSTER/server.log" >/dev/null 2>&1
}

# stream_to_copy FILE: a URL stream (gzipped or not; "pos<TAB>url" lines,
# or one URL a line numbered from 1) as COPY text rows "pos<TAB>url".
# Backslashes, tabs and carriage returns inside URLs are escaped; a CR at
# the end of a line (CRLF files) is dropped.
stream_to_copy() {
	local file=$1 mode=plain
	# (gzip is cut short by head: no pipefail for this look at line 1)
	if (set +o pipefail; gzip -dcf "$file" | head -n 1 | LC_ALL=C grep -qE $'^[0-9]+\t'); then
		mode=tsv
	fi
	gzip -dcf "$file" |
		LC_ALL=C sed -e 's/\r$//' -e 's/\\/\\\\/g' -e 's/\r/\\r/g' |
		LC_ALL=C awk -v mode="$mode" '{
			if (mode == "tsv") {
				i = index($0, "\t")
				pos = substr($0, 1, i - 1)
				url = substr($0, i + 1)
			} else {
				pos = NR
				url = $0
			}
			gsub(/\t/, "\\t", url)
			print pos "\t" url
		}'
}
