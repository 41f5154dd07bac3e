# sbf: PGXS build.  make && make install && make installcheck
MODULE_big = sbf
OBJS = \
	src/sbf.o \
	src/hash.o \
	src/value_io.o \
	src/sizing.o \
	src/bloom.o \
	src/bloom_agg.o \
	src/stablebloom.o \
	src/stablebloom_agg.o \
	src/window.o \
	src/sieve.o

EXTENSION = sbf
DATA = sbf--1.0.sql
REGRESS = bloom bloom_agg is_duplicate bloom_errors stablebloom stablebloom_errors sieve
REGRESS_OPTS = --load-extension=sbf

PG_CPPFLAGS = -I$(srcdir)/src
# bind calls inside sbf.so to sbf's own functions, never to a postgres symbol
# of the same name (postgres exports e.g. bloom_create from lib/bloomfilter.c)
SHLIB_LINK = -Wl,-Bsymbolic
PG_CFLAGS = -std=gnu99 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): src/format.h src/hash.h src/bloom.h src/sizing.h src/value_io.h \
	src/stablebloom.h src/prng.h src/agg.h
