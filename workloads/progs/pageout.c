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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define PM_PRESENT (1ull << 63)
#define PM_SWAP (1ull << 62)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define KPF_COMPOUND_HEAD (1ull << 15)
#define KPF_COMPOUND_TAIL (1ull << 16)
#define MAX_SIZES 16
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

struct folio_size {
	uint64_t kb;
	bool have[N_COUNTERS];
	uint64_t before[N_COUNTERS], after[N_COUNTERS];
};

/* What the page-table walks found, summed over the repetitions. */
struct walk_totals {
	uint64_t pages, resident, in_large, weighted;  /* weighted: sum of folio pages per page */
	uint64_t swapped_after, walks, pageouts_walked;
	bool pfn_hidden;
};

static int parse_u64(const char *s, uint64_t *ret)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

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
			r = parse_u64(v, &o->size);
		} else if (strcmp(a, "--reps") == 0) {
			r = parse_u64(v, &n);
			if (r == 0 && (n < 1 || n > MAX_REPS))
				r = -ERANGE;
			o->reps = (unsigned)n;
		} else if (strcmp(a, "--align") == 0) {
			r = parse_u64(v, &o->align);
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

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int read_u64_file(const char *path, uint64_t *ret)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char buf[64];
	int r = -EINVAL;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		r = parse_u64(buf, ret);
	}
	fclose(f);
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static size_t find_sizes(struct folio_size *fs)
{
	DIR *d = opendir(THP_DIR);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < MAX_SIZES) {
		if (strncmp(e->d_name, "hugepages-", 10) != 0)
			continue;
		char num[32];
		size_t l = strcspn(e->d_name + 10, "k");
		if (l == 0 || l >= sizeof(num) || strcmp(e->d_name + 10 + l, "kB") != 0)
			continue;
		memcpy(num, e->d_name + 10, l);
		num[l] = 0;
		memset(&fs[n], 0, sizeof(fs[n]));
		if (parse_u64(num, &fs[n].kb) == 0)
			n++;
	}
	closedir(d);
	qsort(fs, n, sizeof(fs[0]), cmp_u64); /* kb is the first member */
	return n;
}

static void read_counters(struct folio_size *fs, size_t n, bool after)
{
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < N_COUNTERS; c++) {
			char path[256];
			uint64_t v;
			snprintf(path, sizeof(path), THP_DIR "/hugepages-%" PRIu64 "kB/stats/%s", fs[i].kb, counter_names[c]);
			if (read_u64_file(path, &v) < 0) {
				fs[i].have[c] = false;
				continue;
			}
			if (after) {
				fs[i].after[c] = v;
			} else {
				fs[i].have[c] = true;
				fs[i].before[c] = v;
			}
		}
}

