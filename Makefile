# sbf: PGXS build.
#
#   make && make install    build and install into the server of pg_config
#   make installcheck       pg_regress (sql/), isolation (specs/) and TAP
#                           (t/) tests against the installed extension
#   make prove_installcheck only the TAP tests (they start clusters of their
#                           own, and so refuse to run as root)
#   make WERROR=1           fail the build on any compiler warning (the test
#                           command builds this way)
MODULE_big = sbf
OBJS = \
	src/sbf.o \
	src/common/hash.o \
	src/common/value_io.o \
	src/common/misread.o \
	src/common/sizing.o \
	src/filters/bloom.o \
	src/filters/bloom_agg.o \
	src/filters/stablebloom.o \
	src/filters/stablebloom_agg.o \
	src/filters/slidingbloom_format.o \
	src/filters/slidingbloom.o \
	src/filters/slidingbloom_agg.o \
	src/filters/slidingbloom_fit.o \
	src/filters/slidingbloom_time.o \
	src/filters/window.o \
	src/sieve/sieve_flush.o \
	src/sieve/sieve_chunk.o \
	src/sieve/sieve_citus.o \
	src/sieve/sieve_codes.o \
	src/sieve/sieve_index.o \
	src/sieve/sieve_seen.o \
	src/sieve/sieve_online.o \
	src/sieve/sieve_spill.o \
	src/sieve/sieve_store.o \
	src/shared/shared_meta.o \
	src/shared/shared_storage.o \
	src/shared/shared_wal.o \
	src/shared/shared_am.o \
	src/shared/shared_functions.o \
	src/shared/shared_create.o \
	src/shared/shared_grow.o \
	src/shared/shared_insert.o \
	src/shared/shared_page.o \
	src/shared/shared_pending.o \
	src/shared/shared_read.o \
	src/shared/shared_sliding.o \
	src/simhash/simhash.o \
	src/simhash/simhash_gin.o \
	src/simhash/simhash_keys.o \
	src/url/url.o \
	src/url/url_functions.o

EXTENSION = sbf
# sbf--1.0.sql and sbf--1.0--1.1.sql are the released scripts and never
# change; a new install of 1.2 runs them and then sbf--1.1--1.2.sql, as
# contrib modules do, so a fresh 1.2 and an updated 1.0 or 1.1 are built by
# the same statements
DATA = sbf--1.0.sql sbf--1.0--1.1.sql sbf--1.1--1.2.sql

REGRESS = upgrade bloom bloom_agg is_duplicate bloom_errors stablebloom \
	stablebloom_errors sieve sieve_hardening shared shared_errors shared_layouts \
	shared_partitioned shared_growth shared_big_transactions shared_sliding cancellation slidingbloom slidingbloom_errors \
	slidingbloom_time simhash url \
	sieve_compressed sieve_compressed_rewrite sieve_readers sieve_contains_batch \
	seen_online
REGRESS_OPTS = --load-extension=sbf
ISOLATION = sieve_concurrent_insert sieve_two_flushes sieve_repeatable_read \
	sieve_read_committed sieve_lock_privileges shared_concurrency shared_ddl \
	shared_lock_privileges shared_create shared_transactional shared_prepared shared_growth_waits shared_big_transaction \
	sieve_compressed_concurrency shared_sliding_concurrency sieve_reader_privileges \
	seen_online_concurrency
ISOLATION_OPTS = --load-extension=sbf
TAP_TESTS = 1

# src/ has a folder per subsystem (docs/architecture.md); a file includes
# another's header by its name
SBF_DIRS = common filters shared sieve simhash url
PG_CPPFLAGS = $(addprefix -I$(srcdir)/src/,$(SBF_DIRS))
# url.c parses with uriparser and writes IDN hosts in ASCII with libidn2;
# bind calls inside sbf.so to sbf's own functions, never to a postgres symbol
# of the same name (postgres exports e.g. bloom_create from lib/bloomfilter.c)
SHLIB_LINK = -Wl,-Bsymbolic -luriparser -lidn2
# sbf is C99; PostgreSQL 19's headers need C11 (MAJORVERSION comes from PGXS)
SBF_STD = $(if $(filter 15 16 17 18,$(MAJORVERSION)),gnu99,gnu11)
PG_CFLAGS = -std=$(SBF_STD) -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers $(if $(WERROR),-Werror)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Objects built against another PostgreSQL (the version matrix builds in
# one tree) are rebuilt: they depend on a file naming the server headers
# they were compiled with, rewritten only when that changes
SBF_PG_BUILD := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --includedir-server)
src/.pg-build: FORCE
	@echo '$(SBF_PG_BUILD)' | cmp -s - $@ || echo '$(SBF_PG_BUILD)' >$@
.PHONY: FORCE
EXTRA_CLEAN = src/.pg-build

$(OBJS): src/.pg-build $(wildcard $(srcdir)/src/*/*.h)

# The PGXN archive, sbf-VERSION.zip (VERSION from META.json): the files of
# the commit checked out, under sbf-VERSION/, less those .gitattributes
# marks export-ignore (scripts/test-dist.sh builds and tests it unpacked)
SBF_VERSION = $(shell sed -n 's/^   "version": "\(.*\)",$$/\1/p' $(srcdir)/META.json | head -n 1)
.PHONY: dist
dist:
	git -C $(srcdir) archive --format zip --prefix=sbf-$(SBF_VERSION)/ \
		-o $(abspath sbf-$(SBF_VERSION).zip) HEAD

# PGXS runs the TAP tests only as part of installcheck; this runs them alone
.PHONY: prove_installcheck
prove_installcheck:
	$(prove_installcheck)
