/*-------------------------------------------------------------------------
 *
 * shared_floor.c
 *	  The native floor of a shared filter's batch: the same page layout,
 *	  hash and sort as shared_test_and_add(filter, text[]), prefetching,
 *	  in plain process memory, without PostgreSQL's buffers, locks, WAL or
 *	  transactions.
 *
 * The filter is PAGES pages of 8 kB, each with its block at byte 64 as in a
 * shared filter's data page (docs/format.md), in huge pages (as shared
 * buffers with huge_pages = on; the memory column says which kind).  Every page is
 * written first.  Then batches of 1,000 URL-like strings are hashed
 * (XXH3-128, src/common/hash.c), sorted by page and tested-and-added with the
 * pages of the items DISTANCE places ahead prefetched (where sbf's batches
 * prefetch eight at a time, src/shared/shared_page.c: the floor takes what was
 * fastest here), and the time per URL printed:
 *
 *	  new		batches of new URLs
 *	  seen90	batches of which 900 URLs were added before
 *
 * in one of the two layouts of a shared Bloom filter (format.h):
 *
 *	  lines		transactional => false: an element's bits are set in its
 *				line (src/shared/shared.h's sbf_line_probe)
 *	  pending	transactional filters: an element is appended to its page's
 *				pending adds, in a header's pd_lower as on a page, and the
 *				next batch to touch the page folds them into their lines
 *				first, every earlier batch counting as committed (as
 *				shared_insert.c's sbf_pending_pass, without the commit log);
 *				the lines those folds touch are prefetched a few places
 *				ahead, from the adds of pages prefetched earlier
 *
 * Usage: shared_floor lines|pending PAGES HASHES [BATCHES] (default 2000
 * batches).  Built and run by bench/shared.sh, with the pages and hashes
 * of its 1 GB filters of each layout.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <time.h>

#include "access/transam.h"

#include "shared.h"

#undef printf
#undef fprintf
#undef snprintf
#include <stdio.h>

#define BATCH		1000
#define PAGE_BYTES	8192
#define DISTANCE	16			/* the fastest of 8 to 32 here, for both
								 * layouts, and faster than bursts */
#define BUCKETS		1024		/* the power of two at least BATCH */
#define HUGE_BYTES	(2 * 1024 * 1024)

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* An item's page, 1..pages as in a shared filter */
static inline char *
page_of(char *filter, const SbfBatchItem *item)
{
	return filter + (item->page - 1) * (Size) PAGE_BYTES;
}

/* The line layout: an item's line */
static inline uint64 *
line_of(char *filter, const SbfBatchItem *item)
{
	return sbf_line_words((uint8 *) page_of(filter, item) + SBF_LINES_BLOCK_OFFSET,
						  item->hash);
}

