/*-------------------------------------------------------------------------
 *
 * simhash.h
 *	  The simhash type (format.h), shared by simhash.c and simhash_gin.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SIMHASH_H
#define SBF_SIMHASH_H

#include "postgres.h"

#include "fmgr.h"
#include "port/pg_bitutils.h"

#include "format.h"

#define PG_GETARG_SIMHASH(n)	((uint64) PG_GETARG_INT64(n))
#define PG_RETURN_SIMHASH(x)	PG_RETURN_INT64((int64) (x))
#define DatumGetSimhash(d)		((uint64) DatumGetInt64(d))

/* Manku, Jain and Das Sarma (2007): 3 of 64 bits */
#define SIMHASH_DEFAULT_DISTANCE	3
/* The longest shingle, in words */
#define SIMHASH_MAX_SHINGLE		64

extern int	simhash_max_distance;

extern void simhash_define_gucs(void);

static inline int
simhash_distance(uint64 a, uint64 b)
{
	return pg_popcount64(a ^ b);
}

#endif							/* SBF_SIMHASH_H */
