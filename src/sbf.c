/*-------------------------------------------------------------------------
 *
 * sbf.c
 *	  The sbf extension: Bloom filters, Stable Bloom filters and the
 *	  offline sieve for finding duplicate URLs in streams of rows.
 *
 * This file only marks the library as a PostgreSQL module.  The layout of
 * src/ is the architecture:
 *
 *	  format.h		the on-disk layout of every value (one place, versioned)
 *	  hash.c		element hashing and the probe sequence
 *	  value_io.c	text and binary framing shared by the types
 *	  sizing.c		formulas that size filters and predict accuracy
 *	  bloom.c		the bloom type and its scalar functions
 *	  bloom_agg.c	the bloom aggregates
 *	  stablebloom.c	the stablebloom type (insertion in stablebloom.h)
 *	  stablebloom_agg.c	stablebloom_agg
 *	  prng.h		SplitMix64, the stable filter's generator
 *	  agg.h			helpers shared by the aggregates
 *	  window.c		is_duplicate(value, filter) OVER (...)
 *	  sieve.c		sieve_flush, the offline sieve
 *	  shared.h		shared filters: the page access API and page-level
 *					test and add (the filter in the pages of a table)
 *	  shared_am.c	the sbf_filter table access method: rows for COPY
 *	  shared_create.c	shared_*_create: metapage, sparse size, init fork
 *	  shared_page.c	opening a filter, its cached metapage, data pages
 *	  shared_insert.c	shared_test_and_add and its generic WAL
 *	  shared_read.c	shared_contains, shared_info, the snapshots
 *	  simhash.c		the simhash64 type: SimHash fingerprints, Hamming distance
 *	  simhash_gin.c	simhash_ops, the exact GIN index for near-duplicates
 *	  url.c			the canonical form of a URL (uriparser, libidn2)
 *	  url_functions.c	url_canonical and url_host
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "fmgr.h"

#include "simhash.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* The GUCs, defined when the library is loaded (no preloading needed) */
void
_PG_init(void)
{
	simhash_define_gucs();
}