/* The line layout's test-and-add; returns the answers true */
static int
add_lines(char *filter, int hashes, SbfBatchItem *items)
{
	int			seen = 0;
	int			i;

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

/* The pending layout: the line of a line state in a page */
static inline uint64 *
state_line(char *page, uint64 state)
{
	return sbf_state_line_words((uint8 *) page + SBF_LINES_BLOCK_OFFSET, state);
}

/*
 * What adding item will read: its page's header, its line, the adds.  These
 * two helpers are inlined by force: they only read and prefetch, so GCC
 * (12, -O2) finds them pure and drops their calls, prefetches and all.
 */
static inline pg_attribute_always_inline void
prefetch_pending(char *filter, const SbfBatchItem *item)
{
	char	   *page = page_of(filter, item);

	__builtin_prefetch(page);
	__builtin_prefetch(state_line(page, sbf_line_state(item->hash)));
	__builtin_prefetch(page + SBF_PENDING_START);
}

/* The lines the next add to item's page folds into (its first adds') */
static inline pg_attribute_always_inline void
prefetch_folds(char *filter, const SbfBatchItem *item)
{
	char	   *page = page_of(filter, item);
	int			n = Min(sbf_pending_count(page), (2 * SBF_LINE_BYTES) / SBF_PENDING_BYTES);
	int			i;

	for (i = 0; i < n; i++)
		__builtin_prefetch(state_line(page, sbf_pending_state(&sbf_pending_adds(page)[i])));
}

/*
 * The pending layout's test-and-add by batch xid: on each page, fold the
 * adds of earlier batches, then test each item against its line with this
 * batch's adds of the line, and append it when absent; returns the answers
 * true
 */
static int
add_pending(char *filter, int hashes, SbfBatchItem *items, TransactionId xid)
{
	int			seen = 0;
	int			pos = 0;
	int			pages = 0;
	int			folds = 0;
	int			i;

	while (pos < BATCH)
	{
		char	   *page;
		SbfPendingAdd *adds;
		int			count;
		int			kept = 0;
		int			end = pos + 1;

		while (end < BATCH && items[end].page == items[pos].page)
			end++;
		/*
		 * pages DISTANCE ahead, the lines their adds fold into half
		 * that (read from the pages prefetched earlier)
		 */
		for (; pages < Min(BATCH, end + DISTANCE); pages++)
			prefetch_pending(filter, &items[pages]);
		for (; folds < Min(BATCH, end + DISTANCE / 2); folds++)
			prefetch_folds(filter, &items[folds]);

		page = page_of(filter, &items[pos]);
		adds = sbf_pending_adds(page);
		count = sbf_pending_count(page);

		for (i = 0; i < count; i++)
		{
			uint64		state = sbf_pending_state(&adds[i]);

			if (adds[i].xid != xid)
				(void) sbf_line_probe_state(state_line(page, state), hashes, state, true);
			else
				adds[kept++] = adds[i];
		}
		memset(&adds[kept], 0, (count - kept) * SBF_PENDING_BYTES);
		count = kept;

		for (; pos < end; pos++)
		{
			uint64		state = sbf_line_state(items[pos].hash);
			uint64	   *line = state_line(page, state);
			uint64		words[SBF_LINE_WORDS];

			memcpy(words, line, SBF_LINE_BYTES);
			for (i = 0; i < count; i++)
			{
				uint64		other = sbf_pending_state(&adds[i]);

				if (state_line(page, other) == line)
					(void) sbf_line_probe_state(words, hashes, other, true);
			}
			if (sbf_line_probe_state(words, hashes, state, false))
				seen++;
			else if (count < SBF_PENDING_MAX)
			{
				adds[count].xid = xid;
				adds[count].state_lo = (uint32) state;
				adds[count].state_hi = (uint32) (state >> 32);
				count++;
			}
		}
		((PageHeader) page)->pd_lower = SBF_PENDING_START + count * SBF_PENDING_BYTES;
	}
	return seen;
}

/*
 * One batch, the xid-th: hash, sort by page (batch_sort.h, as
 * shared_insert.c), test-and-add; returns the answers true
 */
static int
batch(char *filter, uint64 pages, int hashes, bool pending, TransactionId xid,
	  char urls[][64], SbfBatchItem *items, SbfBatchItem *sorted, int *start)
{
	int			i;

	for (i = 0; i < BATCH; i++)
	{
		items[i].hash = sbf_hash_bytes(urls[i], strlen(urls[i]), 0);
		items[i].page = (BlockNumber) (1 + sbf_block_of(items[i].hash, pages));
		items[i].index = i;
	}
	sbf_batch_sort(items, BATCH, pages, sorted, start, BUCKETS);
	return pending ? add_pending(filter, hashes, items, xid) :
		add_lines(filter, hashes, items);
}

/*
 * The filter's memory, zeroed: huge pages from the kernel's pool when it
 * has them (as shared buffers with huge_pages = on), else transparent huge
 * pages, which a fragmented memory may not give.  *kind says which, with
 * the share of transparent huge pages the kernel gave.
 */
static char *
huge_alloc(size_t size, char *kind, size_t kindlen)
{
	size_t		rounded = (size + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
	char	   *memory;
	FILE	   *smaps;
	char		line[256];
	long		huge_kb = 0;

	memory = mmap(NULL, rounded, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (memory != MAP_FAILED)
	{
		snprintf(kind, kindlen, "hugetlb");
		return memory;			/* (zero-filled) */
	}
	memory = aligned_alloc(HUGE_BYTES, rounded);
	if (memory == NULL)
		return NULL;
	(void) madvise(memory, rounded, MADV_HUGEPAGE);
	memset(memory, 0, rounded);
	smaps = fopen("/proc/self/smaps_rollup", "r");
	while (smaps != NULL && fgets(line, sizeof(line), smaps) != NULL)
		if (sscanf(line, "AnonHugePages: %ld kB", &huge_kb) == 1)
			break;
	if (smaps != NULL)
		fclose(smaps);
	snprintf(kind, kindlen, "thp:%.0f%%", 100.0 * huge_kb * 1024 / rounded);
	return memory;
}

int
main(int argc, char **argv)
{
	bool		pending = argc > 3 && strcmp(argv[1], "pending") == 0;
	uint64		pages = argc > 3 ? strtoull(argv[2], NULL, 10) : 0;
	int			hashes = argc > 3 ? atoi(argv[3]) : 0;
	long		batches = argc > 4 ? atol(argv[4]) : 2000;
	size_t		size = pages * PAGE_BYTES;
	char	   *filter;
	static char urls[BATCH][64];
	SbfBatchItem items[BATCH];
	SbfBatchItem sorted[BATCH];
	int			start[BUCKETS + 1];
	TransactionId xid = FirstNormalTransactionId;
	long		seen = 0;
	long		b;
	int			i;
	int			mode;
	char		kind[32];

	if (argc < 4 || (!pending && strcmp(argv[1], "lines") != 0) ||
		pages == 0 || hashes < 1 || hashes > SBF_MAX_HASHES)
	{
		fprintf(stderr, "usage: shared_floor lines|pending PAGES HASHES [BATCHES]\n");
		return 2;
	}
	filter = huge_alloc(size, kind, sizeof(kind));
	if (filter == NULL)
		return 1;
	if (pending)
		for (b = 0; b < (long) pages; b++)
			((PageHeader) (filter + b * PAGE_BYTES))->pd_lower = SBF_PENDING_START;

	/* every page written first: 2M URLs, the set the 90% batches draw from */
	for (b = 0; b < 2000; b++)
	{
		for (i = 0; i < BATCH; i++)
			snprintf(urls[i], 64, "https://www.example.org/seen/%ld", b * BATCH + i);
		seen += batch(filter, pages, hashes, pending, xid++, urls, items, sorted, start);
	}

	printf("%-8s %-8s %8s %8s %10s %s\n", "batches", "layout", "pages", "hashes", "ns/URL", "memory");
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
			seen += batch(filter, pages, hashes, pending, xid++, urls, items, sorted, start);
			t += now_ns() - t0;
		}
		printf("%-8s %-8s %8llu %8d %10.1f %s\n", mode == 0 ? "new" : "seen90",
			   argv[1], (unsigned long long) pages, hashes,
			   t / (batches * (double) BATCH), kind);
	}
	fprintf(stderr, "(checksum %ld)\n", seen);
	return 0;
}
