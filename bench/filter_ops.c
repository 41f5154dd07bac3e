/*-------------------------------------------------------------------------
 *
 * filter_ops.c
 *	  Per-element cost of bloom and stablebloom outside PostgreSQL.
 *
 * A driver linked against sbf's own hashing (src/common/hash.c) and insertion
 * code (src/filters/bloom.h, src/filters/stablebloom.h), with the filters in plain malloc'd
 * memory.  For each filter size it times, in ns per element:
 *
 *	  hash	   XXH3-128 of the element alone (the floor of any filter)
 *	  add	   bloom_add_hash / stablebloom_add_hash (test and insert)
 *	  test	   bloom_test_hash / stablebloom_test_hash of absent elements
 *
 * The elements are URL-like strings of ~45 bytes, made before timing.
 * Usage: filter_ops [elements] (default 4000000).  Built and run by
 * bench/filter_ops.sh.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "miscadmin.h"

#include "bloom.h"
#include "stablebloom.h"

#undef printf
#undef fprintf
#undef snprintf
#include <stdio.h>

/* What CHECK_FOR_INTERRUPTS needs outside a backend: no interrupts */
volatile sig_atomic_t InterruptPending = false;

void
ProcessInterrupts(void)
{
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef struct Keys
{
	char	   *text;
	int		   *offset;
	int		   *length;
	long		n;
} Keys;

static Keys
make_keys(long n, long salt)
{
	Keys		keys;
	long		i;
	int			at = 0;

	keys.n = n;
	keys.text = malloc((size_t) n * 64);
	keys.offset = malloc(sizeof(int) * n);
	keys.length = malloc(sizeof(int) * n);
	for (i = 0; i < n; i++)
	{
		int			len = snprintf(keys.text + at, 64,
								   "https://www.example%ld.gov/path/%ld/page.html",
								   (i * 7919 + salt) % 1000, i * 2 + salt);

		keys.offset[i] = at;
		keys.length[i] = len;
		at += len;
	}
	return keys;
}

static inline SbfHash
key_hash(const Keys *keys, long i)
{
	return sbf_hash_bytes(keys->text + keys->offset[i], keys->length[i], 0);
}

static Bloom
bloom_alloc(uint64 bits, int hashes)
{
	Size		size = BLOOM_SIZE(bits);
	Bloom		filter = calloc(1, size);

	SET_VARSIZE(filter, size);
	filter->magic = SBF_MAGIC_BLOOM;
	filter->version = SBF_BLOOM_VERSION;
	filter->hashes = hashes;
	filter->bits = bits;
	return filter;
}

static StableBloom
stablebloom_alloc(uint64 cells, int hashes, int max, uint64 decrements)
{
	int			cell_bits = 1;
	Size		size;
	StableBloom filter;

	while (((1 << cell_bits) - 1) < max)
		cell_bits++;
	size = STABLEBLOOM_SIZE(cells, cell_bits);
	filter = calloc(1, size);
	SET_VARSIZE(filter, size);
	filter->magic = SBF_MAGIC_STABLEBLOOM;
	filter->version = SBF_STABLEBLOOM_VERSION;
	filter->hashes = hashes;
	filter->max = max;
	filter->cell_bits = cell_bits;
	filter->decrements = decrements;
	filter->cells = cells;
	return filter;
}

int
main(int argc, char **argv)
{
	long		n = argc > 1 ? atol(argv[1]) : 4000000;
	Keys		present = make_keys(n, 0);
	Keys		absent = make_keys(n, 1);
	size_t		sizes_mb[] = {1, 64, 512};
	volatile uint64 sink = 0;
	double		t0;
	long		i;
	int			s;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		sink += key_hash(&present, i).h1;
	printf("%-12s %10s %8s %10s %10s %10s\n", "filter", "size", "k", "hash_ns", "add_ns", "test_ns");
	printf("%-12s %10s %8s %10.1f %10s %10s\n", "(hash only)", "-", "-", (now_ns() - t0) / n, "-", "-");

	for (s = 0; s < 3; s++)
	{
		uint64		bits = (uint64) sizes_mb[s] * 8 * 1024 * 1024;
		Bloom		b = bloom_alloc(bits, 7);
		StableBloom sb = stablebloom_alloc(bits, 8, 1, 4);
		double		add_ns,
					test_ns;

		t0 = now_ns();
		for (i = 0; i < n; i++)
			sink += bloom_add_hash(b, key_hash(&present, i));
		add_ns = (now_ns() - t0) / n;
		t0 = now_ns();
		for (i = 0; i < n; i++)
			sink += bloom_test_hash(b, key_hash(&absent, i));
		test_ns = (now_ns() - t0) / n;
		printf("%-12s %8zuMB %8d %10s %10.1f %10.1f\n", "bloom", sizes_mb[s], 7, "-", add_ns, test_ns);

		t0 = now_ns();
		for (i = 0; i < n; i++)
			sink += stablebloom_add_hash(sb, key_hash(&present, i));
		add_ns = (now_ns() - t0) / n;
		t0 = now_ns();
		for (i = 0; i < n; i++)
			sink += stablebloom_test_hash(sb, key_hash(&absent, i));
		test_ns = (now_ns() - t0) / n;
		printf("%-12s %8zuMB %8d %10s %10.1f %10.1f\n", "stablebloom", sizes_mb[s], 8, "-", add_ns, test_ns);
		free(b);
		free(sb);
	}
	fprintf(stderr, "(checksum %llu)\n", (unsigned long long) sink);
	return 0;
}
