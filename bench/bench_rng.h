/* The benchmarks' made-up data: splitmix64, seeded per benchmark, so a
 * benchmark sees the same numbers every run. */
#ifndef KAB_BENCH_RNG_H
#define KAB_BENCH_RNG_H

#include <math.h>
#include <stdint.h>

/* uniform on (0, 1), never 0 (a log of it is finite) */
static inline double bench_uniform01(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* standard normal (Box-Muller, one of the pair) */
static inline double bench_gauss(uint64_t *s)
{
	double u = bench_uniform01(s);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * bench_uniform01(s));
}

#endif
