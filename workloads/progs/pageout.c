/* kab-pageout: the MADV_PAGEOUT microbenchmark of the linux-mm postings on
 * batched unmapping of large anonymous folios and on lru_add_drain in the
 * swap-in path. Each repetition maps fresh anonymous memory, fills it,
 * times one madvise(MADV_PAGEOUT) over the whole range and optionally the
 * refault of every page. It reports the times and the evidence of which
 * folio sizes the kernel really used, as "kab-metric NAME VALUE UNIT"
 * lines on standard output.
 *
 * kab-pageout --size BYTES [--reps N] [--fill zero|pattern|random]
 *             [--refault yes|no] [--align BYTES] [--thp-madvise yes|no]
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "kabprog.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define MAX_REPS 10000

enum fill { FILL_ZERO, FILL_PATTERN, FILL_RANDOM };

struct opts {
	uint64_t size, align;
	unsigned reps;
	enum fill fill;
	bool refault, thp_madvise;
};

/* The per-size mTHP counters under hugepages-SIZEkB/stats/. */
static const char *const counter_names[] = {
	"anon_fault_alloc", "anon_fault_fallback", "swpout", "swpout_fallback", "swpin",
};
static const char *const counter_metric[] = {
	"alloc", "fallback", "swpout", "swpout_fallback", "swpin",
};
#define N_COUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))
enum { C_ALLOC, C_FALLBACK, C_SWPOUT, C_SWPOUT_FALLBACK, C_SWPIN };

static int parse_yes_no(const char *s, bool *ret)
{
	if (strcmp(s, "yes") == 0)
		*ret = true;
	else if (strcmp(s, "no") == 0)
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .reps = 10, .fill = FILL_PATTERN, .align = 2u << 20 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		int r = -EINVAL;
		if (!v)
			break;
		if (strcmp(a, "--size") == 0) {
			r = kp_parse_u64(v, &o->size);
		} else if (strcmp(a, "--reps") == 0) {
			r = kp_parse_u64(v, &n);
			if (r == 0 && (n < 1 || n > MAX_REPS))
				r = -ERANGE;
			o->reps = (unsigned)n;
		} else if (strcmp(a, "--align") == 0) {
			r = kp_parse_u64(v, &o->align);
			if (r == 0 && o->align & (o->align - 1))
				r = -EINVAL;
		} else if (strcmp(a, "--fill") == 0) {
			r = 0;
			if (strcmp(v, "zero") == 0)
				o->fill = FILL_ZERO;
			else if (strcmp(v, "pattern") == 0)
				o->fill = FILL_PATTERN;
			else if (strcmp(v, "random") == 0)
				o->fill = FILL_RANDOM;
			else
				r = -EINVAL;
		} else if (strcmp(a, "--refault") == 0) {
			r = parse_yes_no(v, &o->refault);
		} else if (strcmp(a, "--thp-madvise") == 0) {
			r = parse_yes_no(v, &o->thp_madvise);
		}
		if (r < 0) {
			fprintf(stderr, "kab-pageout: bad option %s %s\n", a, v);
			return r;
		}
		i++;
	}
	if (argc % 2 == 0 || o->size == 0) {
		fprintf(stderr, "usage: kab-pageout --size BYTES [--reps N] [--fill zero|pattern|random] "
				"[--refault yes|no] [--align BYTES] [--thp-madvise yes|no]\n");
		return -EINVAL;
	}
	return 0;
}

