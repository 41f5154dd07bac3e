/*
 * The streams and the reference structure of bench/sliding_paper.sh: the
 * Sliding Bloom filter of the paper slidingbloom is compared with
 * (Souravlias, "Data Stream Summarization to Avoid Overlap", after Fan et
 * al.'s counting filters), written for the benchmark from its description,
 * and the exact w-duplicate forwarder both are scored against.
 *
 *   sliding_paper stream VALUES ELEMENTS SEED WINDOW
 *	   prints "i<TAB>value<TAB>exact_dup" for ELEMENTS arrivals drawn
 *	   uniformly from VALUES distinct values (seeded), exact_dup being the
 *	   exact forwarder's verdict: arrival i is a w-duplicate iff an
 *	   arrival j of the same value with 1 <= i - j <= w - 1 was forwarded
 *	   (that is, was not itself a duplicate);
 *   sliding_paper paper VALUES ELEMENTS SEED WINDOW BITS HASHES
 *	   runs the paper's structure on the same stream and prints
 *	   "false_duplicates forwarded misses": arrivals it declares
 *	   duplicates that the exact forwarder forwards, arrivals the exact
 *	   forwarder forwards, and arrivals the exact forwarder declares
 *	   duplicates that it forwards.
 *
 * The paper's structure: m bits T and m counters C, k hashes, window w.
 * For each arrival d: d is a duplicate if its k bits are all 1; then every
 * counter is decremented, and a bit whose counter reaches 0 is cleared;
 * if d was not a duplicate, its k counters are set to w - 1 and its k bits
 * to 1.  Its memory is m bits plus m counters of ceil(log2(w)) bits.  Its
 * k positions come from one 64-bit hash of the value and the seed by
 * double hashing: with few values, how often one value's positions are
 * all covered by others' depends on the hash, so each run draws its own.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t
splitmix(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

typedef struct Stream
{
	int64_t		n;
	int64_t    *value;
	char	   *exact_dup;
} Stream;

static Stream
make_stream(int64_t values, int64_t n, uint64_t seed, int64_t window)
{
	Stream		s;
	int64_t    *forwarded = malloc(sizeof(int64_t) * values);
	uint64_t	state = seed;

	s.n = n;
	s.value = malloc(sizeof(int64_t) * n);
	s.exact_dup = malloc(n);
	if (forwarded == NULL || s.value == NULL || s.exact_dup == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (int64_t v = 0; v < values; v++)
		forwarded[v] = INT64_MIN / 2;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		v = (int64_t) (splitmix(&state) % (uint64_t) values);

		s.value[i] = v;
		s.exact_dup[i] = i - forwarded[v] <= window - 1;
		if (!s.exact_dup[i])
			forwarded[v] = i;
	}
	free(forwarded);
	return s;
}

static void
run_paper(const Stream *s, uint64_t seed, int64_t window, int64_t m, int k)
{
	unsigned char *bits = calloc(m, 1);
	int64_t    *counters = calloc(m, sizeof(int64_t));
	int64_t    *probe = malloc(sizeof(int64_t) * k);
	int64_t		false_duplicates = 0;
	int64_t		forwarded = 0;
	int64_t		misses = 0;

	if (bits == NULL || counters == NULL || probe == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (int64_t i = 0; i < s->n; i++)
	{
		/* the hash depends on the seed too: each run its own hash layout */
		uint64_t	state = (uint64_t) s->value[i] ^ (seed * UINT64_C(0x5bf03635a1b2c3d4));
		uint64_t	h = splitmix(&state);
		uint64_t	h1 = (uint32_t) h;
		uint64_t	h2 = (h >> 32) | 1;
		int			duplicate = 1;

		for (int j = 0; j < k; j++)
		{
			probe[j] = (int64_t) ((h1 + (uint64_t) j * h2) % (uint64_t) m);
			if (!bits[probe[j]])
				duplicate = 0;
		}
		for (int64_t c = 0; c < m; c++)
			if (counters[c] > 0 && --counters[c] == 0)
				bits[c] = 0;
		if (!duplicate)
			for (int j = 0; j < k; j++)
			{
				bits[probe[j]] = 1;
				counters[probe[j]] = window - 1;
			}

		if (!s->exact_dup[i])
		{
			forwarded++;
			false_duplicates += duplicate;
		}
		else
			misses += !duplicate;
	}
	printf("%" PRId64 " %" PRId64 " %" PRId64 "\n", false_duplicates, forwarded, misses);
	free(bits);
	free(counters);
	free(probe);
}

static int64_t
positive(const char *arg, const char *what)
{
	char	   *end;
	long long	v = strtoll(arg, &end, 10);

	if (*end != '\0' || v < 1)
	{
		fprintf(stderr, "%s must be a positive integer, not \"%s\"\n", what, arg);
		exit(2);
	}
	return (int64_t) v;
}

int
main(int argc, char **argv)
{
	Stream		s;

	if (argc == 6 && strcmp(argv[1], "stream") == 0)
	{
		int64_t		window = positive(argv[5], "WINDOW");

		s = make_stream(positive(argv[2], "VALUES"), positive(argv[3], "ELEMENTS"),
						(uint64_t) positive(argv[4], "SEED"), window);
		for (int64_t i = 0; i < s.n; i++)
			printf("%" PRId64 "\t%" PRId64 "\t%s\n", i + 1, s.value[i],
				   s.exact_dup[i] ? "t" : "f");
		return 0;
	}
	if (argc == 8 && strcmp(argv[1], "paper") == 0)
	{
		int64_t		window = positive(argv[5], "WINDOW");

		uint64_t	seed = (uint64_t) positive(argv[4], "SEED");

		s = make_stream(positive(argv[2], "VALUES"), positive(argv[3], "ELEMENTS"),
						seed, window);
		run_paper(&s, seed, window, positive(argv[6], "BITS"), (int) positive(argv[7], "HASHES"));
		return 0;
	}
	fprintf(stderr, "usage: sliding_paper stream VALUES ELEMENTS SEED WINDOW\n"
			"       sliding_paper paper VALUES ELEMENTS SEED WINDOW BITS HASHES\n");
	return 2;
}
