/*-------------------------------------------------------------------------
 *
 * sbf.c
 *	  The sbf extension: Bloom filters, Stable Bloom filters and the
 *	  offline sieve for finding duplicate URLs in streams of rows.
 *
 * This file only marks the library as a PostgreSQL module and defines its
 * settings at load.  The layout of src/ is the architecture, a folder per
 * subsystem, each calling only those above it in this list
 * (docs/architecture.md; scripts/check-layout.sh checks it):
 *
 *	  common/		hashing, the framing of values, sizing, format.h (the
 *					on-disk layout of every value), pg_version_compat.h
 *	  filters/		the bloom, stablebloom and slidingbloom types, their
 *					aggregates, is_duplicate(value, filter) OVER (...)
 *	  url/			the canonical form of a URL, url_canonical, url_host
 *	  simhash/		the simhash64 type and its GIN operator class
 *	  sieve/		sieve_flush, the offline sieve, and the compressed seen
 *	  shared/		shared filters: a filter in the pages of a table
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