static void fill_range(unsigned char *p, uint64_t size, enum fill fill, unsigned rep)
{
	if (fill == FILL_ZERO) {
		memset(p, 0, size);
	} else if (fill == FILL_PATTERN) {
		/* posting 004's pattern: compresses well, but no page is zero or
		 * one repeated word, so every page is really written to swap */
		int *w = (int *)p;
		for (uint64_t i = 0; i < size / sizeof(int); i++)
			w[i] = (int)(i % 64);
	} else {
		uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rep << 32) ^ (uint64_t)getpid();
		uint64_t *w = (uint64_t *)p;
		for (uint64_t i = 0; i < size / sizeof(uint64_t); i++) {
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			w[i] = x * 0x2545f4914f6cdd1dull;
		}
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	long psz = sysconf(_SC_PAGESIZE);
	if (o.size % (uint64_t)psz) {
		fprintf(stderr, "kab-pageout: size %" PRIu64 " is not a multiple of the page size %ld\n", o.size, psz);
		return 2;
	}
	uint64_t swap_kb = 0;
	if (kp_meminfo_kb("SwapTotal", &swap_kb) < 0 || swap_kb == 0) {
		fprintf(stderr, "kab-pageout: no swap is on, so MADV_PAGEOUT cannot write anonymous memory out; "
				"give the job a [swap] section (device = zram)\n");
		return 2;
	}
	uint64_t npages = o.size / (uint64_t)psz;
	uint64_t align = o.align > (uint64_t)psz ? o.align : (uint64_t)psz;
	uint64_t *po = calloc(o.reps, sizeof(uint64_t));
	uint64_t *rf = calloc(o.reps, sizeof(uint64_t));
	uint64_t *fl = calloc(o.reps, sizeof(uint64_t));
	uint64_t *pm = calloc(npages, sizeof(uint64_t));
	uint64_t *kflags = calloc(npages, sizeof(uint64_t));
	if (!po || !rf || !fl || !pm || !kflags) {
		fprintf(stderr, "kab-pageout: out of memory for %" PRIu64 " pages of bookkeeping\n", npages);
		return 1;
	}
	int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	struct kp_size fs[KP_MAX_SIZES];
	size_t nfs = kp_find_sizes(fs);
	if (nfs == 0)
		fprintf(stderr, "kab-pageout: no %s/hugepages-*kB: no per-size folio counters\n", KP_THP_DIR);
	kp_read_counters(fs, nfs, counter_names, N_COUNTERS, false);

	struct kp_walk filled = { 0 };
	uint64_t swapped = 0, swap_walks = 0;
	unsigned done = 0;
	int ret = 0;
	for (unsigned rep = 0; rep < o.reps; rep++) {
		size_t maplen = o.size + align;
		unsigned char *raw = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED) {
			fprintf(stderr, "kab-pageout: mmap of %zu bytes: %s\n", maplen, strerror(errno));
			ret = 1;
			break;
		}
		/* an aligned start, so that every folio size up to align fits
		 * at its natural alignment; the slack on both sides goes back */
		uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
		unsigned char *p = (unsigned char *)start;
		if (p > raw)
			munmap(raw, (size_t)(p - raw));
		if (p + o.size < raw + maplen)
			munmap(p + o.size, (size_t)(raw + maplen - (p + o.size)));
		if (o.thp_madvise && madvise(p, o.size, MADV_HUGEPAGE) != 0)
			fprintf(stderr, "kab-pageout: madvise(MADV_HUGEPAGE): %s\n", strerror(errno));

		int64_t t0 = kp_now_ns();
		fill_range(p, o.size, o.fill, rep);
		int64_t t1 = kp_now_ns();
		fl[rep] = (uint64_t)(t1 - t0);

		uint64_t resident0 = filled.resident, walks0 = filled.walks;
		kp_walk_range(pm_fd, kpf_fd, p, npages, psz, pm, kflags, &filled);
		if (filled.walks > walks0 && filled.resident - resident0 < npages)
			fprintf(stderr, "kab-pageout: rep %u: only %" PRIu64 " of %" PRIu64 " pages resident after the fill: "
					"memory.max is below size, the fill itself swapped\n",
				rep + 1, filled.resident - resident0, npages);

		t0 = kp_now_ns();
		if (madvise(p, o.size, MADV_PAGEOUT) != 0) {
			fprintf(stderr, "kab-pageout: madvise(MADV_PAGEOUT): %s\n", strerror(errno));
			munmap(p, o.size);
			ret = 1;
			break;
		}
		t1 = kp_now_ns();
		po[rep] = (uint64_t)(t1 - t0);

		if (pm_fd >= 0 && kp_read_pagemap(pm_fd, p, npages, psz, pm) == 0) {
			for (uint64_t i = 0; i < npages; i++)
				swapped += (pm[i] & KP_PM_SWAP) != 0;
			swap_walks++;
		}

		if (o.refault) {
			/* every word written again, as posting 004's loop does:
			 * stores only, so the first touch of each page is a
			 * write fault and the swap-in goes through
			 * do_swap_page with FAULT_FLAG_WRITE (reading each
			 * word first made it a read fault) */
			t0 = kp_now_ns();
			fill_range(p, o.size, o.fill, rep);
			t1 = kp_now_ns();
			rf[rep] = (uint64_t)(t1 - t0);
		}
		munmap(p, o.size);
		done++;
		printf("rep %u: fill %" PRIu64 " ns, pageout %" PRIu64 " ns", rep + 1, fl[rep], po[rep]);
		if (o.refault)
			printf(", refault %" PRIu64 " ns", rf[rep]);
		printf("\n");
	}
	kp_read_counters(fs, nfs, counter_names, N_COUNTERS, true);
	if (ret != 0)
		return ret;

	kp_print_series("pageout", "ns", po, done, "ns");
	kp_print_series("pageout", "fill_ns", fl, done, "ns");
	if (o.refault)
		kp_print_series("pageout", "refault_ns", rf, done, "ns");
	printf("kab-metric pageout.reps %u reps\n", done);
	kp_print_walk("pageout", &filled, psz);
	if (swap_walks > 0)
		printf("kab-metric pageout.swapped_pct %.3f %%\n", 100.0 * (double)swapped / (double)(npages * swap_walks));

	/* The per-size counters are machine-wide: per repetition for the
	 * sizes that moved, and as shares of the memory filled. */
	double alloc_bytes = 0, swpout_bytes = 0, fallbacks = 0;
	for (size_t i = 0; i < nfs; i++) {
		bool moved = false;
		for (size_t c = 0; c < N_COUNTERS; c++)
			moved |= kp_counter_delta(&fs[i], c) > 0;
		alloc_bytes += (double)kp_counter_delta(&fs[i], C_ALLOC) * (double)fs[i].kb * 1024;
		swpout_bytes += (double)kp_counter_delta(&fs[i], C_SWPOUT) * (double)fs[i].kb * 1024;
		fallbacks += (double)(kp_counter_delta(&fs[i], C_FALLBACK) + kp_counter_delta(&fs[i], C_SWPOUT_FALLBACK));
		if (!moved)
			continue;
		for (size_t c = 0; c < N_COUNTERS; c++) {
			if (!fs[i].have[c] || (c == C_SWPIN && !o.refault))
				continue;
			printf("kab-metric pageout.folios_%" PRIu64 "kB_%s %.3f folios\n", fs[i].kb, counter_metric[c],
			       (double)kp_counter_delta(&fs[i], c) / done);
		}
	}
	if (nfs > 0) {
		double bytes = (double)o.size * done;
		printf("kab-metric pageout.mthp_alloc_pct %.3f %%\n", 100 * alloc_bytes / bytes);
		printf("kab-metric pageout.mthp_swpout_pct %.3f %%\n", 100 * swpout_bytes / bytes);
		printf("kab-metric pageout.mthp_fallbacks %.3f folios\n", fallbacks / done);
	}
	return 0;
}
