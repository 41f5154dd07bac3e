/*-------------------------------------------------------------------------
 *
 * shared_floor.c
 *	  The native floor of a shared filter's batch: the same line layout,
 *	  hash, sort and prefetching as shared_test_and_add(filter, text[]),
 *	  in plain process memory, without PostgreSQL's buffers, locks or WAL.
 *
 * The filter is PAGES pages of 8 kB, each with its block at byte 64 as in a
 * shared filter's data page (docs/format.md), in one allocation advised to
 * use huge pages (as shared buffers do with huge_pages = on).  Every page is
 * written first.  Then batches of 1,000 URL-like strings are hashed
 * (XXH3-128, src/hash.c), sorted by page and tested-and-added with the
 * pages of the items a few places ahead prefetched (src/shared.h's
 * sbf_line_probe), and the time per URL printed:
 *
 *	  new		batches of new URLs
 *	  seen90	batches of which 900 URLs were added before
 *
 * Usage: shared_floor PAGES HASHES [BATCHES] (default 2000 batches).
 * Built and run by bench/shared.sh, with the pages and hashes of its 1 GB
 * filter.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <time.h>

#include "batch_sort.h"
#include "format.h"
#include "hash.h"

#undef printf
#undef fprintf
#undef snprintf
#include <stdio.h>

#define BATCH		1000
#define PAGE_BYTES	8192
#define DISTANCE	8
#define BUCKETS		1024		/* the power of two at least BATCH */

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The line of an item: its page is 1..pages, as a shared filter's */
static inline uint64 *
line_of(char *filter, const SbfBatchItem *item)
{
	return (uint64 *) (filter + (item->page - 1) * (Size) PAGE_BYTES + SBF_LINES_BLOCK_OFFSET +
					   sbf_line_of(item->hash, SBF_BLOCK_LINES) * SBF_LINE_BYTES);
}

/*
 * One batch: hash, sort by page (batch_sort.h, as shared_insert.c),
 * test-and-add with prefetching; returns the answers true
 */
static int
batch(char *filter, uint64 pages, int hashes, char urls[][64],
	  SbfBatchItem *items, SbfBatchItem *sorted, int *start)
{
	int			i;
	int			seen = 0;

	for (i = 0; i < BATCH; i++)
	{
		items[i].hash = sbf_hash_bytes(urls[i], strlen(urls[i]), 0);
		items[i].page = (BlockNumber) (1 + sbf_block_of(items[i].hash, pages));
		items[i].index = i;
	}
	sbf_batch_sort(items, BATCH, pages, sorted, start, BUCKETS);
	for (i = 0; i < DISTANCE; i++)
		__builtin_prefetch(line_of(filter, &items[i]));
	for (i = 0; i < BATCH; i++)
	{
		if (i + DISTANCE < BATCH)
			__builtin_prefetch(line_of(filter, &items[i + DISTANCE]));
		seen += sbf_line_probe(line_of(filter, &items[i]), hashes, items[i].hash, true);
	}
	return seen;
}

int
main(int argc, char **argv)
{
	uint64		pages = argc > 2 ? strtoull(argv[1], NULL, 10) : 0;
	int			hashes = argc > 2 ? atoi(argv[2]) : 0;
	long		batches = argc > 3 ? atol(argv[3]) : 2000;
	size_t		size = pages * PAGE_BYTES;
	char	   *filter;
	static char urls[BATCH][64];
	SbfBatchItem items[BATCH];
	SbfBatchItem sorted[BATCH];
	int			start[BUCKETS + 1];
	long		seen = 0;
	long		b;
	int			i;
	int			mode;

	if (pages == 0 || hashes < 1 || hashes > SBF_MAX_HASHES)
	{
		fprintf(stderr, "usage: shared_floor PAGES HASHES [BATCHES]\n");
		return 2;
	}
	filter = aligned_alloc(2 * 1024 * 1024, size);
	if (filter == NULL)
		return 1;
	(void) madvise(filter, size, MADV_HUGEPAGE);
	memset(filter, 0, size);

	/* every page written first: 2M URLs, the set the 90% batches draw from */
	for (b = 0; b < 2000; b++)
	{
		for (i = 0; i < BATCH; i++)
			snprintf(urls[i], 64, "https://www.example.org/seen/%ld", b * BATCH + i);
		seen += batch(filter, pages, hashes, urls, items, sorted, start);
	}

	printf("%-8s %8s %8s %10s\n", "batches", "pages", "hashes", "ns/URL");
	for (mode = 0; mode < 2; mode++)
	{
		double		t = 0.0;

		for (b = 0; b < batches; b++)
		{
			double		t0;

			for (i = 0; i < BATCH; i++)
			{
				if (mode == 1 && i < 900)
					snprintf(urls[i], 64, "https://www.example.org/seen/%ld",
							 (b * 7919 + i * 1009) % 2000000);
				else
					snprintf(urls[i], 64, "https://www.example.org/path/%ld/page.html",
							 (long) mode * 100000000 + b * BATCH + i);
			}
			t0 = now_ns();
			seen += batch(filter, pages, hashes, urls, items, sorted, start);
			t += now_ns() - t0;
		}
		printf("%-8s %8llu %8d %10.1f\n", mode == 0 ? "new" : "seen90",
			   (unsigned long long) pages, hashes, t / (batches * (double) BATCH));
	}
	fprintf(stderr, "(checksum %ld)\n", seen);
	return 0;
}