static uint64_t counter_delta(const struct folio_size *f, size_t c)
{
	if (!f->have[c] || f->after[c] < f->before[c])
		return 0;
	return f->after[c] - f->before[c];
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

/* Reads the pagemap entries of [p, p + size) into pm (one per page). */
static int read_pagemap(int fd, const void *p, uint64_t npages, long psz, uint64_t *pm)
{
	off_t off = (off_t)((uintptr_t)p / (uintptr_t)psz * sizeof(uint64_t));
	size_t want = npages * sizeof(uint64_t), got = 0;
	while (got < want) {
		ssize_t r = pread(fd, (char *)pm + got, want - got, off + (off_t)got);
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

/* Kernel page flags of each resident page, read in runs of consecutive
 * PFNs so a range of large folios costs few reads. */
static int read_kpageflags(int fd, const uint64_t *pm, uint64_t npages, uint64_t *flags)
{
	uint64_t i = 0;
	while (i < npages) {
		if (!(pm[i] & PM_PRESENT)) {
			flags[i++] = 0;
			continue;
		}
		uint64_t pfn = pm[i] & PM_PFN_MASK, j = i + 1;
		while (j < npages && j - i < 4096 && (pm[j] & PM_PRESENT) && (pm[j] & PM_PFN_MASK) == pfn + (j - i))
			j++;
		size_t want = (j - i) * sizeof(uint64_t);
		if (pread(fd, &flags[i], want, (off_t)(pfn * sizeof(uint64_t))) != (ssize_t)want)
			return -EIO;
		i = j;
	}
	return 0;
}

/* Counts resident pages and the pages that sit in large folios: a compound
 * head starts a folio, the tails with the following PFNs belong to it. */
static void tally_folios(const uint64_t *pm, const uint64_t *flags, uint64_t npages, struct walk_totals *t)
{
	uint64_t cur = 0, next_pfn = 0;
	for (uint64_t i = 0; i <= npages; i++) {
		bool present = i < npages && (pm[i] & PM_PRESENT);
		uint64_t pfn = present ? pm[i] & PM_PFN_MASK : 0;
		uint64_t fl = present ? flags[i] : 0;
		if (present && (fl & KPF_COMPOUND_TAIL) && cur > 0 && pfn == next_pfn) {
			cur++;
			next_pfn++;
			t->resident++;
			continue;
		}
		if (cur > 0) { /* the folio before this page is complete */
			if (cur > 1)
				t->in_large += cur;
			t->weighted += cur * cur;
			cur = 0;
		}
		if (!present)
			continue;
		t->resident++;
		cur = 1;
		next_pfn = pfn + 1;
		if (!(fl & KPF_COMPOUND_HEAD) && !(fl & KPF_COMPOUND_TAIL)) {
			t->weighted += 1;
			cur = 0;
		}
	}
}

struct series {
	uint64_t *v;
	unsigned n;
};

static void print_series(const char *name, const struct series *s)
{
	if (s->n == 0)
		return;
	uint64_t *sorted = malloc(s->n * sizeof(uint64_t));
	if (!sorted)
		return;
	memcpy(sorted, s->v, s->n * sizeof(uint64_t));
	qsort(sorted, s->n, sizeof(uint64_t), cmp_u64);
	double sum = 0;
	for (unsigned i = 0; i < s->n; i++)
		sum += (double)s->v[i];
	double mean = sum / s->n, ss = 0;
	for (unsigned i = 0; i < s->n; i++)
		ss += ((double)s->v[i] - mean) * ((double)s->v[i] - mean);
	double sd = s->n > 1 ? sqrt(ss / (s->n - 1)) : 0;
	double median = s->n % 2 ? (double)sorted[s->n / 2]
				 : ((double)sorted[s->n / 2 - 1] + (double)sorted[s->n / 2]) / 2;
	printf("kab-metric pageout.%s_mean %.0f ns\n", name, mean);
	printf("kab-metric pageout.%s_median %.0f ns\n", name, median);
	printf("kab-metric pageout.%s_min %" PRIu64 " ns\n", name, sorted[0]);
	printf("kab-metric pageout.%s_max %" PRIu64 " ns\n", name, sorted[s->n - 1]);
	printf("kab-metric pageout.%s_stddev %.0f ns\n", name, sd);
	printf("kab-metric pageout.%s_stddev_pct %.3f %%\n", name, mean > 0 ? 100 * sd / mean : 0);
	free(sorted);
}

static uint64_t swap_total_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	char line[256];
	uint64_t kb = 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "SwapTotal:", 10) == 0) {
			char *p = line + 10;
			while (*p == ' ')
				p++;
			p[strcspn(p, " ")] = 0;
			if (parse_u64(p, &kb) < 0)
				kb = 0;
			break;
		}
	fclose(f);
	return kb;
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
	if (swap_total_kb() == 0) {
		fprintf(stderr, "kab-pageout: no swap is on, so MADV_PAGEOUT cannot write anonymous memory out; "
				"give the job a [swap] section (device = zram)\n");
		return 2;
	}
	uint64_t npages = o.size / (uint64_t)psz;
	uint64_t align = o.align > (uint64_t)psz ? o.align : (uint64_t)psz;
	struct series po = { calloc(o.reps, sizeof(uint64_t)), 0 };
	struct series rf = { calloc(o.reps, sizeof(uint64_t)), 0 };
	struct series fl = { calloc(o.reps, sizeof(uint64_t)), 0 };
	uint64_t *pm = calloc(npages, sizeof(uint64_t));
	uint64_t *kflags = calloc(npages, sizeof(uint64_t));
	if (!po.v || !rf.v || !fl.v || !pm || !kflags) {
		fprintf(stderr, "kab-pageout: out of memory for %" PRIu64 " pages of bookkeeping\n", npages);
		return 1;
	}
	int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pm_fd < 0 || kpf_fd < 0)
		fprintf(stderr, "kab-pageout: cannot open %s (%s): no page-table folio evidence\n",
			pm_fd < 0 ? "/proc/self/pagemap" : "/proc/kpageflags", strerror(errno));

	struct folio_size fs[MAX_SIZES];
	size_t nfs = find_sizes(fs);
	if (nfs == 0)
		fprintf(stderr, "kab-pageout: no %s/hugepages-*kB: no per-size folio counters\n", THP_DIR);
	read_counters(fs, nfs, false);

	struct walk_totals wt = { 0 };
	int ret = 0;
	for (unsigned rep = 0; rep < o.reps; rep++) {
		size_t maplen = o.size + align;
		unsigned char *raw = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED) {
			fprintf(stderr, "kab-pageout: mmap of %zu bytes: %s\n", maplen, strerror(errno));
			ret = 1;
			break;
		}
		/* aligned start, so that every folio size up to align fits at
		 * natural alignment; the slack on both sides goes back */
		uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
		unsigned char *p = (unsigned char *)start;
		if (p > raw)
			munmap(raw, (size_t)(p - raw));
		if (p + o.size < raw + maplen)
			munmap(p + o.size, (size_t)(raw + maplen - (p + o.size)));
		if (o.thp_madvise && madvise(p, o.size, MADV_HUGEPAGE) != 0)
			fprintf(stderr, "kab-pageout: madvise(MADV_HUGEPAGE): %s\n", strerror(errno));

		int64_t t0 = now_ns();
		fill_range(p, o.size, o.fill, rep);
		int64_t t1 = now_ns();
		fl.v[fl.n++] = (uint64_t)(t1 - t0);

		if (pm_fd >= 0 && kpf_fd >= 0 && read_pagemap(pm_fd, p, npages, psz, pm) == 0) {
			uint64_t resident_before = wt.resident;
			bool any_pfn = false;
			for (uint64_t i = 0; i < npages && !any_pfn; i++)
				any_pfn = (pm[i] & PM_PRESENT) && (pm[i] & PM_PFN_MASK);
			if (!any_pfn) {
				wt.pfn_hidden = true;
			} else if (read_kpageflags(kpf_fd, pm, npages, kflags) == 0) {
				tally_folios(pm, kflags, npages, &wt);
				wt.pages += npages;
				wt.walks++;
			}
			if (wt.resident - resident_before < npages && rep == 0)
				fprintf(stderr, "kab-pageout: only %" PRIu64 " of %" PRIu64 " pages resident after the fill: "
						"memory.max is below size, the fill itself swapped\n",
					wt.resident - resident_before, npages);
		}

		t0 = now_ns();
		if (madvise(p, o.size, MADV_PAGEOUT) != 0) {
			fprintf(stderr, "kab-pageout: madvise(MADV_PAGEOUT): %s\n", strerror(errno));
			munmap(p, o.size);
			ret = 1;
			break;
		}
		t1 = now_ns();
		po.v[po.n++] = (uint64_t)(t1 - t0);

		if (pm_fd >= 0 && read_pagemap(pm_fd, p, npages, psz, pm) == 0) {
			for (uint64_t i = 0; i < npages; i++)
				if (pm[i] & PM_SWAP)
					wt.swapped_after++;
			wt.pageouts_walked++;
		}

		if (o.refault) {
			/* a write to every page: the swap-in path with a write fault,
			 * as posting 004's loop does */
			volatile unsigned char *vp = p;
			t0 = now_ns();
			for (uint64_t i = 0; i < npages; i++)
				vp[i * (uint64_t)psz] = (unsigned char)(vp[i * (uint64_t)psz] + 1);
			t1 = now_ns();
			rf.v[rf.n++] = (uint64_t)(t1 - t0);
		}
		munmap(p, o.size);
		printf("rep %u: fill %" PRIu64 " ns, pageout %" PRIu64 " ns", rep + 1, fl.v[fl.n - 1], po.v[po.n - 1]);
		if (o.refault)
			printf(", refault %" PRIu64 " ns", rf.v[rf.n - 1]);
		printf("\n");
	}
	read_counters(fs, nfs, true);
	if (ret != 0)
		return ret;

	print_series("ns", &po);
	print_series("fill_ns", &fl);
	if (o.refault)
		print_series("refault_ns", &rf);
	printf("kab-metric pageout.reps %u reps\n", o.reps);
	if (wt.walks > 0) {
		printf("kab-metric pageout.resident_pct %.3f %%\n", 100.0 * (double)wt.resident / (double)wt.pages);
		printf("kab-metric pageout.large_folio_pct %.3f %%\n",
		       wt.resident ? 100.0 * (double)wt.in_large / (double)wt.resident : 0);
		printf("kab-metric pageout.folio_kB_mean %.3f kB\n",
		       wt.resident ? (double)wt.weighted / (double)wt.resident * (double)psz / 1024 : 0);
	} else {
		fprintf(stderr, "kab-pageout: %s: no page-table folio evidence\n",
			wt.pfn_hidden ? "pagemap hides PFNs (needs CAP_SYS_ADMIN)" : "pagemap or kpageflags unreadable");
	}
	if (wt.pageouts_walked > 0)
		printf("kab-metric pageout.swapped_pct %.3f %%\n",
		       100.0 * (double)wt.swapped_after / (double)(npages * wt.pageouts_walked));

	/* The per-size counters are machine-wide: per repetition, for the
	 * sizes that moved, and as shares of the memory filled. */
	double alloc_bytes = 0, swpout_bytes = 0, fallbacks = 0;
	for (size_t i = 0; i < nfs; i++) {
		bool moved = false;
		for (size_t c = 0; c < N_COUNTERS; c++)
			moved |= counter_delta(&fs[i], c) > 0;
		alloc_bytes += (double)counter_delta(&fs[i], C_ALLOC) * (double)fs[i].kb * 1024;
		swpout_bytes += (double)counter_delta(&fs[i], C_SWPOUT) * (double)fs[i].kb * 1024;
		fallbacks += (double)(counter_delta(&fs[i], C_FALLBACK) + counter_delta(&fs[i], C_SWPOUT_FALLBACK));
		if (!moved)
			continue;
		for (size_t c = 0; c < N_COUNTERS; c++) {
			if (!fs[i].have[c] || (c == C_SWPIN && !o.refault))
				continue;
			printf("kab-metric pageout.folios_%" PRIu64 "kB_%s %.3f folios\n", fs[i].kb, counter_metric[c],
			       (double)counter_delta(&fs[i], c) / o.reps);
		}
	}
	if (nfs > 0) {
		double filled = (double)o.size * o.reps;
		printf("kab-metric pageout.mthp_alloc_pct %.3f %%\n", 100 * alloc_bytes / filled);
		printf("kab-metric pageout.mthp_swpout_pct %.3f %%\n", 100 * swpout_bytes / filled);
		printf("kab-metric pageout.mthp_fallbacks %.3f folios\n", fallbacks / o.reps);
	}
	return 0;
}
