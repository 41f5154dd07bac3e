/*-------------------------------------------------------------------------
 *
 * sieve.h
 *	  What sieve_flush (sieve.c) and its Citus side (sieve_citus.c) share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SIEVE_H
#define SBF_SIEVE_H

#include "postgres.h"

/*
 * Are seen, discovered and frontier Citus tables?  False when Citus is not
 * installed in the database or none of the three is in its metadata; true
 * when all three are hash-distributed by sig and colocated, the one layout
 * of Citus tables sieve_flush and sieve_flush_shards support; an ERROR
 * naming the table and the problem for any other layout.  The caller is
 * connected to SPI.
 */
extern bool sieve_citus_layout(Oid seen, Oid discovered, Oid frontier,
							   const char *caller);

/*
 * LOCK TABLE seen IN lockmode MODE, through SPI: Citus takes the lock on
 * every node with metadata, in one order
 */
extern void sieve_citus_lock(Oid seen, const char *lockmode);

#endif							/* SBF_SIEVE_H */
