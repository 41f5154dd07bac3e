/*-------------------------------------------------------------------------
 *
 * batch_sort.h
 *	  A batch of values for a shared filter, sorted by page: what
 *	  shared_test_and_add on an array does before touching a page, and what
 *	  bench/shared_floor.c measures outside PostgreSQL.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_BATCH_SORT_H
#define SBF_BATCH_SORT_H

#include "postgres.h"

#include "storage/block.h"

#include "hash.h"

/* One value of a batch: its hash, page (1..pages) and place in the input */
typedef struct SbfBatchItem
{
	SbfHash		hash;
	BlockNumber page;
	int			index;
} SbfBatchItem;

/*
 * Sort the n items by page, keeping input order among the items of a page:
 * a counting sort on the page's place among the filter's pages into
 * "buckets" buckets (a power of two at least n: pages are uniform, so most
 * buckets hold one item or none), then an insertion sort by page, which
 * moves an item only past the few of its bucket.  Both passes are stable,
 * O(n) expected; a qsort with its comparator measured about a tenth of an
 * unlogged add.  SORTED (n items) and START (buckets + 1) are scratch.
 */
static inline void
sbf_batch_sort(SbfBatchItem *items, int n, uint64 pages, SbfBatchItem *sorted,
			   int *start, uint64 buckets)
{
	int			i;

#define SBF_BUCKET(page) (((uint64) ((page) - 1) * buckets) / pages)
	memset(start, 0, (buckets + 1) * sizeof(int));
	for (i = 0; i < n; i++)
		start[SBF_BUCKET(items[i].page) + 1]++;
	for (i = 1; i <= (int) buckets; i++)
		start[i] += start[i - 1];
	for (i = 0; i < n; i++)
		sorted[start[SBF_BUCKET(items[i].page)]++] = items[i];
#undef SBF_BUCKET
	for (i = 1; i < n; i++)
	{
		SbfBatchItem item = sorted[i];
		int			j = i;

		while (j > 0 && sorted[j - 1].page > item.page)
		{
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = item;
	}
	memcpy(items, sorted, n * sizeof(SbfBatchItem));
}

#endif							/* SBF_BATCH_SORT_H */
